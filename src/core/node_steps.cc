// The steps of one node (apply, build, check, bench, decide, profile). Each step ends with a
// Store::Apply that records its result and the next step, so a killed process resumes at the
// first step whose result was not recorded.
#include <algorithm>

#include "core/gate.h"
#include "core/moves.h"
#include "core/orchestrator.h"
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

SpecialistResult ImplementPair(Specialist* specialist, const Task& companion, Task own) {
  SpecialistResult first = specialist->Implement(companion);
  const std::string what = CandidateKey(companion.action->id, companion.value);
  if (first.status != SpecialistResult::Status::kApplied) {
    first.diagnosis = "its companion " + what + ": " + first.diagnosis;
    return first;
  }
  own.parent_overlay = first.overlay;
  SpecialistResult second = specialist->Implement(own);
  second.summary = what + ": " + first.summary + "; then " + second.summary;
  second.duration_s += first.duration_s;
  second.usage.prompt_tokens += first.usage.prompt_tokens;
  second.usage.completion_tokens += first.usage.completion_tokens;
  second.usage.cost += first.usage.cost;
  second.usage.rounds += first.usage.rounds;
  for (auto& f : first.findings) second.findings.push_back(std::move(f));
  for (auto& q : first.questions) second.questions.push_back(std::move(q));
  for (auto& a : first.proposals) second.proposals.push_back(std::move(a));
  if (!first.prompt.empty()) {
    second.prompt = first.prompt + (second.prompt.empty() ? "" : "\n\n" + second.prompt);
  }
  if (second.backend.empty() || second.backend == "builtin") second.backend = first.backend;
  return second;
}

SpecialistResult Orchestrator::Drop(const Node& node) {
  SpecialistResult r;
  r.status = SpecialistResult::Status::kApplied;
  const std::string key = DroppedKey(node).value_or("");
  r.overlay = OverlayWithout(tree_, catalog_, node.parent, key);
  r.summary = "took " + key + " back out of the environment";
  return r;
}

SpecialistResult ImplementSwap(Specialist* specialist, const Task& companion,
                               const std::string& dropped) {
  SpecialistResult r = specialist->Implement(companion);
  r.summary = "took " + dropped + " back out of the environment; " + r.summary;
  return r;
}

std::optional<Task> Orchestrator::CompanionTask(const Node& node, const std::string& worktree,
                                                ActionSpec* copy, bool* missing) {
  *missing = false;
  std::optional<std::string> with = CompanionKey(node);
  if (!with) return std::nullopt;
  auto [id, value] = SplitCandidateKey(*with);
  const ActionSpec* action = catalog_.FindAction(id);
  if (action == nullptr) {
    *missing = true;
    return std::nullopt;
  }
  *copy = *action;
  Node as = node;
  as.action_id = id;
  as.value = value;
  Task task = MakeTask(as, copy, worktree);
  // A swap's companion goes on top of the parent's state without the change it replaces.
  if (DroppedKey(node)) task.parent_overlay = Drop(node).overlay;
  return task;
}

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
  return ContextAt(node, worktree_, label);
}

Task Orchestrator::MakeTask(const Node& node, const ActionSpec* action,
                            const std::string& worktree) {
  const Node* parent = tree_.Find(node.parent);
  Task task;
  task.node = node.id;
  task.action = action;
  task.value = node.value;
  task.worktree = worktree;
  task.base_commit = parent->commit;
  task.parent_overlay = parent->overlay;
  task.base_env = spec_.target.env;
  // Only an agent (command or LLM backend) reads the context and the known ids; a declarative
  // action is applied as declared, so its task skips assembling them (per-node engine cost).
  if (action->apply.kind == ApplySpec::Kind::kAgent) {
    task.context = BuildContext(parent->id, action, node.value, action->apply.agent);
    task.known_actions = KnownActions();
  }
  return task;
}

