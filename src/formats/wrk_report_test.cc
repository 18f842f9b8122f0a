#include "formats/wrk_report.h"

#include <gtest/gtest.h>

namespace arbor {
namespace {

TEST(WrkReport, Units) {
  EXPECT_DOUBLE_EQ(*ParseWrkTimeMs("739.00us"), 0.739);
  EXPECT_DOUBLE_EQ(*ParseWrkTimeMs("1.38ms"), 1.38);
  EXPECT_DOUBLE_EQ(*ParseWrkTimeMs("2.00s"), 2000);
  EXPECT_DOUBLE_EQ(*ParseWrkTimeMs("1.50m"), 90000);
  EXPECT_FALSE(ParseWrkTimeMs("1.38"));
  EXPECT_FALSE(ParseWrkTimeMs("ms"));
  EXPECT_DOUBLE_EQ(*ParseWrkBytes("512.00B"), 512);
  EXPECT_DOUBLE_EQ(*ParseWrkBytes("749.81KB"), 749.81 * 1024);
  EXPECT_DOUBLE_EQ(*ParseWrkBytes("1.40MB"), 1.40 * 1024 * 1024);
  EXPECT_FALSE(ParseWrkBytes("1.4XB"));
}

TEST(WrkReport, TheLastReportCounts) {
  const std::string one =
      "Running 1s test @ http://127.0.0.1:1/\n"
      "  1 threads and 1 connections\n"
      "  Thread Stats   Avg      Stdev     Max   +/- Stdev\n"
      "    Latency     1.00ms    0.10ms   2.00ms   90.00%\n"
      "  Latency Distribution\n"
      "     50%    1.00ms\n"
      "     99%    2.00ms\n"
      "  100 requests in 1.00s, 10.00KB read\n"
      "  Non-2xx or 3xx responses: 7\n"
      "Requests/sec:    100.00\n"
      "Transfer/sec:     10.00KB\n";
  const std::string two =
      "Running 1s test @ http://127.0.0.1:1/\n"
      "    Latency   500.00us    0.10ms   1.00ms   90.00%\n"
      "  200 requests in 1.00s, 20.00KB read\n"
      "Requests/sec:    200.00\n";
  std::optional<WrkReport> r = ParseWrkReport(one + two);
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->requests_per_sec, 200);
  EXPECT_DOUBLE_EQ(*r->latency_avg_ms, 0.5);
  EXPECT_EQ(*r->requests, 200);
  EXPECT_EQ(r->non_2xx_3xx, 0);  // the first report's errors are not the last's
  EXPECT_TRUE(r->latency_percentiles_ms.empty());
  EXPECT_FALSE(r->transfer_per_sec);

  r = ParseWrkReport(one);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->non_2xx_3xx, 7);
  EXPECT_DOUBLE_EQ(r->latency_percentiles_ms.at(99), 2.0);
  EXPECT_DOUBLE_EQ(*r->transfer_per_sec, 10240);
}

TEST(WrkReport, NoRateNoReport) {
  EXPECT_FALSE(ParseWrkReport(""));
  EXPECT_FALSE(ParseWrkReport("unable to connect to 127.0.0.1:18439 Connection refused\n"));
  EXPECT_FALSE(ParseWrkReport("Requests/sec:   lots\n"));
}

}  // namespace
}  // namespace arbor
