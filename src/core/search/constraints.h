// Constraints and introspection: how failures prune the rest of the search, and when a
// reverted idea deserves another try (ARBOR.md "The Critic": constraints, introspection,
// long-horizon health).
//
// A constraint is published by the node whose outcome justified it and stored on that node
// (CriticNote::constraints). Which constraints are active at a point of the search is derived
// from the tree: in scope (the whole campaign, or a subtree whose root is on the path) and
// not lifted (`until_keep` constraints end at the next keep, when the bottleneck moves).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/search/candidates.h"
#include "core/tree/tree.h"

namespace arbor {

// The active constraints at `at`, from the nodes in `publishers` (those whose CriticNote
// lists constraints). `last_keep_seq` is the highest seq of a kept node.
std::vector<Constraint> ActiveConstraints(const Tree& tree, const std::vector<NodeId>& publishers,
                                          NodeId at, int64_t last_keep_seq);

// `active` without the constraints that forbid one of `ids` by name (an action or its values).
// A pair (moves.h) tests whether two candidates behave otherwise together than alone: what one
// of them did alone does not veto it; category-wide constraints still do.
std::vector<Constraint> WithoutBansOf(const std::vector<Constraint>& active,
                                      const std::vector<std::string>& ids);

// The first constraint in `active` that forbids the candidate, or nullopt.
std::optional<Constraint> Violated(const std::vector<Constraint>& active, const Candidate& c);

// What a failed node publishes, given its root-cause class ("runtime_crash", "accuracy", ...)
// and whether the class says the direction is unproductive or a dependency is missing.
struct PublishInput {
  const Node* node = nullptr;  // finished: crashed or reverted, with critic.rca set
  const ActionSpec* action = nullptr;
  bool prune_direction = false;
  bool missing_dependency = false;
  bool await_prerequisite = false;  // blocked until the next keep, then retried (moves.h)
};
std::vector<Constraint> PublishFor(const Tree& tree, const PublishInput& in);

// Circuit breaker: when the last `n` evaluated nodes (by seq) all crashed, the categories they
// belong to are paused until the next keep. Returns those constraints (empty when closed).
std::vector<Constraint> CircuitBreaker(const Tree& tree, int n, NodeId source);

// The share of `profile` taken by components matching any of `targets` (each counted once);
// empty targets = the whole program (1).
double TargetShare(const Profile& profile, const std::vector<std::string>& targets);

}  // namespace arbor
