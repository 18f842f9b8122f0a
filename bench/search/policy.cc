#include "bench/search/policy.h"

#include <algorithm>

namespace arbor::search {
namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// True when `a` and `b` are declared in conflict (by either side).
bool Conflict(const LandscapeAction& a, const LandscapeAction& b) {
  return Contains(a.prior.conflicts, b.id) || Contains(b.prior.conflicts, a.id);
}

}  // namespace

Evaluation Evaluator::Evaluate(const Config& c) {
  ++evaluations_;
  Evaluation e;
  for (int i = 0; i < std::max(1, l_.repetitions); ++i) {
    std::optional<double> reading = Run(c);
    if (!reading) {
      e.crashed = true;
      return e;
    }
    e.readings.push_back(*reading);
  }
  if (!Check(c)) {
    e.accuracy_failed = true;
    return e;
  }
  e.value = Median(e.readings);
  return e;
}

Config Repair(const Landscape& l, Config c) {
  // Ids that are not actions mean nothing to the landscape: dropped.
  std::erase_if(c, [&](const auto& kv) { return l.Find(kv.first) == nullptr; });
  // Dropping an action can break another's requirement: repeat until nothing changes (each
  // pass only removes, so this ends).
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<const LandscapeAction*> kept;  // the earlier actions still on, in file order
    for (const LandscapeAction& a : l.actions) {
      if (!c.contains(a.id)) continue;
      bool missing = std::any_of(a.prior.requires_.begin(), a.prior.requires_.end(),
                                 [&](const std::string& r) { return !c.contains(r); });
      bool conflicting = std::any_of(kept.begin(), kept.end(),
                                     [&](const LandscapeAction* k) { return Conflict(*k, a); });
      if (missing || conflicting) {
        c.erase(a.id);
        changed = true;
      } else {
        kept.push_back(&a);
      }
    }
  }
  return c;
}

}  // namespace arbor::search
