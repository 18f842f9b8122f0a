// Fuzzes ExtractMetric with json: paths and preset: sources (formats/metrics.h,
// formats/metric_presets.h). Input: the path on the first line (a line "preset:TOOL..." makes
// it a preset source), the document after it. The document is tried both as a command's output
// and as the metrics.json file. Malformed input must give a one-line error, never a crash.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "formats/metrics.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace arbor;
  auto [expr, doc] = fuzz::SplitFirstLine({reinterpret_cast<const char*>(data), size});
  MetricSource src;
  const bool preset = expr.substr(0, 7) == "preset:";
  src.kind = preset ? MetricSource::Kind::kPreset : MetricSource::Kind::kJson;
  src.expr = std::string(preset ? expr.substr(7) : expr);
  src.text = preset ? std::string(expr) : "json:" + src.expr;
  for (int as_file = 0; as_file < 2; ++as_file) {
    Result<double> v =
        as_file ? ExtractMetric(src, "ignored output", doc) : ExtractMetric(src, doc, "");
    if (fuzz::CheckResult(v, "ExtractMetric(json)")) {
      fuzz::Require(std::isfinite(*v), "ExtractMetric(json)", "a value that is not finite");
    }
  }
  return 0;
}
