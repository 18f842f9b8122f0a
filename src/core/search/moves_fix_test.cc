// Fix searches (moves.h FixSearch, Move::kFix): the pure rule over hand-built trees, and the
// real Orchestrator over fakes finding the fix of a change that fails its check.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "core/search/moves.h"
#include "core/search/moves_detail.h"
#include "core/testing/critic_rig_testing.h"
#include "core/testing/moves_testing.h"
#include "core/tree/tree.h"

namespace arbor {
namespace {

using critic_rig::Env;
using critic_rig::Rig;
using moves_testing::MakeNode;

class FixSearchTest : public ::testing::Test {
 protected:
  FixSearchTest()
      : actions_({Env("trap.t", "T", "1", {}, 2.0), Env("a.a", "A"), Env("b.b", "B"),
                  Env("c.c", "C"), Env("d.d", "D"), Env("e.e", "E")}),
        catalog_(actions_) {
    tree_.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
    Node trap = MakeNode(2, 1, "trap.t", "", Outcome::kReverted, 2);
    trap.critic.rca = RcaClass::kAccuracy;
    tree_.Upsert(trap);
    NodeId id = 3;
    for (const char* x : {"a.a", "b.b", "c.c", "d.d"}) {
      Node n = MakeNode(id, 1, x, "", Outcome::kReverted, id);
      n.critic.rca = RcaClass::kNoGain;
      tree_.Upsert(n);
      ++id;
    }
  }
  // A group measured with the trap under the baseline: its outcome and root cause. A group
  // "reverted for no gain" of more than one candidate is recorded as the probe it is.
  void Group(NodeId id, std::vector<std::string> with, Outcome outcome, RcaClass rca) {
    Node n = MakeNode(id, 1, "trap.t", "", outcome, id);
    n.critic.rca = rca;
    n.critic.flags.push_back(MoveFlag(Move::kFix));
    for (const std::string& w : with) n.critic.flags.push_back(CompanionFlag(w));
    if (rca == RcaClass::kNoGain && with.size() > 1) {
      n.critic.rca = RcaClass::kNone;
      AddFlag(&n, kProbeFlag);
    }
    tree_.Upsert(n);
  }
  // The one group FixSearch offers next, as {with, bundle...}; empty when none.
  std::vector<std::string> Next() {
    std::vector<Requeue> q = FixSearch(tree_, catalog_, kRootId);
    EXPECT_LE(q.size(), 1u);
    if (q.empty()) return {};
    EXPECT_EQ(q[0].move, Move::kFix);
    EXPECT_EQ(q[0].from, 2);
    std::vector<std::string> group = {*q[0].with};
    group.insert(group.end(), q[0].bundle.begin(), q[0].bundle.end());
    return group;
  }
  std::vector<ActionSpec> actions_;
  Catalog catalog_;
  Tree tree_;
};

using Keys = std::vector<std::string>;

TEST_F(FixSearchTest, BisectsToTheCandidateThatFixesTheCheck) {
  // Every candidate that ran, at once; it passes its check (a probe): the fix is among them.
  EXPECT_EQ(Next(), (Keys{"a.a", "b.b", "c.c", "d.d"}));
  Group(7, {"a.a", "b.b", "c.c", "d.d"}, Outcome::kReverted, RcaClass::kNoGain);
  EXPECT_EQ(Next(), (Keys{"a.a", "b.b"}));  // its first half
  Group(8, {"a.a", "b.b"}, Outcome::kReverted, RcaClass::kAccuracy);
  EXPECT_EQ(Next(), (Keys{"c.c"}));  // the other half, halved
  Group(9, {"c.c"}, Outcome::kReverted, RcaClass::kAccuracy);
  EXPECT_EQ(Next(), (Keys{"d.d"}));  // the one left, measured with it alone
  Group(10, {"d.d"}, Outcome::kReverted, RcaClass::kNoGain);
  EXPECT_TRUE(Next().empty());  // found, and measured: done
}

TEST_F(FixSearchTest, ACrashWithOneCandidateRulesOutOnlyThatOne) {
  Group(7, {"a.a", "b.b", "c.c", "d.d"}, Outcome::kReverted, RcaClass::kNoGain);
  Group(8, {"a.a", "b.b"}, Outcome::kReverted, RcaClass::kAccuracy);
  Group(9, {"c.c"}, Outcome::kCrashed, RcaClass::kRuntimeCrash);
  EXPECT_EQ(Next(), (Keys{"d.d"}));  // the fix, by elimination
}

TEST_F(FixSearchTest, AProbeIsNeverMeasuredAgainNorRetriedAlone) {
  Group(7, {"a.a", "b.b", "c.c", "d.d"}, Outcome::kReverted, RcaClass::kNoGain);
  ASSERT_TRUE(IsFixGroup(*tree_.Find(7)));
  EXPECT_FALSE(moves_detail::RevertedForNoGain(*tree_.Find(7)));
  for (LastLooks which : {LastLooks::kMayPay, LastLooks::kAnswered, LastLooks::kKeepsToo}) {
    for (const Requeue& q : RemeasureAnswered(tree_, kRootId, which)) EXPECT_NE(q.from, 7);
  }
  // After a keep, what the path changed under is revisited: the reverted ideas, never the
  // probe (its change alone is a known failure of the check).
  tree_.Upsert(MakeNode(8, 1, "e.e", "", Outcome::kKept, 8));
  for (const Requeue& q : Revisit(tree_, catalog_, 8, /*back_off=*/false)) EXPECT_NE(q.from, 7);
}

TEST_F(FixSearchTest, AGroupThatFailsTheCheckHoldsNoFix) {
  Group(7, {"a.a", "b.b", "c.c", "d.d"}, Outcome::kReverted, RcaClass::kAccuracy);
  EXPECT_TRUE(Next().empty());
}

TEST_F(FixSearchTest, AMissingPrerequisiteIsNotSearchedFor) {
  // A SIGILL's enabler is the pairs' (step 4), not a fix search's.
  Node sigill = MakeNode(2, 1, "trap.t", "", Outcome::kCrashed, 2);
  sigill.critic.rca = RcaClass::kPrerequisite;
  tree_.Upsert(sigill);
  EXPECT_TRUE(FixSearch(tree_, catalog_, kRootId).empty());
}

TEST_F(FixSearchTest, AGroupThatCrashedIsFollowedByHalfOfIt) {
  Group(7, {"a.a", "b.b", "c.c", "d.d"}, Outcome::kCrashed, RcaClass::kRuntimeCrash);
  EXPECT_EQ(Next(), (Keys{"a.a", "b.b"}));
  Group(8, {"a.a", "b.b"}, Outcome::kReverted, RcaClass::kAccuracy);
  EXPECT_EQ(Next(), (Keys{"c.c", "d.d"}));
}

TEST_F(FixSearchTest, OneAtATimeAndOnlyCandidatesThatRanCleanly) {
  Node waiting = MakeNode(7, 1, "trap.t", "", Outcome::kPending, 0);
  waiting.critic.flags = {MoveFlag(Move::kFix), CompanionFlag("a.a")};
  tree_.Upsert(waiting);
  EXPECT_TRUE(FixSearch(tree_, catalog_, kRootId).empty());  // its group is still waiting
  Node done = waiting;
  done.outcome = Outcome::kPruned;
  done.step = Step::kDone;
  tree_.Upsert(done);
  // b.b crashed on a later try, c.c failed its own check: neither is in the group.
  Node crashed = MakeNode(8, 1, "b.b", "", Outcome::kCrashed, 8);
  crashed.critic.rca = RcaClass::kRuntimeCrash;
  tree_.Upsert(crashed);
  Node broken = MakeNode(5, 1, "c.c", "", Outcome::kReverted, 5);
  broken.critic.rca = RcaClass::kAccuracy;
  tree_.Upsert(broken);
  // c.c is itself a change to fix now, but the trap's prior (2.0) comes first.
  std::vector<Requeue> q = FixSearch(tree_, catalog_, kRootId);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].from, 2);
  EXPECT_EQ(*q[0].with, "a.a");
  EXPECT_EQ(q[0].bundle, (Keys{"d.d"}));
  EXPECT_EQ(q[1].from, 5);
  EXPECT_EQ(*q[1].with, "a.a");
}

