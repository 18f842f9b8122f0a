#include "core/critic/protocol.h"

#include <algorithm>
#include <cmath>

#include "core/critic/critic_gate.h"
#include "core/critic/statistics.h"
#include "core/model/rng.h"
#include "util/strings.h"

namespace arbor {
namespace {

std::string Percent(double f) { return (f >= 0 ? "+" : "") + FormatDouble(f * 100, 3) + "%"; }

// The base's median now, when it disagrees by orders of magnitude with the value the base was
// kept at: its keep was an anomaly (or its benchmark is broken now), and every verdict against
// it compared with a broken number. The baseline is never un-kept.
std::optional<double> AnomalousBase(const Node* base, const std::vector<Sample>& base_runs) {
  if (base == nullptr || base->id == kRootId || base->outcome != Outcome::kKept || !base->metric) {
    return std::nullopt;
  }
  const double now = Median(SampleValues(base_runs));
  if (!DisagreesByOrders(*base->metric, now)) return std::nullopt;
  return now;
}

NodeDecision Unkeep(double now) {
  NodeDecision d;
  d.verdict = NodeVerdict::kUnkeepIncumbent;
  d.incumbent_now = now;
  return d;
}

std::vector<double> Work(const std::vector<Sample>& samples) {
  std::vector<double> w;
  for (const Sample& s : samples) {
    auto it = s.extra.find("work");
    if (it != s.extra.end()) w.push_back(it->second);
  }
  return w;
}

void Flag(NodeDecision* d, const std::string& flag) {
  if (std::find(d->flags.begin(), d->flags.end(), flag) == d->flags.end()) {
    d->flags.push_back(flag);
  }
}

}  // namespace

SampleArm BaseArmOf(Comparison c) {
  switch (c) {
    case Comparison::kAb:
      return SampleArm::kBase;
    case Comparison::kConfirm:
      return SampleArm::kConfirmBase;
    case Comparison::kFinal:
      return SampleArm::kFinalBase;
  }
  return SampleArm::kUnknown;
}

SampleArm CandArmOf(Comparison c) {
  switch (c) {
    case Comparison::kAb:
      return SampleArm::kCand;
    case Comparison::kConfirm:
      return SampleArm::kConfirmCand;
    case Comparison::kFinal:
      return SampleArm::kFinalCand;
  }
  return SampleArm::kUnknown;
}

std::vector<AbRun> MeasurementProtocol::Warmup(const AbState& s) const {
  if (!s.base.empty() || !s.cand.empty()) return {};
  return {AbRun{true, -1}, AbRun{false, -1}};
}

AbNext MeasurementProtocol::Next(const AbState& s) const {
  const int reps = std::max(1, s.reps);
  const int have_base = static_cast<int>(s.base.size());
  const int have_cand = static_cast<int>(s.cand.size());
  const int pairs = std::min(have_base, have_cand);
  // Looks fall on whole multiples of `reps` pairs (a resumed comparison completes its look).
  int target = std::max(reps, (pairs + reps - 1) / reps * reps);
  // A run past a complete look: that look was judged "more", and the next one is under way.
  if (pairs == target && have_base != have_cand) target += reps;
  AbNext next;
  if (pairs == target && have_base == have_cand) {
    GateInput in;
    in.metric = &spec_.metric;
    in.critic = &spec_.critic;
    in.parent = s.base;
    in.candidate = s.cand;
    in.repetitions = reps;
    in.replication = s.replication;
    in.seed = s.seed;
    next.verdict = gate_->Judge(in);
    if (next.verdict.decision != Decision::kMore || next.verdict.more_samples <= 0) return next;
    target = pairs + next.verdict.more_samples;
  }
  for (int i = pairs; i < target; ++i) {
    const bool base_first = BaseRunsFirst(i);
    for (bool is_base : {base_first, !base_first}) {
      if ((is_base ? have_base : have_cand) > i) continue;
      next.runs.push_back(AbRun{is_base, i});
    }
  }
  return next;
}

std::vector<AbRun> MeasurementProtocol::FirstLook(int reps) const {
  AbState s;
  s.reps = reps;
  std::vector<AbRun> runs = Warmup(s);
  for (int i = 0; i < std::max(1, reps); ++i) {
    runs.push_back(AbRun{BaseRunsFirst(i), i});
    runs.push_back(AbRun{!BaseRunsFirst(i), i});
  }
  return runs;
}

NodeDecision MeasurementProtocol::JudgeAb(const std::vector<Sample>& base,
                                          const std::vector<Sample>& cand, const Verdict& v,
                                          const JudgeContext& ctx) const {
  if (auto now = AnomalousBase(ctx.base, base)) return Unkeep(*now);
  NodeDecision d;
  const double base_median = Median(SampleValues(base));
  d.metric = Median(SampleValues(cand));
  d.gain = v.gain;
  d.p_value = v.p_value;
  // The interval goes on every decision, a revert's too: how far a revert lies from the keep
  // threshold decides whether measuring it again can still change it (CallDistance).
  if (v.ci_high > 0) {
    d.ci_low = v.ci_low;
    d.ci_high = v.ci_high;
  }
  std::string message = "A/B over " + std::to_string(cand.size()) + " pairs: " + Percent(v.gain) +
                        " (p=" + FormatDouble(v.p_value, 3) + ")";
  const int outliers = CountOutliers(SampleValues(base)) + CountOutliers(SampleValues(cand));
  if (outliers > 0) {
    Flag(&d, "outliers");
    message += "; " + std::to_string(outliers) + " outlier(s) flagged, kept in the data";
  }
  // Drift: the base measured now vs when it was kept. Interleaving protects the verdict; the
  // drift is recorded so the user knows the machine moved.
  if (ctx.base != nullptr && ctx.base->metric && *ctx.base->metric != 0) {
    const double drift = base_median / *ctx.base->metric - 1;
    const double floor = std::max(3 * ctx.noise_cv, spec_.critic.min_effect);
    if (std::abs(drift) > floor) {
      Flag(&d, "drift");
      d.events.push_back({EventKind::kRebaselined,
                          "the incumbent #" + std::to_string(ctx.base->id) + " now measures " +
                              FormatDouble(base_median) + " (" + Percent(drift) +
                              " since it was kept); verdicts use the interleaved runs"});
    }
  }
  // Inflation: a benchmark that did less work than the baseline is not faster.
  const std::vector<double> wb = Work(base);
  const std::vector<double> wc = Work(cand);
  if (v.decision == Decision::kKeep && !wb.empty() && !wc.empty() &&
      Median(wc) < Median(wb) * kWorkHeld) {
    d.verdict = NodeVerdict::kRevert;
    d.rca = RcaClass::kInflation;
    d.diagnosis = "inflation: the benchmark did less work (" + FormatDouble(Median(wc)) + " vs " +
                  FormatDouble(Median(wb)) + "), so its speed is not comparable";
    return d;
  }
  if (v.decision != Decision::kKeep) {
    d.verdict = NodeVerdict::kRevert;
    d.rca = RcaClass::kNoGain;
    // More runs could still tell (Remeasure's second looks, core/search/moves.h).
    if (v.inconclusive) Flag(&d, "inconclusive");
    d.diagnosis = "no_gain: " + v.reason;
    return d;
  }
  d.verdict = NodeVerdict::kConfirm;
  d.events.push_back({EventKind::kMeasured, message});
  // A win beyond what could explain it is an anomaly: the confirmation re-runs the check and
  // the benchmark and keeps it only with evidence (core/critic/plausibility.h).
  if (ctx.plausibility) {
    const Plausibility p = ctx.plausibility(v.speedup);
    if (p.anomaly) {
      Flag(&d, "anomaly");
      d.events.push_back({EventKind::kAnomaly, p.message + "; median " +
                                                   FormatDouble(v.candidate_median) + " vs " +
                                                   FormatDouble(v.parent_median) +
                                                   "; re-running the check and the benchmark"});
    }
  }
  return d;
}

int MeasurementProtocol::ConfirmationReps(const Node& node, int reps) const {
  return reps * (HasFlag(node, "anomaly") ? 2 : 1);
}

bool MeasurementProtocol::ConfirmationReplicates(const Node& node) const {
  return !HasFlag(node, "anomaly");
}

NodeDecision MeasurementProtocol::JudgeConfirmation(
    const Node& node, const std::vector<Sample>& first_base, const std::vector<Sample>& first_cand,
    const std::vector<Sample>& base, const std::vector<Sample>& cand, const Verdict& v,
    const JudgeContext& ctx) const {
  if (auto now = AnomalousBase(ctx.base, base)) return Unkeep(*now);
  const bool anomaly = HasFlag(node, "anomaly");
  NodeDecision d;
  if (v.decision != Decision::kKeep) {
    d.verdict = NodeVerdict::kRevert;
    d.rca = anomaly ? RcaClass::kAnomaly : RcaClass::kNotConfirmed;
    d.diagnosis = std::string(anomaly ? "anomaly: not reproduced by" : "not confirmed by") +
                  " a fresh A/B run: " + v.reason;
    return d;
  }
  if (anomaly) {
    const double first = ArmSpeedup(first_base, first_cand, spec_.metric.goal);
    const Plausibility p = ctx.plausibility ? ctx.plausibility(v.speedup) : Plausibility{};
    const AnomalyVerdict av = JudgeRerun(p, first, v.speedup, base, cand, spec_);
    d.events.push_back({EventKind::kAnomaly, av.reason});
    if (!av.keep) {
      d.verdict = NodeVerdict::kRevert;
      d.rca = RcaClass::kAnomaly;
      d.diagnosis = "anomaly: " + av.reason;
      return d;
    }
  }
  // Reported figures come from the confirmation run.
  d.verdict = NodeVerdict::kKeep;
  d.metric = Median(SampleValues(cand));
  d.gain = v.gain;
  d.confirmed = true;
  d.ci_low = v.ci_low;
  d.ci_high = v.ci_high;
  d.p_value = std::max(node.critic.p_value.value_or(0), v.p_value);
  return d;
}

int MeasurementProtocol::SelfRuns(bool preflight) const {
  // With the Critic the baseline is measured twice as often as a candidate arm: its samples
  // are the A/A pre-flight that tells how noisy the benchmark is before anything is gated.
  return std::max(1, spec_.metric.repetitions) * (preflight ? 2 : 1);
}

SelfDecision MeasurementProtocol::JudgeSelf(const std::vector<double>& values, bool preflight,
                                            const std::vector<double>& durations) const {
  SelfDecision d;
  d.metric = Median(values);
  d.message = spec_.metric.name + " median " + FormatDouble(d.metric) + " over " +
              std::to_string(SelfRuns(preflight)) + " runs";
  if (!preflight) return d;
  // Never a reason to stop: a noisy benchmark gets more repetitions, as many as the time
  // budget affords, and the Critic says what that leaves detectable (docs/critic.md).
  NoiseBudget budget;
  if (!durations.empty()) budget.bench_s = Median(durations);
  if (spec_.search.max_nodes > 0) {
    budget.time_per_node_s = spec_.search.max_time_s / spec_.search.max_nodes;
  }
  const int reps = std::max(1, spec_.metric.repetitions);
  NoiseReport noise = AssessNoise(values, spec_.critic, reps, budget);
  d.message += "; noise: " + noise.message;
  if (noise.outliers > 0) d.flags.push_back("outliers");
  if (noise.noisy) d.flags.push_back("noisy");
  if (noise.recommended_repetitions > reps) d.events.push_back({EventKind::kNoise, noise.message});
  d.noise = std::move(noise);
  return d;
}

FinalFigures MeasurementProtocol::JudgeFinal(const std::vector<Sample>& base,
                                             const std::vector<Sample>& cand, uint64_t seed) const {
  const std::vector<double> b = SampleValues(base);
  const std::vector<double> c = SampleValues(cand);
  Rng rng(seed);
  Interval ci = BootstrapMedianRatioCI(b, c, 0.95, 2000, rng);
  double ratio = Median(c) / Median(b);
  if (spec_.metric.goal == Goal::kMin) {
    ratio = 1 / ratio;
    ci = Interval{1 / ci.high, 1 / ci.low};
  }
  return FinalFigures{ratio, ci.low, ci.high};
}

}  // namespace arbor
