#include "core/tree/tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>

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

// A node re-dispatched under a node kept before it in a parallel batch has a smaller id than
// its parent, and stores load nodes by id: a child may come before its parent, and the tree
// answers as if they had come the other way round.
TEST(TreeTest, AChildMayComeBeforeItsParent) {
  Tree ordered = SampleTree();
  ordered.Upsert(MakeNode(8, 5, "g", Outcome::kKept, 6));
  ordered.Upsert(MakeNode(9, 8, "h", Outcome::kReverted, 7));
  Tree shuffled;
  shuffled.Upsert(MakeNode(9, 8, "h", Outcome::kReverted, 7));
  shuffled.Upsert(MakeNode(7, 5, "e", Outcome::kRunning, 5));
  shuffled.Upsert(MakeNode(5, 2, "d", Outcome::kKept, 4, "8"));
  shuffled.Upsert(MakeNode(8, 5, "g", Outcome::kKept, 6));
  shuffled.Upsert(MakeNode(4, 2, "c", Outcome::kReverted, 3));
  shuffled.Upsert(MakeNode(2, 1, "a", Outcome::kKept, 1));
  shuffled.Upsert(MakeNode(6, 1, "f", Outcome::kPruned));
  shuffled.Upsert(MakeNode(3, 1, "b", Outcome::kCrashed, 2));
  shuffled.Upsert(Root());
  EXPECT_EQ(shuffled.Incumbent(), ordered.Incumbent());
  EXPECT_EQ(shuffled.Incumbent(), 8);
  for (NodeId id = 1; id <= 9; ++id) {
    EXPECT_EQ(shuffled.Children(id), ordered.Children(id)) << id;
    EXPECT_EQ(shuffled.TriedAlongPath(id), ordered.TriedAlongPath(id)) << id;
    EXPECT_EQ(shuffled.AppliedActions(id), ordered.AppliedActions(id)) << id;
  }
  EXPECT_EQ(shuffled.FinishedCount(), ordered.FinishedCount());
  EXPECT_EQ(shuffled.TrailingNonKept(), ordered.TrailingNonKept());
}

// Branches: r(3), reverted under the incumbent a(2), holds follow-ups x(4) and, under x, y(5);
// an ordinary child z(6) of the reverted r is no branch (an un-kept path's leftover).
Tree BranchTree() {
  Tree t;
  t.Upsert(Root());
  t.Upsert(MakeNode(2, 1, "a", Outcome::kKept, 1));
  t.Upsert(MakeNode(3, 2, "r", Outcome::kReverted, 2));
  Node x = MakeNode(4, 3, "x", Outcome::kReverted, 3);
  AddFlag(&x, kBranchFlag);
  t.Upsert(x);
  Node y = MakeNode(5, 4, "y", Outcome::kPending);
  AddFlag(&y, kBranchFlag);
  t.Upsert(y);
  t.Upsert(MakeNode(6, 3, "z", Outcome::kReverted, 4));
  return t;
}

