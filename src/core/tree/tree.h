// Tree: the in-memory index of a campaign's nodes, rebuilt from the store on resume.
//
// It answers the questions the Orchestrator asks every iteration in O(depth) or O(1):
// the path from the root to a node, the candidates already tried below a node, the current
// incumbent (deepest kept node of the kept chain), how many nodes were evaluated and how many
// of the latest ones were not kept. The counters and the incumbent are maintained by Upsert
// (the only way to change a node's parent, outcome, seq, action or value); it owns copies of
// the nodes; the store remains the record.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/model/model.h"

namespace arbor {

// One change to "which candidate key hangs, as a tried child, under which parent", or to a
// node's own kept status or key, in Upsert order (Tree::Changes). Lets a consumer (the
// Catalog's cache of candidates at the incumbent) follow the tree incrementally.
struct TreeChange {
  NodeId node = kNoNode;
  NodeId old_parent = kNoNode;  // kNoNode when the node is new
  std::string old_key;
  bool old_tried = false;  // counted in TriedAlongPath of old_parent's subtree (not pruned)
  bool old_kept = false;
  NodeId new_parent = kNoNode;
  std::string new_key;
  bool new_tried = false;
  bool new_kept = false;
};

// Dispatched and judged: the nodes that count as an evaluation of the search. Pruned and
// skipped nodes never ran, so they neither use budget nor end a plateau.
bool IsEvaluated(const Node& n);

class Tree {
 public:
  Tree();
  Tree(const Tree& other);
  Tree(Tree&& other) noexcept;
  Tree& operator=(const Tree& other);
  Tree& operator=(Tree&& other) noexcept;
  ~Tree() = default;

  // Adds or replaces a node (by id). In any order: a parent may come after its children (the
  // answers are those of the whole tree once every node is in).
  void Upsert(const Node& node);
  void Upsert(Node&& node);
  // Capacity for `n` nodes (a resume knows how many it loads).
  void Reserve(size_t n);
  const Node* Find(NodeId id) const;
  // For fields the tree does not index (summary, diagnosis, …): parent, outcome, seq,
  // action_id and value must change through Upsert only, or the counters go stale.
  Node* FindMutable(NodeId id);
  const std::vector<NodeId>& Children(NodeId id) const;
  size_t size() const { return nodes_.size(); }
  NodeId MaxId() const { return max_id_; }
  // Nodes in id order.
  std::vector<const Node*> All() const;
  // The last `limit` evaluated nodes that were not kept (reverted, crashed), newest (highest
  // seq) first: O(limit), whatever the tree's size.
  std::vector<const Node*> RecentNonKept(size_t limit) const;

  // Root .. id inclusive.
  std::vector<const Node*> Path(NodeId id) const;
  // Candidate keys applied on the path and their action ids: those of the kept nodes on it
  // (root excluded) and, for a branch node, of its BranchPath; a drop takes its change back out.
  std::set<std::string> AppliedActions(NodeId id) const;
  // The same for the state of any node: its BranchPath counts whatever its outcome (a reverted
  // pair's state holds both sides).
  std::set<std::string> StateKeys(NodeId id) const;
  // The nodes whose changes make up the state of `id` (those StateKeys reads), root to `id`.
  std::vector<const Node*> StateNodes(NodeId id) const;
  // Candidate keys of the children (pruned ones excepted) of every node on the path of `id`:
  // what was already tried from this state or an ancestor state (failures propagate down).
  std::set<std::string> TriedAlongPath(NodeId id) const;
  // The incumbent: start at the root and follow the kept child (there is at most one per
  // node; the latest wins) until none. Cached. The kept chain from the root to it is the
  // main line: the best state found, and the campaign branch.
  NodeId Incumbent() const;

  // Branches (docs/search.md, "Branches"): a branch node (flag kBranchFlag) hangs under a node
  // that was judged against the incumbent and not kept (a reverted idea, a pair, a swap, or
  // another branch node): its state is its parent's plus its own change, and it is judged
  // against the same base, the parent of the branch's topmost node. Any other node is judged
  // against its parent.
  NodeId BaseOf(NodeId id) const;
  bool IsBranch(const Node& node) const;
  // The nodes from the branch's topmost node (a child of BaseOf(id)) down to `id`, top down:
  // the changes id's state carries on top of its base. Just `id` for a node that is no branch.
  std::vector<const Node*> BranchPath(NodeId id) const;
  // The nodes judged against `base`: its children that are no branch nodes, and the branch
  // nodes below them, depth first, children in id order.
  std::vector<const Node*> Below(NodeId base) const;
  // Nodes in outcome kRunning or kPending, ordered by id.
  std::vector<NodeId> Unfinished() const;
  // Number of finished non-root nodes, and how many of them trailing (by seq) are not kept.
  // O(1): maintained by Upsert.
  int FinishedCount() const { return finished_; }
  int TrailingNonKept() const { return trailing_; }

  // Identifies this tree object (a copy gets a new one), and the log of changes since it was
  // created: together they let a cache built from this tree catch up instead of rebuilding.
  uint64_t uid() const { return uid_; }
  const std::vector<TreeChange>& Changes() const { return changes_; }

 private:
  using SeqKey = std::pair<int64_t, NodeId>;  // evaluation order: (seq, id)

  void Unindex(const Node& old);
  void Index(const Node& node);
  void Journal(const Node* old, const Node& node);
  void Link(const Node* old, const Node& node);
  void UpdateIncumbent(const Node* old, const Node& node);
  int CountNonKeptAfter(const std::optional<SeqKey>& after) const;
  bool IsBranchState(NodeId id) const;
  std::set<std::string> Applied(NodeId id, bool with_branch) const;
  std::vector<const Node*> Appliers(NodeId id, bool with_branch) const;

  uint64_t uid_;
  std::unordered_map<NodeId, Node> nodes_;
  std::unordered_map<NodeId, std::vector<NodeId>> children_;
  NodeId max_id_ = kNoNode;
  // Evaluated (kept, reverted, crashed) non-root nodes, by kept status, in (seq, id) order.
  std::set<SeqKey> kept_;
  std::set<SeqKey> non_kept_;
  int finished_ = 0;
  int trailing_ = 0;  // non_kept_ entries after the last kept_ one
  mutable NodeId incumbent_ = kNoNode;
  mutable bool incumbent_valid_ = false;
  std::vector<TreeChange> changes_;
};

}  // namespace arbor