Status Orchestrator::StepApply(Node* node) {
  const Node* parent = tree_.Find(node->parent);
  ARBOR_CHECK(parent != nullptr, "node without parent");
  if (in_flight_.count(node->id) != 0) {
    // Started with its batch: its worktree exists and the specialist is at work.
    SpecialistResult r = TakeResult(node->id);
    prepared_node_ = node->id;
    built_node_ = kNoNode;
    return RecordApply(node, std::move(r));
  }
  // A previous process may have died half-way through applying: always start from a fresh
  // worktree at the parent's commit.
  ARBOR_TRY(ports_.workspace->Release(node->id));
  auto wt = ports_.workspace->Prepare(node->id, parent->commit);
  if (!wt.ok()) return wt.error();
  worktree_ = *wt;
  prepared_node_ = node->id;
  built_node_ = kNoNode;

  const ActionSpec* action = catalog_.FindAction(node->action_id);
  if (action == nullptr) {
    return Finish(node, Outcome::kPruned,
                  "action '" + node->action_id + "' is no longer in the campaign file", "vetoed");
  }
  if (DroppedKey(*node) && !CompanionKey(*node)) return RecordApply(node, Drop(*node));
  ActionSpec companion;
  bool missing = false;
  std::optional<Task> first = CompanionTask(*node, worktree_, &companion, &missing);
  if (missing) {
    return Finish(
        node, Outcome::kPruned,
        "its companion " + CompanionKey(*node).value_or("") + " is no longer in the campaign file",
        "vetoed");
  }
  if (std::optional<std::string> dropped = DroppedKey(*node)) {  // a swap
    return RecordApply(node, ImplementSwap(ports_.specialist, *first, *dropped));
  }
  Task own = MakeTask(*node, action, worktree_);
  SpecialistResult r = first ? ImplementPair(ports_.specialist, *first, std::move(own))
                             : ports_.specialist->Implement(own);
  return RecordApply(node, std::move(r));
}

Status Orchestrator::RecordApply(Node* node, SpecialistResult r) {
  node->cost_s += r.duration_s;
  node->summary = r.summary;
  if (r.backend != "builtin" && !r.backend.empty()) {
    AgentNote& a = node->agent;
    a.backend = r.backend;
    const ActionSpec* action = catalog_.FindAction(node->action_id);
    a.domain = action != nullptr ? action->apply.agent : "";
    a.confidence = r.confidence;
    a.rounds = r.usage.rounds;
    a.prompt_tokens = r.usage.prompt_tokens;
    a.completion_tokens = r.usage.completion_tokens;
    a.cost = r.usage.cost;
    a.findings = r.findings;
    a.questions = r.questions;
  }
  AddUsage(r.usage);
  // What the specialist was given and what it proposed are recorded with the node's next
  // state change, whatever the outcome.
  TakeProposals(node, std::move(r.proposals));
  pending_prompt_ = r.prompt.empty() ? std::nullopt
                                     : std::optional<Mutation::Prompt>(Mutation::Prompt{
                                           node->id, "implement", std::move(r.prompt)});
  switch (r.status) {
    case SpecialistResult::Status::kSkipped:
      return Finish(node, Outcome::kSkipped, r.diagnosis, "skipped");
    case SpecialistResult::Status::kFailed: {
      StepResult failed;
      failed.kind = ExitKind::kFailed;
      failed.exit_code = 1;
      failed.detail = r.diagnosis;
      failed.tail = r.diagnosis;
      return FailStep(node, "apply", failed, Outcome::kCrashed);
    }
    case SpecialistResult::Status::kApplied:
      break;
  }
  node->overlay = r.overlay;
  const std::optional<std::string> with = CompanionKey(*node);
  std::string message = "arbor: " + (with ? *with + " + " : std::string()) + node->CandidateKey() +
                        " (node " + std::to_string(node->id) + ")\n\n" + r.summary + "\n";
  auto commit = ports_.workspace->Snapshot(node->id, message, node->overlay);
  if (!commit.ok()) return commit.error();
  node->commit = *commit;
  node->step = Step::kBuild;
  return Save(*node, {});
}

Status Orchestrator::EnsureBuilt(Node* node, bool* failed) {
  *failed = false;
  if (built_node_ == node->id) return {};
  ARBOR_TRY(PrepareWorktree(*node));
  return RecordBuild(node, ports_.target->Build(Context(*node, "build")), failed);
}

Status Orchestrator::PrepareWorktree(const Node& node) {
  if (prepared_node_ == node.id) return {};
  auto wt = ports_.workspace->Prepare(node.id, node.commit);
  if (!wt.ok()) return wt.error();
  worktree_ = *wt;
  prepared_node_ = node.id;
  return {};
}

Status Orchestrator::RecordBuild(Node* node, const StepResult& r, bool* failed) {
  *failed = false;
  node->cost_s += r.duration_s;
  if (!r.ok()) {
    *failed = true;
    return FailStep(node, "build", r, Outcome::kCrashed);
  }
  built_node_ = node->id;
  return {};
}

Status Orchestrator::StepBuild(Node* node) {
  built_node_ = kNoNode;  // the build step always builds
  bool failed = false;
  // A batch's node builds in a lane, concurrently with the others' (build_lane.cc).
  if (!in_flight_.empty() || lanes_.count(node->id) != 0) {
    ARBOR_TRY(BuildInLane(node, &failed));
  } else {
    ARBOR_TRY(EnsureBuilt(node, &failed));
  }
  if (failed) return {};
  node->step = Step::kCheck;
  return Save(*node, {MakeEvent(node->id, "built", "build ok")});
}

