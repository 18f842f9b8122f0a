// How a node's evaluation ends: the step loop (Evaluate), and the outcome it records — Finish
// saves the outcome with the Critic's diagnosis and constraints and releases the worktree;
// FailStep classifies a failed step (rca.h), publishes its constraints and queues the one
// retry an implementation bug or an infrastructure loss earns. The steps themselves are in
// node_steps.cc.
#include "core/critic/rca.h"
#include "core/orchestrator/orchestrator.h"
#include "core/search/constraints.h"
#include "core/search/moves.h"

namespace arbor {

Result<std::vector<Sample>> Orchestrator::SamplesOf(NodeId id) {
  return ports_.store->LoadSamples(id);
}

Status Orchestrator::Evaluate(NodeId id) {
  Node node = *tree_.Find(id);
  while (node.step != Step::kDone) {
    if (stop_requested_.load()) return {};
    if (!in_flight_.empty()) ARBOR_TRY(RecordReady(id));
    if (!batch_.empty()) ARBOR_TRY(TendMeasureLanes(id, node.step));  // measure_lane.cc
    switch (node.step) {
      case Step::kNone:
      case Step::kApply:
        ARBOR_TRY(StepApply(&node));
        break;
      case Step::kBuild:
        ARBOR_TRY(StepBuild(&node));
        break;
      case Step::kCheck:
        ARBOR_TRY(StepCheck(&node));
        break;
      case Step::kBench:
        ARBOR_TRY(StepBench(&node));
        break;
      case Step::kDecide:
        ARBOR_TRY(StepDecide(&node));
        break;
      case Step::kProfile:
        ARBOR_TRY(StepProfile(&node));
        break;
      case Step::kDone:
        break;
    }
  }
  return {};
}

void Orchestrator::PublishConstraints(Node* node, const PublishInput& what) {
  PublishInput in = what;
  in.node = node;
  in.action = catalog_.FindAction(node->action_id);
  // A drop's failure is no evidence against its change (it ran without it), nor is a fix
  // group's (a fix search's, a stack: any of its companions may have caused it), nor a failure
  // of a command it ran again on top (a PGO training run, RunAfter): the breaker only.
  std::vector<Constraint> published =
      DroppedKey(*node) || IsGroup(*node) || HasFlag(*node, kRerunFailedFlag)
          ? std::vector<Constraint>{}
          : PublishFor(tree_, in);
  // The breaker looks at the tree with this node finished.
  tree_.Upsert(*node);
  for (Constraint& c : CircuitBreaker(tree_, spec_.critic.circuit_breaker, node->id)) {
    published.push_back(c);
  }
  for (Constraint& c : published) node->critic.constraints.push_back(c);
}

Status Orchestrator::Finish(Node* node, Outcome outcome, const std::string& diagnosis,
                            const std::string& event_kind) {
  node->outcome = outcome;
  node->diagnosis = diagnosis;
  node->step = Step::kDone;
  node->finished_s = CampaignTime();
  if (node->id != kRootId) stats_.Observe(*node);
  std::vector<Event> events{MakeEvent(node->id, event_kind, diagnosis)};
  if (!node->critic.evidence.empty() || !node->critic.suggestion.empty()) {
    events.push_back(MakeEvent(
        node->id, "rca",
        std::string(RcaClassName(node->critic.rca)) + ": " + node->critic.evidence +
            (node->critic.suggestion.empty() ? ""
                                             : " (suggestion: " + node->critic.suggestion + ")")));
  }
  for (const Constraint& c : node->critic.constraints) {
    events.push_back(MakeEvent(node->id, "constraint", DescribeConstraint(c)));
  }
  if (!node->critic.constraints.empty()) publishers_.push_back(node->id);
  // A line-search step that measured flat: the next value along the line (moves.h LineStep),
  // queued with the revert.
  if (outcome == Outcome::kReverted && spec_.search.revisit) {
    tree_.Upsert(*node);  // the rule sees it reverted
    const NodeId inc = tree_.Incumbent();
    std::vector<Requeue> moves = LineStep(tree_, catalog_, inc, *node);
    // A swap's state unlocks what only runs with the alternative it put in: its follow-ups
    // are queued with its revert (moves.h UnlockedFollowUps).
    if (spec_.search.branches && spec_.search.pairs) {
      for (Requeue& q : UnlockedFollowUps(tree_, catalog_, inc, *node, PromiseAt(inc)))
        moves.push_back(std::move(q));
    }
    for (Node& q : RequeueUnder(*tree_.Find(inc), moves)) {
      events.push_back(MakeEvent(q.id, "requeued", q.diagnosis));
      pending_nodes_.push_back(std::move(q));
    }
  }
  DiscardLane(node->id);
  ARBOR_TRY(Save(*node, std::move(events)));
  // The worktree is disposable once the outcome is recorded; kept states live in commits.
  cursor_.Forget(node->id);
  return ports_.workspace->Release(node->id);
}

Status Orchestrator::FailStep(Node* node, FailedStage step, const StepResult& result,
                              Outcome outcome) {
  RcaInput in;
  in.step = step;
  in.result = result;
  in.output_tail = result.tail;
  in.memory_limited = spec_.target.memory_limit_mb.has_value();
  in.passed_on_rerun = false;
  Diagnosis d = Classify(in);
  const std::string stage(FailedStageName(step));
  node->critic.rca = d.cls;
  node->critic.evidence = d.evidence;
  node->critic.suggestion = d.suggestion;
  std::string diagnosis = std::string(RcaClassName(node->critic.rca)) + ": " +
                          std::string(FailedStageName(step)) + " " + DescribeStep(result);
  node->outcome = outcome;  // the constraint rules look at it
  if (node->id != kRootId) {
    // An implementation bug deserves one constrained retry by a specialist that can take the
    // diagnosis; a declarative action would fail the same way again, so for it the failure
    // marks an unproductive direction.
    const ActionSpec* action = catalog_.FindAction(node->action_id);
    bool declarative = action == nullptr || action->apply.kind != ApplySpec::Kind::kAgent;
    bool prune = d.effect == RcaEffect::kPruneDirection ||
                 (d.effect == RcaEffect::kRetryOnce && declarative);
    if (d.effect == RcaEffect::kRetryOnce && declarative) {
      node->critic.suggestion =
          "a declarative action fails the same way again, so this "
          "direction is pruned instead of retried";
    }
    PublishInput what;
    what.prune_direction = prune;
    what.missing_dependency = d.effect == RcaEffect::kBlockDependency;
    what.await_prerequisite = d.effect == RcaEffect::kAwaitPrerequisite;
    PublishConstraints(node, what);
    // Infrastructure (the executor lost the run) says nothing about the action: any action,
    // declarative or not, runs once more as it was.
    const bool requeue = d.effect == RcaEffect::kRequeue;
    if (((d.effect == RcaEffect::kRetryOnce && !declarative) || requeue) &&
        node->critic.requeued_from == kNoNode) {
      // One retry, queued under the same parent: its specialist is told this failure (the
      // task context lists it under "do not repeat") and competes like any candidate.
      Node retry;
      retry.id = tree_.MaxId() + 1;
      retry.parent = node->parent;
      retry.action_id = node->action_id;
      retry.value = node->value;
      retry.category = node->category;
      retry.layer = node->layer;
      retry.outcome = Outcome::kPending;
      retry.step = Step::kNone;
      retry.overlay = tree_.Find(node->parent)->overlay;
      retry.created_s = CampaignTime();
      retry.critic.requeued_from = node->id;
      retry.critic.flags.push_back(MoveFlag(Move::kRetry));
      if (tree_.IsBranch(*node)) retry.critic.flags.push_back(std::string(kBranchFlag));
      retry.diagnosis =
          requeue ? "re-queued once: " + stage + " was lost where it ran (infrastructure), " +
                        "not by the change"
                  : "re-queued once: " + std::string(RcaClassName(node->critic.rca)) + " at " +
                        stage + " is worth one retry by a specialist that is told the diagnosis";
      pending_nodes_.push_back(retry);
    }
  }
  return Finish(node, outcome, diagnosis, outcome == Outcome::kCrashed ? "crashed" : "reverted");
}

}  // namespace arbor
