#include "core/search/candidates.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace arbor {
namespace {

ActionSpec Action(const std::string& id, std::vector<std::string> requires_ = {},
                  std::vector<std::string> conflicts = {}, std::vector<std::string> values = {}) {
  ActionSpec a;
  a.id = id;
  a.category = id.substr(0, id.find('.'));
  a.requires_ = std::move(requires_);
  a.conflicts = std::move(conflicts);
  a.values = std::move(values);
  return a;
}

std::vector<ActionSpec> SampleActions() {
  return {
      Action("compiler.O3"),
      Action("server.batch", {}, {}, {"8", "16"}),
      Action("kernel.fused", {"compiler.O3"}, {"kernel.naive"}),
      Action("kernel.naive"),
      Action("kernel.tiled", {"compiler.O3", "server.batch"}),
  };
}

Node MakeNode(NodeId id, NodeId parent, const std::string& action, Outcome outcome,
              const std::string& value = "") {
  Node n;
  n.id = id;
  n.parent = parent;
  n.action_id = action;
  n.value = value;
  n.outcome = outcome;
  return n;
}

Tree TreeWith(const std::vector<Node>& nodes) {
  Tree t;
  t.Upsert(MakeNode(kRootId, kNoNode, "baseline", Outcome::kBaseline));
  for (const Node& n : nodes) t.Upsert(n);
  return t;
}

// Candidate key -> exclusion reason ("" when applicable).
std::map<std::string, std::string> Classify(const Catalog& catalog, const Tree& tree, NodeId node) {
  std::vector<Candidate> applicable;
  std::vector<Exclusion> excluded;
  catalog.Classify(tree, node, &applicable, &excluded);
  std::map<std::string, std::string> out;
  for (const Candidate& c : applicable) out[c.key] = "";
  for (const Exclusion& e : excluded) out[e.candidate.key] = e.reason;
  EXPECT_EQ(out.size(), catalog.All().size());
  return out;
}

TEST(CatalogTest, ExpandsValuesInFileOrder) {
  const std::vector<ActionSpec> actions = SampleActions();
  Catalog catalog(actions);
  std::vector<std::string> keys;
  for (const Candidate& c : catalog.All()) keys.push_back(c.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"compiler.O3", "server.batch[8]", "server.batch[16]",
                                            "kernel.fused", "kernel.naive", "kernel.tiled"}));
  EXPECT_EQ(catalog.All()[2].value, "16");
  EXPECT_EQ(catalog.All()[2].action, &actions[1]);
  EXPECT_EQ(catalog.All()[0].value, "");
  EXPECT_EQ(catalog.FindAction("kernel.naive"), &actions[3]);
  EXPECT_EQ(catalog.FindAction("kernel.nope"), nullptr);
}

TEST(CatalogTest, RootOfAFreshCampaignExcludesOnlyUnmetRequirements) {
  const std::vector<ActionSpec> actions = SampleActions();
  Catalog catalog(actions);
  auto r = Classify(catalog, TreeWith({}), kRootId);
  EXPECT_EQ(r["compiler.O3"], "");
  EXPECT_EQ(r["server.batch[8]"], "");
  EXPECT_EQ(r["server.batch[16]"], "");
  EXPECT_EQ(r["kernel.fused"], "requires compiler.O3");
  EXPECT_EQ(r["kernel.naive"], "");
  EXPECT_EQ(r["kernel.tiled"], "requires compiler.O3");  // the first missing one
}

TEST(CatalogTest, AppliedAndTriedCandidatesAreExcludedWithReasons) {
  const std::vector<ActionSpec> actions = SampleActions();
  Catalog catalog(actions);
  // root ─┬─ 2 compiler.O3 kept ── 4 server.batch[8] reverted
  //       └─ 3 kernel.naive crashed
  Tree tree = TreeWith({MakeNode(2, 1, "compiler.O3", Outcome::kKept),
                        MakeNode(3, 1, "kernel.naive", Outcome::kCrashed),
                        MakeNode(4, 2, "server.batch", Outcome::kReverted, "8")});
  auto r = Classify(catalog, tree, 2);
  EXPECT_EQ(r["compiler.O3"], "already applied on the path");
  EXPECT_EQ(r["server.batch[8]"], "already tried from this state or an ancestor");
  EXPECT_EQ(r["server.batch[16]"], "");  // another value is still open
  EXPECT_EQ(r["kernel.fused"], "");      // requirement met, kernel.naive never applied
  // The crash happened from the root's state; it propagates to the whole subtree.
  EXPECT_EQ(r["kernel.naive"], "already tried from this state or an ancestor");
  EXPECT_EQ(r["kernel.tiled"], "requires server.batch");
}

