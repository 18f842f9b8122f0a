// The apply step of a node: its implementation by the specialist on its parent's state (a
// pair's companion first, a drop's overlay without its change, a swap's companion in the
// dropped change's place), recorded with what the specialist reported and committed as the
// node's state. The other steps are in node_steps.cc.
#include "core/orchestrator/orchestrator.h"
#include "core/search/moves.h"
#include "util/strings.h"

namespace arbor {

namespace {

// The diagnosis of a command run again on top of the change (RunAfter) that failed.
constexpr std::string_view kRerunFailed = "run again on top (refresh = true), ";

// Folds `next`, implemented on top of `first`'s state, into one result: `next`'s overlay and
// status, both summaries, durations, usage, findings, questions, proposals and prompts.
SpecialistResult Chain(SpecialistResult first, const std::string& what, SpecialistResult next) {
  next.summary = what + ": " + first.summary + "; then " + next.summary;
  next.duration_s += first.duration_s;
  next.usage.prompt_tokens += first.usage.prompt_tokens;
  next.usage.completion_tokens += first.usage.completion_tokens;
  next.usage.cost += first.usage.cost;
  next.usage.rounds += first.usage.rounds;
  for (auto& f : first.findings) next.findings.push_back(std::move(f));
  for (auto& q : first.questions) next.questions.push_back(std::move(q));
  for (auto& a : first.proposals) next.proposals.push_back(std::move(a));
  if (!first.prompt.empty()) {
    next.prompt = first.prompt + (next.prompt.empty() ? "" : "\n\n" + next.prompt);
  }
  if (next.backend == SpecialistBackend::kBuiltin) next.backend = first.backend;
  return next;
}

}  // namespace

SpecialistResult ImplementPair(Specialist* specialist, const std::vector<Task>& companions,
                               Task own) {
  std::optional<SpecialistResult> done;  // the companions so far, folded
  std::string what;
  for (const Task& c : companions) {
    Task task = c;
    if (done) task.parent_overlay = done->overlay;
    SpecialistResult r = specialist->Implement(task);
    const std::string key = CandidateKey(c.action->id, c.value);
    if (r.status != SpecialistResult::Status::kApplied) {
      r.diagnosis = "its companion " + key + ": " + r.diagnosis;
      return done ? Chain(std::move(*done), what, std::move(r)) : r;
    }
    done = done ? Chain(std::move(*done), what, std::move(r)) : std::move(r);
    what = what.empty() ? key : what + " + " + key;
  }
  if (!done) return specialist->Implement(own);
  own.parent_overlay = done->overlay;
  return Chain(std::move(*done), what, specialist->Implement(own));
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

SpecialistResult RunAfter(Specialist* specialist, SpecialistResult done,
                          const std::vector<Task>& after) {
  for (const Task& t : after) {
    if (done.status != SpecialistResult::Status::kApplied) break;
    Task task = t;
    task.parent_overlay = done.overlay;
    SpecialistResult r = specialist->Implement(task);
    const std::string key = CandidateKey(t.action->id, t.value);
    if (r.status != SpecialistResult::Status::kApplied) {
      r.diagnosis = std::string(kRerunFailed) + key + ": " + r.diagnosis;
    }
    std::string summary = done.summary + "; then " + key +
                          " run again on the new state (refresh = true): " + r.summary;
    done = Chain(std::move(done), "", std::move(r));
    done.summary = std::move(summary);
  }
  return done;
}

Orchestrator::Companion Orchestrator::CompanionTasks(const Node& node, const std::string& worktree,
                                                     std::deque<ActionSpec>* copies) {
  Companion out;
  for (const std::string& with : CompanionKeys(node)) {
    auto [id, value] = SplitCandidateKey(with);
    const ActionSpec* action = catalog_.FindAction(id);
    if (action == nullptr) return {.tasks = {}, .missing = with};
    copies->push_back(*action);
    Node as = node;
    as.action_id = id;
    as.value = value;
    Task task = MakeTask(as, &copies->back(), worktree);
    // A swap's companion goes on top of the parent's state without the change it replaces.
    if (DroppedKey(node)) task.parent_overlay = Drop(node).overlay;
    out.tasks.push_back(std::move(task));
  }
  for (const std::string& key : RefreshesToRun(tree_, catalog_, node)) {
    auto [id, value] = SplitCandidateKey(key);
    copies->push_back(*catalog_.FindAction(id));  // KeptRefreshes found it in the catalog
    Node as = node;
    as.action_id = id;
    as.value = value;
    out.after.push_back(MakeTask(as, &copies->back(), worktree));
  }
  return out;
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
    std::string worktree = in_flight_.at(node->id)->task.worktree;
    SpecialistResult r = TakeResult(node->id);
    cursor_.Prepared(node->id, std::move(worktree));
    return RecordApply(node, std::move(r));
  }
  // A previous process may have died half-way through applying: always start from a fresh
  // worktree at the parent's commit.
  ARBOR_TRY(ports_.workspace->Release(node->id));
  ARBOR_TRY_ASSIGN(auto worktree, ports_.workspace->Prepare(node->id, parent->commit));
  cursor_.Prepared(node->id, worktree);

  const ActionSpec* action = catalog_.FindAction(node->action_id);
  if (action == nullptr) {
    return Finish(node, Outcome::kPruned,
                  "action '" + node->action_id + "' is no longer in the campaign file", "vetoed");
  }
  std::deque<ActionSpec> companions;
  Companion first = CompanionTasks(*node, worktree, &companions);  // applied first
  if (!first.missing.empty()) {
    return Finish(node, Outcome::kPruned,
                  "its companion " + first.missing + " is no longer in the campaign file",
                  "vetoed");
  }
  Specialist* s = ports_.specialist;
  if (DroppedKey(*node) && !CompanionKey(*node)) {
    return RecordApply(node, RunAfter(s, Drop(*node), first.after));
  }
  if (std::optional<std::string> dropped = DroppedKey(*node)) {  // a swap
    return RecordApply(node,
                       RunAfter(s, ImplementSwap(s, first.tasks.front(), *dropped), first.after));
  }
  Task own = MakeTask(*node, action, worktree);
  return RecordApply(node, RunAfter(s, ImplementPair(s, first.tasks, std::move(own)), first.after));
}

Status Orchestrator::RecordApply(Node* node, SpecialistResult r) {
  node->cost_s += r.duration_s;
  node->summary = r.summary;
  if (r.backend != SpecialistBackend::kBuiltin) {
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
  // What it ran again on top (CompanionTasks' `after`, from the same parent state), named on it
  // afresh: a node re-dispatched onto a new incumbent runs what that state holds. A failure
  // there is the command's on this change, not evidence against the change in general.
  ClearRerunFlags(node);
  for (const std::string& key : RefreshesToRun(tree_, catalog_, *node)) {
    AddFlag(node, RerunFlag(key));
  }
  if (r.status == SpecialistResult::Status::kFailed && StartsWith(r.diagnosis, kRerunFailed)) {
    AddFlag(node, kRerunFailedFlag);
  }
  switch (r.status) {
    case SpecialistResult::Status::kSkipped:
      return Finish(node, Outcome::kSkipped, r.diagnosis, "skipped");
    case SpecialistResult::Status::kFailed: {
      StepResult failed;
      failed.kind = ExitKind::kFailed;
      failed.exit_code = 1;
      failed.detail = r.diagnosis;
      failed.tail = r.diagnosis;
      return FailStep(node, FailedStage::kApply, failed, Outcome::kCrashed);
    }
    case SpecialistResult::Status::kApplied:
      break;
  }
  node->overlay = r.overlay;
  std::string with;
  if (tree_.IsBranch(*node)) with = tree_.Find(node->parent)->CandidateKey() + " + ";
  for (const std::string& c : CompanionKeys(*node)) with += c + " + ";
  std::string message = "arbor: " + with + node->CandidateKey() + " (node " +
                        std::to_string(node->id) + ")\n\n" + r.summary + "\n";
  ARBOR_TRY_ASSIGN(node->commit, ports_.workspace->Snapshot(node->id, message, node->overlay));
  node->step = Step::kBuild;
  return Save(*node, {});
}

}  // namespace arbor
