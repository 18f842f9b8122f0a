// Branches (docs/search.md, "Branches"; the rules are frontier.h and moves.h Pairs): what the
// Orchestrator does when a branch node is kept — the branch above it is carried onto the main
// line — and the statistics rebuilt when outcomes change after the fact.
#include "core/orchestrator/orchestrator.h"

namespace arbor {

std::vector<Node> Orchestrator::CarryBranch(const Node& kept) {
  std::vector<Node> carried;
  for (const Node* b : tree_.BranchPath(kept.id)) {
    if (b->id == kept.id) break;
    if (b->outcome == Outcome::kKept) continue;
    Node c = *b;
    c.outcome = Outcome::kKept;
    AddFlag(&c, "carried");
    c.diagnosis = "carried: kept with #" + std::to_string(kept.id) +
                  ", which was built on this state and beat the incumbent; alone: " + b->diagnosis;
    carried.push_back(std::move(c));
  }
  if (carried.empty()) return carried;
  // Top down, so that the incumbent follows the kept chain into the branch.
  for (const Node& c : carried) tree_.Upsert(c);
  RebuildStats();
  return carried;
}

void Orchestrator::RebuildStats() {
  // The same nodes Load observes: finished ones, and a kept node awaiting its re-profile.
  stats_ = CategoryStats{};
  for (const Node* n : tree_.All()) {
    if (n->id == kRootId) continue;
    if (n->step == Step::kDone || (n->step == Step::kProfile && n->outcome == Outcome::kKept)) {
      stats_.Observe(*n);
    }
  }
}

}  // namespace arbor
