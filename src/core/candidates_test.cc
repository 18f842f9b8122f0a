#include "core/candidates.h"

#include <gtest/gtest.h>

#include <map>

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
