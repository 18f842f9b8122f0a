#include "core/tree.h"

#include <gtest/gtest.h>

namespace arbor {
namespace {

Node MakeNode(NodeId id, NodeId parent, const std::string& action, Outcome outcome, int64_t seq = 0,
              const std::string& value = "") {
  Node n;
  n.id = id;
  n.parent = parent;
  n.action_id = action;
  n.value = value;
  n.outcome = outcome;
  n.seq = seq;
  return n;
}

Node Root() { return MakeNode(kRootId, kNoNode, "baseline", Outcome::kBaseline); }

// root(1) ─┬─ a(2) kept ─┬─ c(4) reverted
//          │             └─ d[8](5) kept ── e(7) running
//          └─ b(3) crashed
//          └─ f(6) pruned
Tree SampleTree() {
  Tree t;
  t.Upsert(Root());
  t.Upsert(MakeNode(2, 1, "a", Outcome::kKept, 1));
  t.Upsert(MakeNode(3, 1, "b", Outcome::kCrashed, 2));
  t.Upsert(MakeNode(4, 2, "c", Outcome::kReverted, 3));
  t.Upsert(MakeNode(5, 2, "d", Outcome::kKept, 4, "8"));
  t.Upsert(MakeNode(6, 1, "f", Outcome::kPruned));
  t.Upsert(MakeNode(7, 5, "e", Outcome::kRunning, 5));
  return t;
}

TEST(TreeTest, FindChildrenAndAll) {
  Tree t = SampleTree();
  EXPECT_EQ(t.size(), 7u);
  EXPECT_EQ(t.MaxId(), 7);
  ASSERT_NE(t.Find(4), nullptr);
  EXPECT_EQ(t.Find(4)->action_id, "c");
  EXPECT_EQ(t.Find(99), nullptr);
  EXPECT_EQ(t.Children(1), (std::vector<NodeId>{2, 3, 6}));
  EXPECT_EQ(t.Children(2), (std::vector<NodeId>{4, 5}));
  EXPECT_TRUE(t.Children(4).empty());
  EXPECT_TRUE(t.Children(99).empty());
  std::vector<NodeId> ids;
  for (const Node* n : t.All()) ids.push_back(n->id);
  EXPECT_EQ(ids, (std::vector<NodeId>{1, 2, 3, 4, 5, 6, 7}));
}

TEST(TreeTest, UpsertReplacesWithoutDuplicatingChildren) {
  Tree t = SampleTree();
  Node c = *t.Find(4);
  c.diagnosis = "regressed";
  t.Upsert(c);
  EXPECT_EQ(t.size(), 7u);
  EXPECT_EQ(t.Children(2), (std::vector<NodeId>{4, 5}));
  EXPECT_EQ(t.Find(4)->diagnosis, "regressed");
  t.FindMutable(4)->summary = "tiled";
  EXPECT_EQ(t.Find(4)->summary, "tiled");
}

TEST(TreeTest, PathRunsFromRootToNode) {
  Tree t = SampleTree();
  std::vector<NodeId> ids;
  for (const Node* n : t.Path(7)) ids.push_back(n->id);
  EXPECT_EQ(ids, (std::vector<NodeId>{1, 2, 5, 7}));
  EXPECT_EQ(t.Path(1).size(), 1u);
  EXPECT_TRUE(t.Path(99).empty());
}

TEST(TreeTest, AppliedActionsHoldsIdsAndKeysOfKeptNodesOnly) {
  Tree t = SampleTree();
  EXPECT_EQ(t.AppliedActions(7), (std::set<std::string>{"a", "d", "d[8]"}));
  // c was reverted: it is on the path of 4 but not applied.
  EXPECT_EQ(t.AppliedActions(4), (std::set<std::string>{"a"}));
  EXPECT_TRUE(t.AppliedActions(1).empty());
}

TEST(TreeTest, TriedAlongPathCollectsChildrenOfEveryAncestor) {
  Tree t = SampleTree();
  // Children of 1 (a, b; f was pruned, never ran), of 2 (c, d[8]), of 5 (e, running), of 7.
  EXPECT_EQ(t.TriedAlongPath(7), (std::set<std::string>{"a", "b", "c", "d[8]", "e"}));
  EXPECT_EQ(t.TriedAlongPath(1), (std::set<std::string>{"a", "b"}));
  // Siblings' subtrees are not on the path: from b, nothing below a counts.
  EXPECT_EQ(t.TriedAlongPath(3), (std::set<std::string>{"a", "b"}));
}

TEST(TreeTest, IncumbentFollowsTheKeptChain) {
  Tree t;
  EXPECT_EQ(t.Incumbent(), kNoNode);
  t.Upsert(Root());
  EXPECT_EQ(t.Incumbent(), kRootId);
  t = SampleTree();
  EXPECT_EQ(t.Incumbent(), 5);
}

TEST(TreeTest, IncumbentPrefersTheLatestKeptChild) {
  Tree t;
  t.Upsert(Root());
  t.Upsert(MakeNode(2, 1, "a", Outcome::kKept, 5));
  t.Upsert(MakeNode(3, 1, "b", Outcome::kKept, 9));
  t.Upsert(MakeNode(4, 2, "c", Outcome::kKept, 10));  // deeper, but under the older branch
  t.Upsert(MakeNode(5, 3, "d", Outcome::kReverted, 11));
  EXPECT_EQ(t.Incumbent(), 3);
}

TEST(TreeTest, UnfinishedListsPendingAndRunningById) {
  Tree t = SampleTree();
  t.Upsert(MakeNode(8, 7, "g", Outcome::kPending));
  EXPECT_EQ(t.Unfinished(), (std::vector<NodeId>{7, 8}));
}

TEST(TreeTest, FinishedCountIgnoresRootPrunedSkippedAndInFlight) {
  Tree t = SampleTree();
  t.Upsert(MakeNode(8, 5, "h", Outcome::kSkipped));
  // a kept, b crashed, c reverted, d kept.
  EXPECT_EQ(t.FinishedCount(), 4);
  EXPECT_EQ(t.TrailingNonKept(), 0);
}

TEST(TreeTest, TrailingNonKeptCountsBySeqAfterLastKept) {
  Tree t;
  t.Upsert(Root());
  EXPECT_EQ(t.TrailingNonKept(), 0);
  t.Upsert(MakeNode(2, 1, "a", Outcome::kReverted, 1));
  EXPECT_EQ(t.TrailingNonKept(), 1);
  t.Upsert(MakeNode(3, 1, "b", Outcome::kKept, 2));
  t.Upsert(MakeNode(4, 3, "c", Outcome::kCrashed, 3));
  t.Upsert(MakeNode(5, 3, "d", Outcome::kPruned));
  t.Upsert(MakeNode(6, 3, "e", Outcome::kReverted, 4));
  EXPECT_EQ(t.TrailingNonKept(), 2);
  // A kept node with a later seq but a smaller id ends the plateau.
  Tree u;
  u.Upsert(Root());
  u.Upsert(MakeNode(2, 1, "a", Outcome::kKept, 7));
  u.Upsert(MakeNode(3, 1, "b", Outcome::kReverted, 6));
  EXPECT_EQ(u.TrailingNonKept(), 0);
  EXPECT_EQ(u.FinishedCount(), 2);
}

}  // namespace
}  // namespace arbor
