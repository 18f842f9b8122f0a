#include "util/duration.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "util/strings.h"

namespace arbor {

Result<double> ParseDuration(std::string_view text) {
  std::string s = Trim(text);
  auto bad = [&](const std::string& why) {
    return MakeError("invalid duration \"" + std::string(text) + "\": " + why +
                     " (expected e.g. \"90s\", \"10m\", \"2h\", \"1h30m\", \"250ms\")");
  };
  if (s.empty()) return bad("empty");
  double total = 0;
  size_t i = 0;
  bool any = false;
  while (i < s.size()) {
    size_t start = i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == start) return bad("expected a number at position " + std::to_string(start + 1));
    std::string num = s.substr(start, i - start);
    char* end = nullptr;
    double v = std::strtod(num.c_str(), &end);
    if (end == nullptr || *end != '\0') return bad("\"" + num + "\" is not a number");
    size_t ustart = i;
    while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
    std::string unit = s.substr(ustart, i - ustart);
    double mult = 0;
    if (unit.empty() || unit == "s") {
      mult = 1;
      if (unit.empty() && i != s.size()) return bad("missing unit");
    } else if (unit == "ms") {
      mult = 0.001;
    } else if (unit == "m" || unit == "min") {
      mult = 60;
    } else if (unit == "h") {
      mult = 3600;
    } else if (unit == "d") {
      mult = 86400;
    } else {
      return bad("unknown unit \"" + unit + "\"");
    }
    total += v * mult;
    any = true;
  }
  if (!any || !std::isfinite(total)) return bad("not a finite duration");
  return total;
}

std::string FormatDuration(double seconds) {
  if (seconds < 0) seconds = 0;
  if (seconds < 1) return std::to_string(static_cast<int>(std::lround(seconds * 1000))) + "ms";
  if (seconds < 60) return FormatDouble(seconds, 3) + "s";
  auto total = static_cast<long long>(std::llround(seconds));
  long long h = total / 3600;
  long long m = (total % 3600) / 60;
  long long s = total % 60;
  std::string out;
  if (h) out += std::to_string(h) + "h";
  if (m) out += std::to_string(m) + "m";
  if (s || out.empty()) out += std::to_string(s) + "s";
  return out;
}

}  // namespace arbor
