#include "core/critic/gate.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "util/name_table.h"
#include "util/strings.h"

namespace arbor {

namespace {
constexpr NameTable<Decision, 6> kDecisionNames = {{
    {Decision::kNone, ""},
    {Decision::kKeep, "keep"},
    {Decision::kRevert, "revert"},
    {Decision::kMore, "more"},
    {Decision::kNoisy, "noisy"},
    {Decision::kFutile, "futile"},
}};
}  // namespace

std::string_view DecisionName(Decision d) { return NameIn(kDecisionNames, d); }

std::string CheckGuard(const Guard& g, const std::vector<Sample>& candidate) {
  std::vector<double> v;
  for (const Sample& s : candidate) {
    auto it = s.extra.find(g.name);
    if (it != s.extra.end()) v.push_back(it->second);
  }
  if (v.empty()) return "guard " + g.name + " missing";
  const double m = Median(std::move(v));
  if (g.min && m < *g.min) {
    return "guard " + g.name + " " + FormatDouble(m) + " < min " + FormatDouble(*g.min);
  }
  if (g.max && m > *g.max) {
    return "guard " + g.name + " " + FormatDouble(m) + " > max " + FormatDouble(*g.max);
  }
  return "";
}

std::vector<Sample> SamplesOfArm(const std::vector<Sample>& all, std::string_view arm) {
  std::vector<Sample> out;
  for (const Sample& s : all) {
    if (s.arm == arm) out.push_back(s);
  }
  return out;
}

std::vector<double> SampleValues(const std::vector<Sample>& samples) {
  std::vector<double> v;
  v.reserve(samples.size());
  for (const Sample& s : samples) v.push_back(s.value);
  return v;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  // Halves first: (1e308 + 1e308) / 2 would overflow to inf, and a broken benchmark prints that.
  return v.size() % 2 == 1 ? v[mid] : v[mid - 1] / 2 + v[mid] / 2;
}

std::string SignedPercent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", fraction * 100);
  return buf;
}

double RelativeGain(double parent, double candidate, Goal goal) {
  if (parent == 0) return 0;
  return goal == Goal::kMax ? (candidate - parent) / parent : (parent - candidate) / parent;
}

Verdict MedianGate::Judge(const GateInput& in) {
  Verdict v;
  const std::vector<double> parent = SampleValues(SamplesOfArm(in.parent, "self"));
  const std::vector<double> candidate = SampleValues(SamplesOfArm(in.candidate, "self"));
  if (parent.empty() || candidate.empty()) {
    v.reason = "no samples";
    return v;
  }
  const Goal goal = in.metric != nullptr ? in.metric->goal : Goal::kMax;
  const double min_effect = in.critic != nullptr ? in.critic->min_effect : 0;
  v.parent_median = Median(parent);
  v.candidate_median = Median(candidate);
  v.gain = RelativeGain(v.parent_median, v.candidate_median, goal);
  v.keep = v.gain >= min_effect;
  v.reason = "median " + FormatDouble(v.candidate_median) + " vs " + FormatDouble(v.parent_median) +
             " (" + SignedPercent(v.gain) + ", needs " + SignedPercent(min_effect) + ")";
  if (in.metric != nullptr) {
    // Other arms carry no guard readings of this candidate.
    const std::vector<Sample> self = SamplesOfArm(in.candidate, "self");
    for (const Guard& g : in.metric->guards) {
      std::string failure = CheckGuard(g, self);
      if (failure.empty()) continue;
      v.keep = false;
      v.reason += "; " + failure;
    }
  }
  return v;
}

}  // namespace arbor
