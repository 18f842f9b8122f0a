// Metrics and profiles: reading numbers out of what the user's commands print.
//
// ExtractMetric reads one metric (a [metric] source, a guard, `work`, accuracy) from a
// command's output or from the $ARBOR_OUT/metrics.json it wrote. ParseProfile reads the
// profile format of DESIGN.md ({"total_s", "components": [{"name", "layer", "share"}]}).
// Both are pure functions of their text: they never throw, never touch the disk, and return
// an Error whose one-line message says what was wrong and where (the Orchestrator stores it
// as the run's diagnosis). docs/metrics-and-profiles.md is the user-facing reference.
#pragma once

#include <cstddef>
#include <string_view>

#include "core/model/model.h"
#include "core/model/spec.h"
#include "util/result.h"

namespace arbor {

// The value of `src` in a run's output.
//
// kJson ("a.b.0.c", dot-separated object keys and array indices): when `metrics_file_text` is
// non-empty it is the document; else the whole `output` if it parses as JSON; else the last
// line of `output` that is a JSON object in which the path resolves. kRegex: the pattern is
// matched line by line, and group 1 (the whole match if the pattern has no group) of the
// last match on the last matching line is the value. Only the last kRegexWindowBytes of the
// output are considered, and lines longer than kRegexMaxLineBytes are skipped (std::regex
// recurses per character and would overflow the stack on them). The value must be a JSON
// number or a numeric string, and finite.
// kPreset: a tool's native output, read as formats/metric_presets.h says.
Result<double> ExtractMetric(const MetricSource& src, std::string_view output,
                             std::string_view metrics_file_text);

// Whether `src` reads $ARBOR_OUT/metrics.json when the command writes one (json: sources and
// the JSON presets); regex: and preset:wrk read stdout only.
bool ReadsMetricsFile(const MetricSource& src);

// Whether `value`, read from `metric`'s source, can be a correct reading of a throughput or a
// time: finite, within [metric] min/max when declared, and above 0 unless a declared min says
// otherwise (a time of 0 is a timer that read nothing, a negative rate a broken counter).
// The error, "metric SOURCE: value V ...", names the rule broken; the caller makes the run
// bad output, so the value never becomes a sample.
Status CheckMetricValue(const MetricSpec& metric, double value);
// The same for the `work` reading: finite and not negative.
Status CheckWorkValue(const MetricSource& work, double value);

inline constexpr size_t kRegexWindowBytes = size_t{1} << 20;
inline constexpr size_t kRegexMaxLineBytes = 4096;

// The profile in `text` (a profile.json file, or a command's stdout: the whole text if it is
// JSON, else its last line that is a JSON object with "components"). Validated: components is
// a non-empty array of objects, each with a non-empty unique string name, an optional string
// layer and a share in [0, 1]; shares sum to at most kMaxShareSum; total_s, when present, is a
// non-negative number.
Result<Profile> ParseProfile(std::string_view text);

inline constexpr double kMaxShareSum = 1.05;  // tolerance for profilers' rounding and overlap

}  // namespace arbor
