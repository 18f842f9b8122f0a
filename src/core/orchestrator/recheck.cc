// Re-checking the incumbent when the path, not the candidate, may have failed (ARBOR.md "The
// Critic": guard the measurement's integrity). A change that fails only some of the time can
// pass the runs it is given and be kept; from then on every candidate built on it fails now and
// then and would be blamed for it, and the campaign would ship a broken state. Two ways show it:
//  - a candidate's check fails: the incumbent's own check runs once more, and if it fails too
//    the failure is the path's;
//  - the incumbent's own benchmark run crashes while it is the base arm of a candidate's A/B:
//    the failure is the path's by construction (before, the candidate was blamed for it and its
//    direction pruned, and the crashing incumbent stayed).
// Then the kept states above are probed the same way, nearest first, until one passes
// repeatedly; the keeps below that state are un-kept (the first of them is the flaky change, the
// others were built on it) and the campaign continues from the clean state. The others are off
// the path again, so the good ones among them are candidates once more; the flaky change is
// not: a runtime crash of its state is a crash of the action (pruned like one), a flaky check
// leaves it reverted.
#include <algorithm>
#include <optional>

#include "core/orchestrator/orchestrator.h"
#include "util/strings.h"

namespace arbor {
Result<bool> Orchestrator::RecheckIncumbent(Node* node, const StepResult& failure, Recheck probe) {
  if (!critic_ || !spec_.critic.recheck) return false;
  const Node* parent = tree_.Find(tree_.BaseOf(node->id));  // the state it is judged against
  if (parent == nullptr || parent->id == kRootId || parent->outcome != Outcome::kKept ||
      parent->id != tree_.Incumbent()) {
    return false;
  }
  if (probe == Recheck::kCheck) {
    // Is the failure the path's? The incumbent's own check, once more; kCleanRuns times when
    // another candidate already failed its check on a state of this path (past the baseline):
    // two candidates failing on states that share a keep is evidence against that keep, and a
    // check that fails one time in four passes a single re-run three times in four.
    int times = 1;
    // check_failed_ is empty until some check failed: then the scan stops at the first failure.
    for (const Node* p : tree_.Path(parent->id)) {
      if (p->id == kRootId || check_failed_.empty() || times > 1) continue;
      for (NodeId child : tree_.Children(p->id)) {
        const Node* c = tree_.Find(child);
        if (c->id != node->id && c->critic.rca == RcaClass::kAccuracy) {
          times = kCleanRuns;
          break;
        }
      }
    }
    ARBOR_TRY_ASSIGN(const ProbeOutcome incumbent, ProbePasses(*parent, probe, times, node));
    if (incumbent == ProbeOutcome::kNodeFinished) return true;
    if (incumbent == ProbeOutcome::kPassed) return false;  // the failure is the candidate's
  }
  return UnkeepFlakyPath(parent->id, probe, failure, node);
}

Result<Orchestrator::ProbeOutcome> Orchestrator::ProbePasses(const Node& state, Recheck probe,
                                                             int times, Node* node) {
  const bool bench = probe == Recheck::kBench;
  ARBOR_TRY_ASSIGN(const bool built, EnsureBaseBuilt(state, node));
  if (!built) {
    // Without a node being judged (the final validation) a state that no longer builds is
    // simply not clean; with one, `node` was finished by the failed build.
    return node != nullptr ? ProbeOutcome::kNodeFinished : ProbeOutcome::kFailed;
  }
  std::optional<MeasurementScope> scope;  // benchmark runs hold the machine, as in an A/B
  if (bench) scope.emplace(ports_.target, node != nullptr ? node->id : state.id);
  for (int i = 0; i < times; ++i) {
    RunContext ctx = ContextAt(state, cursor_.base_worktree(),
                               std::string(bench ? "bench" : "check") + "-recheck-" +
                                   std::to_string(state.id) + "-" + std::to_string(i));
    ctx.node = node != nullptr ? node->id : state.id;  // logs belong to the node being judged
    Measurement m = bench ? ports_.target->Bench(ctx) : ports_.target->Check(ctx);
    if (node != nullptr) node->cost_s += m.step.duration_s;
    if (!m.step.ok() || (bench && !m.value)) return ProbeOutcome::kFailed;
  }
  return ProbeOutcome::kPassed;
}

Result<bool> Orchestrator::UnkeepFlakyPath(NodeId incumbent, Recheck probe,
                                           const StepResult& failure, Node* node) {
  const bool bench = probe == Recheck::kBench;
  // The path's probe is flaky: find the nearest clean state above, the baseline included.
  std::vector<const Node*> path = tree_.Path(incumbent);  // root .. incumbent
  if (path.size() < 2) return false;
  std::optional<size_t> clean;
  for (size_t i = path.size() - 1; i-- > 0;) {
    ARBOR_TRY_ASSIGN(const ProbeOutcome state, ProbePasses(*path[i], probe, kCleanRuns, node));
    if (state == ProbeOutcome::kNodeFinished) return true;
    if (state == ProbeOutcome::kPassed) {
      clean = i;
      break;
    }
  }
  // Not even the baseline passes as often: the environment fails now and then (a flaky test
  // suite, a machine that kills processes), not a change. Nothing is un-kept; the caller blames
  // no change it cannot tell from the environment.
  if (!clean) return false;
  const Node& flaky = *path[*clean + 1];
  const std::string f = "#" + std::to_string(flaky.id);
  const std::string c = "#" + std::to_string(path[*clean]->id);
  const std::string what = bench ? "benchmark" : "check";
  // Where the failure showed: as the base of a candidate, or in the final validation.
  const std::string where =
      node != nullptr ? "#" + std::to_string(node->id) : "the final validation";
  std::vector<Node> changed;
  for (size_t i = *clean + 1; i < path.size(); ++i) {
    Node n = *path[i];
    n.outcome = Outcome::kReverted;
    AddFlag(&n, "unkept");
    if (i > *clean + 1) {
      n.diagnosis =
          "un-kept: built on " + f + ", whose " + what + " is flaky (it may be tried again)";
    } else if (!bench) {
      n.critic.rca = RcaClass::kAccuracy;  // its check fails: what a pair may still fix (moves.h)
      n.diagnosis = "un-kept: a flaky check: it fails on this change's state when re-run (in " +
                    where + ": " + DescribeStep(failure) + "), and passes " +
                    std::to_string(kCleanRuns) + " times on " + c + "; it had passed before";
    } else {
      // A crash of this change's state at run time: the action's, like any runtime crash.
      n.outcome = Outcome::kCrashed;
      n.critic.rca = RcaClass::kRuntimeCrash;
      AddFlag(&n, "flaky");
      n.diagnosis =
          "un-kept: its state crashes at run time now and then: its benchmark failed (in " + where +
          ": " + DescribeStep(failure) + "), and " + c + " passed " + std::to_string(kCleanRuns) +
          " runs; it had passed the runs it was given";
      PublishInput prune;
      prune.prune_direction = true;
      PublishConstraints(&n, prune);
      if (!n.critic.constraints.empty()) publishers_.push_back(n.id);
    }
    changed.push_back(n);
    // A candidate whose check failed on this flaky state was blamed for the state's failure:
    // it is not, and what its failure published (a category paused for accuracy failures, say)
    // is withdrawn with the blame. Off the path again, it is a candidate once more.
    for (NodeId child : tree_.Children(path[i]->id)) {
      const Node* x = tree_.Find(child);
      if (bench || x->outcome != Outcome::kReverted || x->critic.rca != RcaClass::kAccuracy ||
          (node != nullptr && x->id == node->id)) {
        continue;
      }
      Node un = *x;
      un.critic.rca = RcaClass::kFlakyIncumbent;
      un.critic.constraints.clear();
      un.diagnosis += "; not this change's fault: " + f + ", its base, has a flaky check";
      changed.push_back(std::move(un));
    }
  }
  // Re-queued ideas that will never run.
  for (Node& p : SupersedePending(incumbent, node != nullptr ? node->id : kNoNode,
                                  "superseded: the incumbent moved back to " + c)) {
    changed.push_back(std::move(p));
  }
  std::vector<Event> events;
  for (const Node& n : changed) {
    if (HasFlag(n, "unkept")) events.push_back(MakeEvent(n.id, "unkept", n.diagnosis));
    for (const Constraint& k : n.critic.constraints) {
      events.push_back(MakeEvent(n.id, "constraint", DescribeConstraint(k)));
    }
  }
  const std::string back_to = path[*clean]->commit;
  if (node != nullptr) {
    node->outcome = Outcome::kReverted;
    node->step = Step::kDone;
    node->finished_s = CampaignTime();
    node->critic.rca = RcaClass::kFlakyIncumbent;
    node->diagnosis =
        bench
            ? "not this change's fault: the incumbent's own benchmark run failed as its base (" +
                  DescribeStep(failure) + "); " + f + " is flaky, the campaign continues from " + c
            : "not this change's fault: its check failed (" + DescribeStep(failure) +
                  "), and so did the incumbent's own check when re-run; " + f +
                  " is flaky, the campaign continues from " + c;
    events.push_back(MakeEvent(node->id, "reverted", node->diagnosis));
    ARBOR_TRY(SaveMany(*node, changed, std::move(events)));
    stats_.Observe(*node);
  } else {
    std::vector<Node> others(changed.begin() + 1, changed.end());
    ARBOR_TRY(SaveMany(changed.front(), others, std::move(events)));
  }
  // Recorded first, moved second: if the process dies in between, Reconcile() promotes the
  // incumbent (now the clean state) on start.
  ARBOR_TRY(MoveBranchBack(back_to, node));
  return true;
}

}  // namespace arbor
