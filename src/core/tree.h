// Tree: the in-memory index of a campaign's nodes, rebuilt from the store on resume.
//
// It answers the questions the Orchestrator asks every iteration in O(depth) or O(1):
// the path from the root to a node, the candidates already tried below a node, the current
// incumbent (deepest kept node of the kept chain). It owns copies of the nodes; the store
// remains the record.
#pragma once

#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/model.h"

namespace arbor {

class Tree {
 public:
  // Adds or replaces a node (by id). Parents must be added before children.
  void Upsert(const Node& node);
  const Node* Find(NodeId id) const;
  Node* FindMutable(NodeId id);
  const std::vector<NodeId>& Children(NodeId id) const;
  size_t size() const { return nodes_.size(); }
  NodeId MaxId() const { return max_id_; }
  // Nodes in id order.
  std::vector<const Node*> All() const;

  // Root .. id inclusive.
  std::vector<const Node*> Path(NodeId id) const;
  // Candidate keys applied on the path (kept nodes, root excluded) and their action ids.
  std::set<std::string> AppliedActions(NodeId id) const;
  // Candidate keys of the children (pruned ones excepted) of every node on the path of `id`:
  // what was already tried from this state or an ancestor state (failures propagate down).
  std::set<std::string> TriedAlongPath(NodeId id) const;
  // The incumbent: start at the root and follow the kept child (there is at most one per
  // node in a depth-first campaign; the latest wins) until none.
  NodeId Incumbent() const;
  // Nodes in outcome kRunning or kPending, ordered by id.
  std::vector<NodeId> Unfinished() const;
  // Number of finished non-root nodes, and how many of them trailing (by seq) are not kept.
  int FinishedCount() const;
  int TrailingNonKept() const;

 private:
  std::unordered_map<NodeId, Node> nodes_;
  std::unordered_map<NodeId, std::vector<NodeId>> children_;
  NodeId max_id_ = kNoNode;
};

}  // namespace arbor
