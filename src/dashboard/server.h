// The live dashboard's HTTP server (`arbor serve`): cpp-httplib in front of DashboardApi.
//
// Promises: binds 127.0.0.1 unless told otherwise; a non-loopback address is refused without
// a token, and with a token every request must carry it (`Authorization: Bearer T` or
// `?token=T`, compared in constant time). Without a token, requests whose Host is not a
// loopback name are refused too (a DNS-rebinding page cannot read the campaign). Only GET
// is served; other methods get 405. Responses carry a Content-Security-Policy that allows no
// external resource. SIGINT/SIGTERM stop it cleanly (in-flight requests finish).
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

#include "dashboard/api.h"
#include "util/result.h"

namespace arbor {

struct ServeOptions {
  std::string bind = "127.0.0.1";
  int port = 8080;  // 0: any free port
  std::string token;
};

// Beyond loopback a token shorter than this is refused: it could be guessed over the network.
inline constexpr size_t kMinRemoteTokenLength = 16;

// 127.0.0.0/8, ::1 and "localhost".
bool IsLoopback(const std::string& address);
// Whether a request's token matches `token` (no token configured: always).
bool TokenAccepted(const std::string& token, const std::string& authorization_header,
                   const std::string& token_param);

// Binds, prints "arbor: serving http://HOST:PORT/" (one line, flushed) on `announce`, and
// serves until SIGINT or SIGTERM. Errors: an unusable address or port (kExitUsage), a
// non-loopback bind without a token (kExitUsage).
Status ServeDashboard(const ServeOptions& options, DashboardApi* api, std::FILE* announce);

}  // namespace arbor
