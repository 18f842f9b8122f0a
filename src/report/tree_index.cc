#include "report/tree_index.h"

#include <algorithm>
#include <tuple>

namespace arbor::report {

TreeIndex::TreeIndex(const std::vector<Node>& nodes) : nodes_(nodes), children_(nodes.size()) {
  pos_of_.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) pos_of_[nodes[i].id] = i;
  by_id_.reserve(pos_of_.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (pos_of_[nodes[i].id] == i) by_id_.push_back(i);
  }
  std::sort(by_id_.begin(), by_id_.end(),
            [&](size_t a, size_t b) { return nodes[a].id < nodes[b].id; });
  for (size_t i : by_id_) {
    const Node& n = nodes[i];
    auto parent = n.parent == n.id ? std::nullopt : Find(n.parent);
    if (parent) {
      children_[*parent].push_back(i);
    } else {
      roots_.push_back(i);
    }
  }
  auto display_order = [&](size_t a, size_t b) {
    const Node& x = nodes[a];
    const Node& y = nodes[b];
    return std::make_tuple(x.seq == 0, x.seq, x.id) < std::make_tuple(y.seq == 0, y.seq, y.id);
  };
  for (auto& kids : children_) std::sort(kids.begin(), kids.end(), display_order);
}

std::optional<size_t> TreeIndex::Find(NodeId id) const {
  auto it = pos_of_.find(id);
  if (it == pos_of_.end()) return std::nullopt;
  return it->second;
}

std::vector<size_t> TreeIndex::IncumbentPath() const {
  std::vector<size_t> path;
  auto root = Find(kRootId);
  if (!root) return path;
  path.push_back(*root);
  // The bound only matters for a list whose parent links form a cycle through the root.
  while (path.size() <= nodes_.size()) {
    std::optional<size_t> best;
    for (size_t child : children_[path.back()]) {
      const Node& c = nodes_[child];
      if (c.outcome != Outcome::kKept) continue;
      if (!best || c.seq > nodes_[*best].seq) best = child;
    }
    if (!best) return path;
    path.push_back(*best);
  }
  return path;
}

}  // namespace arbor::report
