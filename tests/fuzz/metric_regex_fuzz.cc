// Fuzzes ExtractMetric with regex: patterns (formats/metrics.h). Input: the pattern on the
// first line, the command output after it. A bad pattern or an output without a match must
// give a one-line error, never a crash or an exception.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "formats/metrics.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace arbor;
  auto [expr, output] = fuzz::SplitFirstLine({reinterpret_cast<const char*>(data), size});
  MetricSource src;
  src.kind = MetricSource::Kind::kRegex;
  src.expr = std::string(expr);
  src.text = "regex:" + src.expr;
  Result<double> v = ExtractMetric(src, output, "");
  if (fuzz::CheckResult(v, "ExtractMetric(regex)")) {
    fuzz::Require(std::isfinite(*v), "ExtractMetric(regex)", "a value that is not finite");
  }
  return 0;
}
