// The re-measure rules of moves.h over hand-built trees: which close calls, last looks and
// undecided calls are measured again, and how deep. The other rules are in moves_test.cc.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "core/search/moves.h"
#include "core/testing/moves_testing.h"

namespace arbor {
namespace {

using moves_testing::MakeNode;
using moves_testing::Reverted;

TEST(MovesTest, OnlyCloseCallsAreRemeasuredAndOnlyOnce) {
  CriticSpec critic;  // min_effect 1%
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  auto reverted = [&](NodeId id, double gain, double p) { Reverted(&tree, id, gain, p); };
  reverted(2, 0.03, 0.08);       // close: enough gain, p ≤ 0.2
  reverted(3, 0.03, 0.60);       // not close: p large
  reverted(4, 0.002, 0.05);      // not close: too small a gain
  reverted(8, 0.03, 0.08);       // as close as #2, but the gate answered it (futility)
  for (NodeId id : {2, 3, 4}) {  // ran out of evidence: #3, #4 second looks once nothing is close
    Node n = *tree.Find(id);
    n.critic.flags = {"inconclusive"};
    tree.Upsert(n);
  }
  std::vector<Requeue> close = Remeasure(tree, kRootId, critic);
  ASSERT_EQ(close.size(), 1u);
  EXPECT_EQ(close[0].from, 2);
  Node again = MakeNode(5, 1, "a2", "", Outcome::kReverted, 5);
  again.critic.rca = RcaClass::kNoGain;
  again.gain = 0.03;
  again.critic.p_value = 0.08;
  again.critic.requeued_from = 2;
  again.critic.flags = {MoveFlag(Move::kRemeasure), "inconclusive"};
  tree.Upsert(again);
  EXPECT_EQ(RemeasureDepth(tree, again), 1);
  // Still close at 2×: once more at 4×, and so on up to kMaxRemeasures.
  close = Remeasure(tree, kRootId, critic);
  ASSERT_EQ(close.size(), 1u);
  EXPECT_EQ(close[0].from, 5);
  EXPECT_NE(close[0].reason.find("4× the repetitions"), std::string::npos) << close[0].reason;
  NodeId from = 5;
  for (NodeId id = 6; id <= 7; ++id) {
    Node n = again;
    n.id = id;
    n.seq = id;
    n.critic.requeued_from = from;
    tree.Upsert(n);
    from = id;
  }
  EXPECT_EQ(RemeasureDepth(tree, *tree.Find(7)), kMaxRemeasures);
  // No close call left: a second look at the other reverts, closest first, each up to the
  // same depth; then nothing.
  close = Remeasure(tree, kRootId, critic);
  ASSERT_EQ(close.size(), 2u);
  EXPECT_EQ(close[0].from, 4);
  EXPECT_EQ(close[1].from, 3);
  EXPECT_NE(close[0].reason.find("a second look"), std::string::npos) << close[0].reason;
  for (NodeId first : {3, 4}) {
    NodeId prev = first;
    for (NodeId id = first * 10; id < first * 10 + kMaxRemeasures; ++id) {
      Node n = *tree.Find(first);
      n.id = id;
      n.seq = id;
      n.critic.requeued_from = prev;
      n.critic.flags = {MoveFlag(Move::kRemeasure)};
      tree.Upsert(n);
      prev = id;
    }
  }
  EXPECT_TRUE(Remeasure(tree, kRootId, critic).empty());
}

// At a few per cent of noise a real gain of min_effect often measures at half of it with a
// p-value far above 0.2: such reverts are close calls too, the closest measured first.
TEST(MovesTest, CloseCallsReachHalfOfMinEffectAndComeClosestFirst) {
  CriticSpec critic;  // min_effect 1%
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  auto reverted = [&](NodeId id, double gain, double p) { Reverted(&tree, id, gain, p); };
  reverted(2, 0.006, 0.40);  // close: half of min_effect, estimate in favour
  reverted(3, 0.020, 0.10);  // close, and closer
  reverted(4, 0.004, 0.10);  // not close: under half of min_effect
  reverted(5, 0.030, 0.55);  // not close: the estimate does not favour it
  for (NodeId id : {2, 3, 4, 5}) {
    Node n = *tree.Find(id);
    n.critic.flags = {"inconclusive"};
    tree.Upsert(n);
  }
  std::vector<Requeue> close = Remeasure(tree, kRootId, critic);
  ASSERT_EQ(close.size(), 2u);
  EXPECT_EQ(close[0].from, 3);
  EXPECT_EQ(close[1].from, 2);
}

TEST(MovesTest, ALastLookIsOnlyForARevertWhoseIntervalReachesAGain) {
  // Under the incumbent #1: #2 measured -0.5% with a speedup interval [0.98, 1.01] (a gain is
  // still possible), #3 -20% with [0.78, 0.82] (clearly slower), #4 -1% with no interval, #5
  // -30% with no interval.
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  auto revert = [&](NodeId id, const char* action, double gain, std::optional<double> lo,
                    std::optional<double> hi) {
    Node n = Reverted(id, action, RcaClass::kNoGain, gain);
    n.critic.ci_low = lo;
    n.critic.ci_high = hi;
    tree.Upsert(n);
  };
  revert(2, "near.a", -0.005, 0.98, 1.01);
  revert(3, "slow.b", -0.20, 0.78, 0.82);
  revert(4, "near.c", -0.01, std::nullopt, std::nullopt);
  revert(5, "slow.d", -0.30, std::nullopt, std::nullopt);
  auto looks = [&](LastLooks which) {
    std::vector<NodeId> looked;
    for (const Requeue& q : RemeasureAnswered(tree, kRootId, which)) looked.push_back(q.from);
    return looked;
  };
  EXPECT_EQ(looks(LastLooks::kMayPay), (std::vector<NodeId>{2, 4}));  // the best measured first
  // A drop measured clearly slower: its change pays its way. Only the very last looks verify
  // that keep again.
  Node drop = Reverted(6, "kept.k", RcaClass::kNoGain, -0.10);
  drop.critic.flags = {MoveFlag(Move::kDrop), DropFlag("kept.k")};
  drop.critic.ci_high = 0.92;
  tree.Upsert(drop);
  EXPECT_EQ(looks(LastLooks::kAnswered), (std::vector<NodeId>{2, 4, 3, 5}));
  EXPECT_EQ(looks(LastLooks::kKeepsToo), (std::vector<NodeId>{2, 4, 6, 3, 5}));
}

// The very last resort: the decisions at the incumbent still undecided (their 95% interval
// holds the +min_effect a keep needs) measured again beyond 8×, the closest call first, a batch
// at a time, each chain no deeper than the cap it is given. A settled call is measured again
// only once no call is undecided (the budget is spent verifying answers), and a call measured as
// a point (no interval) never.
TEST(MovesTest, TheUndecidedCallsAreMeasuredAgainBeyondTheLastLooksUpToTheCap) {
  // Under the incumbent #1, each measured at 8× already (a chain of kMaxRemeasures re-measures):
  // +0.8% with [0.995, 1.021] (0.3 standard errors from the +1% a keep needs), +0.2% with
  // [0.99, 1.014] (1.3 away), both undecided; -0.5% with [0.985, 1.005] (2.9 away), a drop
  // measured -19% with [0.79, 0.83] (a keep of the path), -1% with no interval: settled.
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  NodeId next = 10;
  auto chain = [&](const char* action, double gain, std::optional<double> lo,
                   std::optional<double> hi, bool drop = false) {
    NodeId from = kNoNode;
    for (int depth = 0; depth <= kMaxRemeasures; ++depth) {
      Node n = Reverted(next++, action, RcaClass::kNoGain, gain);
      n.critic.ci_low = lo;
      n.critic.ci_high = hi;
      if (drop) n.critic.flags = {MoveFlag(Move::kDrop), DropFlag(action)};
      if (depth > 0) {
        n.critic.flags = {MoveFlag(Move::kRemeasure)};
        if (drop) n.critic.flags.push_back(DropFlag(action));
        n.critic.requeued_from = from;
      }
      tree.Upsert(n);
      from = n.id;
    }
    return from;  // the latest measurement of the decision
  };
  const NodeId close = chain("close.a", 0.008, 0.995, 1.021);
  const NodeId mid = chain("mid.d", 0.002, 0.99, 1.014);
  const NodeId near = chain("near.b", -0.005, 0.985, 1.005);
  const NodeId drop = chain("kept.k", -0.19, 0.79, 0.83, /*drop=*/true);
  const NodeId blind = chain("blind.c", -0.01, std::nullopt, std::nullopt);
  EXPECT_LT(CallDistance(*tree.Find(close), 0.01), CallDistance(*tree.Find(mid), 0.01));
  EXPECT_LE(CallDistance(*tree.Find(mid), 0.01), kUndecidedDistance);
  for (NodeId settled : {near, drop, blind}) {
    EXPECT_GT(CallDistance(*tree.Find(settled), 0.01), kUndecidedDistance) << settled;
  }
  // The last looks (up to 8×) are spent: the rules before this one offer nothing more.
  EXPECT_TRUE(RemeasureAnswered(tree, kRootId, LastLooks::kKeepsToo).empty());
  auto from = [](const std::vector<Requeue>& qs) {
    std::vector<NodeId> out;
    for (const Requeue& q : qs) {
      EXPECT_EQ(q.move, Move::kRemeasure);
      out.push_back(q.from);
    }
    return out;
  };
  EXPECT_EQ(from(RemeasureClosest(tree, kRootId, 0.01)), (std::vector<NodeId>{close, mid}));
  EXPECT_EQ(from(RemeasureClosest(tree, kRootId, 0.01, kMaxSequentialRemeasures, 1)),
            (std::vector<NodeId>{close}));
  // At the cap, nothing is offered: the campaign ends `exhausted`.
  EXPECT_TRUE(RemeasureClosest(tree, kRootId, 0.01, kMaxRemeasures).empty());
  // The close call measured at 16× is still close: it comes first again, at 32×, while the
  // other waits for its 16×.
  Node again = Reverted(next++, "close.a", RcaClass::kNoGain, 0.009);
  again.critic.ci_low = 1.0;
  again.critic.ci_high = 1.018;
  again.critic.flags = {MoveFlag(Move::kRemeasure)};
  again.critic.requeued_from = close;
  tree.Upsert(again);
  EXPECT_EQ(RemeasureDepth(tree, again), kMaxRemeasures + 1);
  std::vector<Requeue> qs = RemeasureClosest(tree, kRootId, 0.01);
  EXPECT_EQ(from(qs), (std::vector<NodeId>{again.id, mid}));
  EXPECT_NE(qs[0].reason.find("32× the repetitions"), std::string::npos) << qs[0].reason;
  // Never deeper than the cap by default: a chain at 64× is done.
  NodeId last = again.id;
  for (int depth = kMaxRemeasures + 2; depth <= kMaxSequentialRemeasures; ++depth) {
    Node n = again;
    n.id = next++;
    n.critic.requeued_from = last;
    tree.Upsert(n);
    last = n.id;
  }
  EXPECT_EQ(RemeasureDepth(tree, *tree.Find(last)), kMaxSequentialRemeasures);
  EXPECT_EQ(from(RemeasureClosest(tree, kRootId, 0.01)), (std::vector<NodeId>{mid}));
  // When the time left allows it (kUnboundedDepth), a call at 64× is looked at again at 64×
  // (its scale stays at the cap), the closest first; once it had a look there, after the calls
  // with fewer looks beyond the cap.
  qs = RemeasureClosest(tree, kRootId, 0.01, kUnboundedDepth);
  EXPECT_EQ(from(qs), (std::vector<NodeId>{last, mid}));
  EXPECT_NE(qs[0].reason.find("64× the repetitions"), std::string::npos) << qs[0].reason;
  {
    Tree deeper = tree;
    Node n = *tree.Find(last);
    n.id = next + 100;
    n.critic.requeued_from = last;
    deeper.Upsert(n);
    EXPECT_EQ(RemeasureDepth(deeper, n), kMaxSequentialRemeasures + 1);
    EXPECT_EQ(RemeasureScale(deeper, n), kMaxSequentialRemeasures);
    EXPECT_EQ(from(RemeasureClosest(deeper, kRootId, 0.01, kUnboundedDepth)),
              (std::vector<NodeId>{mid, n.id}));
  }
  // Measured at 16× and now clear of the threshold (3.6 standard errors below it): settled.
  Node decided = Reverted(next++, "mid.d", RcaClass::kNoGain, -0.003);
  decided.critic.ci_low = 0.99;
  decided.critic.ci_high = 1.004;
  decided.critic.flags = {MoveFlag(Move::kRemeasure)};
  decided.critic.requeued_from = mid;
  tree.Upsert(decided);
  EXPECT_GT(CallDistance(decided, 0.01), kUndecidedDistance);
  // No call is undecided now: the settled ones are verified, the closest first (-0.5% at 2.9
  // standard errors, -0.3% at 3.6, the drop at 17.5), the point never; each at its next depth.
  qs = RemeasureClosest(tree, kRootId, 0.01);
  EXPECT_EQ(from(qs), (std::vector<NodeId>{near, decided.id, drop}));
  for (const Requeue& q : qs) {
    EXPECT_NE(q.reason.find("a settled call verified again"), std::string::npos) << q.reason;
  }
  EXPECT_NE(qs[0].reason.find("16× the repetitions"), std::string::npos) << qs[0].reason;
  // At the cap they are done too: the campaign ends `exhausted`.
  EXPECT_TRUE(RemeasureClosest(tree, kRootId, 0.01, kMaxRemeasures).empty());
}

}  // namespace
}  // namespace arbor