TEST(CatalogTest, OneValuePerActionPerPath) {
  const std::vector<ActionSpec> actions = SampleActions();
  Catalog catalog(actions);
  Tree tree = TreeWith({MakeNode(2, 1, "compiler.O3", Outcome::kKept),
                        MakeNode(3, 2, "server.batch", Outcome::kKept, "16")});
  auto r = Classify(catalog, tree, 3);
  EXPECT_EQ(r["server.batch[8]"], "already applied on the path");
  EXPECT_EQ(r["server.batch[16]"], "already applied on the path");
  EXPECT_EQ(r["kernel.tiled"], "");  // both requirements are kept on the path
}

// A kept pair applies its companion too: the companion is applied on the path, its
// requirement counts as met, and its declared conflicts hold.
TEST(CatalogTest, AKeptPairAppliesItsCompanion) {
  const std::vector<ActionSpec> actions = SampleActions();
  Catalog catalog(actions);
  Node pair = MakeNode(2, 1, "server.batch", Outcome::kKept, "8");
  pair.critic.flags = {"move:pair", CompanionFlag("kernel.naive")};
  Node o3 = MakeNode(3, 2, "compiler.O3", Outcome::kKept);
  Tree tree = TreeWith({pair, o3});
  auto r = Classify(catalog, tree, 3);
  EXPECT_EQ(r["kernel.naive"], "already applied on the path");
  EXPECT_EQ(r["server.batch[16]"], "already applied on the path");
  EXPECT_EQ(r["kernel.fused"], "conflicts with kernel.naive");
  EXPECT_EQ(r["kernel.tiled"], "");  // compiler.O3 and server.batch are both on the path
  EXPECT_EQ(tree.AppliedActions(2),
            (std::set<std::string>{"server.batch", "server.batch[8]", "kernel.naive"}));
  EXPECT_EQ(SplitCandidateKey("server.batch[8]"),
            (std::pair<std::string, std::string>{"server.batch", "8"}));
  EXPECT_EQ(SplitCandidateKey("kernel.naive"),
            (std::pair<std::string, std::string>{"kernel.naive", ""}));
  EXPECT_FALSE(CompanionKey(o3).has_value());
}

TEST(CatalogTest, ConflictsAreSymmetric) {
  const std::vector<ActionSpec> actions = SampleActions();
  Catalog catalog(actions);
  // kernel.fused declares the conflict; kernel.naive is on the path.
  Tree naive_first = TreeWith({MakeNode(2, 1, "kernel.naive", Outcome::kKept),
                               MakeNode(3, 2, "compiler.O3", Outcome::kKept)});
  EXPECT_EQ(Classify(catalog, naive_first, 2)["kernel.fused"], "requires compiler.O3");
  EXPECT_EQ(Classify(catalog, naive_first, 3)["kernel.fused"], "conflicts with kernel.naive");
  // kernel.naive declares nothing, but kernel.fused on the path conflicts with it.
  Tree fused_first = TreeWith({MakeNode(2, 1, "compiler.O3", Outcome::kKept),
                               MakeNode(3, 2, "kernel.fused", Outcome::kKept)});
  EXPECT_EQ(Classify(catalog, fused_first, 3)["kernel.naive"], "conflicts with kernel.fused");
  // A reverted conflicting action is not on the path and blocks nothing below it.
  Tree reverted = TreeWith({MakeNode(2, 1, "compiler.O3", Outcome::kKept),
                            MakeNode(3, 2, "kernel.fused", Outcome::kReverted)});
  EXPECT_EQ(Classify(catalog, reverted, 2)["kernel.naive"], "");
}

