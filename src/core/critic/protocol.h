// MeasurementProtocol: the Critic's measurement protocol as decisions over values.
//
// It owns the rules of every comparison a campaign measures — a candidate's A/B against the
// state it is judged on, the confirmation that replicates it before a keep, the final
// validation of the campaign's best against the baseline — and what each verdict means for the
// node: revert it with a root cause, un-keep an anomalous incumbent, confirm, keep. It never
// runs a command, reads the store or touches a worktree: the Orchestrator asks it which runs to
// take next, takes them, stores the samples and applies the decision it gets back
// (src/core/orchestrator/measure.cc, final_validation.cc). So every rule is tested on hand-made
// samples (protocol_test.cc), and a resumed campaign reaches the same decisions from the same
// stored samples.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/critic/critic_gate.h"
#include "core/critic/gate.h"
#include "core/critic/plausibility.h"
#include "core/model/event_kind.h"
#include "core/model/model.h"
#include "core/model/spec.h"

namespace arbor {

// The comparisons a node is measured in, each with its own pair of sample arms.
enum class Comparison {
  kAb,       // the candidate against its base: arms base / cand
  kConfirm,  // the fresh replication before a keep: confirm-base / confirm-cand
  kFinal,    // the campaign's best against the baseline: final-base / final-cand
};
SampleArm BaseArmOf(Comparison c);
SampleArm CandArmOf(Comparison c);

// One benchmark run of a comparison. rep < 0: the discarded warm-up.
struct AbRun {
  bool base = false;
  int rep = 0;
};

// What a comparison has measured so far (its stored samples, in order) and how it is judged.
struct AbState {
  std::vector<Sample> base;
  std::vector<Sample> cand;
  int reps = 1;              // runs per arm of one look of the gate
  bool replication = false;  // GateInput::replication
  uint64_t seed = 0;         // GateInput::seed
};

// The runs a comparison takes next; none when the gate has decided, and then its verdict.
struct AbNext {
  std::vector<AbRun> runs;
  Verdict verdict;
};

// An event the caller records on the node, in order.
struct ProtocolEvent {
  EventKind kind = EventKind::kUnknown;
  std::string message;
};

// What a finished comparison of a candidate means for its node.
enum class NodeVerdict {
  kUnkeepIncumbent,  // the base re-measured orders of magnitude off its kept value
  kRevert,           // finished as reverted with `rca` and `diagnosis`
  kConfirm,          // the A/B passed: the confirmation comes next
  kKeep,             // the confirmation passed
};

struct NodeDecision {
  NodeVerdict verdict = NodeVerdict::kRevert;
  double incumbent_now = 0;  // kUnkeepIncumbent: the base's median now
  // Figures for the node (unset: left as they are).
  std::optional<double> metric;
  std::optional<double> gain;
  std::optional<double> p_value;
  std::optional<double> ci_low;
  std::optional<double> ci_high;
  bool confirmed = false;
  RcaClass rca = RcaClass::kNone;  // kRevert (kNone: unchanged)
  std::string diagnosis;           // kRevert
  std::vector<std::string> flags;  // added to the node, in order
  // Recorded on the node before it is finished or moved on, in order.
  std::vector<ProtocolEvent> events;
};

// What the comparison is judged with besides its samples.
struct JudgeContext {
  const Node* base = nullptr;  // the state the candidate was measured against
  double noise_cv = 0;         // the A/A pre-flight's, for the drift floor
  // The plausibility of the candidate's gain at a given speedup (PlausibilityOfNode).
  std::function<Plausibility(double speedup)> plausibility;
};

// The baseline's own runs (arm "self") and what they say of the benchmark's noise.
struct SelfDecision {
  double metric = 0;
  std::string message;  // the "measured" event's
  std::optional<NoiseReport> noise;
  std::vector<std::string> flags;
  std::vector<ProtocolEvent> events;  // after the "measured" one
};

// The final validation's figures: the best against the baseline, interleaved.
struct FinalFigures {
  double speedup = 0;  // goal-aware
  double ci_low = 0;
  double ci_high = 0;
};

class MeasurementProtocol {
 public:
  // `gate` decides each look (CriticGate, or MedianGate without the Critic); both outlive this.
  MeasurementProtocol(const CampaignSpec& spec, Gate* gate) : spec_(spec), gate_(gate) {}

  // ---- A comparison's schedule ----
  // The discarded warm-up of each arm, base first, when the comparison starts with nothing
  // stored (caches, page faults, CPU frequency); none when it continues.
  std::vector<AbRun> Warmup(const AbState& s) const;
  // The runs still missing for the next look (interleaved pairs, base first on even pairs:
  // BaseRunsFirst), or the gate's verdict once the look is complete and it decided.
  AbNext Next(const AbState& s) const;
  // The order of a look's interleaved runs: A B, then B A, so a linear drift cancels in a pair.
  static bool BaseRunsFirst(int pair) { return pair % 2 == 0; }
  // The runs of a first look (warm-up included) that a measure lane takes ahead of its node.
  std::vector<AbRun> FirstLook(int reps) const;

  // ---- What a verdict means ----
  // The candidate's A/B (arms base, cand) ended with `v`: un-keep an anomalous base, revert
  // (inflation, no gain) or go on to the confirmation (flagging an implausible gain).
  NodeDecision JudgeAb(const std::vector<Sample>& base, const std::vector<Sample>& cand,
                       const Verdict& v, const JudgeContext& ctx) const;
  // The confirmation's schedule for a node whose A/B passed: runs per look, and whether it is a
  // replication (an anomaly needs a significance of its own, with twice the runs).
  int ConfirmationReps(const Node& node, int reps) const;
  bool ConfirmationReplicates(const Node& node) const;
  // The confirmation (arms confirm-base, confirm-cand) ended with `v`; `first_*` are the A/B's
  // arms. Un-keep an anomalous base, revert (not confirmed, anomaly), or keep.
  NodeDecision JudgeConfirmation(const Node& node, const std::vector<Sample>& first_base,
                                 const std::vector<Sample>& first_cand,
                                 const std::vector<Sample>& base, const std::vector<Sample>& cand,
                                 const Verdict& v, const JudgeContext& ctx) const;

  // ---- The baseline's runs and the final validation ----
  // Runs of the baseline's own arm: twice a candidate's with the Critic (its A/A pre-flight).
  int SelfRuns(bool preflight) const;
  SelfDecision JudgeSelf(const std::vector<double>& values, bool preflight,
                         const std::vector<double>& durations) const;
  // The final validation's pairs (no warm-up, no gate: a fixed number of interleaved pairs).
  int FinalPairs(int reps) const { return reps; }
  FinalFigures JudgeFinal(const std::vector<Sample>& base, const std::vector<Sample>& cand,
                          uint64_t seed) const;

 private:
  const CampaignSpec& spec_;
  Gate* gate_;
};

}  // namespace arbor
