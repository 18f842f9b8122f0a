#include "util/cpu_list.h"

#include <algorithm>
#include <charconv>

namespace arbor {
namespace {

// Far above any machine's CPU count, and below cpu_set_t's limit checks.
constexpr int kMaxCpu = 1 << 16;

bool ParseCpu(std::string_view s, int* out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && *out >= 0 && *out < kMaxCpu;
}

}  // namespace

Result<std::vector<int>> ParseCpuList(std::string_view text) {
  std::vector<int> cpus;
  const std::string quoted = "\"" + std::string(text) + "\"";
  if (text.empty()) return MakeError("empty CPU list; expected e.g. \"0\" or \"2-3\"");
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view part = text.substr(start, comma - start);
    size_t dash = part.find('-');
    int lo = 0;
    int hi = 0;
    bool ok = dash == std::string_view::npos
                  ? ParseCpu(part, &lo) && ParseCpu(part, &hi)
                  : ParseCpu(part.substr(0, dash), &lo) && ParseCpu(part.substr(dash + 1), &hi);
    if (!ok) {
      return MakeError("bad CPU list " + quoted + " at \"" + std::string(part) +
                       "\"; expected CPU numbers or ranges like \"0\", \"2-3\", \"0,4-5\"");
    }
    if (hi < lo) return MakeError("bad CPU list " + quoted + ": descending range");
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
    start = comma + 1;
  }
  std::sort(cpus.begin(), cpus.end());
  if (std::adjacent_find(cpus.begin(), cpus.end()) != cpus.end()) {
    return MakeError("bad CPU list " + quoted + ": a CPU is listed twice");
  }
  return cpus;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace arbor