TEST(CatalogTest, ClassifyAcceptsNullOutputs) {
  const std::vector<ActionSpec> actions = SampleActions();
  Catalog catalog(actions);
  std::vector<Candidate> applicable;
  catalog.Classify(TreeWith({}), kRootId, &applicable, nullptr);
  EXPECT_EQ(applicable.size(), 4u);
}

TEST(SubstituteValueTest, ReplacesEveryPlaceholder) {
  ApplySpec apply;
  apply.env = {{"BATCH", "{value}"}, {"OTHER", "fixed"}};
  apply.append = {{"CFLAGS", " -DTILE={value}"}};
  apply.patch = "/p/tile-{value}.diff";
  apply.run = "./set {value} {value}";
  apply.goal = "use tile {value}";
  apply.agent = "kernel";
  ApplySpec out = SubstituteValue(apply, "16");
  EXPECT_EQ(out.env.at("BATCH"), "16");
  EXPECT_EQ(out.env.at("OTHER"), "fixed");
  EXPECT_EQ(out.append.at("CFLAGS"), " -DTILE=16");
  EXPECT_EQ(out.patch, "/p/tile-16.diff");
  EXPECT_EQ(out.run, "./set 16 16");
  EXPECT_EQ(out.goal, "use tile 16");
  EXPECT_EQ(out.agent, "kernel");
  EXPECT_EQ(out.kind, apply.kind);
}

}  // namespace
}  // namespace arbor

