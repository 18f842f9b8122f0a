// Reading `arbor tree --format json` / `arbor show --json` and the invariants every finished
// campaign must satisfy, shared by the integration tests.
//
// The toy campaign's expected outcomes (examples/toy/README.md) live here too, so that the
// uninterrupted run and every interrupted-and-resumed run are held to the same answer.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness.h"

namespace arbor::integration {

struct TreeNode {
  int64_t id = 0;
  int64_t parent = 0;  // 0 for the root
  std::string action;
  std::string value;  // "" when `values` is null
  std::string outcome;
  std::string diagnosis;
  std::string commit;
  nlohmann::json metric;           // number or null, as printed
  std::vector<std::string> flags;  // the Critic's ("move:remeasure", "inconclusive", …)
  std::string with;                // a pair's companion key (flag "with:<key>"), or a branch
                                   // node's parent's Key(), else ""
  bool drop = false;               // a drop: its change taken back out (flag "without:<key>")
  bool branch = false;             // a branch node (docs/search.md, "Branches")
  std::string opened;              // why a re-queued node was opened
  // "action" or "action[value]", as Arbor's candidate keys; "companion+action…" for a pair, so
  // that a pair is never mistaken for its own side run alone; "-action…" for a drop.
  std::string Key() const {
    return (with.empty() ? "" : with + "+") + (drop ? "-" : "") +
           (value.empty() ? action : action + "[" + value + "]");
  }
};

// C helpers of the computed (not timed) targets the tests build, pasted after their includes
// (<stdint.h>, <stdio.h>, <stdlib.h>, <string.h>): Env(name, fallback), SplitMix(x), and
// NextCall(), the call counter shared by every run of a campaign (file $COUNTER).
extern const char kComputedTargetHelpersC[];

std::vector<TreeNode> ParseTree(const nlohmann::json& tree);
// Whether the node carries the flag (say "move:remeasure").
bool HasFlag(const TreeNode& n, const std::string& flag);
// The campaign's own tries: neither a pair, a re-measure nor a drop (flags move:pair,
// move:remeasure, move:drop), which spend the budget left once every candidate was decided
// (docs/search.md).
std::vector<TreeNode> OwnTries(const std::vector<TreeNode>& nodes);
std::vector<TreeNode> LoadTree(const TempWorkspace& ws);
std::set<std::string> KeysWithOutcome(const std::vector<TreeNode>& nodes,
                                      const std::string& outcome);
const TreeNode* FindKey(const std::vector<TreeNode>& nodes, const std::string& key);
// Ids of the ancestors of `id`, nearest first (root last).
std::vector<int64_t> Ancestors(const std::vector<TreeNode>& nodes, int64_t id);
bool IsFinished(const std::string& outcome);
// One line per node, for failure messages.
std::string DescribeTree(const std::vector<TreeNode>& nodes);
// Whether `arbor show ID --json` lists an event of `kind` whose message contains `text`.
bool HasEvent(const TempWorkspace& ws, int64_t id, const std::string& kind,
              const std::string& text);

// Unique ids, parents present, no pending/running node, no two siblings with the same
// (action, value).
void ExpectTreeInvariants(const std::vector<TreeNode>& nodes);

// What a node looked like at some moment: outcome, metric and samples.
struct NodeRecord {
  std::string outcome;
  nlohmann::json metric;
  nlohmann::json samples;
};
// Records every finished node of the campaign in `ws` (one `arbor show` per node).
std::map<int64_t, NodeRecord> RecordFinished(const TempWorkspace& ws,
                                             const std::vector<TreeNode>& nodes);
// Every node recorded before must still exist with the same outcome, metric and samples.
void ExpectPreserved(const std::map<int64_t, NodeRecord>& before, const TempWorkspace& ws);

// The toy campaign's answer.
extern const std::set<std::string> kToyKept;
// Kept/reverted/crashed/skipped/pruned sets, diagnoses, the constraint that prunes a value, the
// re-queued app.crc-table, the profile-driven branch and the branch arbor/toy with its
// arbor-best.env.
void ExpectToyOutcomes(const TempWorkspace& ws, const std::vector<TreeNode>& nodes);
// `arbor status --json` says finished, with a stop reason and the expected best speedup.
void ExpectToyFinished(const TempWorkspace& ws);

}  // namespace arbor::integration