TEST(TreeTest, ABranchIsJudgedAgainstTheStateItBranchedUnder) {
  Tree t = BranchTree();
  EXPECT_EQ(t.Incumbent(), 2);
  EXPECT_FALSE(t.IsBranch(*t.Find(3)));
  EXPECT_TRUE(t.IsBranch(*t.Find(4)));
  EXPECT_EQ(t.BaseOf(3), 2);
  EXPECT_EQ(t.BaseOf(4), 2);
  EXPECT_EQ(t.BaseOf(5), 2);
  EXPECT_EQ(t.BaseOf(6), 3) << "not a branch: judged against its parent";
  std::vector<NodeId> path;
  for (const Node* n : t.BranchPath(5)) path.push_back(n->id);
  EXPECT_EQ(path, (std::vector<NodeId>{3, 4, 5}));
  path.clear();
  for (const Node* n : t.BranchPath(3)) path.push_back(n->id);
  EXPECT_EQ(path, (std::vector<NodeId>{3}));
  std::vector<NodeId> below;
  for (const Node* n : t.Below(2)) below.push_back(n->id);
  EXPECT_EQ(below, (std::vector<NodeId>{3, 4, 5})) << "z is no branch of the incumbent's";
  // The state of a branch node holds its branch; the path's kept changes for any other node.
  EXPECT_EQ(t.AppliedActions(5), (std::set<std::string>{"a", "r", "x", "y"}));
  EXPECT_EQ(t.AppliedActions(3), (std::set<std::string>{"a"}));
  EXPECT_EQ(t.StateKeys(3), (std::set<std::string>{"a", "r"}));
  // Kept, the branch carried: the incumbent follows the kept chain into it.
  Node r = *t.Find(3);
  r.outcome = Outcome::kKept;
  t.Upsert(r);
  Node x = *t.Find(4);
  x.outcome = Outcome::kKept;
  t.Upsert(x);
  EXPECT_EQ(t.Incumbent(), 4);
  EXPECT_EQ(t.BaseOf(4), 2) << "kept, it was still judged against a";
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

namespace arbor {
namespace {

// The definitions the maintained counters and the cached incumbent must agree with, computed
// from scratch over the tree.
struct Brute {
  int finished = 0;
  int trailing = 0;
  NodeId incumbent = kNoNode;
};

Brute Recompute(const Tree& t) {
  Brute b;
  std::vector<const Node*> evaluated;
  for (const Node* n : t.All()) {
    if (n->id != kRootId && (n->outcome == Outcome::kKept || n->outcome == Outcome::kReverted ||
                             n->outcome == Outcome::kCrashed)) {
      evaluated.push_back(n);
    }
  }
  b.finished = static_cast<int>(evaluated.size());
  std::sort(evaluated.begin(), evaluated.end(), [](const Node* x, const Node* y) {
    return x->seq != y->seq ? x->seq < y->seq : x->id < y->id;
  });
  for (auto it = evaluated.rbegin(); it != evaluated.rend() && (*it)->outcome != Outcome::kKept;
       ++it) {
    ++b.trailing;
  }
  const Node* cur = t.Find(kRootId);
  while (cur != nullptr) {
    b.incumbent = cur->id;
    const Node* best = nullptr;
    for (NodeId c : t.Children(cur->id)) {
      const Node* n = t.Find(c);
      if (n->outcome == Outcome::kKept && (best == nullptr || n->seq > best->seq)) best = n;
    }
    cur = best;
  }
  return b;
}

// Random growth and rewrites (outcome flips, seq changes, re-parenting): after every Upsert the
// O(1) answers equal the from-scratch ones.
TEST(TreeTest, MaintainedCountersAndIncumbentMatchRecomputation) {
  const Outcome kOutcomes[] = {Outcome::kKept,   Outcome::kReverted, Outcome::kCrashed,
                               Outcome::kPruned, Outcome::kRunning,  Outcome::kPending,
                               Outcome::kSkipped};
  uint64_t state = 42;
  auto next = [&](uint64_t bound) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % bound;
  };
  Tree t;
  EXPECT_EQ(t.Incumbent(), kNoNode);
  t.Upsert(Root());
  for (int step = 0; step < 3000; ++step) {
    const NodeId max = t.MaxId();
    Node n;
    if (max > 1 && next(3) == 0) {
      n = *t.Find(static_cast<NodeId>(2 + next(static_cast<uint64_t>(max - 1))));
      if (next(4) == 0 && t.Children(n.id).empty()) {
        n.parent = static_cast<NodeId>(1 + next(static_cast<uint64_t>(n.id - 1)));
      }
    } else {
      n.id = max + 1;
      n.parent = static_cast<NodeId>(1 + next(static_cast<uint64_t>(max)));
      n.action_id = "a" + std::to_string(next(20));
    }
    n.outcome = kOutcomes[next(7)];
    n.seq = static_cast<int64_t>(next(2) == 0 ? step : next(static_cast<uint64_t>(step + 1)));
    t.Upsert(n);
    const Brute b = Recompute(t);
    ASSERT_EQ(t.FinishedCount(), b.finished) << "step " << step;
    ASSERT_EQ(t.TrailingNonKept(), b.trailing) << "step " << step;
    ASSERT_EQ(t.Incumbent(), b.incumbent) << "step " << step;
  }
}

TEST(TreeTest, CopiesAndMovesKeepTheAnswersUnderANewUid) {
  Tree t = SampleTree();
  const size_t changes = t.Changes().size();
  Tree copy = t;
  EXPECT_NE(copy.uid(), t.uid());
  EXPECT_EQ(copy.Incumbent(), t.Incumbent());
  EXPECT_EQ(copy.FinishedCount(), t.FinishedCount());
  EXPECT_EQ(copy.Changes().size(), changes);
  const uint64_t copy_uid = copy.uid();
  Tree moved = std::move(copy);
  EXPECT_NE(moved.uid(), copy_uid);
  EXPECT_EQ(moved.Incumbent(), 5);
  EXPECT_EQ(moved.TrailingNonKept(), t.TrailingNonKept());
  moved.Upsert(MakeNode(8, 5, "g", Outcome::kKept, 9));
  EXPECT_EQ(moved.Incumbent(), 8);
  EXPECT_EQ(t.Incumbent(), 5);
}

TEST(TreeTest, ChangesRecordTriedKeyAndKeptTransitionsOnly) {
  Tree t;
  t.Upsert(Root());
  t.Upsert(MakeNode(2, 1, "a", Outcome::kRunning, 1));
  const size_t after_add = t.Changes().size();
  Node n = *t.Find(2);
  n.summary = "tiled";
  t.Upsert(n);  // nothing followed changed
  EXPECT_EQ(t.Changes().size(), after_add);
  n.outcome = Outcome::kKept;
  t.Upsert(n);
  ASSERT_EQ(t.Changes().size(), after_add + 1);
  const TreeChange& c = t.Changes().back();
  EXPECT_EQ(c.node, 2);
  EXPECT_FALSE(c.old_kept);
  EXPECT_TRUE(c.new_kept);
  EXPECT_EQ(c.old_key, "a");
  EXPECT_EQ(c.new_parent, 1);
}

}  // namespace
}  // namespace arbor
