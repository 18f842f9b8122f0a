#include "util/metric_presets.h"

#include <gtest/gtest.h>

namespace arbor {
namespace {

TEST(MetricPresets, NamesRoundTrip) {
  for (MetricPreset p : AllMetricPresets()) {
    EXPECT_EQ(ParseMetricPresetName(MetricPresetName(p)), p);
    EXPECT_FALSE(PresetFields(p).empty());
  }
  EXPECT_FALSE(ParseMetricPresetName("Google-Benchmark"));
}

TEST(MetricPresets, DefaultFieldsAndNames) {
  Result<PresetSource> gb = ParsePresetExpr("google-benchmark");
  ASSERT_TRUE(gb.ok());
  EXPECT_EQ(gb->field, "real_time");
  EXPECT_EQ(gb->select, "");
  EXPECT_EQ(ParsePresetExpr("wrk")->field, "requests_per_sec");
  EXPECT_EQ(ParsePresetExpr("fio")->field, "iops");
  EXPECT_EQ(ParsePresetExpr("hyperfine")->field, "mean");
  EXPECT_EQ(ParsePresetExpr("pytest-benchmark")->field, "mean");
  // NAME is the rest, colons included.
  Result<PresetSource> named = ParsePresetExpr("pytest-benchmark:ops:tests/a.py::test_b");
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->field, "ops");
  EXPECT_EQ(named->select, "tests/a.py::test_b");
  // Any counter name for Google Benchmark.
  EXPECT_EQ(ParsePresetExpr("google-benchmark:blocks")->field, "blocks");
}

TEST(MetricPresets, FioPercentiles) {
  std::optional<FioPercentile> p = ParseFioPercentileField("write_clat_p99.9_us");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->direction, "write");
  EXPECT_DOUBLE_EQ(p->percentile, 99.9);
  EXPECT_FALSE(ParseFioPercentileField("read_clat_p_us"));
  EXPECT_FALSE(ParseFioPercentileField("read_clat_p0_us"));
  EXPECT_FALSE(ParseFioPercentileField("trim_clat_p99_us"));
  EXPECT_FALSE(ParseFioPercentileField("read_clat_p99_ms"));
}

TEST(MetricPresets, GoalHints) {
  for (const PresetField& f : PresetFields(MetricPreset::kWrk)) {
    const bool rate = f.name == "requests_per_sec" || f.name == "transfer_per_sec";
    EXPECT_EQ(f.lower_is_better, !rate && f.name != "requests") << f.name;
  }
  EXPECT_TRUE(PresetFields(MetricPreset::kGoogleBenchmark).front().lower_is_better);
}

}  // namespace
}  // namespace arbor