void Orchestrator::NoteCheckFailure(const Node& node) {
  if (node.critic.rca != "accuracy") return;
  const std::vector<std::string> keys = AppliedKeys(node);  // {id, key[, companion id, key]}
  for (size_t i = 1; i < keys.size(); i += 2) check_failed_.insert(keys[i]);
}

bool Orchestrator::FailedCheckBefore(const Node& node) const {
  if (check_failed_.empty()) return false;
  const std::vector<std::string> keys = AppliedKeys(node);
  for (size_t i = 1; i < keys.size(); i += 2) {
    if (check_failed_.count(keys[i])) return true;
  }
  return false;
}

Status Orchestrator::StepCheck(Node* node) {
  bool failed = false;
  ARBOR_TRY(EnsureBuilt(node, &failed));
  if (failed) return {};
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
    bool handled = false;
    ARBOR_TRY(RecheckIncumbent(node, m.step, Recheck::kCheck, &handled));
    if (handled) return {};
    return FailStep(node, "check", m.step, Outcome::kReverted);
  }
  if (!m.step.ok()) return FailStep(node, "check", m.step, Outcome::kCrashed);
  std::vector<Sample> samples;
  std::string message = "check passed" + flaky;
  if (m.value) {
    samples.push_back(Sample{node->id, "check", 0, *m.value, {}});
    message += ", accuracy " + FormatDouble(*m.value);
    if (node->id != kRootId) {
      auto root_samples = SamplesOf(kRootId);
      if (!root_samples.ok()) return root_samples.error();
      auto base = SamplesOfArm(*root_samples, "check");
      if (!base.empty() && base[0].value - *m.value > spec_.accuracy.max_drop) {
        node->critic.rca = "accuracy";
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
  node->step = Step::kBench;
  return Save(*node, {MakeEvent(node->id, "checked", message)}, samples);
}

Status Orchestrator::StepBench(Node* node) {
  bool failed = false;
  ARBOR_TRY(EnsureBuilt(node, &failed));
  if (failed) return {};
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
    auto parent_samples = SamplesOf(node->parent);
    if (!parent_samples.ok()) return parent_samples.error();
    auto own = SamplesOf(node->id);
    if (!own.ok()) return own.error();
    GateInput in;
    in.metric = &spec_.metric;
    in.critic = &spec_.critic;
    in.parent = SamplesOfArm(*parent_samples, "self");
    in.candidate = SamplesOfArm(*own, "self");
    Verdict v = ports_.gate->Judge(in);
    node->gain = v.gain;
    if (!v.keep) {
      node->critic.rca = "no_gain";
      return Finish(node, Outcome::kReverted, "no_gain: " + v.reason, "reverted");
    }
    reason = v.reason;
  }
  node->outcome = Outcome::kKept;
  node->diagnosis = reason;
  node->step = Step::kProfile;
  node->finished_s = CampaignTime();
  stats_.Observe(*node);
  last_keep_seq_ = std::max(last_keep_seq_, node->seq);
  // Re-queued ideas waiting under the old incumbent will never run there: the state moved.
  // They move along under the new incumbent (moves.h CarryOver), with what this keep makes
  // possible (PrerequisiteRetries); the old pending nodes are closed as superseded.
  tree_.Upsert(*node);  // the rules below see it kept
  std::vector<Node> others = MovesAtKeep(*node);
  std::vector<Event> events{MakeEvent(node->id, "kept", reason)};
  for (const Node& q : others) events.push_back(MakeEvent(q.id, "requeued", q.diagnosis));
  for (Node& p :
       SupersedePending(node->parent, node->id,
                        "superseded: the incumbent moved to #" + std::to_string(node->id) +
                            " (re-queued there unless the new path rules it out)")) {
    others.push_back(std::move(p));
  }
  // Recorded first, promoted second: if the process dies in between, Reconcile() promotes.
  ARBOR_TRY(SaveMany(*node, others, std::move(events)));
  ARBOR_TRY(ports_.workspace->Promote(node->commit));
  if (base_node_ != kNoNode) {  // the old incumbent is no longer anyone's base
    ARBOR_TRY(ports_.workspace->Release(base_node_));
    base_node_ = kNoNode;
  }
  return {};
}

Status Orchestrator::StepProfile(Node* node) {
  std::optional<Profile> profile;
  std::string message;
  if (node->id != kRootId && !spec_.search.reprofile) {
    message = "re-profiling off (ablation): scoring keeps the baseline's profile";
  } else {
    bool failed = false;
    ARBOR_TRY(EnsureBuilt(node, &failed));
    if (failed) return {};
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
  if (prepared_node_ == node->id) {
    prepared_node_ = kNoNode;
    built_node_ = kNoNode;
  }
  return ports_.workspace->Release(node->id);
}

}  // namespace arbor
