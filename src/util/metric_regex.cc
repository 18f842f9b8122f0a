#include "util/metric_regex.h"

#include <cctype>

namespace arbor {

Result<std::regex> CompileMetricRegex(const std::string& pattern) {
  constexpr size_t kMaxCountDigits = 9;  // fits an int, far above any meaningful count
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c != '{' && c != ',' && c != '\\') continue;
    size_t digits = 0;
    while (i + 1 + digits < pattern.size() &&
           std::isdigit(static_cast<unsigned char>(pattern[i + 1 + digits]))) {
      ++digits;
    }
    if (digits > kMaxCountDigits) {
      return MakeError("a count or back-reference of " + std::to_string(digits) +
                       " digits at byte " + std::to_string(i + 1) + " (at most " +
                       std::to_string(kMaxCountDigits) + ")");
    }
  }
  try {
    return std::regex(pattern, kMetricRegexFlags);
  } catch (const std::regex_error& e) {
    return MakeError(e.what());
  }
}

}  // namespace arbor
