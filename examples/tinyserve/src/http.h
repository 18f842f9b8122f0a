// The little HTTP/1.1 that tinyserve's served mode (--serve) and its load generator (tsload)
// speak: GET only, one request per connection ("Connection: close"), on 127.0.0.1. Enough for
// a benchmark over a real socket; not a general server.
#pragma once

#include <string>

namespace tinyserve::http {

// A listening socket on 127.0.0.1:port, or -1 with `error` set.
int Listen(int port, std::string* error);
// Waits for the next connection and reads its request line. Returns the connection and sets
// `target` to the request's path and query ("/generate?id=3"), or returns -1 (a broken or
// non-GET request is answered with 400 and skipped by the caller's loop).
int Accept(int listener, std::string* target);
// Writes a response with a JSON body and closes the connection.
void Reply(int fd, int status, const std::string& body);
// GET http://127.0.0.1:port<target>: the status code and the body, or -1 when the server
// cannot be reached or answers something that is not HTTP.
int Get(int port, const std::string& target, std::string* body);
// The value of `key` in the target's query ("id" in "/generate?id=3" is "3"), or "".
std::string Query(const std::string& target, const std::string& key);

}  // namespace tinyserve::http
