// PostJson: one HTTP POST through libcurl, the llm module's only contact with the network.
//
// Promises: one curl easy handle per call, so calls from several threads never share state;
// curl_global_init runs once per process (std::call_once). The whole request, connect included,
// is bounded by `timeout_s`; the answer body is capped at `max_body_bytes` (the transfer is
// aborted past it and the outcome is kTooLarge). Redirects are not followed, only http and
// https are allowed, verbose output is off and request headers are never copied into the
// response, so an Authorization header cannot end up in a message built from it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace arbor::llm {

struct HttpRequest {
  std::string url;
  std::string body;                  // sent as is (the caller sets Content-Type)
  std::vector<std::string> headers;  // "Name: value"
  double timeout_s = 120;            // whole request; <= 0: no limit
  double connect_timeout_s = 10;     // capped by timeout_s
  size_t max_body_bytes = size_t{16} << 20;
};

struct HttpResponse {
  enum class Outcome { kOk, kTimeout, kTransport, kTooLarge, kBadUrl };
  Outcome outcome = Outcome::kTransport;
  long status = 0;            // kOk: the HTTP status  // NOLINT(google-runtime-int): curl's type
  std::string body;           // kOk: the answer body
  double retry_after_s = -1;  // Retry-After in seconds; -1 when absent or an HTTP date
  std::string error;          // kTimeout, kTransport, kBadUrl: libcurl's one-line description
};

HttpResponse PostJson(const HttpRequest& request);

}  // namespace arbor::llm