TEST_F(FixSearchTest, NoSearchOnceTheChangePassedItsCheckAlone) {
  Node passed = MakeNode(7, 1, "trap.t", "", Outcome::kReverted, 7);
  passed.critic.rca = RcaClass::kNoGain;  // a flaky check: it passed on another try
  tree_.Upsert(passed);
  EXPECT_TRUE(FixSearch(tree_, catalog_, kRootId).empty());
}

TEST(MovesTest, AWaitingDropMovesAlongWhenAnotherDropIsKept) {
  // #2 kept a pair (x with y); the drops of both sides wait under it; the drop of y (#4) is
  // kept: the drop of x is carried to #4 as a drop, not left for the last resorts.
  std::vector<ActionSpec> actions = {Env("x.x", "X"), Env("y.y", "Y")};
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  Node pair = MakeNode(2, 1, "x.x", "", Outcome::kKept, 1);
  pair.critic.flags = {MoveFlag(Move::kPair), CompanionFlag("y.y")};
  pair.overlay = {{"X", "1"}, {"Y", "1"}};
  tree.Upsert(pair);
  Node drop_x = MakeNode(3, 2, "x.x", "", Outcome::kPending, 0);
  drop_x.critic.flags = {MoveFlag(Move::kDrop), DropFlag("x.x")};
  tree.Upsert(drop_x);
  Node drop_y = MakeNode(4, 2, "y.y", "", Outcome::kKept, 2);
  drop_y.critic.flags = {MoveFlag(Move::kDrop), DropFlag("y.y")};
  drop_y.overlay = {{"X", "1"}};
  tree.Upsert(drop_y);
  std::vector<Requeue> carried = CarryOver(tree, catalog, 4);
  ASSERT_EQ(carried.size(), 1u);
  EXPECT_EQ(carried[0].move, Move::kDrop);
  EXPECT_EQ(carried[0].key, "x.x");
  EXPECT_NE(carried[0].reason.find("carried over"), std::string::npos);
}

