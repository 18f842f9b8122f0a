#include "core/tree/frontier.h"

#include <map>

namespace arbor {

bool MayBranchFrom(const Node& node) {
  if (node.outcome != Outcome::kReverted || node.commit.empty()) return false;
  const RcaClass rca = node.critic.rca;
  return rca == RcaClass::kNoGain || rca == RcaClass::kNotConfirmed || rca == RcaClass::kAccuracy;
}

std::set<std::string> ChangeSet(const Tree& tree, const Node& node) {
  std::set<std::string> out;
  for (const Node* b : tree.BranchPath(node.id)) {
    const Node& n = b->id == node.id ? node : *b;
    const std::vector<std::string> applied = AppliedKeys(n);  // {id, key, ...}
    for (size_t i = 1; i < applied.size(); i += 2) out.insert(applied[i]);
    const std::vector<std::string> removed = RemovedKeys(n);
    for (size_t i = 1; i < removed.size(); i += 2) out.insert("-" + removed[i]);
  }
  return out;
}

std::vector<OpenState> Frontier(const Tree& tree, NodeId incumbent) {
  const std::vector<const Node*> below = tree.Below(incumbent);
  // Visits and losses, summed up each evaluated branch node's chain of branch ancestors.
  std::map<NodeId, OpenState> stats;
  for (const Node* n : below) {
    if (!tree.IsBranch(*n) || !IsEvaluated(*n)) continue;
    const bool lost =
        n->outcome == Outcome::kReverted &&
        (n->critic.rca == RcaClass::kNoGain || n->critic.rca == RcaClass::kNotConfirmed);
    for (const Node* up = tree.Find(n->parent); up != nullptr; up = tree.Find(up->parent)) {
      OpenState& s = stats[up->id];
      ++s.visits;
      s.lost += lost ? 1 : 0;
      if (!tree.IsBranch(*up)) break;  // the branch's topmost node
    }
  }
  std::vector<OpenState> out;
  for (const Node* n : below) {
    if (!MayBranchFrom(*n)) continue;
    const int changes = static_cast<int>(ChangeSet(tree, *n).size());
    if (changes >= kMaxBranchChanges) continue;
    OpenState s = stats[n->id];
    s.node = n;
    s.changes = changes;
    out.push_back(s);
  }
  return out;
}

}  // namespace arbor
