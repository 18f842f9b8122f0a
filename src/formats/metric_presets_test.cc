// The preset metric sources on real output of each tool (tests/data/metrics, README.md there
// says how it was captured). Golden values were computed from the same files with Python's
// json module, independently of this code.
#include "formats/metric_presets.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "formats/metrics.h"

namespace arbor {
namespace {

std::string Fixture(const std::string& name) {
  std::string here = __FILE__;
  std::string root = here.substr(0, here.rfind("/src/formats/"));
  std::ifstream in(root + "/tests/data/metrics/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << name;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

MetricSource Preset(const std::string& expr) {
  return MetricSource{MetricSource::Kind::kPreset, expr, "preset:" + expr};
}

// From stdout (the tool printed its JSON) and from $ARBOR_OUT/metrics.json (it wrote it).
double Read(const std::string& expr, const std::string& text, bool as_file = false) {
  Result<double> v = as_file ? ExtractMetric(Preset(expr), "logs, not JSON\n", text)
                             : ExtractMetric(Preset(expr), text, "");
  EXPECT_TRUE(v.ok()) << expr << ": " << (v.ok() ? "" : v.error().message);
  return v.ok() ? *v : -1;
}

std::string Error(const std::string& expr, const std::string& text) {
  Result<double> v = ExtractMetric(Preset(expr), text, "");
  EXPECT_FALSE(v.ok()) << expr << " read " << (v.ok() ? *v : 0);
  return v.ok() ? "" : v.error().message;
}

void ExpectRelative(double got, double want) { EXPECT_NEAR(got, want, std::abs(want) * 1e-9); }

TEST(GoogleBenchmarkPreset, GeometricMeanOfRealTimeInNanoseconds) {
  const std::string json = Fixture("google_benchmark.json");
  // BM_Sum/64 35.2 ns, BM_Sum/4096 1944.5 ns, BM_Copy 1.865 us: each weighs the same.
  ExpectRelative(Read("google-benchmark", json), 503.5095916182975);
  ExpectRelative(Read("google-benchmark", json, /*as_file=*/true), 503.5095916182975);
  // time_unit "us" is converted to nanoseconds.
  ExpectRelative(Read("google-benchmark:real_time:BM_Copy", json), 1864.9327020791106);
  ExpectRelative(Read("google-benchmark:cpu_time:BM_Copy", json), 1167.426481639197);
  ExpectRelative(Read("google-benchmark:items_per_second:BM_Sum/64", json), 3437099786.6504426);
  ExpectRelative(Read("google-benchmark:bytes_per_second:BM_Copy", json), 56137153842.85283);
  // A user counter by its name.
  EXPECT_EQ(Read("google-benchmark:blocks:BM_Copy", json), 16.0);
}

TEST(GoogleBenchmarkPreset, RepetitionsGiveTheirMedianAndAggregatesAreSkipped) {
  // Three iteration runs (47.09, 41.12, 30.78 ns) and the mean/median/stddev/cv aggregates.
  const std::string json = Fixture("google_benchmark_repetitions.json");
  ExpectRelative(Read("google-benchmark", json), 41.122689734787514);
  ExpectRelative(Read("google-benchmark:real_time:BM_Sum/64", json), 41.122689734787514);
}

TEST(GoogleBenchmarkPreset, AFailedBenchmarkFailsTheReading) {
  const std::string json = Fixture("google_benchmark_error.json");
  EXPECT_EQ(Error("google-benchmark", json),
            "metric preset:google-benchmark: benchmark 'BM_Fails' failed: no input file");
  // Naming another benchmark leaves the failed one out.
  ExpectRelative(Read("google-benchmark:real_time:BM_Copy", json), 2070.506405672396);
}

TEST(GoogleBenchmarkPreset, SaysWhatIsMissing) {
  const std::string json = Fixture("google_benchmark.json");
  EXPECT_EQ(Error("google-benchmark:real_time:BM_Sort", json),
            "metric preset:google-benchmark:real_time:BM_Sort: no benchmark named 'BM_Sort' "
            "(BM_Sum/64, "
            "BM_Sum/4096, BM_Copy)");
  EXPECT_EQ(Error("google-benchmark:items_per_second", json),
            "metric preset:google-benchmark:items_per_second: benchmark 'BM_Copy' has no "
            "'items_per_second' (its numbers: blocks, bytes_per_second, cpu_time, family_index, "
            "iterations, per_family_instance_index, real_time, repetition_index, repetitions, "
            "threads)");
  EXPECT_EQ(Error("google-benchmark", "BM_Sum/64   35.2 ns   18.6 ns   3774120\n"),
            "metric preset:google-benchmark: no google-benchmark JSON document in the output "
            "(40 bytes): run the benchmark with --benchmark_format=json (or "
            "--benchmark_out=$ARBOR_OUT/metrics.json --benchmark_out_format=json)");
  EXPECT_EQ(Error("google-benchmark", Fixture("hyperfine.json")),
            "metric preset:google-benchmark: not google-benchmark JSON: no \"benchmarks\" array");
}

TEST(GoogleBenchmarkPreset, JsonAfterLogLinesIsFound) {
  const std::string json = Fixture("google_benchmark.json");
  ExpectRelative(Read("google-benchmark", "building...\n{not json either\n" + json + "\n"),
                 503.5095916182975);
}

TEST(HyperfinePreset, ReadsTheExportedJson) {
  const std::string json = Fixture("hyperfine.json");
  ExpectRelative(Read("hyperfine", json, /*as_file=*/true), 0.027176863898397904);
  ExpectRelative(Read("hyperfine:median:sleep 0.02", json), 0.031773303);
  // -n names the command in the JSON.
  ExpectRelative(Read("hyperfine:mean:sum 64", Fixture("hyperfine_named.json")), 0.048183414);
  EXPECT_EQ(Error("hyperfine:mean:sleep 1", json),
            "metric preset:hyperfine:mean:sleep 1: no command named 'sleep 1' (sleep 0.01, "
            "sleep 0.02)");
}

TEST(HyperfinePreset, AFailingRunFailsTheReading) {
  std::string json = Fixture("hyperfine.json");
  // hyperfine -i keeps going after a non-zero exit and records it.
  size_t at = json.find("\"exit_codes\": [\n        0");
  ASSERT_NE(at, std::string::npos);
  json.replace(json.find('0', at + 14), 1, "3");
  EXPECT_EQ(Error("hyperfine", json),
            "metric preset:hyperfine: command 'sleep 0.01' exited 3 in one of its runs");
}

TEST(FioPreset, OneJob) {
  const std::string json = Fixture("fio.json");
  ExpectRelative(Read("fio", json), 19231.768232);
  ExpectRelative(Read("fio:read_iops", json), 19231.768232);
  EXPECT_EQ(Read("fio:bw", json), 78773322.0);
  ExpectRelative(Read("fio:read_lat_us", json), 51.218108098);
  ExpectRelative(Read("fio:read_clat_p99_us", json), 97.792);
  ExpectRelative(Read("fio:read_clat_p99.9_us", json), 4079.616);
  EXPECT_EQ(Error("fio:write_lat_us", json),
            "metric preset:fio:write_lat_us: no job did any write I/O");
  EXPECT_EQ(Error("fio:read_clat_p42_us", json)
                .find("metric preset:fio:read_clat_p42_us: job "
                      "'randread' read percentile has no "
                      "'42.000000' (its numbers: 1.000000, "),
            0u);
}

TEST(FioPreset, JobsTogether) {
  const std::string json = Fixture("fio_two_jobs.json");
  ExpectRelative(Read("fio", json), 37388.611388);  // every job's reads and writes
  ExpectRelative(Read("fio:read_iops", json), 31749.250749);
  ExpectRelative(Read("fio:write_iops", json), 5639.360639);  // only "mixed" wrote
  ExpectRelative(Read("fio:iops:reader", json), 18661.338661);
  ExpectRelative(Read("fio:read_lat_us", json), 57.64255324);  // the slower job's
  ExpectRelative(Read("fio:write_lat_us", json), 5.899954296);
  ExpectRelative(Read("fio:write_clat_p99_us:mixed", json), 48.896);
  EXPECT_EQ(Error("fio:iops:writer", json),
            "metric preset:fio:iops:writer: no job named 'writer' (reader, mixed)");
}

TEST(FioPreset, AJobErrorFailsTheReading) {
  std::string json = Fixture("fio.json");
  json.replace(json.find("\"error\" : 0"), 11, "\"error\" : 5");
  EXPECT_EQ(Error("fio", json), "metric preset:fio: job 'randread' reported error 5");
}

TEST(PytestBenchmarkPreset, ReadsStats) {
  const std::string json = Fixture("pytest_benchmark.json");
  ExpectRelative(Read("pytest-benchmark", json, /*as_file=*/true), 9.947788996774725e-06);
  ExpectRelative(Read("pytest-benchmark:ops:test_total_large", json), 8518.208637941252);
  ExpectRelative(Read("pytest-benchmark:median:test_sum.py::test_total_small", json),
                 8.758718999160919e-07);
  EXPECT_EQ(Error("pytest-benchmark", Fixture("google_benchmark.json")),
            "metric preset:pytest-benchmark: not pytest-benchmark JSON: benchmark 'BM_Sum/64' "
            "has no \"stats\"");
}

TEST(WrkPreset, ReadsTheTextReport) {
  ExpectRelative(Read("wrk", Fixture("wrk.txt")), 1416.19);
  ExpectRelative(Read("wrk:transfer_per_sec", Fixture("wrk.txt")), 1.40 * 1024 * 1024);
  ExpectRelative(Read("wrk:latency_avg_ms", Fixture("wrk.txt")), 5.36);
  ExpectRelative(Read("wrk:requests", Fixture("wrk.txt")), 2862);
  ExpectRelative(Read("wrk:latency_p99_ms", Fixture("wrk_latency.txt")), 40.72);
  ExpectRelative(Read("wrk:latency_p50_ms", Fixture("wrk_socket_errors.txt")), 0.051);
  EXPECT_EQ(Read("wrk:errors", Fixture("wrk.txt")), 0.0);
  EXPECT_EQ(Read("wrk:errors", Fixture("wrk_socket_errors.txt")), 11436.0);
  EXPECT_EQ(Read("wrk:errors", Fixture("wrk_non2xx.txt")), 1526.0);
  // metrics.json is not where wrk's report is.
  EXPECT_FALSE(ExtractMetric(Preset("wrk"), "", Fixture("wrk.txt")).ok());
}

TEST(WrkPreset, ErrorResponsesAreNotThroughput) {
  EXPECT_EQ(Error("wrk", Fixture("wrk_non2xx.txt")),
            "metric preset:wrk: 1526 responses were not 2xx or 3xx (of 1526): a server that "
            "answers with errors is not faster (read 'errors' as a guard to see them)");
  EXPECT_EQ(Error("wrk:latency_p99_ms", Fixture("wrk.txt")),
            "metric preset:wrk:latency_p99_ms: no 99% line in a 'Latency Distribution' of the "
            "report: run wrk with --latency");
  // wrk could not connect: it printed only to stderr.
  EXPECT_EQ(Error("wrk", ""),
            "metric preset:wrk: no 'Requests/sec:' line in the output (0 bytes): not a wrk "
            "report, or wrk did not finish");
}

TEST(Presets, AnInvalidSourceIsAnErrorNotACrash) {
  EXPECT_EQ(Error("nope", "{}"),
            "metric preset:nope: unknown preset 'nope'; expected one of google-benchmark, "
            "hyperfine, wrk, fio, pytest-benchmark");
}

TEST(Presets, WhichReadMetricsJson) {
  EXPECT_TRUE(ReadsMetricsFile(Preset("hyperfine")));
  EXPECT_TRUE(ReadsMetricsFile(Preset("google-benchmark:cpu_time")));
  EXPECT_FALSE(ReadsMetricsFile(Preset("wrk")));
  EXPECT_FALSE(ReadsMetricsFile(MetricSource{MetricSource::Kind::kRegex, "x(1)", ""}));
  EXPECT_TRUE(ReadsMetricsFile(MetricSource{MetricSource::Kind::kJson, "x", ""}));
}

TEST(Presets, TruncatedOutputNeverCrashes) {
  for (const char* name : {"google_benchmark.json", "hyperfine.json", "fio_two_jobs.json",
                           "pytest_benchmark.json", "wrk_latency.txt"}) {
    const std::string text = Fixture(name);
    for (size_t cut = 0; cut < text.size(); cut += 97) {
      for (const char* expr : {"google-benchmark", "hyperfine", "fio:read_clat_p99_us",
                               "pytest-benchmark", "wrk:latency_p99_ms"}) {
        Result<double> v = ExtractMetric(Preset(expr), text.substr(0, cut), "");
        if (!v.ok()) {
          EXPECT_EQ(v.error().message.find('\n'), std::string::npos);
        }
      }
    }
  }
}

}  // namespace
}  // namespace arbor