// fast.t is 50% faster but fails the check unless fix.f is on; fix.f costs 3%, and each of the
// other candidates 2–4%: nothing but the two together pays. Sequentially, and with the nodes
// implemented in parallel batches (each group's companions applied in its own worktree).
class FixSearchLoopTest : public ::testing::TestWithParam<int> {};

TEST_P(FixSearchLoopTest, TheFixIsBisectedOutOfTheGroupAndKeptWithTheChange) {
  Rig rig;
  rig.spec.search.max_nodes = 30;
  rig.spec.search.parallel = GetParam();
  rig.spec.actions = {Env("fast.t", "T", "1", {}, 2.0), Env("fix.f", "F"), Env("a.a", "A"),
                      Env("b.b", "B"), Env("c.c", "C")};
  rig.target.check_ok = [](const EnvOverlay& env) {
    return env.count("T") == 0 || env.count("F") != 0;
  };
  rig.target.metric = [](const EnvOverlay& env) {
    double v = 100;
    if (env.count("T")) v *= 1.5;
    if (env.count("F")) v *= 0.97;
    if (env.count("A")) v *= 0.98;
    if (env.count("B")) v *= 0.97;
    if (env.count("C")) v *= 0.96;
    return v;
  };
  auto r = rig.Run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Tree tree = rig.StoredTree();
  int probes = 0;
  const Node* kept = nullptr;
  for (const auto& [id, n] : rig.store.nodes) {
    if (MoveOf(n) != Move::kFix || !IsEvaluated(n)) continue;
    // Every companion applied with the change, each on the one before.
    EXPECT_EQ(n.overlay.size(), CompanionKeys(n).size() + 1) << "#" << id;
    if (CompanionKeys(n).size() > 1) {  // a group: a probe of the check, never kept
      EXPECT_EQ(n.outcome, Outcome::kReverted) << "#" << id;
      // One that passed its check is not measured: the fix is bisected out of it.
      if (n.critic.rca != RcaClass::kAccuracy) {
        EXPECT_TRUE(HasFlag(n, "probe")) << "#" << id;
        EXPECT_FALSE(n.critic.ci_low.has_value()) << "#" << id;
        ++probes;
      }
    }
    if (n.outcome == Outcome::kKept) kept = &n;
  }
  EXPECT_GE(probes, 1);
  ASSERT_NE(kept, nullptr);  // the change with its fix alone, measured and kept
  EXPECT_EQ(CompanionKeys(*kept), (std::vector<std::string>{"fix.f"}));
  const Node* best = tree.Find(tree.Incumbent());
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(best->overlay, (EnvOverlay{{"T", "1"}, {"F", "1"}}));
}

INSTANTIATE_TEST_SUITE_P(Parallel, FixSearchLoopTest, ::testing::Values(1, 2));

}  // namespace
}  // namespace arbor
