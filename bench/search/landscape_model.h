// LandscapeModel: a Landscape compiled to indices, for evaluation in tight loops (internal to
// bench/search: FindOptimum enumerates millions of configurations).
//
// A choice vector holds, per action in file order, -1 (off), 0 (on, for an action without
// values) or the index of the chosen value. Every evaluation function of Landscape is defined
// here once and the Config-based methods convert; so the in-process truth, the target program
// and the optimum agree by construction. Names a hand-built Landscape gets wrong (an effect on
// an unknown component, an unknown action id) are bugs and abort; Landscape::Parse rejects them
// in files first.
#pragma once

#include <string>
#include <vector>

#include "bench/search/landscape.h"

namespace arbor::search::internal {

using Choices = std::vector<int>;
inline constexpr int kOff = -1;

struct CompiledEffect {
  int component = -1;  // -1: every component ("*")
  double factor = 1;
};
using CompiledEffects = std::vector<CompiledEffect>;

struct CompiledWhen {
  std::vector<int> with;
  std::vector<int> without;
  CompiledEffects effects;
};

struct CompiledValue {
  CompiledEffects effects;
  double crash_rate = 0;
  double accuracy_fail = 0;
  std::vector<int> crash_unless;
};

struct CompiledAction {
  CompiledEffects effects;
  std::vector<CompiledWhen> when;
  double crash_rate = 0;
  std::vector<int> crash_with;
  double accuracy_fail = 0;
  std::vector<int> fixed_by;
  std::vector<int> crash_unless;
  double inflation = 1;
  std::vector<CompiledValue> values;
};

class LandscapeModel {
 public:
  explicit LandscapeModel(const Landscape& l);

  int actions() const { return static_cast<int>(actions_.size()); }
  // Choices of action i beside "off": 1 for an on/off action, else its number of values.
  int Options(int i) const;

  // Unknown ids and values not among an action's values are ignored (off).
  Choices FromConfig(const Config& c) const;
  Config ToConfig(const Choices& c) const;

  // Each component's time relative to the baseline's end-to-end time.
  std::vector<double> ComponentTimes(const Choices& c) const;
  double RelativeTime(const Choices& c) const;
  double CrashRate(const Choices& c) const;
  double AccuracyFailRate(const Choices& c) const;
  bool Broken(const Choices& c) const { return CrashRate(c) > 0 || AccuracyFailRate(c) > 0; }
  // An action or chosen value is on without all of its crash_unless prerequisites (SIGILL).
  bool MissingPrerequisite(const Choices& c) const;
  double Inflation(const Choices& c) const;
  // What the optimum may be: neither broken nor inflated.
  bool Eligible(const Choices& c) const { return !Broken(c) && Inflation(c) == 1; }
  // The actions action i's truth names (when.with, crash_unless, accuracy_fixed_by): turning i
  // on together with them is one move of the optimum's hill climb.
  std::vector<int> Partners(int i) const;

 private:
  const Landscape& l_;
  std::vector<double> shares_;
  std::vector<CompiledAction> actions_;
};

// A stable 64-bit hash of a configuration (independent of the process and of map layout).
uint64_t ConfigHash(const Config& c);

}  // namespace arbor::search::internal
