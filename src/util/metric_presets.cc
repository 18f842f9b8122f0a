#include "util/metric_presets.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <vector>

#include "util/strings.h"

namespace arbor {
namespace {

struct PresetInfo {
  MetricPreset preset;
  std::string_view name;
  bool has_names;        // NAME selects one benchmark, command or job
  bool any_counter;      // any other [A-Za-z0-9_] field names a counter of the entry
  bool fio_percentiles;  // read_clat_pP_us / write_clat_pP_us
  std::span<const PresetField> fields;
  std::string_view names_are;  // what NAME matches, for messages
};

constexpr PresetField kGoogleBenchmark[] = {
    {"real_time", "ns", true},          {"cpu_time", "ns", true},
    {"items_per_second", "1/s", false}, {"bytes_per_second", "bytes/s", false},
    {"iterations", "count", false},
};
constexpr PresetField kHyperfine[] = {
    {"mean", "s", true},   {"median", "s", true}, {"min", "s", true},    {"max", "s", true},
    {"stddev", "s", true}, {"user", "s", true},   {"system", "s", true},
};
constexpr PresetField kWrk[] = {
    {"requests_per_sec", "1/s", false}, {"transfer_per_sec", "bytes/s", false},
    {"latency_avg_ms", "ms", true},     {"latency_stdev_ms", "ms", true},
    {"latency_max_ms", "ms", true},     {"latency_p50_ms", "ms", true},
    {"latency_p75_ms", "ms", true},     {"latency_p90_ms", "ms", true},
    {"latency_p99_ms", "ms", true},     {"requests", "count", false},
    {"errors", "count", true},
};
constexpr PresetField kFio[] = {
    {"iops", "1/s", false},      {"read_iops", "1/s", false},   {"write_iops", "1/s", false},
    {"bw", "bytes/s", false},    {"read_bw", "bytes/s", false}, {"write_bw", "bytes/s", false},
    {"read_lat_us", "us", true}, {"write_lat_us", "us", true},
};
constexpr PresetField kPytestBenchmark[] = {
    {"mean", "s", true},   {"median", "s", true}, {"min", "s", true},    {"max", "s", true},
    {"stddev", "s", true}, {"iqr", "s", true},    {"ops", "1/s", false}, {"rounds", "count", false},
};

constexpr std::array<PresetInfo, 5> kPresets = {{
    {MetricPreset::kGoogleBenchmark, "google-benchmark", true, true, false, kGoogleBenchmark,
     "a benchmark's name or run_name"},
    {MetricPreset::kHyperfine, "hyperfine", true, false, false, kHyperfine,
     "a result's command (its name with -n)"},
    {MetricPreset::kWrk, "wrk", false, false, false, kWrk, ""},
    {MetricPreset::kFio, "fio", true, false, true, kFio, "a job's jobname"},
    {MetricPreset::kPytestBenchmark, "pytest-benchmark", true, false, false, kPytestBenchmark,
     "a benchmark's name or fullname"},
}};

constexpr std::array<MetricPreset, 5> kAll = {MetricPreset::kGoogleBenchmark,
                                              MetricPreset::kHyperfine, MetricPreset::kWrk,
                                              MetricPreset::kFio, MetricPreset::kPytestBenchmark};

const PresetInfo& Info(MetricPreset preset) {
  for (const PresetInfo& i : kPresets) {
    if (i.preset == preset) return i;
  }
  return kPresets[0];
}

bool IsCounterName(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') return false;
  }
  return true;
}

std::string FieldList(const PresetInfo& info) {
  std::vector<std::string> names;
  for (const PresetField& f : info.fields) names.emplace_back(f.name);
  std::string list = Join(names, ", ");
  if (info.any_counter) list += ", or a user counter's name";
  if (info.fio_percentiles) list += ", read_clat_pP_us, write_clat_pP_us (P a percentile)";
  return list;
}

}  // namespace

std::string_view MetricPresetName(MetricPreset preset) { return Info(preset).name; }

std::optional<MetricPreset> ParseMetricPresetName(std::string_view name) {
  for (const PresetInfo& i : kPresets) {
    if (i.name == name) return i.preset;
  }
  return std::nullopt;
}

std::span<const MetricPreset> AllMetricPresets() { return kAll; }

std::span<const PresetField> PresetFields(MetricPreset preset) { return Info(preset).fields; }

std::optional<FioPercentile> ParseFioPercentileField(std::string_view field) {
  for (std::string_view direction : {"read", "write"}) {
    const std::string prefix = std::string(direction) + "_clat_p";
    if (!StartsWith(field, prefix) || !EndsWith(field, "_us")) continue;
    std::string_view number = field.substr(prefix.size(), field.size() - prefix.size() - 3);
    double p = 0;
    auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), p);
    if (number.empty() || ec != std::errc() || ptr != number.data() + number.size()) {
      return std::nullopt;
    }
    if (!std::isfinite(p) || p <= 0 || p > 100) return std::nullopt;
    return FioPercentile{std::string(direction), p};
  }
  return std::nullopt;
}

Result<PresetSource> ParsePresetExpr(std::string_view expr) {
  const size_t colon = expr.find(':');
  const std::string_view tool = expr.substr(0, colon);
  std::vector<std::string> tools;
  for (const PresetInfo& i : kPresets) tools.emplace_back(i.name);
  if (tool.empty()) {
    return MakeError("no tool named; expected \"preset:TOOL\" with TOOL one of " +
                     Join(tools, ", "));
  }
  std::optional<MetricPreset> preset = ParseMetricPresetName(tool);
  if (!preset) {
    std::string hint = ClosestMatch(std::string(tool), tools);
    return MakeError("unknown preset '" + std::string(tool) + "'" +
                     (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                     "; expected one of " + Join(tools, ", "));
  }
  const PresetInfo& info = Info(*preset);
  PresetSource out;
  out.preset = *preset;
  out.field = std::string(info.fields.front().name);
  if (colon == std::string_view::npos) return out;

  std::string_view rest = expr.substr(colon + 1);
  const size_t second = rest.find(':');
  std::string_view field = rest.substr(0, second);
  if (field.empty()) {
    return MakeError("empty field after 'preset:" + std::string(tool) + ":'; expected " +
                     FieldList(info));
  }
  bool known = false;
  for (const PresetField& f : info.fields) known = known || f.name == field;
  if (!known && info.fio_percentiles && ParseFioPercentileField(field)) known = true;
  if (!known && info.any_counter && IsCounterName(field)) known = true;
  if (!known) {
    return MakeError("unknown field '" + std::string(field) + "' of " + std::string(info.name) +
                     "; expected " + FieldList(info));
  }
  out.field = std::string(field);
  if (second == std::string_view::npos) return out;
  std::string_view name = rest.substr(second + 1);
  if (!info.has_names) {
    return MakeError(std::string(info.name) +
                     " reports one run, so it takes no name after the field ('" +
                     std::string(name) + "')");
  }
  if (name.empty()) {
    return MakeError("empty name after the field; expected " + std::string(info.names_are));
  }
  out.select = std::string(name);
  return out;
}

}  // namespace arbor
