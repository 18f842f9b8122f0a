// Candidates: the campaign file's actions expanded (one per value) and filtered by the path.
//
// A candidate is applicable at a node when: it is not already applied on the path (one value
// per action per path), it was not already tried from that node or an ancestor (failures
// propagate to the subtree), every `requires` action is applied on the path, and no
// `conflicts` action is (conflicts are symmetric).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/model/spec.h"
#include "core/tree/tree.h"

namespace arbor {

struct Candidate {
  const ActionSpec* action = nullptr;
  std::string value;  // "" unless the action has values
  std::string key;    // CandidateKey(action->id, value)
};

// Why a candidate is not applicable, or "" when it is.
struct Exclusion {
  Candidate candidate;
  std::string reason;  // "requires compiler.O3", "conflicts with kernel.naive", "already tried"
};

class Catalog {
 public:
  explicit Catalog(const std::vector<ActionSpec>& actions);
  const std::vector<Candidate>& All() const { return all_; }
  const ActionSpec* FindAction(const std::string& id) const;
  // Splits All() into applicable candidates at `node` and excluded ones with reasons, both in
  // All() order.
  //
  // Incremental: the catalog keeps what it learnt about the path of the last `node` it was
  // asked about (tried keys, applied actions, per-action verdicts) and catches up through
  // Tree::Changes(), so asking again at the same node or a descendant (the incumbent moving
  // down) costs O(changes + actions + catalog/64 + applicable) with `excluded` == nullptr,
  // independent of the tree's size. Anything else (another tree, a node elsewhere, a path
  // node re-parented or its kept status changed) rebuilds from the path. Not thread-safe.
  void Classify(const Tree& tree, NodeId node, std::vector<Candidate>* applicable,
                std::vector<Exclusion>* excluded) const;

 private:
  // The candidates of one action: all_[begin, end).
  struct ActionRange {
    const ActionSpec* action;
    size_t begin;
    size_t end;
  };
  // What Classify knows about the path of `node` in the tree `tree_uid` as of change `pos`.
  struct PathCache {
    uint64_t tree_uid = 0;  // 0: nothing cached
    size_t pos = 0;
    NodeId node = kNoNode;
    std::unordered_set<NodeId> on_path;
    std::vector<int> tried_count;                  // per candidate: tried children along the path
    std::vector<uint64_t> tried_bits;              // tried_count > 0
    std::unordered_map<std::string, int> applied;  // ids and keys of kept path nodes
    // Action id -> the first kept path action declaring a conflict with it.
    std::unordered_map<std::string, std::string> conflicted_by;
    bool verdicts_valid = false;
    std::vector<char> action_applied;        // per ActionRange
    std::vector<std::string> action_reason;  // per ActionRange: requires/conflicts, or ""
  };

  void Sync(const Tree& tree, NodeId node) const;
  void Rebuild(const Tree& tree, NodeId node) const;
  // Adds `n` (a child of the deepest cached path node) to the cached path.
  void Extend(const Tree& tree, const Node& n) const;
  void CountTried(const std::string& key, int delta) const;
  void ComputeVerdicts() const;

  std::vector<Candidate> all_;
  std::vector<ActionRange> ranges_;
  std::unordered_map<std::string, const ActionSpec*> by_id_;
  std::unordered_map<std::string, std::vector<size_t>> by_key_;
  mutable PathCache cache_;
};

// Substitutes "{value}" in every string of the action's apply spec.
ApplySpec SubstituteValue(const ApplySpec& apply, const std::string& value);

}  // namespace arbor
