// TreeIndex: the parent -> children structure of a plain node list, for the views.
//
// Internal to report/. Unlike core's Tree it accepts nodes in any order and never aborts on
// a malformed list: a node whose parent is absent becomes an extra root, and a duplicated id
// keeps its last occurrence. It refers to the caller's vector, which must outlive it.
#pragma once

#include <cstddef>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/model/model.h"

namespace arbor::report {

class TreeIndex {
 public:
  explicit TreeIndex(const std::vector<Node>& nodes);

  const Node& at(size_t pos) const { return nodes_[pos]; }
  std::optional<size_t> Find(NodeId id) const;
  // Children in display order: dispatched ones by seq, then undispatched ones by id.
  const std::vector<size_t>& Children(size_t pos) const { return children_[pos]; }
  // Nodes without a parent in the list, in id order (normally just the root).
  const std::vector<size_t>& Roots() const { return roots_; }
  // Positions in id order (duplicates dropped).
  const std::vector<size_t>& ById() const { return by_id_; }

  // The root and then, repeatedly, its kept child with the highest seq (Tree::Incumbent's
  // rule). Empty when there is no root node.
  std::vector<size_t> IncumbentPath() const;

 private:
  const std::vector<Node>& nodes_;
  std::unordered_map<NodeId, size_t> pos_of_;
  std::vector<std::vector<size_t>> children_;
  std::vector<size_t> roots_;
  std::vector<size_t> by_id_;
};

}  // namespace arbor::report
