// A synthetic, finished campaign of any size, shaped like what the Orchestrator writes, for the
// engine benchmarks (engine_bench.cc, micro_bench.cc).
//
// Shape: a kept chain root → c1 → … → c_depth (the incumbent), and every other node a reverted
// or crashed child of a chain node (depth-first search only ever expands the incumbent). Every
// node's candidate key is distinct along the chain, as the engine guarantees, so the catalog
// has to grow with the tree: 60 actions, 50 "chain" knobs with 4 values each (one kept per
// level, the others tried and reverted) and 10 "wide" knobs whose values cover every other
// node plus `spare_candidates` still untried at the incumbent.
//
// Records are emitted in id order with the rows the Orchestrator would have stored for a
// finished node (src/core/orchestrator/node_steps.cc): the node, 3 "self" samples, a profile for
// the root and kept nodes, and the events proposed, dispatched, built, checked, measured, then
// kept+reprofiled / reverted / crashed.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "core/model/model.h"
#include "core/model/ports.h"
#include "core/model/spec.h"
#include "core/tree/tree.h"
#include "util/result.h"

namespace arbor::bench {

struct SyntheticShape {
  int nodes = 1000;             // total, root included
  int depth = 50;               // kept nodes on the chain (≤ kChainActions)
  int spare_candidates = 1500;  // untried candidates left at the incumbent
  bool critic = false;          // the campaign's recorded protocol (meta no_critic)
};

inline constexpr int kChainActions = 50;
inline constexpr int kChainValues = 4;
inline constexpr int kWideActions = 10;
inline constexpr int kActions = kChainActions + kWideActions;

struct NodeRecord {
  Node node;
  std::vector<Sample> samples;
  std::optional<Profile> profile;
  std::vector<Event> events;
};

// The campaign spec (name "engine-bench", repetitions 1, no plateau or time stop, max_nodes =
// shape.nodes + extra_nodes) with the 60 actions sized for the shape.
CampaignSpec SyntheticSpec(const SyntheticShape& shape, int extra_nodes);

// Calls `emit` for every node in id order (parents before children).
void GenerateCampaign(const SyntheticShape& shape, const std::function<void(NodeRecord&&)>& emit);

// The profile the root and kept nodes carry (8 components, shares summing to 1).
Profile SyntheticProfile(uint64_t salt);

// The campaign meta matching a generated campaign of `shape`.
CampaignMeta SyntheticMeta(const SyntheticShape& shape);

// Writes the generated campaign through Store::Apply, `batch` nodes per mutation.
Status PopulateStore(Store* store, const SyntheticShape& shape, int batch);

// The generated nodes as a Tree (no store), and the id of the incumbent.
Tree BuildTree(const SyntheticShape& shape, NodeId* incumbent);

// Deterministic uniform value in [0, 1) from a key (splitmix64).
double Unit(uint64_t key);

}  // namespace arbor::bench
