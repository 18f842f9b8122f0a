// The Critic's measurement protocol (issue 3, "Guardrails"): the baseline's A/A pre-flight,
// interleaved A/B runs of a candidate against its parent after a discarded warm-up, a
// sequential keep test, and a fresh interleaved confirmation before anything is kept.
// Every sample is stored as it is taken; after a kill the decisions are recomputed from the
// stored samples (the gate is deterministic for a given seed), so nothing is measured twice.
#include <algorithm>
#include <optional>

#include "core/critic/critic_gate.h"
#include "core/critic/plausibility.h"
#include "core/critic/statistics.h"
#include "core/orchestrator/orchestrator.h"
#include "core/search/moves.h"
#include "util/strings.h"

namespace arbor {
namespace {

std::string Percent(double f) { return (f >= 0 ? "+" : "") + FormatDouble(f * 100, 3) + "%"; }

// The action a node's gain is judged plausible as. A group's gain is its ideas' together:
// bounded as a whole-program change (no action), not by its own candidate's targets (a stack of
// sixteen small gains may well pass one idea's Amdahl bound).
const ActionSpec* PlausibleAs(const Catalog& catalog, const Node& node) {
  return IsGroup(node) ? nullptr : catalog.FindAction(node.action_id);
}

}  // namespace

bool StateFailed(const StepResult& r) {
  return !r.infrastructure && (r.kind == ExitKind::kFailed || r.kind == ExitKind::kSignaled);
}

int Orchestrator::Repetitions() const {
  if (meta_.repetitions > 0) return static_cast<int>(meta_.repetitions);
  return std::max(1, spec_.metric.repetitions);
}

int Orchestrator::RepetitionsFor(const Node& node) const {
  return Repetitions() << RemeasureScale(tree_, node);
}

Status Orchestrator::BenchSelf(Node* node) {
  // With the Critic the baseline is measured twice as often as a candidate arm: its samples
  // are the A/A pre-flight that tells how noisy the benchmark is before anything is gated.
  const bool preflight = critic_ && node->id == kRootId;
  ARBOR_TRY_ASSIGN(auto all, SamplesOf(node->id));
  std::vector<Sample> done = SamplesOfArm(all, "self");
  int reps = std::max(1, spec_.metric.repetitions) * (preflight ? 2 : 1);
  std::optional<MeasurementScope> scope;
  if (static_cast<int>(done.size()) < reps) scope.emplace(ports_.target, node->id);
  std::vector<double> durations;  // of the runs taken by this process (the time cap's input)
  for (int rep = static_cast<int>(done.size()); rep < reps; ++rep) {
    if (stop_requested_.load()) return {};
    RunContext ctx = Context(*node, "bench-" + std::to_string(rep));
    ctx.repetition = rep;
    Measurement m = ports_.target->Bench(ctx);
    node->cost_s += m.step.duration_s;
    if (!m.step.ok() || !m.value)
      return FailStep(node, FailedStage::kBench, m.step, Outcome::kCrashed);
    durations.push_back(m.step.duration_s);
    Sample s{node->id, "self", rep, *m.value, m.extra};
    done.push_back(s);
    ARBOR_TRY(Save(*node, {}, {s}));
  }
  std::vector<double> values = SampleValues(done);
  node->metric = Median(values);
  node->step = Step::kDecide;
  std::string message = spec_.metric.name + " median " + FormatDouble(*node->metric) + " over " +
                        std::to_string(reps) + " runs";
  std::vector<Event> events;
  if (preflight) {
    // Never a reason to stop: a noisy benchmark gets more repetitions, as many as the time
    // budget affords, and the Critic says what that leaves detectable (docs/critic.md).
    NoiseBudget budget;
    if (!durations.empty()) budget.bench_s = Median(durations);
    if (spec_.search.max_nodes > 0) {
      budget.time_per_node_s = spec_.search.max_time_s / spec_.search.max_nodes;
    }
    NoiseReport noise =
        AssessNoise(values, spec_.critic, std::max(1, spec_.metric.repetitions), budget);
    meta_.noise_cv = noise.cv;
    meta_.noise_mde = noise.mde;
    meta_.repetitions = noise.recommended_repetitions;
    message += "; noise: " + noise.message;
    if (noise.outliers > 0) AddFlag(node, "outliers");
    if (noise.noisy) AddFlag(node, "noisy");
    if (noise.recommended_repetitions > std::max(1, spec_.metric.repetitions)) {
      events.push_back(MakeEvent(node->id, "noise", noise.message));
    }
  }
  events.insert(events.begin(), MakeEvent(node->id, "measured", message));
  return Save(*node, std::move(events));
}

Result<bool> Orchestrator::EnsureBaseBuilt(const Node& parent, Node* node) {
  if (cursor_.IsBase(parent.id)) return true;
  if (cursor_.base() != kNoNode) ARBOR_TRY(ports_.workspace->Release(cursor_.base()));
  cursor_.BaseReleased();
  ARBOR_TRY_ASSIGN(auto wt, ports_.workspace->Prepare(parent.id, parent.commit));
  StepResult r = ports_.target->Build(ContextAt(parent, wt, "build-base"));
  if (!r.ok()) {
    r.detail = "the incumbent #" + std::to_string(parent.id) + " no longer builds" +
               (r.detail.empty() ? "" : ": " + r.detail);
    // With no node to finish, the caller decides.
    if (node != nullptr)
      ARBOR_TRY(FailStep(node, FailedStage::kInfrastructure, r, Outcome::kCrashed));
    return false;
  }
  cursor_.BaseBuilt(parent.id, wt);
  return true;
}

Result<bool> Orchestrator::MeasureUntilDecided(Node* node, SampleArm base_arm, SampleArm cand_arm,
                                               int reps_per_look, bool replication,
                                               Verdict* verdict) {
  // Judged against its base: its parent, or for a branch node the incumbent it branched under.
  const Node& parent = *tree_.Find(tree_.BaseOf(node->id));
  ARBOR_TRY_ASSIGN(const bool built, EnsureBuilt(node));
  if (!built) return false;
  ARBOR_TRY_ASSIGN(const bool base_built, EnsureBaseBuilt(parent, node));
  if (!base_built) return false;
  ARBOR_TRY_ASSIGN(auto all, SamplesOf(node->id));
  const std::string base_name(SampleArmName(base_arm));
  const std::string cand_name(SampleArmName(cand_arm));
  std::vector<Sample> base = SamplesOfArm(all, base_name);
  std::vector<Sample> cand = SamplesOfArm(all, cand_name);

  // Both arms on the same machine when the executor can hold one (Target::BeginMeasurement).
  std::optional<MeasurementScope> scope;
  auto measure = [&](bool is_base, int rep, bool keep) -> Result<std::optional<Sample>> {
    const Node& who = is_base ? parent : *node;
    RunContext ctx = ContextAt(who, is_base ? cursor_.base_worktree() : cursor_.worktree(),
                               (is_base ? base_name : cand_name) + "-" + std::to_string(rep));
    ctx.node = node->id;  // logs and $ARBOR_NODE belong to the node being judged
    ctx.repetition = rep;
    Measurement m = ports_.target->Bench(ctx);
    node->cost_s += m.step.duration_s;
    if (!m.step.ok() || !m.value) {
      if (is_base && StateFailed(m.step)) {
        // The incumbent's own run failed: the path is flaky, not this candidate (recheck.cc).
        scope.reset();  // the re-check builds and measures the path's states on its own
        ARBOR_TRY_ASSIGN(const bool handled, RecheckIncumbent(node, m.step, Recheck::kBench));
        if (handled) return std::optional<Sample>();
      }
      if (is_base) {
        // Not un-kept (the baseline itself, the environment failing on every state, or no
        // Critic): still not the candidate's fault; it runs once more (RCA "infrastructure"
        // re-queues once and blames nothing).
        m.step.infrastructure = true;
        m.step.detail = "the incumbent's benchmark failed" +
                        (m.step.detail.empty() ? "" : ": " + m.step.detail);
      }
      ARBOR_TRY(FailStep(node, is_base ? FailedStage::kInfrastructure : FailedStage::kBench, m.step,
                         Outcome::kCrashed));
      return std::optional<Sample>();
    }
    Sample s{node->id, is_base ? base_name : cand_name, rep, *m.value, m.extra};
    // The command's duration: the wall-time witness of an anomaly (core/critic/plausibility.h).
    if (m.step.duration_s > 0) s.extra["wall_s"] = m.step.duration_s;
    if (keep) ARBOR_TRY(Save(*node, {}, {s}));
    return std::optional<Sample>(s);
  };

  scope.emplace(ports_.target, node->id);
  // Warm-up: one discarded run of each arm (caches, page faults, CPU frequency).
  if (base.empty() && cand.empty()) {
    for (bool is_base : {true, false}) {
      ARBOR_TRY_ASSIGN(auto r, measure(is_base, -1, false));
      if (!r.has_value()) return false;
    }
  }
  int target = reps_per_look;
  while (true) {
    while (static_cast<int>(std::min(base.size(), cand.size())) < target ||
           base.size() != cand.size()) {
      if (stop_requested_.load()) return false;
      int i = static_cast<int>(std::min(base.size(), cand.size()));
      const bool base_first = BaseRunsFirst(i);
      for (bool is_base : {base_first, !base_first}) {
        auto& arm = is_base ? base : cand;
        if (static_cast<int>(arm.size()) > i) continue;
        ARBOR_TRY_ASSIGN(auto r, measure(is_base, i, true));
        if (!r.has_value()) return false;
        arm.push_back(*r);
      }
    }
    GateInput in;
    in.metric = &spec_.metric;
    in.critic = &spec_.critic;
    in.parent = base;
    in.candidate = cand;
    in.repetitions = reps_per_look;
    in.replication = replication;
    in.seed = spec_.seed * 1000003ULL + static_cast<uint64_t>(node->id) * 7919ULL +
              (cand_arm == SampleArm::kCand ? 0 : 1);
    *verdict = ports_.gate->Judge(in);
    if (verdict->decision == Decision::kMore && verdict->more_samples > 0) {
      target += verdict->more_samples;
      continue;
    }
    break;
  }
  return true;
}

Status Orchestrator::BenchInterleaved(Node* node) {
  // What a measure lane measured of its first look, saved first as if measured now
  // (measure_lane.cc): the loop below then finds it stored.
  ARBOR_TRY(AdoptMeasureLane(node));
  Verdict v;
  ARBOR_TRY_ASSIGN(auto decided, MeasureUntilDecided(node, SampleArm::kBase, SampleArm::kCand,
                                                     RepetitionsFor(*node), false, &v));
  if (!decided) return {};
  ARBOR_TRY_ASSIGN(auto all, SamplesOf(node->id));
  std::vector<Sample> base = SamplesOfArm(all, "base");
  std::vector<Sample> cand = SamplesOfArm(all, "cand");
  // An incumbent that now measures an order of magnitude off its kept value was an anomaly:
  // this verdict, and every one since it was kept, compared against a broken number.
  const Node* parent = tree_.Find(tree_.BaseOf(node->id));  // what it is judged against
  const double base_now = Median(SampleValues(base));
  if (parent->id != kRootId && parent->outcome == Outcome::kKept && parent->metric &&
      DisagreesByOrders(*parent->metric, base_now)) {
    return UnkeepAnomalousIncumbent(parent->id, base_now, node);
  }
  node->metric = Median(SampleValues(cand));
  node->gain = v.gain;
  node->critic.p_value = v.p_value;
  // The interval goes on every decision, a revert's too: how far a revert lies from the keep
  // threshold decides whether measuring it again can still change it (CallDistance).
  if (v.ci_high > 0) {
    node->critic.ci_low = v.ci_low;
    node->critic.ci_high = v.ci_high;
  }
  std::string message = "A/B over " + std::to_string(cand.size()) + " pairs: " + Percent(v.gain) +
                        " (p=" + FormatDouble(v.p_value, 3) + ")";
  int outliers = CountOutliers(SampleValues(base)) + CountOutliers(SampleValues(cand));
  if (outliers > 0) {
    AddFlag(node, "outliers");
    message += "; " + std::to_string(outliers) + " outlier(s) flagged, kept in the data";
  }
  // Drift: the incumbent measured now vs when it was kept. Interleaving protects the verdict;
  // the drift is recorded so the user knows the machine moved.
  std::vector<Event> events;
  if (parent->metric && *parent->metric != 0) {
    double drift = Median(SampleValues(base)) / *parent->metric - 1;
    double floor = std::max(3 * meta_.noise_cv, spec_.critic.min_effect);
    if (std::abs(drift) > floor) {
      AddFlag(node, "drift");
      events.push_back(MakeEvent(node->id, "rebaselined",
                                 "the incumbent #" + std::to_string(parent->id) + " now measures " +
                                     FormatDouble(Median(SampleValues(base))) + " (" +
                                     Percent(drift) +
                                     " since it was kept); verdicts use the interleaved runs"));
    }
  }
  // Inflation: a benchmark that did less work than the baseline is not faster.
  auto work = [](const std::vector<Sample>& s) {
    std::vector<double> w;
    for (const auto& x : s) {
      auto it = x.extra.find("work");
      if (it != x.extra.end()) w.push_back(it->second);
    }
    return w;
  };
  std::vector<double> wb = work(base);
  std::vector<double> wc = work(cand);
  if (v.decision == Decision::kKeep && !wb.empty() && !wc.empty() &&
      Median(wc) < Median(wb) * 0.99) {
    node->critic.rca = RcaClass::kInflation;
    if (!events.empty()) ARBOR_TRY(Save(*node, std::move(events)));
    return Finish(node, Outcome::kReverted,
                  "inflation: the benchmark did less work (" + FormatDouble(Median(wc)) + " vs " +
                      FormatDouble(Median(wb)) + "), so its speed is not comparable",
                  "reverted");
  }
  if (v.decision != Decision::kKeep) {
    node->critic.rca = RcaClass::kNoGain;
    // More runs could still tell (Remeasure's second looks, core/search/moves.h).
    if (v.inconclusive) AddFlag(node, "inconclusive");
    if (!events.empty()) ARBOR_TRY(Save(*node, std::move(events)));
    return Finish(node, Outcome::kReverted, "no_gain: " + v.reason, "reverted");
  }
  node->step = Step::kDecide;
  events.push_back(MakeEvent(node->id, "measured", message));
  // A win beyond what could explain it is an anomaly: Confirm() re-runs the check and the
  // benchmark and keeps it only with evidence (core/critic/plausibility.h).
  Plausibility p =
      PlausibilityOfNode(*node, PlausibleAs(catalog_, *node), kb_entries_, spec_, v.speedup);
  if (p.anomaly) {
    AddFlag(node, "anomaly");
    events.push_back(MakeEvent(node->id, "anomaly",
                               p.message + "; median " + FormatDouble(v.candidate_median) + " vs " +
                                   FormatDouble(v.parent_median) +
                                   "; re-running the check and the benchmark"));
  }
  return Save(*node, std::move(events));
}

Status Orchestrator::Confirm(Node* node) {
  const bool anomaly = HasFlag(*node, "anomaly");
  {
    // Nothing is kept on one passing check: a check that fails some of the time passes once
    // often enough to ship a broken state (and a broken state can print a broken number).
    ARBOR_TRY_ASSIGN(const bool built, EnsureBuilt(node));
    if (!built) return {};
    Measurement m =
        ports_.target->Check(Context(*node, anomaly ? "check-anomaly" : "check-confirm"));
    node->cost_s += m.step.duration_s;
    if (!m.step.ok() && anomaly) {
      node->critic.rca = RcaClass::kAnomaly;
      return Finish(node, Outcome::kReverted,
                    "anomaly: the check failed when re-run (" + DescribeStep(m.step) +
                        "): the implausible gain came with a broken state",
                    "reverted");
    }
    if (!m.step.ok()) {
      m.step.detail = "passed once, failed when re-run before the keep (a flaky check)" +
                      (m.step.detail.empty() ? "" : ": " + m.step.detail);
      if (m.step.kind == ExitKind::kFailed) {
        // The path may be what fails now and then, as in the check step (recheck.cc).
        ARBOR_TRY_ASSIGN(const bool handled, RecheckIncumbent(node, m.step, Recheck::kCheck));
        if (handled) return {};
      }
      return FailStep(node, FailedStage::kCheck, m.step, Outcome::kReverted);
    }
  }
  Verdict v;
  // A replication, except for an anomaly: an implausible gain needs a significance of its own.
  ARBOR_TRY_ASSIGN(auto decided,
                   MeasureUntilDecided(node, SampleArm::kConfirmBase, SampleArm::kConfirmCand,
                                       RepetitionsFor(*node) * (anomaly ? 2 : 1), !anomaly, &v));
  if (!decided) return {};
  ARBOR_TRY_ASSIGN(auto all, SamplesOf(node->id));
  const std::vector<Sample> base = SamplesOfArm(all, "confirm-base");
  const std::vector<Sample> cand = SamplesOfArm(all, "confirm-cand");
  const Node* parent = tree_.Find(tree_.BaseOf(node->id));  // what it is judged against
  const double base_now = Median(SampleValues(base));
  if (parent->id != kRootId && parent->outcome == Outcome::kKept && parent->metric &&
      DisagreesByOrders(*parent->metric, base_now)) {
    return UnkeepAnomalousIncumbent(parent->id, base_now, node);
  }
  if (v.decision != Decision::kKeep) {
    node->critic.rca = anomaly ? RcaClass::kAnomaly : RcaClass::kNotConfirmed;
    return Finish(node, Outcome::kReverted,
                  std::string(anomaly ? "anomaly: not reproduced by" : "not confirmed by") +
                      " a fresh A/B run: " + v.reason,
                  "reverted");
  }
  if (anomaly) {
    const double first =
        ArmSpeedup(SamplesOfArm(all, "base"), SamplesOfArm(all, "cand"), spec_.metric.goal);
    Plausibility p =
        PlausibilityOfNode(*node, PlausibleAs(catalog_, *node), kb_entries_, spec_, v.speedup);
    AnomalyVerdict av = JudgeRerun(p, first, v.speedup, base, cand, spec_);
    Event e = MakeEvent(node->id, "anomaly", av.reason);
    if (!av.keep) {
      node->critic.rca = RcaClass::kAnomaly;
      ARBOR_TRY(Save(*node, {e}));
      return Finish(node, Outcome::kReverted, "anomaly: " + av.reason, "reverted");
    }
    ARBOR_TRY(Save(*node, {e}));
  }
  // Reported figures come from the confirmation run.
  node->metric = Median(SampleValues(SamplesOfArm(all, "confirm-cand")));
  node->gain = v.gain;
  node->critic.confirmed = true;
  node->critic.ci_low = v.ci_low;
  node->critic.ci_high = v.ci_high;
  node->critic.p_value = std::max(node->critic.p_value.value_or(0), v.p_value);
  return {};
}

}  // namespace arbor