namespace arbor {
namespace {

// The definition Classify implements, from scratch over the tree (the pre-cache algorithm).
std::vector<std::pair<std::string, std::string>> ReferenceClassify(
    const std::vector<ActionSpec>& actions, const Catalog& catalog, const Tree& tree, NodeId node) {
  const std::set<std::string> applied = tree.AppliedActions(node);
  const std::set<std::string> tried = tree.TriedAlongPath(node);
  std::vector<const ActionSpec*> path_actions;
  for (const Node* n : tree.Path(node)) {
    if (n->id == kRootId || n->outcome != Outcome::kKept) continue;
    for (const ActionSpec& a : actions) {
      if (a.id == n->action_id) {
        path_actions.push_back(&a);
        break;
      }
    }
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const Candidate& c : catalog.All()) {
    const ActionSpec& a = *c.action;
    std::string reason;
    if (applied.count(a.id) > 0) {
      reason = "already applied on the path";
    } else if (tried.count(c.key) > 0) {
      reason = "already tried from this state or an ancestor";
    } else {
      for (const std::string& r : a.requires_) {
        if (applied.count(r) == 0) {
          reason = "requires " + r;
          break;
        }
      }
    }
    for (size_t i = 0; reason.empty() && i < a.conflicts.size(); ++i) {
      if (applied.count(a.conflicts[i]) > 0) reason = "conflicts with " + a.conflicts[i];
    }
    for (size_t i = 0; reason.empty() && i < path_actions.size(); ++i) {
      const auto& pc = path_actions[i]->conflicts;
      if (std::find(pc.begin(), pc.end(), a.id) != pc.end()) {
        reason = "conflicts with " + path_actions[i]->id;
      }
    }
    out.emplace_back(c.key, reason);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> Flatten(const Catalog& catalog, const Tree& tree,
                                                         NodeId node) {
  std::vector<Candidate> applicable;
  std::vector<Exclusion> excluded;
  catalog.Classify(tree, node, &applicable, &excluded);
  std::map<std::string, std::string> by_key;
  for (const Candidate& c : applicable) by_key[c.key] = "";
  for (const Exclusion& e : excluded) by_key[e.candidate.key] = e.reason;
  std::vector<std::pair<std::string, std::string>> out;
  for (const Candidate& c : catalog.All()) out.emplace_back(c.key, by_key[c.key]);
  // The applicable-only form (the Orchestrator's) lists the same candidates in All() order.
  std::vector<Candidate> only;
  catalog.Classify(tree, node, &only, nullptr);
  std::vector<std::string> a, b;
  for (const Candidate& c : applicable) a.push_back(c.key);
  for (const Candidate& c : only) b.push_back(c.key);
  EXPECT_EQ(a, b);
  return out;
}

// A campaign grown at random the way the Orchestrator grows one (children under the
// incumbent, some kept, some pruned, pending ones later dispatched), with occasional questions
// about other nodes and rewrites of path nodes: the one long-lived catalog, following the tree
// incrementally, always answers like the from-scratch definition.
TEST(CatalogTest, IncrementalClassifyMatchesTheDefinition) {
  std::vector<ActionSpec> actions;
  for (int i = 0; i < 12; ++i) {
    std::vector<std::string> requires_, conflicts, values;
    if (i % 5 == 3) requires_.push_back("k" + std::to_string(i - 3));
    if (i % 4 == 1) conflicts.push_back("k" + std::to_string((i + 6) % 12));
    if (i % 3 == 0) values = {"1", "2", "3", "4"};
    if (i == 7) requires_.push_back("k0[2]");
    actions.push_back(Action("k" + std::to_string(i), requires_, conflicts, values));
  }
  // Duplicate keys in the file (the same action twice) count both entries.
  actions.push_back(Action("k2"));
  Catalog catalog(actions);
  uint64_t state = 7;
  auto next = [&](uint64_t bound) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % bound;
  };
  for (int campaign = 0; campaign < 20; ++campaign) {
    Tree tree;
    tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", Outcome::kBaseline));
    for (int step = 0; step < 60; ++step) {
      const NodeId inc = tree.Incumbent();
      NodeId ask = inc;
      const uint64_t what = next(10);
      if (what == 0) {
        ask = static_cast<NodeId>(1 + next(static_cast<uint64_t>(tree.MaxId())));
      } else if (what == 1 && tree.MaxId() > 1) {
        // Rewrite an existing node: flip its outcome (path nodes included).
        Node n = *tree.Find(static_cast<NodeId>(2 + next(static_cast<uint64_t>(tree.MaxId() - 1))));
        n.outcome = next(2) == 0 ? Outcome::kReverted : Outcome::kPruned;
        n.seq = step;
        tree.Upsert(n);
      } else {
        std::vector<Candidate> applicable;
        catalog.Classify(tree, inc, &applicable, nullptr);
        const Candidate* c = nullptr;
        if (!applicable.empty() && next(6) != 0) {
          c = &applicable[next(applicable.size())];
        }
        Node n =
            c ? MakeNode(tree.MaxId() + 1, inc, c->action->id, Outcome::kRunning, c->value)
              : MakeNode(tree.MaxId() + 1, inc,
                         catalog.All()[next(catalog.All().size())].action->id, Outcome::kPending);
        n.seq = step;
        tree.Upsert(n);
        const uint64_t verdict = next(5);
        n.outcome = verdict == 0   ? Outcome::kKept
                    : verdict == 1 ? Outcome::kPruned
                    : verdict == 2 ? Outcome::kCrashed
                                   : Outcome::kReverted;
        tree.Upsert(n);
      }
      ASSERT_EQ(Flatten(catalog, tree, ask), ReferenceClassify(actions, catalog, tree, ask))
          << "campaign " << campaign << " step " << step << " node " << ask;
    }
  }
}

TEST(CatalogTest, ClassifyDoesNotConfuseTreesOrNodesNotYetAdded) {
  const std::vector<ActionSpec> actions = SampleActions();
  Catalog catalog(actions);
  Tree empty;
  EXPECT_EQ(Classify(catalog, empty, kRootId)["kernel.naive"], "");
  Tree tree = TreeWith({MakeNode(2, 1, "kernel.naive", Outcome::kReverted)});
  EXPECT_EQ(Classify(catalog, tree, kRootId)["kernel.naive"],
            "already tried from this state or an ancestor");
  Tree other = TreeWith({});
  EXPECT_EQ(Classify(catalog, other, kRootId)["kernel.naive"], "");
  other.Upsert(MakeNode(2, 1, "kernel.naive", Outcome::kRunning));
  EXPECT_EQ(Classify(catalog, other, kRootId)["kernel.naive"],
            "already tried from this state or an ancestor");
}

}  // namespace
}  // namespace arbor
