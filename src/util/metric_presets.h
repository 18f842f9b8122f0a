// Metric presets ("preset:TOOL[:FIELD[:NAME]]" in the campaign file): the tools whose native
// output Arbor reads without a user-written path or pattern, and the quantities it can read
// from each. config/values.cc parses a source with ParsePresetExpr to check the campaign file;
// formats/metric_presets.cc parses it again to read a run's output, so the two cannot disagree
// (the same split as util/metric_regex.h). docs/metrics-and-profiles.md is the reference.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "util/result.h"

namespace arbor {

enum class MetricPreset { kGoogleBenchmark, kHyperfine, kWrk, kFio, kPytestBenchmark };

// "google-benchmark", "hyperfine", "wrk", "fio", "pytest-benchmark".
std::string_view MetricPresetName(MetricPreset preset);
std::optional<MetricPreset> ParseMetricPresetName(std::string_view name);
std::span<const MetricPreset> AllMetricPresets();

// One quantity a preset reads. `lower_is_better` is what `arbor init --detect` uses for the
// metric's goal; `unit` is what the value is in after any conversion.
struct PresetField {
  std::string_view name;
  std::string_view unit;
  bool lower_is_better;
};

// The fields of `preset`, the default first.
std::span<const PresetField> PresetFields(MetricPreset preset);

// A parsed source. `field` is never empty (the preset's default when the source names none);
// `select` is the benchmark / command / job name to read, "" for all of them.
struct PresetSource {
  MetricPreset preset = MetricPreset::kGoogleBenchmark;
  std::string field;
  std::string select;
};

// `expr` is the text after "preset:": TOOL, TOOL:FIELD or TOOL:FIELD:NAME (NAME is the rest,
// colons included). An unknown tool or field, or a NAME where the tool has no names (wrk), is
// an Error whose one-line message lists what is allowed. Google Benchmark takes any user
// counter's name as a field; fio takes read_clat_pP_us / write_clat_pP_us for a percentile P.
Result<PresetSource> ParsePresetExpr(std::string_view expr);

// A fio completion-latency percentile field ("read_clat_p99.9_us"): the direction ("read",
// "write") and the percentile; nullopt for any other name.
struct FioPercentile {
  std::string direction;
  double percentile = 0;
};
std::optional<FioPercentile> ParseFioPercentileField(std::string_view field);

}  // namespace arbor
