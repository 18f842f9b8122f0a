// Reading a "preset:TOOL[:FIELD[:NAME]]" metric (util/metric_presets.h) from a tool's native
// output: Google Benchmark's, hyperfine's, fio's and pytest-benchmark's JSON, wrk's text.
//
// The JSON tools' document is $ARBOR_OUT/metrics.json when the command wrote a non-blank one
// (hyperfine --export-json, pytest --benchmark-json, --benchmark_out), else the whole output,
// else the output from the first line that opens a JSON object that parses to the end (a tool
// that prints notes before its JSON). wrk's report is read from the output only.
//
// Several entries (benchmarks, commands, jobs) and no NAME: Google Benchmark, hyperfine and
// pytest-benchmark give the geometric mean over entries (each entry's repetitions reduced to
// their median first), so every entry weighs the same whatever its scale; fio sums
// throughput over jobs (they ran together) and takes the worst job's latency. An entry that
// reports a failure (a benchmark's error, a command's non-zero exit, a job's error, non-2xx
// responses for wrk) makes the reading fail: a run that failed fast is not faster.
// Pure, never throws; errors are one line, "metric preset:...: why" (docs/metrics-and-profiles.md).
#pragma once

#include <string_view>

#include "core/model/spec.h"
#include "util/result.h"

namespace arbor {

Result<double> ExtractPresetMetric(const MetricSource& src, std::string_view output,
                                   std::string_view metrics_file_text);

// Whether the preset reads $ARBOR_OUT/metrics.json when the command writes one (every preset
// but wrk's); false for a source that is not a valid preset.
bool PresetReadsMetricsFile(const MetricSource& src);

}  // namespace arbor
