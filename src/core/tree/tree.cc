#include "core/tree/tree.h"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <string>

#include "util/check.h"

namespace arbor {

bool IsEvaluated(const Node& n) {
  return n.id != kRootId && (n.outcome == Outcome::kKept || n.outcome == Outcome::kReverted ||
                             n.outcome == Outcome::kCrashed);
}

namespace {

// Counted by TriedAlongPath below its parent: every child that ran or is running.
bool IsTried(const Node& n) { return n.parent != kNoNode && n.outcome != Outcome::kPruned; }

uint64_t NextUid() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

Tree::Tree() : uid_(NextUid()) {}

Tree::Tree(const Tree& other)
    : uid_(NextUid()),
      nodes_(other.nodes_),
      children_(other.children_),
      max_id_(other.max_id_),
      kept_(other.kept_),
      non_kept_(other.non_kept_),
      finished_(other.finished_),
      trailing_(other.trailing_),
      incumbent_(other.incumbent_),
      incumbent_valid_(other.incumbent_valid_),
      changes_(other.changes_) {}

Tree::Tree(Tree&& other) noexcept
    : uid_(NextUid()),
      nodes_(std::move(other.nodes_)),
      children_(std::move(other.children_)),
      max_id_(other.max_id_),
      kept_(std::move(other.kept_)),
      non_kept_(std::move(other.non_kept_)),
      finished_(other.finished_),
      trailing_(other.trailing_),
      incumbent_(other.incumbent_),
      incumbent_valid_(other.incumbent_valid_),
      changes_(std::move(other.changes_)) {
  other = Tree();
}

Tree& Tree::operator=(const Tree& other) {
  if (this != &other) *this = Tree(other);
  return *this;
}

Tree& Tree::operator=(Tree&& other) noexcept {
  if (this == &other) return *this;
  uid_ = NextUid();  // caches keyed on the old content must not match the new one
  nodes_ = std::move(other.nodes_);
  children_ = std::move(other.children_);
  max_id_ = other.max_id_;
  kept_ = std::move(other.kept_);
  non_kept_ = std::move(other.non_kept_);
  finished_ = other.finished_;
  trailing_ = other.trailing_;
  incumbent_ = other.incumbent_;
  incumbent_valid_ = other.incumbent_valid_;
  changes_ = std::move(other.changes_);
  other.nodes_.clear();
  other.children_.clear();
  other.max_id_ = kNoNode;
  other.kept_.clear();
  other.non_kept_.clear();
  other.finished_ = other.trailing_ = 0;
  other.incumbent_valid_ = false;
  other.changes_.clear();
  other.uid_ = NextUid();
  return *this;
}

void Tree::Reserve(size_t n) {
  nodes_.reserve(n);
  children_.reserve(n);
}

void Tree::Upsert(const Node& node) { Upsert(Node(node)); }

void Tree::Upsert(Node&& node) {
  ARBOR_CHECK(node.id != kNoNode, "Tree::Upsert of a node without id");
  // Its parent may come later: a node re-dispatched under a node kept before it in a parallel
  // batch has a smaller id than its parent, and stores load by id.
  auto it = nodes_.find(node.id);
  const Node* old = it == nodes_.end() ? nullptr : &it->second;
  Journal(old, node);
  Link(old, node);
  UpdateIncumbent(old, node);
  if (old != nullptr) Unindex(*old);
  Index(node);
  max_id_ = std::max(max_id_, node.id);
  if (it == nodes_.end()) {
    const NodeId id = node.id;
    nodes_.emplace(id, std::move(node));
  } else {
    it->second = std::move(node);
  }
}

void Tree::Journal(const Node* old, const Node& node) {
  TreeChange c;
  c.node = node.id;
  c.new_parent = node.parent;
  c.new_tried = IsTried(node);
  c.new_kept = node.outcome == Outcome::kKept;
  if (old != nullptr) {
    c.old_parent = old->parent;
    c.old_tried = IsTried(*old);
    c.old_kept = old->outcome == Outcome::kKept;
    if (c.old_parent == c.new_parent && c.old_tried == c.new_tried && c.old_kept == c.new_kept &&
        old->action_id == node.action_id && old->value == node.value) {
      return;  // nothing a consumer of Changes() follows
    }
    c.old_key = old->CandidateKey();
  }
  c.new_key = node.CandidateKey();
  changes_.push_back(std::move(c));
}

void Tree::Link(const Node* old, const Node& node) {
  if (old != nullptr && old->parent == node.parent) return;
  if (old != nullptr) {
    auto& old_siblings = children_[old->parent];
    old_siblings.erase(std::remove(old_siblings.begin(), old_siblings.end(), node.id),
                       old_siblings.end());
  }
  if (node.parent != kNoNode) {
    auto& siblings = children_[node.parent];
    // Ids grow, so the common case is an append.
    if (siblings.empty() || siblings.back() < node.id) {
      siblings.push_back(node.id);
    } else {
      siblings.insert(std::lower_bound(siblings.begin(), siblings.end(), node.id), node.id);
    }
  }
}

void Tree::UpdateIncumbent(const Node* old, const Node& node) {
  const bool was_kept = old != nullptr && old->outcome == Outcome::kKept;
  const bool is_kept = node.outcome == Outcome::kKept;
  if (old == nullptr && node.id == kRootId) {
    incumbent_valid_ = false;
    return;
  }
  if (!was_kept && !is_kept) return;
  if (was_kept && is_kept && old->parent == node.parent && old->seq == node.seq) return;
  // A new keep under the incumbent (the common case): the walk from the root reaches the
  // incumbent unchanged and now continues into this node, which has no kept child yet unless
  // the tree is being rebuilt out of order, in which case Incumbent() recomputes.
  if (incumbent_valid_ && !was_kept && is_kept && node.parent == incumbent_ &&
      Children(node.id).empty()) {
    incumbent_ = node.id;
    return;
  }
  incumbent_valid_ = false;
}

int Tree::CountNonKeptAfter(const std::optional<SeqKey>& after) const {
  if (!after) return static_cast<int>(non_kept_.size());
  return static_cast<int>(std::distance(non_kept_.upper_bound(*after), non_kept_.end()));
}

void Tree::Unindex(const Node& old) {
  if (!IsEvaluated(old)) return;
  --finished_;
  const SeqKey k{old.seq, old.id};
  if (old.outcome == Outcome::kKept) {
    const bool was_last = *kept_.rbegin() == k;
    kept_.erase(k);
    if (was_last) {
      trailing_ =
          CountNonKeptAfter(kept_.empty() ? std::nullopt : std::optional<SeqKey>(*kept_.rbegin()));
    }
  } else {
    non_kept_.erase(k);
    if (kept_.empty() || k > *kept_.rbegin()) --trailing_;
  }
}

void Tree::Index(const Node& node) {
  if (!IsEvaluated(node)) return;
  ++finished_;
  const SeqKey k{node.seq, node.id};
  if (node.outcome == Outcome::kKept) {
    const bool last = kept_.empty() || k > *kept_.rbegin();
    kept_.insert(k);
    if (last) trailing_ = CountNonKeptAfter(k);
  } else {
    non_kept_.insert(k);
    if (kept_.empty() || k > *kept_.rbegin()) ++trailing_;
  }
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

std::vector<const Node*> Tree::RecentNonKept(size_t limit) const {
  std::vector<const Node*> out;
  for (auto it = non_kept_.rbegin(); it != non_kept_.rend() && out.size() < limit; ++it) {
    out.push_back(Find(it->second));
  }
  return out;
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
  return Applied(id, IsBranchState(id));
}

std::set<std::string> Tree::StateKeys(NodeId id) const { return Applied(id, true); }

bool Tree::IsBranchState(NodeId id) const {
  const Node* n = Find(id);
  return n != nullptr && IsBranch(*n);
}

std::vector<const Node*> Tree::StateNodes(NodeId id) const { return Appliers(id, true); }

std::vector<const Node*> Tree::Appliers(NodeId id, bool with_branch) const {
  std::vector<const Node*> out;
  const NodeId base = with_branch ? BaseOf(id) : kNoNode;
  bool in_branch = false;  // below the base: every node's change is in the state
  for (const Node* n : Path(id)) {
    const bool applies = in_branch || (n->id != kRootId && n->outcome == Outcome::kKept);
    if (base != kNoNode && n->id == base) in_branch = true;
    if (applies) out.push_back(n);
  }
  return out;
}

std::set<std::string> Tree::Applied(NodeId id, bool with_branch) const {
  std::set<std::string> applied;
  for (const Node* n : Appliers(id, with_branch)) {
    for (std::string& k : AppliedKeys(*n)) applied.insert(std::move(k));
    for (const std::string& k : RemovedKeys(*n)) applied.erase(k);
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
  if (incumbent_valid_) return incumbent_;
  const Node* current = Find(kRootId);
  if (current == nullptr) return kNoNode;  // not cached: the root may come later
  while (true) {
    const Node* best = nullptr;
    for (NodeId child : Children(current->id)) {
      const Node* c = Find(child);
      if (c->outcome != Outcome::kKept) continue;
      if (best == nullptr || c->seq > best->seq) best = c;
    }
    if (best == nullptr) break;
    current = best;
  }
  incumbent_ = current->id;
  incumbent_valid_ = true;
  return incumbent_;
}

NodeId Tree::BaseOf(NodeId id) const {
  const Node* n = Find(id);
  while (n != nullptr && IsBranch(*n)) n = Find(n->parent);
  return n == nullptr ? kNoNode : n->parent;
}

bool Tree::IsBranch(const Node& node) const { return HasFlag(node, kBranchFlag); }

std::vector<const Node*> Tree::BranchPath(NodeId id) const {
  std::vector<const Node*> out;
  const Node* n = Find(id);
  for (; n != nullptr && IsBranch(*n); n = Find(n->parent)) out.push_back(n);
  if (n != nullptr) out.push_back(n);  // the branch's root: an ordinary child of the base
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<const Node*> Tree::Below(NodeId base) const {
  std::vector<const Node*> out;
  std::vector<NodeId> todo;
  // A branch child of `base` (a carried node's) is judged against base's own base.
  for (auto it = Children(base).rbegin(); it != Children(base).rend(); ++it) {
    if (!IsBranch(*Find(*it))) todo.push_back(*it);
  }
  while (!todo.empty()) {
    const Node* n = Find(todo.back());
    todo.pop_back();
    out.push_back(n);
    const std::vector<NodeId>& kids = Children(n->id);
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) {
      if (IsBranch(*Find(*it))) todo.push_back(*it);
    }
  }
  return out;
}

std::vector<NodeId> Tree::Unfinished() const {
  std::vector<NodeId> ids;
  for (const auto& [id, node] : nodes_) {
    if (!IsFinished(node.outcome)) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace arbor
