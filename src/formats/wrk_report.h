// wrk's text report (wrk has no JSON output of its own), as wrk 4 prints it:
//
//   Running 2s test @ http://127.0.0.1:8080/
//     2 threads and 4 connections
//     Thread Stats   Avg      Stdev     Max   +/- Stdev
//       Latency     3.97ms    7.38ms  66.89ms   92.55%
//       Req/Sec     0.93k   335.93     1.82k    68.29%
//     Latency Distribution                      (with --latency)
//        50%    1.38ms
//        99%   40.72ms
//     3811 requests in 2.10s, 3.76MB read
//     Socket errors: connect 0, read 12, write 0, timeout 3    (when there were any)
//     Non-2xx or 3xx responses: 1526                          (when there were any)
//   Requests/sec:   1816.10
//   Transfer/sec:      1.79MB
//
// Times are converted to milliseconds, sizes (1024-based, as wrk prints them) to bytes. When
// the text holds several reports, the last one counts. Pure; never throws.
#pragma once

#include <map>
#include <optional>
#include <string_view>

namespace arbor {

struct WrkReport {
  double requests_per_sec = 0;
  std::optional<double> transfer_per_sec;  // bytes per second
  std::optional<double> latency_avg_ms;
  std::optional<double> latency_stdev_ms;
  std::optional<double> latency_max_ms;
  std::map<double, double> latency_percentiles_ms;  // 50 -> 1.38 (--latency only)
  std::optional<double> requests;                   // "N requests in ..."
  double non_2xx_3xx = 0;
  double socket_errors = 0;  // connect + read + write + timeout
};

// The last report in `text`; nullopt when it has no "Requests/sec:" line with a number.
std::optional<WrkReport> ParseWrkReport(std::string_view text);

// "1.38ms" -> 1.38, "739.00us" -> 0.739, "2.00s" -> 2000, "1.50m" -> 90000.
std::optional<double> ParseWrkTimeMs(std::string_view text);
// "1.40MB" -> 1.4 * 1024^2, "512.00B" -> 512.
std::optional<double> ParseWrkBytes(std::string_view text);

}  // namespace arbor
