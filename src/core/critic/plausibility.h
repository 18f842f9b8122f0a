// Plausibility: whether a gain the keep gate accepted could be real, and what happens when it
// cannot. A benchmark that exits 0 but prints a broken number (a timer that read ~0 s, an
// overflowed counter, a workload that silently did nothing) passes any significance test, so
// every win is also compared with what could explain it (docs/critic.md, "Plausibility"):
//
//   Amdahl   the targets' profile share f (plus kShareSlack for profilers' error) bounds the
//            speedup by 1/(1 − f): removing them entirely gives no more;
//   prior    the action's expected gain (its prior speedup at that share), or the largest gain
//            the knowledge base saw kept in its category, whichever is larger, times
//            kPlausibleGainMargin, never below kMinPlausibleSpeedup;
//   user     [critic] max_plausible_speedup, which replaces both when set.
//
// A gain beyond the bound is an anomaly. JudgeAnomaly() decides, after the check and the
// benchmark were re-run, whether the evidence lets it be kept. Pure functions of values.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/knowledge/kb.h"
#include "core/model/model.h"
#include "core/model/spec.h"

namespace arbor {

inline constexpr double kPlausibleGainMargin = 10.0;  // × the largest expected gain
inline constexpr double kMinPlausibleSpeedup = 1.5;   // the prior rule never flags ≤ +50%
inline constexpr double kShareSlack = 0.10;           // profile shares trusted to 10 points
// A fixed-work run whose metric claims an anomalous gain must take visibly less wall time.
inline constexpr double kWallWitnessMinChange = 0.05;
// ... when its command runs long enough for the work to show: below this, start-up and timer
// jitter make the duration noise (a 2 ms command varies by more than 5% run to run).
inline constexpr double kWallWitnessMinSeconds = 0.1;
inline constexpr double kWorkHeld = 0.99;  // the work metric held: within 1% of the base's
// An incumbent re-measured this many times off (either way) from its kept value was an anomaly.
inline constexpr double kUnkeepFactor = 10.0;
// An anomaly that a fresh run with twice the repetitions reproduces (its speedup within
// kReproducedAgreement of the first A/B's, either way) is kept when its speedup is within
// kReproducibleBeyondBound × the bound: priors are guesses and real surprises happen (a ×3
// from a flag whose prior said ×1.1); orders of magnitude beyond (1e308, a timer that read
// ~0 s) need the evidence of work, the user's bound or trust.
inline constexpr double kReproducedAgreement = 1.25;
inline constexpr double kReproducibleBeyondBound = 10.0;

struct PlausibilityInput {
  double observed_speedup = 1;             // goal-aware median ratio (Verdict::speedup, > 1 better)
  double expected_gain_g = 0;              // the action's scored Amdahl gain g = f·(1 − 1/prior)
  double prior_speedup = 0;                // on its targets, as scored (≤ 1: no usable prior)
  bool whole_program = true;               // the action declares no targets
  std::optional<double> kb_max_speedup;    // largest end-to-end speedup kept in its category
  std::optional<double> user_max_speedup;  // [critic] max_plausible_speedup
};

struct Plausibility {
  bool anomaly = false;
  double bound = 0;                                         // the largest plausible speedup
  double amdahl = std::numeric_limits<double>::infinity();  // the Amdahl part (inf: none)
  double explained = 0;                                     // the prior/KB part
  std::string basis;                                        // how the bound was found, for messages
  std::string message;  // "anomaly: speedup ×… beyond the plausible ×… (…)"
};
Plausibility CheckPlausibility(const PlausibilityInput& in);

// What the re-runs of an anomaly showed, besides the confirmation's verdict.
struct AnomalyEvidence {
  bool trust_large_gains = false;    // [critic] trust_large_gains
  std::optional<double> work_ratio;  // candidate / incumbent median `work` (when declared)
  std::optional<double> wall_ratio;  // incumbent / candidate median command duration
  BenchFixed fixed = BenchFixed::kWork;
  std::optional<double> first_speedup;  // the A/B's that raised it (the fresh run is observed)
};

struct AnomalyVerdict {
  bool keep = false;
  std::string reason;  // one line: which rule decided, with the numbers
};
// Rules, in order: trust_large_gains keeps; for a fixed-work benchmark, a command duration
// that did not drop by kWallWitnessMinChange marks the metric broken (not kept); a declared
// work metric that held (≥ kWorkHeld of the incumbent's) keeps, one that fell does not; a gain
// the fresh run reproduced within kReproducibleBeyondBound × the bound keeps; anything else is
// not kept.
AnomalyVerdict JudgeAnomaly(double observed_speedup, const Plausibility& p,
                            const AnomalyEvidence& e);

// Whether an incumbent kept at `kept` and re-measured at `now` disagrees by an order of
// magnitude (kUnkeepFactor either way): then its keep was an anomaly, or its benchmark is
// broken now; either way the search must not build on it.
bool DisagreesByOrders(double kept, double now);

// The largest end-to-end speedup (goal-aware) of an entry kept in `category` and still
// standing (not superseded or corrected); nullopt when there is none.
std::optional<double> LargestKeptSpeedup(const std::vector<KbEntry>& entries,
                                         const std::string& category, Goal goal);

// ---- In the loop (measure.cc) ------------------------------------------------------------

// Goal-aware speedup of `cand`'s median over `base`'s (> 1 better; 0 when undefined).
double ArmSpeedup(const std::vector<Sample>& base, const std::vector<Sample>& cand, Goal goal);

// CheckPlausibility for `node` (its action may be nullptr): its scored gain and prior, its
// targets, the knowledge base's largest kept gain in its category, the user's bound.
Plausibility PlausibilityOfNode(const Node& node, const ActionSpec* action,
                                const std::vector<KbEntry>& kb, const CampaignSpec& spec,
                                double speedup);

// The decision on an anomaly after its check and benchmark were re-run. `first`: the A/B's
// speedup that raised it; `confirmed`: the fresh interleaved run's, whose arms are `base` and
// `cand` (their `work` and `wall_s` readings are the evidence; `wall_s` only when the
// incumbent's median is at least kWallWitnessMinSeconds); `p`: the bound at `confirmed`.
// A fresh run within the bound is kept on its own figures unless the two runs disagree by an
// order of magnitude; one still beyond it goes to JudgeAnomaly.
AnomalyVerdict JudgeRerun(const Plausibility& p, double first, double confirmed,
                          const std::vector<Sample>& base, const std::vector<Sample>& cand,
                          const CampaignSpec& spec);

}  // namespace arbor
