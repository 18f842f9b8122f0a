// The steps of one node after its apply step (node_apply.cc): build, check, bench, decide and
// profile, and the run context of its commands. Each step ends with a Store::Apply that records
// its result and the next step, so a killed process resumes at the first step whose result was
// not recorded.
#include <algorithm>

#include "core/critic/gate.h"
#include "core/orchestrator/orchestrator.h"
#include "core/search/moves.h"
#include "util/duration.h"
#include "util/strings.h"

namespace arbor {
namespace {

std::string TopComponents(const Profile& p) {
  std::vector<Component> c = p.components;
  std::stable_sort(c.begin(), c.end(),
                   [](const Component& a, const Component& b) { return a.share > b.share; });
  std::vector<std::string> parts;
  for (size_t i = 0; i < c.size() && i < 4; ++i) {
    parts.push_back(c[i].name + " " + FormatDouble(c[i].share * 100, 3) + "%");
  }
  return Join(parts, ", ");
}

}  // namespace

RunContext Orchestrator::ContextAt(const Node& node, const std::string& worktree,
                                   const std::string& label) const {
  RunContext ctx;
  ctx.node = node.id;
  ctx.worktree = worktree;
  ctx.env = spec_.target.env;
  for (const auto& [k, v] : node.overlay) ctx.env[k] = v;
  ctx.label = label;
  return ctx;
}

RunContext Orchestrator::Context(const Node& node, const std::string& label) const {
  return ContextAt(node, cursor_.worktree(), label);
}

Result<bool> Orchestrator::EnsureBuilt(Node* node) {
  if (cursor_.IsBuilt(node->id)) return true;
  ARBOR_TRY(PrepareWorktree(*node));
  return RecordBuild(node, ports_.target->Build(Context(*node, "build")));
}

Status Orchestrator::PrepareWorktree(const Node& node) {
  if (cursor_.IsPrepared(node.id)) return {};
  ARBOR_TRY_ASSIGN(auto worktree, ports_.workspace->Prepare(node.id, node.commit));
  cursor_.Prepared(node.id, worktree);
  return {};
}

Result<bool> Orchestrator::RecordBuild(Node* node, const StepResult& r) {
  node->cost_s += r.duration_s;
  if (!r.ok()) {
    ARBOR_TRY(FailStep(node, FailedStage::kBuild, r, Outcome::kCrashed));
    return false;
  }
  cursor_.Built(node->id);
  return true;
}

Status Orchestrator::StepBuild(Node* node) {
  cursor_.NeedsBuild();  // the build step always builds
  // A batch's node builds in a lane, concurrently with the others' (build_lane.cc).
  const bool in_lane = !in_flight_.empty() || lanes_.count(node->id) != 0;
  ARBOR_TRY_ASSIGN(const bool built, in_lane ? BuildInLane(node) : EnsureBuilt(node));
  if (!built) return {};
  node->step = Step::kCheck;
  return Save(*node, {MakeEvent(node->id, "built", "build ok")});
}

std::vector<std::string> Orchestrator::KeysOverBase(const Node& node) const {
  if (!tree_.IsBranch(node)) return AppliedKeys(node);  // {id, key[, companion id, key]}
  std::vector<std::string> keys;
  for (const Node* b : tree_.BranchPath(node.id)) {
    for (std::string& k : AppliedKeys(b->id == node.id ? node : *b)) keys.push_back(std::move(k));
  }
  return keys;
}

void Orchestrator::NoteCheckFailure(const Node& node) {
  // A group that fails (a fix search's, a stack) says nothing of each of its candidates (a fix
  // search's change's own failure is already noted).
  if (node.critic.rca != RcaClass::kAccuracy || IsGroup(node)) return;
  const std::vector<std::string> keys = KeysOverBase(node);
  for (size_t i = 1; i < keys.size(); i += 2) check_failed_.insert(keys[i]);
}

bool Orchestrator::FailedCheckBefore(const Node& node) const {
  if (check_failed_.empty()) return false;
  const std::vector<std::string> keys = KeysOverBase(node);
  for (size_t i = 1; i < keys.size(); i += 2) {
    if (check_failed_.count(keys[i])) return true;
  }
  return false;
}

Status Orchestrator::StepCheck(Node* node) {
  ARBOR_TRY_ASSIGN(const bool built, EnsureBuilt(node));
  if (!built) return {};
  std::optional<Measurement> ran = TakeLaneCheck(*node);
  Measurement m = ran ? std::move(*ran) : ports_.target->Check(Context(*node, "check"));
  node->cost_s += m.step.duration_s;
  std::string flaky;
  if (m.step.kind == ExitKind::kSignaled) {
    // A crash may be flaky: run the check once more before believing it.
    Measurement again = ports_.target->Check(Context(*node, "check-rerun"));
    node->cost_s += again.step.duration_s;
    if (again.step.ok()) {
      node->critic.flags.push_back("flaky");
      flaky = " (after a flaky " + DescribeStep(m.step) + ")";
      m = again;
    }
  }
  // One pass of a change whose check failed before (alone, or as a side of a pair) is weak
  // evidence that it is correct: it must pass kCleanRuns times in a row, as a state the
  // re-check calls clean does (a flaky failure passes once often enough to be kept otherwise).
  if (m.step.ok() && FailedCheckBefore(*node)) {
    for (int i = 1; i < kCleanRuns && m.step.ok(); ++i) {
      Measurement again = ports_.target->Check(Context(*node, "check-again-" + std::to_string(i)));
      node->cost_s += again.step.duration_s;
      if (!again.step.ok()) m = std::move(again);
    }
  }
  if (m.step.kind == ExitKind::kFailed) {
    ARBOR_TRY_ASSIGN(const bool handled, RecheckIncumbent(node, m.step, Recheck::kCheck));
    if (handled) return {};
    return FailStep(node, FailedStage::kCheck, m.step, Outcome::kReverted);
  }
  if (!m.step.ok()) return FailStep(node, FailedStage::kCheck, m.step, Outcome::kCrashed);
  std::vector<Sample> samples;
  std::string message = "check passed" + flaky;
  if (m.value) {
    samples.push_back(Sample{node->id, "check", 0, *m.value, {}});
    message += ", accuracy " + FormatDouble(*m.value);
    if (node->id != kRootId) {
      ARBOR_TRY_ASSIGN(auto root_samples, SamplesOf(kRootId));
      auto base = SamplesOfArm(root_samples, "check");
      if (!base.empty() && base[0].value - *m.value > spec_.accuracy.max_drop) {
        node->critic.rca = RcaClass::kAccuracy;
        PublishInput prune;
        prune.prune_direction = true;
        PublishConstraints(node, prune);
        return Finish(node, Outcome::kReverted,
                      "accuracy: dropped from " + FormatDouble(base[0].value) + " to " +
                          FormatDouble(*m.value) + " (max_drop " +
                          FormatDouble(spec_.accuracy.max_drop) + ")",
                      "reverted");
      }
    }
  }
  // A fix search's group (moves.h FixSearch) is a probe: its check passing says the fix is
  // among its companions, which the search bisects next; a group of passengers is never kept,
  // so it is not measured either.
  // Not a no-gain revert (no move measures or retries it again: it was not measured), and no
  // root cause: nothing failed.
  const size_t group = CompanionKeys(*node).size();
  if (IsFixGroup(*node)) {
    node->critic.rca = RcaClass::kNone;
    AddFlag(node, kProbeFlag);
    return Finish(node, Outcome::kReverted,
                  "probe: " + message + " with its group: one of its " + std::to_string(group) +
                      " companions may fix it (the fix search halves the group next; a group "
                      "is never kept with its passengers)",
                  "reverted");
  }
  node->step = Step::kBench;
  return Save(*node, {MakeEvent(node->id, "checked", message)}, samples);
}

Status Orchestrator::StepBench(Node* node) {
  ARBOR_TRY_ASSIGN(const bool built, EnsureBuilt(node));
  if (!built) return {};
  // The baseline (A/A pre-flight) and, without the Critic (ablation), a candidate: the node's
  // own runs; a candidate is then judged against the parent's recorded ones.
  if (node->id == kRootId || !critic_) return BenchSelf(node);
  return BenchInterleaved(node);
}

Status Orchestrator::StepDecide(Node* node) {
  if (node->id == kRootId) {
    node->outcome = Outcome::kBaseline;
    node->step = Step::kProfile;
    return Save(*node, {});
  }
  std::string reason;
  if (critic_) {
    ARBOR_TRY(Confirm(node));
    if (node->step == Step::kDone || !node->critic.confirmed) return {};  // reverted / stopped
    reason = "confirmed " + FormatDouble(node->gain.value_or(0) * 100, 3) +
             "% (95% CI of the speedup ×" + FormatDouble(node->critic.ci_low.value_or(0), 4) +
             "–×" + FormatDouble(node->critic.ci_high.value_or(0), 4) +
             ", p=" + FormatDouble(node->critic.p_value.value_or(1), 3) + ")";
  } else {
    ARBOR_TRY_ASSIGN(auto parent_samples, SamplesOf(tree_.BaseOf(node->id)));
    ARBOR_TRY_ASSIGN(auto own, SamplesOf(node->id));
    GateInput in;
    in.metric = &spec_.metric;
    in.critic = &spec_.critic;
    in.parent = SamplesOfArm(parent_samples, "self");
    in.candidate = SamplesOfArm(own, "self");
    Verdict v = ports_.gate->Judge(in);
    node->gain = v.gain;
    if (!v.keep) {
      node->critic.rca = RcaClass::kNoGain;
      return Finish(node, Outcome::kReverted, "no_gain: " + v.reason, "reverted");
    }
    reason = v.reason;
  }
  node->outcome = Outcome::kKept;
  node->diagnosis = reason;
  node->step = Step::kProfile;
  node->finished_s = CampaignTime();
  last_keep_seq_ = std::max(last_keep_seq_, node->seq);
  const NodeId base = tree_.BaseOf(node->id);
  // A branch node kept: the branch above it is carried onto the main line with it (its state
  // holds their changes), and the branch becomes the campaign's best path (docs/search.md).
  std::vector<Node> carried = CarryBranch(*node);
  stats_.Observe(*node);
  std::vector<Event> events;
  for (const Node& c : carried) events.push_back(MakeEvent(c.id, "kept", c.diagnosis));
  if (!carried.empty()) {
    reason += "; the main line moves to the branch of #" + std::to_string(carried.front().id);
    node->diagnosis = reason;
  }
  events.insert(events.begin(), MakeEvent(node->id, "kept", reason));
  // Re-queued ideas waiting under the old incumbent will never run there: the state moved.
  // They move along under the new incumbent (moves.h CarryOver), with what this keep makes
  // possible (PrerequisiteRetries); the old pending nodes are closed as superseded.
  tree_.Upsert(*node);  // the rules below see it kept
  std::vector<Node> others = MovesAtKeep(*node);
  for (const Node& q : others) events.push_back(MakeEvent(q.id, "requeued", q.diagnosis));
  others.insert(others.begin(), carried.begin(), carried.end());
  for (Node& p :
       SupersedePending(base, node->id,
                        "superseded: the incumbent moved to #" + std::to_string(node->id) +
                            " (re-queued there unless the new path rules it out)")) {
    others.push_back(std::move(p));
  }
  // Recorded first, promoted second: if the process dies in between, Reconcile() promotes.
  ARBOR_TRY(SaveMany(*node, others, std::move(events)));
  ARBOR_TRY(ports_.workspace->Promote(node->commit));
  if (cursor_.base() != kNoNode) {  // the old incumbent is no longer anyone's base
    ARBOR_TRY(ports_.workspace->Release(cursor_.base()));
    cursor_.BaseReleased();
  }
  return {};
}

Status Orchestrator::StepProfile(Node* node) {
  std::optional<Profile> profile;
  std::string message;
  if (node->id != kRootId && !spec_.search.reprofile) {
    message = "re-profiling off (ablation): scoring keeps the baseline's profile";
  } else {
    ARBOR_TRY_ASSIGN(const bool built, EnsureBuilt(node));
    if (!built) return {};
    ProfileResult r = ports_.target->Profile(Context(*node, "profile"));
    if (r.step.ok() && r.profile) {
      profile = r.profile;
      message = "bottlenecks: " + TopComponents(*r.profile);
    } else if (r.step.ok()) {
      message = "no profile command: actions are scored against the whole program";
    } else {
      message =
          "profile failed (" + DescribeStep(r.step) + "); scoring keeps the last good profile";
    }
  }
  node->step = Step::kDone;
  std::vector<Event> events{MakeEvent(node->id, "reprofiled", message)};
  std::vector<Node> requeued;
  if (profile && node->id != kRootId && critic_) {
    requeued = IntrospectAfterKeep(*node, *profile);
    for (const Node& q : requeued) events.push_back(MakeEvent(q.id, "requeued", q.diagnosis));
  }
  ARBOR_TRY(SaveMany(*node, requeued, std::move(events), {}, profile));
  cursor_.Forget(node->id);
  return ports_.workspace->Release(node->id);
}

}  // namespace arbor
