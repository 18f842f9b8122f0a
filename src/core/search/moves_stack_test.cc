// Stacks (moves.h Stacks, Move::kStack): the pure rule over hand-built trees, and the real
// Orchestrator over fakes keeping gains that no single measurement could tell from nothing.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "core/search/moves.h"
#include "core/testing/critic_rig_testing.h"
#include "core/testing/moves_testing.h"
#include "core/tree/tree.h"

namespace arbor {
namespace {

using critic_rig::Env;
using critic_rig::Rig;
using moves_testing::MakeNode;
using Keys = std::vector<std::string>;

class StacksTest : public ::testing::Test {
 protected:
  StacksTest()
      : actions_({Env("a.a", "A"), Env("b.b", "B"), Env("c.c", "C"), Env("d.d", "D"),
                  Env("e.e", "E"), Env("f.f", "F")}),
        catalog_(actions_) {
    tree_.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  }
  // A single try of `action` under the baseline, reverted for no gain at `gain`.
  void Revert(NodeId id, const std::string& action, double gain, RcaClass rca = RcaClass::kNoGain) {
    Node n = MakeNode(id, 1, action, "", Outcome::kReverted, id);
    n.critic.rca = rca;
    n.gain = gain;
    tree_.Upsert(n);
  }
  // A stack measured under the baseline: its own candidate first, then its companions.
  void Stack(NodeId id, const Keys& keys, Outcome outcome, RcaClass rca) {
    Node n = MakeNode(id, 1, keys[0], "", outcome, id);
    n.critic.rca = rca;
    n.critic.flags.push_back(MoveFlag(Move::kStack));
    for (size_t i = 1; i < keys.size(); ++i) n.critic.flags.push_back(CompanionFlag(keys[i]));
    if (outcome == Outcome::kPending) n.step = Step::kApply;
    tree_.Upsert(n);
  }
  // The one stack Stacks offers next, as {own, with, bundle...}; empty when none.
  Keys Next() {
    std::vector<Requeue> q = Stacks(tree_, catalog_, kRootId);
    EXPECT_LE(q.size(), 1u);
    if (q.empty()) return {};
    EXPECT_EQ(q[0].move, Move::kStack);
    Keys keys = {RetriedKey(tree_, q[0]), *q[0].with};
    keys.insert(keys.end(), q[0].bundle.begin(), q[0].bundle.end());
    return keys;
  }
  std::vector<ActionSpec> actions_;
  Catalog catalog_;
  Tree tree_;
};

TEST_F(StacksTest, StacksTheIdeasThatMeasuredAGainTooSmallToKeepTheBestFirst) {
  Revert(2, "a.a", 0.01);
  Revert(3, "b.b", 0.02);
  Revert(4, "c.c", -0.01);  // measured a loss: not a hidden gain
  Revert(5, "d.d", 0.015, RcaClass::kNotConfirmed);
  Revert(6, "e.e", 0.03, RcaClass::kAccuracy);  // failed its check: never in a stack
  EXPECT_EQ(Next(), (Keys{"b.b", "d.d", "a.a"}));
}

TEST_F(StacksTest, AStackNotKeptIsFollowedByItsBetterHalfDownToTwo) {
  for (NodeId id = 2; id <= 7; ++id) Revert(id, actions_[id - 2].id, 0.001 * id);
  EXPECT_EQ(Next(), (Keys{"f.f", "e.e", "d.d", "c.c", "b.b", "a.a"}));
  Stack(8, {"f.f", "e.e", "d.d", "c.c", "b.b", "a.a"}, Outcome::kReverted, RcaClass::kNoGain);
  EXPECT_EQ(Next(), (Keys{"f.f", "e.e", "d.d"}));
  Stack(9, {"f.f", "e.e", "d.d"}, Outcome::kCrashed, RcaClass::kRuntimeCrash);
  EXPECT_TRUE(Next().empty());  // half of three is one: not a stack
}

TEST(StacksRoundsTest, OneStackAtATimeAtMostThreeRoundsAndALostRunSpendsNone) {
  // Twenty ideas that each measured a small gain: stacks of 16, 8 and 4, then none.
  std::vector<ActionSpec> actions;
  for (int i = 0; i < 20; ++i)
    actions.push_back(Env("x.k" + std::to_string(i), "K" + std::to_string(i)));
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  for (int i = 0; i < 20; ++i) {
    Node n = MakeNode(2 + i, 1, actions[i].id, "", Outcome::kReverted, 2 + i);
    n.critic.rca = RcaClass::kNoGain;
    n.gain = 0.001 * (i + 1);
    tree.Upsert(n);
  }
  NodeId next = 30;
  auto offer = [&](Outcome outcome, RcaClass rca) -> size_t {
    std::vector<Requeue> q = Stacks(tree, catalog, kRootId);
    if (q.empty()) return 0;
    EXPECT_EQ(q.size(), 1u);
    Node n = MakeNode(next, 1, tree.Find(q[0].from)->action_id, "", outcome, next);
    n.critic.rca = rca;
    n.critic.flags.push_back(MoveFlag(Move::kStack));
    n.critic.flags.push_back(CompanionFlag(*q[0].with));
    for (const std::string& b : q[0].bundle) n.critic.flags.push_back(CompanionFlag(b));
    if (outcome == Outcome::kPending) n.step = Step::kApply;
    tree.Upsert(n);
    ++next;
    return 2 + q[0].bundle.size();
  };
  EXPECT_EQ(offer(Outcome::kPending, RcaClass::kNone), 16u);
  EXPECT_EQ(offer(Outcome::kReverted, RcaClass::kNoGain), 0u);  // the one waiting answers first
  tree.Upsert([&] {
    Node n = *tree.Find(30);
    n.outcome = Outcome::kCrashed;
    n.step = Step::kDone;
    n.critic.rca = RcaClass::kInfrastructure;  // a lost run: neither a round nor a size
    return n;
  }());
  EXPECT_EQ(offer(Outcome::kReverted, RcaClass::kNoGain), 16u);
  EXPECT_EQ(offer(Outcome::kReverted, RcaClass::kAccuracy), 8u);
  EXPECT_EQ(offer(Outcome::kReverted, RcaClass::kNoGain), 4u);
  EXPECT_EQ(offer(Outcome::kReverted, RcaClass::kNoGain), 0u);  // three rounds at this incumbent
}

TEST_F(StacksTest, AStacksOwnIdeaIsStillRevisitedAloneAtItsIncumbent) {
  // a and b reverted under the baseline, c kept; a stack of the two at c, not kept: a stack is
  // no try of its own candidate, so b (its head) is revisited alone at c like a.
  Revert(2, "a.a", 0.01);
  Revert(3, "b.b", 0.02);
  tree_.Upsert(MakeNode(4, 1, "c.c", "", Outcome::kKept, 4));
  Node stack = MakeNode(5, 4, "b.b", "", Outcome::kReverted, 5);
  stack.critic.rca = RcaClass::kNoGain;
  stack.critic.flags = {MoveFlag(Move::kStack), CompanionFlag("a.a")};
  tree_.Upsert(stack);
  std::set<std::string> revisited;
  for (const Requeue& q : Revisit(tree_, catalog_, 4, /*back_off=*/false)) {
    revisited.insert(RetriedKey(tree_, q));
  }
  EXPECT_EQ(revisited, (std::set<std::string>{"a.a", "b.b"}));
}

TEST_F(StacksTest, NoStackOfAppliedOrConflictingIdeasNorOfOneIdea) {
  actions_[1].conflicts = {"a.a"};  // b.b and a.a are alternatives
  catalog_ = Catalog(actions_);
  Revert(2, "a.a", 0.01);
  Revert(3, "b.b", 0.02);
  EXPECT_TRUE(Next().empty());  // b.b, and a.a conflicts with it: one idea is no stack
  Revert(4, "c.c", 0.005);
  EXPECT_EQ(Next(), (Keys{"b.b", "c.c"}));
  Node kept = MakeNode(5, 1, "c.c", "", Outcome::kKept, 5);
  tree_.Upsert(kept);
  // At the keep of c.c: b.b and a.a measured under the baseline still count; c.c is applied.
  EXPECT_TRUE(Stacks(tree_, catalog_, 5).empty());
  Revert(6, "d.d", 0.01);
  tree_.Upsert([&] {
    Node n = *tree_.Find(6);
    n.parent = 5;
    return n;
  }());
  std::vector<Requeue> q = Stacks(tree_, catalog_, 5);
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(RetriedKey(tree_, q[0]), "b.b");
  EXPECT_EQ(*q[0].with, "d.d");
}

TEST(StackNodeTest, AStackIsAGroupAndAFixSearchGroupIsToo) {
  Node stack = MakeNode(2, 1, "a.a", "", Outcome::kReverted, 2);
  stack.critic.flags = {MoveFlag(Move::kStack), CompanionFlag("b.b")};
  EXPECT_TRUE(IsGroup(stack));
  EXPECT_FALSE(IsFixGroup(stack));  // measured like any change: never a probe
  Node pair = stack;
  pair.critic.flags = {MoveFlag(Move::kPair), CompanionFlag("b.b")};
  EXPECT_FALSE(IsGroup(pair));
  // A re-measure of a stack stays one (requeue.cc carries the flag): it queues no drops of its
  // ideas when kept and publishes no constraint against its own when it fails.
  Node again = stack;
  again.critic.flags = {MoveFlag(Move::kRemeasure), CompanionFlag("b.b"), std::string(kGroupFlag)};
  EXPECT_TRUE(IsGroup(again));
}

// Four ideas each 2% faster, under a min_effect of 5%: no single one can be kept; stacked they
// are 8%. A fifth costs 2%; it measured a loss and stays out. Sequentially and in parallel.
class StackLoopTest : public ::testing::TestWithParam<int> {};

TEST_P(StackLoopTest, SmallGainsTooSmallToKeepAloneAreKeptTogether) {
  Rig rig;
  rig.spec.search.max_nodes = 12;
  rig.spec.search.parallel = GetParam();
  rig.spec.critic.min_effect = 0.05;
  rig.spec.actions = {Env("a.a", "A"), Env("b.b", "B"), Env("c.c", "C"), Env("d.d", "D"),
                      Env("slow.s", "S")};
  rig.target.metric = [](const EnvOverlay& env) {
    double v = 100;
    for (const char* k : {"A", "B", "C", "D"}) {
      if (env.count(k)) v *= 1.02;
    }
    if (env.count("S")) v *= 0.98;
    return v;
  };
  auto r = rig.Run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Tree tree = rig.StoredTree();
  const Node* best = tree.Find(tree.Incumbent());
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(MoveOf(*best), Move::kStack) << best->CandidateKey();
  EXPECT_EQ(best->overlay, (EnvOverlay{{"A", "1"}, {"B", "1"}, {"C", "1"}, {"D", "1"}}));
  EXPECT_EQ(CompanionKeys(*best).size(), 3u);
  // A kept stack queues no drops of its ideas (as a kept pair does of its sides): what comes
  // next under it is not a drop.
  const Node* after = nullptr;
  for (const auto& [id, n] : rig.store.nodes) {
    if (n.parent == best->id && IsEvaluated(n) && (after == nullptr || n.seq < after->seq)) {
      after = &n;
    }
  }
  ASSERT_NE(after, nullptr);
  EXPECT_NE(MoveOf(*after), Move::kDrop) << after->critic.opened;
}

INSTANTIATE_TEST_SUITE_P(Parallel, StackLoopTest, ::testing::Values(1, 2));

}  // namespace
}  // namespace arbor
