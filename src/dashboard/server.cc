// ServeDashboard (declared in dashboard/server.h): the cpp-httplib adapter. Exceptions from
// the library stop here.
#include "dashboard/server.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <ctime>
#include <exception>
#include <thread>

#include "arbor/exit_codes.h"

namespace arbor {
namespace {

constexpr const char* kSecurityPolicy =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "connect-src 'self'; img-src data:";

bool ConstantTimeEqual(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

// The host part of a Host header: "localhost:8080" -> "localhost", "[::1]:80" -> "::1".
std::string HostName(const std::string& host) {
  if (!host.empty() && host.front() == '[') {
    size_t end = host.find(']');
    return end == std::string::npos ? host : host.substr(1, end - 1);
  }
  size_t colon = host.find(':');
  return colon == std::string::npos ? host : host.substr(0, colon);
}

std::string UrlHost(const std::string& bind) {
  return bind.find(':') != std::string::npos ? "[" + bind + "]" : bind;
}

// Stops `server` when SIGINT or SIGTERM arrives. The signals are blocked in the calling thread
// before the server starts its workers, so they inherit the mask and only this thread sees
// them; the mask is restored when the watcher goes away.
class SignalWatcher {
 public:
  explicit SignalWatcher(httplib::Server* server) {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
    thread_ = std::thread([this, server] {
      timespec tick{0, 100 * 1000 * 1000};
      bool stopping = false;
      while (!done_) {
        // Once signalled, keep asking: a stop() before the server listens is a no-op.
        if (stopping || sigtimedwait(&set_, nullptr, &tick) > 0) {
          stopping = true;
          server->stop();
          nanosleep(&tick, nullptr);
        }
      }
    });
  }
  ~SignalWatcher() {
    done_ = true;
    thread_.join();
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

 private:
  sigset_t set_{};
  sigset_t old_{};
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace

bool IsLoopback(const std::string& address) {
  if (address == "localhost" || address == "::1") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  return false;
}

bool TokenAccepted(const std::string& token, const std::string& authorization_header,
                   const std::string& token_param) {
  if (token.empty()) return true;
  const std::string bearer = "Bearer ";
  if (authorization_header.rfind(bearer, 0) == 0 &&
      ConstantTimeEqual(authorization_header.substr(bearer.size()), token)) {
    return true;
  }
  return !token_param.empty() && ConstantTimeEqual(token_param, token);
}

Status ServeDashboard(const ServeOptions& options, DashboardApi* api, std::FILE* announce) {
  if (!IsLoopback(options.bind) && options.token.empty()) {
    return MakeError("refusing to serve on " + options.bind +
                         " without --token: anyone who can reach it could read the campaign",
                     kExitUsage);
  }
  if (!IsLoopback(options.bind) && options.token.size() < kMinRemoteTokenLength) {
    return MakeError("refusing to serve on " + options.bind + " with a token of " +
                         std::to_string(options.token.size()) + " characters: beyond loopback " +
                         "it must have at least " + std::to_string(kMinRemoteTokenLength) +
                         " (e.g. openssl rand -hex 16)",
                     kExitUsage);
  }
  try {
    httplib::Server server;
    // Headers and body go out in separate writes: without this, Nagle plus delayed ACKs
    // add ~40 ms to small answers.
    server.set_tcp_nodelay(true);
    server.set_default_headers({{"Cache-Control", "no-store"},
                                {"X-Content-Type-Options", "nosniff"},
                                {"Referrer-Policy", "no-referrer"},
                                {"Content-Security-Policy", kSecurityPolicy}});
    const std::string token = options.token;
    server.set_pre_routing_handler([token](const httplib::Request& req, httplib::Response& res) {
      bool ok =
          TokenAccepted(token, req.get_header_value("Authorization"), req.get_param_value("token"));
      // Without a token only loopback names may address us (DNS rebinding).
      if (ok && token.empty()) ok = IsLoopback(HostName(req.get_header_value("Host")));
      if (ok) return httplib::Server::HandlerResponse::Unhandled;
      res.status = token.empty() ? 403 : 401;
      res.set_content(
          token.empty() ? R"({"error":"forbidden host"})" : R"({"error":"missing or wrong token"})",
          "application/json");
      return httplib::Server::HandlerResponse::Handled;
    });
    server.Get(".*", [api](const httplib::Request& req, httplib::Response& res) {
      ApiResponse r = api->Handle(req.path, req.params);
      res.status = r.status;
      res.set_content(r.body, r.content_type.c_str());
    });
    auto refuse = [](const httplib::Request&, httplib::Response& res) {
      res.status = 405;
      res.set_header("Allow", "GET");
      res.set_content(R"({"error":"read-only: only GET"})", "application/json");
    };
    server.Post(".*", refuse);
    server.Put(".*", refuse);
    server.Patch(".*", refuse);
    server.Delete(".*", refuse);

    int port = options.port;
    if (port == 0) {
      port = server.bind_to_any_port(options.bind);
      if (port < 0) return MakeError("cannot bind " + options.bind, kExitUsage);
    } else if (!server.bind_to_port(options.bind, port)) {
      return MakeError("cannot bind " + options.bind + ":" + std::to_string(port) +
                           " (in use, or not an address of this machine)",
                       kExitUsage);
    }
    std::fprintf(announce, "arbor: serving http://%s:%d/\n", UrlHost(options.bind).c_str(), port);
    std::fflush(announce);
    SignalWatcher watcher(&server);
    server.listen_after_bind();
  } catch (const std::exception& e) {
    return MakeError(std::string("dashboard server: ") + e.what(), kExitInternal);
  }
  return {};
}

}  // namespace arbor
