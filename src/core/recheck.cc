// Re-checking the incumbent when a candidate fails its check (ARBOR.md "The Critic": guard the
// measurement's integrity). A change whose check fails only some of the time can pass once and
// be kept; from then on every candidate built on it fails the check now and then and would be
// blamed for it, and the campaign would ship a broken state. So when a candidate's check fails,
// the incumbent's own check runs once more. If it fails too, the failure is the path's, not the
// candidate's: the kept states above are checked, nearest first, until one passes its check
// twice; the keeps below that state are un-kept (the first of them is the flaky change, the
// others were built on it) and the campaign continues from the clean state. The un-kept changes
// are off the path again, so the good ones among them are candidates once more.
#include "core/orchestrator.h"
#include "util/strings.h"

namespace arbor {
namespace {

constexpr int kCleanChecks = 2;  // consecutive passes that make an ancestor state "clean"

}  // namespace

Status Orchestrator::RecheckIncumbent(Node* node, const StepResult& failure, bool* handled) {
  *handled = false;
  if (!critic_ || !spec_.critic.recheck) return {};
  const Node* parent = tree_.Find(node->parent);
  if (parent == nullptr || parent->id == kRootId || parent->outcome != Outcome::kKept ||
      parent->id != tree_.Incumbent()) {
    return {};
  }
  // Checks `state` `times` times in the base worktree; false at the first failure. `done`:
  // `node` was finished because the state no longer builds.
  auto passes = [&](const Node& state, int times, bool* done) -> Result<bool> {
    ARBOR_TRY(EnsureBaseBuilt(state, done, node));
    if (*done) return false;
    for (int i = 0; i < times; ++i) {
      RunContext ctx =
          ContextAt(state, base_worktree_, "check-recheck-" + std::to_string(state.id));
      ctx.node = node->id;  // logs belong to the node being judged
      Measurement m = ports_.target->Check(ctx);
      node->cost_s += m.step.duration_s;
      if (!m.step.ok()) return false;
    }
    return true;
  };
  bool done = false;
  auto incumbent_ok = passes(*parent, 1, &done);
  if (!incumbent_ok.ok()) return incumbent_ok.error();
  if (done) *handled = true;
  if (done || *incumbent_ok) return {};  // the incumbent passes: the failure is the candidate's

  // The path's check is flaky: find the nearest clean state above.
  std::vector<const Node*> path = tree_.Path(parent->id);  // root .. incumbent
  size_t clean = 0;                                        // the baseline, if nothing nearer
  for (size_t i = path.size() - 1; i-- > 1;) {
    auto ok = passes(*path[i], kCleanChecks, &done);
    if (!ok.ok()) return ok.error();
    if (done) {
      *handled = true;
      return {};
    }
    if (*ok) {
      clean = i;
      break;
    }
  }
  const Node& flaky = *path[clean + 1];
  const std::string f = "#" + std::to_string(flaky.id);
  const std::string c = "#" + std::to_string(path[clean]->id);
  std::vector<Node> changed;
  for (size_t i = clean + 1; i < path.size(); ++i) {
    Node n = *path[i];
    n.outcome = Outcome::kReverted;
    n.critic.flags.push_back("unkept");
    n.diagnosis =
        i == clean + 1
            ? "un-kept: a flaky check: it fails on this change's state when re-run (after #" +
                  std::to_string(node->id) + " failed the check), and passes " +
                  std::to_string(kCleanChecks) + " times on " + c + "; it had passed once"
            : "un-kept: built on " + f + ", whose check is flaky (it may be tried again)";
    changed.push_back(n);
  }
  // Re-queued ideas that will never run.
  for (Node& p :
       SupersedePending(parent->id, node->id, "superseded: the incumbent moved back to " + c)) {
    changed.push_back(std::move(p));
  }
  node->outcome = Outcome::kReverted;
  node->step = Step::kDone;
  node->finished_s = CampaignTime();
  node->critic.rca = "flaky_incumbent";
  node->diagnosis = "not this change's fault: its check failed (" + DescribeStep(failure) +
                    "), and so did the incumbent's own check when re-run; " + f +
                    " is flaky, the campaign continues from " + c;
  std::vector<Event> events;
  for (const Node& n : changed) {
    if (n.outcome == Outcome::kReverted) events.push_back(MakeEvent(n.id, "unkept", n.diagnosis));
  }
  events.push_back(MakeEvent(node->id, "reverted", node->diagnosis));
  const std::string back_to = path[clean]->commit;
  ARBOR_TRY(SaveMany(*node, changed, std::move(events)));
  stats_.Observe(*node);
  *handled = true;
  // Recorded first, moved second: if the process dies in between, Reconcile() promotes the
  // incumbent (now the clean state) on start.
  if (base_node_ != kNoNode) {
    ARBOR_TRY(ports_.workspace->Release(base_node_));
    base_node_ = kNoNode;
  }
  ARBOR_TRY(ports_.workspace->Release(node->id));
  prepared_node_ = built_node_ = kNoNode;
  return ports_.workspace->Promote(back_to);
}

}  // namespace arbor
