#include "core/tree.h"

#include <algorithm>
#include <string>

#include "util/check.h"

namespace arbor {
namespace {

// Dispatched and judged: the nodes that count as an evaluation of the search. Pruned and
// skipped nodes never ran, so they neither use budget nor end a plateau.
bool IsEvaluated(const Node& n) {
  return n.id != kRootId && (n.outcome == Outcome::kKept || n.outcome == Outcome::kReverted ||
                             n.outcome == Outcome::kCrashed);
}

}  // namespace

void Tree::Upsert(const Node& node) {
  ARBOR_CHECK(node.id != kNoNode, "Tree::Upsert of a node without id");
  ARBOR_CHECK(node.parent == kNoNode || nodes_.count(node.parent) > 0,
              "Tree::Upsert of node " + std::to_string(node.id) + " before its parent " +
                  std::to_string(node.parent));
  auto it = nodes_.find(node.id);
  if (it != nodes_.end() && it->second.parent != node.parent) {
    auto& old_siblings = children_[it->second.parent];
    old_siblings.erase(std::remove(old_siblings.begin(), old_siblings.end(), node.id),
                       old_siblings.end());
  }
  bool link = it == nodes_.end() || it->second.parent != node.parent;
  nodes_[node.id] = node;
  if (link && node.parent != kNoNode) {
    auto& siblings = children_[node.parent];
    siblings.insert(std::lower_bound(siblings.begin(), siblings.end(), node.id), node.id);
  }
  max_id_ = std::max(max_id_, node.id);
}

const Node* Tree::Find(NodeId id) const {
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : &it->second;
}

Node* Tree::FindMutable(NodeId id) {
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : &it->second;
}

const std::vector<NodeId>& Tree::Children(NodeId id) const {
  static const std::vector<NodeId> kNone;
  auto it = children_.find(id);
  return it == children_.end() ? kNone : it->second;
}

std::vector<const Node*> Tree::All() const {
  std::vector<const Node*> all;
  all.reserve(nodes_.size());
  for (const auto& [id, node] : nodes_) all.push_back(&node);
  std::sort(all.begin(), all.end(), [](const Node* a, const Node* b) { return a->id < b->id; });
  return all;
}

std::vector<const Node*> Tree::Path(NodeId id) const {
  std::vector<const Node*> path;
  for (const Node* n = Find(id); n != nullptr; n = Find(n->parent)) {
    path.push_back(n);
    ARBOR_CHECK(path.size() <= nodes_.size(), "cycle in the tree at node " + std::to_string(id));
  }
  std::reverse(path.begin(), path.end());
  return path;
}

std::set<std::string> Tree::AppliedActions(NodeId id) const {
  std::set<std::string> applied;
  for (const Node* n : Path(id)) {
    if (n->id == kRootId || n->outcome != Outcome::kKept) continue;
    applied.insert(n->action_id);
    applied.insert(n->CandidateKey());
  }
  return applied;
}

std::set<std::string> Tree::TriedAlongPath(NodeId id) const {
  // Every child that ran or is running counts: a failure from an ancestor's state is
  // evidence for its whole subtree. Pruned children do not: they never ran, and whether they
  // may run is the active constraints' decision, which can change (a constraint is lifted).
  std::set<std::string> tried;
  for (const Node* n : Path(id)) {
    for (NodeId child : Children(n->id)) {
      const Node* c = Find(child);
      if (c->outcome != Outcome::kPruned) tried.insert(c->CandidateKey());
    }
  }
  return tried;
}

NodeId Tree::Incumbent() const {
  const Node* current = Find(kRootId);
  if (current == nullptr) return kNoNode;
  while (true) {
    const Node* best = nullptr;
    for (NodeId child : Children(current->id)) {
      const Node* c = Find(child);
      if (c->outcome != Outcome::kKept) continue;
      if (best == nullptr || c->seq > best->seq) best = c;
    }
    if (best == nullptr) return current->id;
    current = best;
  }
}

std::vector<NodeId> Tree::Unfinished() const {
  std::vector<NodeId> ids;
  for (const auto& [id, node] : nodes_) {
    if (!IsFinished(node.outcome)) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

int Tree::FinishedCount() const {
  int count = 0;
  for (const auto& [id, node] : nodes_) count += IsEvaluated(node) ? 1 : 0;
  return count;
}

int Tree::TrailingNonKept() const {
  std::vector<const Node*> evaluated;
  for (const auto& [id, node] : nodes_) {
    if (IsEvaluated(node)) evaluated.push_back(&node);
  }
  std::sort(evaluated.begin(), evaluated.end(), [](const Node* a, const Node* b) {
    return a->seq != b->seq ? a->seq < b->seq : a->id < b->id;
  });
  int trailing = 0;
  for (auto it = evaluated.rbegin(); it != evaluated.rend(); ++it) {
    if ((*it)->outcome == Outcome::kKept) break;
    ++trailing;
  }
  return trailing;
}

}  // namespace arbor
