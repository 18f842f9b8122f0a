// `arbor report` and `arbor serve`: the HTML report and the live dashboard, both built from
// the store alone (opened read-only), so they work on a finished, a running and a crashed
// campaign. See docs/report.md.
#pragma once

#include <string>

#include "util/result.h"

namespace arbor {

struct ReportOptions {
  std::string file = "arbor.toml";
  std::string out = "report.html";
};
// Writes the report; returns the line to print ("wrote report.html: 12 nodes").
Result<std::string> ReportCommand(const ReportOptions& options);

struct ServeCommandOptions {
  std::string file = "arbor.toml";
  std::string bind = "127.0.0.1";
  int port = 8080;  // 0: any free port; the URL is printed on stdout either way
  std::string token;
};
// Serves until SIGINT/SIGTERM; returns the exit code (0 after a clean stop).
Result<int> ServeCommand(const ServeCommandOptions& options);

}  // namespace arbor
