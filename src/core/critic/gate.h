// Gate: decides whether a measured candidate is kept. The seam where the Critic plugs in.
//
// MedianGate is the minimal gate of the foundations: keep when the candidate's median beats
// the parent's median by at least min_effect (goal-aware) and every guard holds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/model.h"
#include "core/model/spec.h"

namespace arbor {

struct GateInput {
  const MetricSpec* metric = nullptr;
  const CriticSpec* critic = nullptr;
  std::vector<Sample> parent;
  std::vector<Sample> candidate;
  uint64_t seed = 0;    // seeds the CriticGate's bootstrap: same seed, same interval
  int repetitions = 0;  // CriticGate: samples per arm per round; 0 = metric->repetitions
  // CriticGate: this A/B replicates an earlier one that was significant (the confirmation
  // before a keep). At its last look it also keeps a gain of at least min_effect whose p-value
  // is within CriticOptions::replication_alpha: a replication must show the same direction and
  // size, not a second significance of its own (docs/critic.md, "The gate").
  bool replication = false;
  // CriticGate: looks by information, as MeasurementProtocol schedules them (0: rounds of
  // `repetitions`, inferred from the samples). `info` is the fraction of the comparison's most
  // candidate samples (`max_samples`) this look has reached, `info_before` the previous look's;
  // the level spent at this look is α(info) − α(info_before) of the same spending function, so
  // a false keep stays within α over all looks wherever they fall. A look with info ≥ 1 is the
  // last. Between looks a candidate that can no longer reach min_effect by the last look is
  // stopped (futility: CriticOptions::futility_power).
  double info = 0;
  double info_before = 0;
  int max_samples = 0;
};

// The CriticGate's word on a look (docs/critic.md); DecisionName is its only printer.
enum class Decision {
  kNone,  // MedianGate: no sequential test, `keep` says it all
  kKeep,
  kRevert,
  kMore,    // measure again (more_samples per arm)
  kNoisy,   // too noisy to tell
  kFutile,  // stopped early: it cannot reach min_effect by the last look
};
std::string_view DecisionName(Decision d);  // "", "keep", "revert", "more", "noisy", "futile"

struct Verdict {
  bool keep = false;
  double gain = 0;  // relative improvement of the median, goal-aware (+ = better)
  double parent_median = 0;
  double candidate_median = 0;
  std::string reason;  // one line: "median 123.4 vs 110.0 (+12.2% ≥ 1.0%)"
  // Filled by CriticGate (docs/critic.md); MedianGate leaves the defaults.
  Decision decision = Decision::kNone;
  int more_samples = 0;  // > 0: inconclusive, measure this many more per arm and judge again
  double p_value = 1;    // one-sided Mann–Whitney U, in the goal's favourable direction
  double speedup = 1;    // goal-aware median ratio (> 1 = better)
  double ci_low = 0;     // 95% bootstrap interval of that ratio (0, 0 while "more")
  double ci_high = 0;
  double cv = 0;       // pooled coefficient of variation of the two arms
  int round = 0;       // which look of the sequential test this verdict is (1-based)
  int max_rounds = 0;  // the last look: at it the gate always decides
  int outliers = 0;    // samples beyond 3 MADs in either arm (flagged, never dropped)
  // Not kept at the last look for want of evidence either way (not significant, or too noisy):
  // unlike a revert for a gain significantly below min_effect, more runs could still tell.
  bool inconclusive = false;
};

class Gate {
 public:
  virtual ~Gate() = default;
  virtual Verdict Judge(const GateInput& in) = 0;
};

class MedianGate : public Gate {
 public:
  Verdict Judge(const GateInput& in) override;
};

double Median(std::vector<double> v);
// The samples of one measurement arm ("self", "base", "cand", ...), in their order.
std::vector<Sample> SamplesOfArm(const std::vector<Sample>& all, std::string_view arm);
// Their values.
std::vector<double> SampleValues(const std::vector<Sample>& samples);
// "" when the guard holds on the median of the samples' `extra[guard.name]`, else why not
// ("guard p99_ms 300 > max 250", "guard p99_ms missing"). The median, so that a single noisy
// repetition neither passes nor fails a guard.
std::string CheckGuard(const Guard& g, const std::vector<Sample>& samples);
// "+12.3%": a relative change in percent with its sign, one decimal (the gates' reasons).
std::string SignedPercent(double fraction);
// (candidate − parent)/parent for kMax, (parent − candidate)/parent for kMin.
double RelativeGain(double parent, double candidate, Goal goal);

}  // namespace arbor
