// Internal to formats/: the raw form every importer produces and the grouping that turns it
// into a Profile. Tests include it to check importers one by one.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/model/model.h"
#include "core/model/spec.h"
#include "util/result.h"

namespace arbor::import_internal {

// One raw name (a symbol, a kernel, a leaf frame) and its weight: self samples, self
// microseconds, instructions, percent... in one unit per RawProfile.
struct RawEntry {
  std::string name;
  double weight = 0;
  std::string layer;  // a hint ("kernel" for GPU tracks), used when no group names a layer
};

// What an importer read. Shares are weight / total; total may exceed the sum of the entries
// (time the profiler saw but did not list, e.g. below perf's or callgrind's thresholds).
struct RawProfile {
  std::vector<RawEntry> entries;  // unique names, any order
  double total = 0;
  double total_s = 0;  // end-to-end seconds when the format says, else 0
};

Result<RawProfile> ImportPerf(std::string_view text);
Result<RawProfile> ImportChromeTrace(std::string_view text, TraceTracks tracks);
Result<RawProfile> ImportCallgrind(std::string_view text);
Result<RawProfile> ImportCollapsed(std::string_view text);

// Raw names -> components (see ProfileSpec and docs/metrics-and-profiles.md "Grouping").
// `format` prefixes errors ("perf: total weight is 0").
Result<Profile> GroupProfile(const RawProfile& raw, const ProfileSpec& spec,
                             std::string_view format);

// Shared helpers of the text importers.
std::string_view TrimBlank(std::string_view s);
// Calls fn(line, line_number) for each '\n'-separated line ('\r' stripped), 1-based.
template <typename Fn>
void ForEachLine(std::string_view text, Fn fn) {
  size_t number = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    fn(line, ++number);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}
// Parses a non-negative finite decimal (digits, optional fraction/exponent; ',' thousands
// separators allowed when `commas`) spanning all of `s`.
bool ParseWeight(std::string_view s, bool commas, double* out);
// Sums weights per name, in first-seen order.
class RawAccumulator {
 public:
  void Add(std::string_view name, double weight, std::string_view layer = {});
  RawProfile Take(double total, double total_s = 0);
  size_t size() const { return entries_.size(); }

 private:
  std::vector<RawEntry> entries_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace arbor::import_internal
