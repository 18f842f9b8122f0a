// Measuring a node as the Critic's protocol asks (core/critic/protocol.h): the baseline's A/A
// pre-flight, a candidate's A/B against the state it is judged on, and the fresh confirmation
// before a keep. The protocol says which runs to take and what each verdict means; this file
// takes the runs, stores every sample as it is taken, and applies the decisions. After a kill
// the decisions are recomputed from the stored samples (the gate is deterministic for a given
// seed), so nothing is measured twice.
#include <algorithm>
#include <optional>

#include "core/critic/plausibility.h"
#include "core/critic/protocol.h"
#include "core/orchestrator/orchestrator.h"
#include "core/search/moves.h"
#include "util/strings.h"

namespace arbor {
namespace {

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
  const bool preflight = critic_ && node->id == kRootId;
  ARBOR_TRY_ASSIGN(auto all, SamplesOf(node->id));
  std::vector<Sample> done = SamplesOfArm(all, "self");
  const int reps = protocol_.SelfRuns(preflight);
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
  SelfDecision d = protocol_.JudgeSelf(SampleValues(done), preflight, durations);
  node->metric = d.metric;
  node->step = Step::kDecide;
  if (d.noise) {
    meta_.noise_cv = d.noise->cv;
    meta_.noise_mde = d.noise->mde;
    meta_.repetitions = d.noise->recommended_repetitions;
  }
  for (const std::string& flag : d.flags) AddFlag(node, flag);
  std::vector<Event> events{MakeEvent(node->id, "measured", d.message)};
  for (const ProtocolEvent& e : d.events) events.push_back(MakeEvent(node->id, e));
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

Result<bool> Orchestrator::MeasureUntilDecided(Node* node, Comparison which, int reps_per_look,
                                               bool replication, Verdict* verdict) {
  // Judged against its base: its parent, or for a branch node the incumbent it branched under.
  const Node& parent = *tree_.Find(tree_.BaseOf(node->id));
  ARBOR_TRY_ASSIGN(const bool built, EnsureBuilt(node));
  if (!built) return false;
  ARBOR_TRY_ASSIGN(const bool base_built, EnsureBaseBuilt(parent, node));
  if (!base_built) return false;
  ARBOR_TRY_ASSIGN(auto all, SamplesOf(node->id));
  const std::string base_name(SampleArmName(BaseArmOf(which)));
  const std::string cand_name(SampleArmName(CandArmOf(which)));
  AbState state;
  state.base = SamplesOfArm(all, base_name);
  state.cand = SamplesOfArm(all, cand_name);
  state.reps = reps_per_look;
  state.replication = replication;
  state.seed = spec_.seed * 1000003ULL + static_cast<uint64_t>(node->id) * 7919ULL +
               (which == Comparison::kAb ? 0 : 1);

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
  for (const AbRun& run : protocol_.Warmup(state)) {
    ARBOR_TRY_ASSIGN(auto r, measure(run.base, run.rep, false));
    if (!r.has_value()) return false;
  }
  while (true) {
    AbNext next = protocol_.Next(state);
    if (next.runs.empty()) {
      *verdict = std::move(next.verdict);
      return true;
    }
    for (const AbRun& run : next.runs) {
      if (stop_requested_.load()) return false;
      ARBOR_TRY_ASSIGN(auto r, measure(run.base, run.rep, true));
      if (!r.has_value()) return false;
      (run.base ? state.base : state.cand).push_back(*r);
    }
  }
}

JudgeContext Orchestrator::JudgeContextOf(const Node& node) const {
  JudgeContext ctx;
  ctx.base = tree_.Find(tree_.BaseOf(node.id));  // what it is judged against
  ctx.noise_cv = meta_.noise_cv;
  const ActionSpec* as = PlausibleAs(catalog_, node);
  ctx.plausibility = [this, &node, as](double speedup) {
    return PlausibilityOfNode(node, as, kb_entries_, spec_, speedup);
  };
  return ctx;
}

void Orchestrator::ApplyFigures(Node* node, const NodeDecision& d) {
  if (d.metric) node->metric = d.metric;
  if (d.gain) node->gain = d.gain;
  if (d.p_value) node->critic.p_value = d.p_value;
  if (d.ci_low) node->critic.ci_low = d.ci_low;
  if (d.ci_high) node->critic.ci_high = d.ci_high;
  if (d.confirmed) node->critic.confirmed = true;
  if (d.rca != RcaClass::kNone) node->critic.rca = d.rca;
  for (const std::string& flag : d.flags) AddFlag(node, flag);
}

Status Orchestrator::BenchInterleaved(Node* node) {
  // What a measure lane measured of its first look, saved first as if measured now
  // (measure_lane.cc): the loop below then finds it stored.
  ARBOR_TRY(AdoptMeasureLane(node));
  Verdict v;
  ARBOR_TRY_ASSIGN(auto decided,
                   MeasureUntilDecided(node, Comparison::kAb, RepetitionsFor(*node), false, &v));
  if (!decided) return {};
  ARBOR_TRY_ASSIGN(auto all, SamplesOf(node->id));
  const NodeDecision d = protocol_.JudgeAb(SamplesOfArm(all, "base"), SamplesOfArm(all, "cand"), v,
                                           JudgeContextOf(*node));
  return ApplyDecision(node, d);
}

Status Orchestrator::ApplyDecision(Node* node, const NodeDecision& d) {
  if (d.verdict == NodeVerdict::kUnkeepIncumbent) {
    return UnkeepAnomalousIncumbent(tree_.BaseOf(node->id), d.incumbent_now, node);
  }
  ApplyFigures(node, d);
  std::vector<Event> events;
  for (const ProtocolEvent& e : d.events) events.push_back(MakeEvent(node->id, e));
  if (d.verdict == NodeVerdict::kRevert) {
    if (!events.empty()) ARBOR_TRY(Save(*node, std::move(events)));
    return Finish(node, Outcome::kReverted, d.diagnosis, "reverted");
  }
  if (d.verdict == NodeVerdict::kConfirm) node->step = Step::kDecide;
  if (d.verdict == NodeVerdict::kKeep && events.empty()) return {};
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
  ARBOR_TRY_ASSIGN(auto decided,
                   MeasureUntilDecided(node, Comparison::kConfirm,
                                       protocol_.ConfirmationReps(*node, RepetitionsFor(*node)),
                                       protocol_.ConfirmationReplicates(*node), &v));
  if (!decided) return {};
  ARBOR_TRY_ASSIGN(auto all, SamplesOf(node->id));
  const NodeDecision d =
      protocol_.JudgeConfirmation(*node, SamplesOfArm(all, "base"), SamplesOfArm(all, "cand"),
                                  SamplesOfArm(all, "confirm-base"),
                                  SamplesOfArm(all, "confirm-cand"), v, JudgeContextOf(*node));
  return ApplyDecision(node, d);
}

}  // namespace arbor
