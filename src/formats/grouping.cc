// Grouping raw names into components, and the helpers shared by the text importers.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

#include "formats/import_internal.h"
#include "util/strings.h"

namespace arbor::import_internal {

std::string_view TrimBlank(std::string_view s) {
  const char* kSpace = " \t\r\n\f\v";
  size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

bool ParseWeight(std::string_view s, bool commas, double* out) {
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s.front())) || s.front() == '.')) {
    return false;
  }
  std::string digits;
  if (commas && s.find(',') != std::string_view::npos) {
    for (char c : s) {
      if (c != ',') digits += c;
    }
    s = digits;
  }
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v) || v < 0) return false;
  *out = v;
  return true;
}

void RawAccumulator::Add(std::string_view name, double weight, std::string_view layer) {
  auto [it, inserted] = index_.try_emplace(std::string(name), entries_.size());
  if (inserted) entries_.push_back(RawEntry{std::string(name), 0, std::string(layer)});
  entries_[it->second].weight += weight;
}

RawProfile RawAccumulator::Take(double total, double total_s) {
  RawProfile raw;
  raw.entries = std::move(entries_);
  raw.total = total;
  raw.total_s = total_s;
  entries_.clear();
  index_.clear();
  return raw;
}

namespace {

constexpr const char* kOther = "other";

bool MatchesAny(const ProfileGroup& group, std::string_view name) {
  return std::any_of(group.match.begin(), group.match.end(),
                     [&](const std::string& glob) { return GlobMatch(glob, name); });
}

bool Heavier(const RawEntry& a, const RawEntry& b) {
  return a.weight != b.weight ? a.weight > b.weight : a.name < b.name;
}

}  // namespace

Result<Profile> GroupProfile(const RawProfile& raw, const ProfileSpec& spec,
                             std::string_view format) {
  std::string prefix = std::string(format) + ": ";
  if (raw.entries.empty()) return MakeError(prefix + "the profile names nothing");
  double sum = 0;
  for (const RawEntry& e : raw.entries) sum += e.weight;
  // Profilers round (perf's percentages may add up to 100.01): never let shares exceed 1.
  double total = std::max(raw.total, sum);
  if (!(total > 0) || !std::isfinite(total)) {
    return MakeError(prefix + "total weight is 0 (every entry is empty)");
  }
  std::vector<RawEntry> sorted = raw.entries;
  std::sort(sorted.begin(), sorted.end(), Heavier);
  size_t top_n = static_cast<size_t>(std::max(spec.top_n, 0));

  Profile p;
  p.total_s = raw.total_s;
  for (size_t i = 0; i < sorted.size() && i < top_n; ++i) {
    p.raw.emplace_back(sorted[i].name, std::min(1.0, sorted[i].weight / total));
  }

  double other = 0;
  if (!spec.groups.empty()) {
    std::vector<double> weights(spec.groups.size(), 0);
    for (const RawEntry& e : sorted) {
      auto g = std::find_if(spec.groups.begin(), spec.groups.end(),
                            [&](const ProfileGroup& group) { return MatchesAny(group, e.name); });
      if (g == spec.groups.end() || g->name == kOther) {
        other += e.weight;
      } else {
        weights[g - spec.groups.begin()] += e.weight;
      }
    }
    for (size_t i = 0; i < spec.groups.size(); ++i) {
      if (weights[i] <= 0) continue;
      p.components.push_back(
          {spec.groups[i].name, spec.groups[i].layer, std::min(1.0, weights[i] / total)});
    }
  } else {
    size_t kept = 0;
    for (const RawEntry& e : sorted) {
      if (e.name == kOther || kept >= top_n) {
        other += e.weight;
        continue;
      }
      if (e.weight <= 0) continue;
      p.components.push_back({e.name, e.layer, std::min(1.0, e.weight / total)});
      ++kept;
    }
  }
  if (other > 0) p.components.push_back({kOther, kOther, std::min(1.0, other / total)});
  if (p.components.empty()) return MakeError(prefix + "total weight is 0 (every entry is empty)");
  std::stable_sort(p.components.begin(), p.components.end(),
                   [](const Component& a, const Component& b) { return a.share > b.share; });
  return p;
}

}  // namespace arbor::import_internal
