// Alternatives and swaps (moves.h Swaps, SubtreeSwaps, UnlockedFollowUps, ConflictOnPath): a
// candidate put in the place of a kept change it conflicts with, and an alternative judged with
// what only runs with it. Pure rules over hand-built trees; the loop is in moves_loop_test.cc.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/search/moves.h"
#include "core/testing/critic_rig_testing.h"
#include "core/testing/moves_testing.h"

namespace arbor {
namespace {

using critic_rig::Env;
using moves_testing::MakeNode;
using moves_testing::Reverted;

// alloc.a, its declared alternative alt.b, dep.d that requires alt.b, and `other`.
std::vector<ActionSpec> Alternatives(ActionSpec other) {
  ActionSpec alt_b = Env("alt.b", "B");
  alt_b.conflicts = {"alloc.a"};
  ActionSpec dep_d = Env("dep.d", "D");
  dep_d.requires_ = {"alt.b"};
  return {Env("alloc.a", "A"), alt_b, dep_d, std::move(other)};
}

// Swaps: a candidate in the place of a droppable kept change, when it conflicts with it or
// crashed with it on the path; never for a crash that came before the change was kept.
TEST(MovesTest, SwapsPutInWhatAKeptChangeLockedOutOrCrashedWith) {
  ActionSpec alt = Env("alt.b", "ALT");
  alt.conflicts = {"alloc.a"};
  std::vector<ActionSpec> actions = {Env("alloc.a", "A"), alt, Env("x.x", "X"), Env("y.y", "Y"),
                                     Env("early.e", "E")};
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  Node early = MakeNode(2, kRootId, "early.e", "", Outcome::kCrashed, 1);  // before any keep
  early.critic.rca = RcaClass::kRuntimeCrash;
  tree.Upsert(early);
  Node kept = MakeNode(3, kRootId, "alloc.a", "", Outcome::kKept, 2);
  kept.overlay = {{"A", "1"}};
  tree.Upsert(kept);
  Node crash = MakeNode(4, 3, "x.x", "", Outcome::kCrashed, 3);
  crash.critic.rca = RcaClass::kRuntimeCrash;
  tree.Upsert(crash);
  Node slow = MakeNode(5, 3, "y.y", "", Outcome::kReverted, 4);
  slow.critic.rca = RcaClass::kNoGain;
  tree.Upsert(slow);
  auto swaps = [&] {
    std::vector<std::string> out;
    for (const Requeue& q : Swaps(tree, catalog, 3)) {
      EXPECT_EQ(q.move, Move::kDrop);
      out.push_back(q.with.value_or("?") + " for " + q.key);
    }
    return out;
  };
  // One swap per change at a time: the next comes once the first is no longer waiting.
  EXPECT_EQ(swaps(), std::vector<std::string>{"alt.b for alloc.a"});
  // Waiting at the incumbent: not offered again. It applies its companion and removes the
  // change; kept, the path has the companion and not the change.
  Node waiting = MakeNode(6, 3, "alloc.a", "", Outcome::kPending, 0);
  waiting.critic.flags = {MoveFlag(Move::kDrop), DropFlag("alloc.a"), CompanionFlag("alt.b")};
  tree.Upsert(waiting);
  EXPECT_EQ(swaps(), std::vector<std::string>{"x.x for alloc.a"});
  EXPECT_EQ(AppliedKeys(waiting), (std::vector<std::string>{"alt.b", "alt.b"}));
  EXPECT_EQ(RemovedKeys(waiting), (std::vector<std::string>{"alloc.a", "alloc.a"}));
  // A swap is not a drop of the change: the plain drop is still offered.
  std::vector<Requeue> drops = Drops(tree, catalog, 3);
  ASSERT_EQ(drops.size(), 1u);
  EXPECT_FALSE(drops[0].with.has_value());
  waiting.outcome = Outcome::kKept;
  waiting.step = Step::kDone;
  waiting.seq = 6;
  tree.Upsert(waiting);
  EXPECT_EQ(tree.AppliedActions(6), (std::set<std::string>{"alt.b"}));
  // Under the kept swap, alloc.a (alt.b's alternative) is not swapped back in: that
  // comparison was made.
  EXPECT_TRUE(Swaps(tree, catalog, 6).empty());
}

// Swaps as "<put in> for <taken out>".
std::vector<std::string> SwapsAsText(const std::vector<Requeue>& qs) {
  std::vector<std::string> out;
  for (const Requeue& q : qs) out.push_back(q.with.value_or("?") + " for " + q.key);
  return out;
}

// An alternative a kept change locked out that nobody measured comes first (unmeasured_only):
// alt.b was never applied by any evaluated node, alt.c was measured alone at the baseline
// before alloc.a won, and x.x crashed with alloc.a on the path (rule 2, not an alternative).
TEST(MovesTest, AnAlternativeNeverMeasuredIsSwappedInBeforeTheOthers) {
  ActionSpec alt_b = Env("alt.b", "B");
  alt_b.conflicts = {"alloc.a"};
  ActionSpec alt_c = Env("alt.c", "C");
  alt_c.conflicts = {"alloc.a"};
  std::vector<ActionSpec> actions = {Env("alloc.a", "A"), alt_b, alt_c, Env("x.x", "X")};
  Catalog catalog(actions);  // keeps a reference
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  tree.Upsert(Reverted(2, "alt.c", RcaClass::kNoGain, 0.004));
  Node kept = MakeNode(3, kRootId, "alloc.a", "", Outcome::kKept, 2);
  kept.overlay = {{"A", "1"}};
  tree.Upsert(kept);
  Node crash = MakeNode(4, 3, "x.x", "", Outcome::kCrashed, 3);
  crash.critic.rca = RcaClass::kRuntimeCrash;
  tree.Upsert(crash);
  EXPECT_EQ(SwapsAsText(Swaps(tree, catalog, 3, /*unmeasured_only=*/true)),
            std::vector<std::string>{"alt.b for alloc.a"});
  // Measured as a side of a pair counts too: then nothing is unmeasured, and the full rule
  // offers the measured alternative (one swap per change at a time).
  Node pair = Reverted(5, "x.x", RcaClass::kNoGain, -0.01);
  pair.parent = 3;
  pair.critic.flags = {MoveFlag(Move::kPair), CompanionFlag("alt.b")};
  tree.Upsert(pair);
  EXPECT_TRUE(Swaps(tree, catalog, 3, /*unmeasured_only=*/true).empty());
  EXPECT_EQ(SwapsAsText(Swaps(tree, catalog, 3)), std::vector<std::string>{"alt.b for alloc.a"});
}

// With subtrees (branches): alt.b was swapped in under an earlier incumbent (#3, before keep.k),
// and lost alone; dep.d requires it and was never measured. At today's incumbent #6 its subtree
// is unexplored, so its swap comes first again (once per incumbent, kMaxSubtreeSwaps in all);
// without subtrees, or once dep.d was measured, it does not.
TEST(MovesTest, AnAlternativeWhoseSubtreeNobodyExploredIsSwappedInAgain) {
  std::vector<ActionSpec> actions = Alternatives(Env("keep.k", "K"));
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  Node kept = MakeNode(3, kRootId, "alloc.a", "", Outcome::kKept, 1);
  kept.overlay = {{"A", "1"}};
  tree.Upsert(kept);
  Node swap = Reverted(4, "alloc.a", RcaClass::kNoGain, -0.05);
  swap.parent = 3;
  swap.critic.flags = {MoveFlag(Move::kDrop), DropFlag("alloc.a"), CompanionFlag("alt.b")};
  tree.Upsert(swap);
  Node later = MakeNode(6, 3, "keep.k", "", Outcome::kKept, 3);
  later.overlay = {{"A", "1"}, {"K", "1"}};
  tree.Upsert(later);
  EXPECT_TRUE(Swaps(tree, catalog, 6, /*unmeasured_only=*/true).empty());
  EXPECT_EQ(SwapsAsText(Swaps(tree, catalog, 6, true, /*subtrees=*/true)),
            std::vector<std::string>{"alt.b for alloc.a"});
  // dep.d measured (a follow-up of the swap): the subtree was explored.
  Tree explored = tree;
  Node follow = Reverted(8, "dep.d", RcaClass::kNoGain, -0.02);
  follow.parent = 4;
  explored.Upsert(follow);
  EXPECT_TRUE(Swaps(explored, catalog, 6, true, true).empty());
  // A second swap measured (under another keep, #9): kMaxSubtreeSwaps reached.
  Node other = MakeNode(9, 3, "x.x", "", Outcome::kReverted, 4);
  tree.Upsert(other);
  Node again = swap;
  again.id = 10;
  again.parent = 9;
  again.seq = 5;
  tree.Upsert(again);
  EXPECT_TRUE(Swaps(tree, catalog, 6, true, true).empty());
}

// At the keep of alloc.a (+50%): alt.b (a declared alternative, ×1.3) with dep.d, which
// requires it (×2), promises 1.3 × 2 / 1.5 > 1: its swap is queued at once; with a dependent
// that promises ×1.1 it does not (1.43 / 1.5). The swap reverted at the incumbent (−13%)
// unlocks dep.d: its follow-up goes under the swap's node, a branch.
TEST(MovesTest, AHopefulAlternativeSubtreeIsSwappedInAtTheKeepAndItsStateUnlocksItsDependent) {
  for (double dep_speedup : {2.0, 1.1}) {
    SCOPED_TRACE(dep_speedup);
    ActionSpec alt_b = Env("alt.b", "B", "1", {}, 1.3);
    alt_b.conflicts = {"alloc.a"};
    ActionSpec dep_d = Env("dep.d", "D", "1", {}, dep_speedup);
    dep_d.requires_ = {"alt.b"};
    std::vector<ActionSpec> actions = {Env("alloc.a", "A", "1", {}, 1.5), alt_b, dep_d};
    Catalog catalog(actions);
    Tree tree;
    tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
    Node kept = MakeNode(3, kRootId, "alloc.a", "", Outcome::kKept, 1);
    kept.overlay = {{"A", "1"}};
    kept.gain = 0.5;
    tree.Upsert(kept);
    const std::vector<Requeue> swaps = SubtreeSwaps(tree, catalog, 3, nullptr);
    if (dep_speedup < 1.5) {
      EXPECT_TRUE(swaps.empty());
      continue;
    }
    ASSERT_EQ(swaps.size(), 1u);
    EXPECT_EQ(swaps[0].key, "alloc.a");
    EXPECT_EQ(swaps[0].with, "alt.b");
    EXPECT_EQ(swaps[0].move, Move::kDrop);
    Node swap = Reverted(4, "alloc.a", RcaClass::kNoGain, -0.13);
    swap.parent = 3;
    swap.commit = "c4";
    swap.overlay = {{"B", "1"}};
    swap.critic.flags = {MoveFlag(Move::kDrop), DropFlag("alloc.a"), CompanionFlag("alt.b")};
    tree.Upsert(swap);
    const std::vector<Requeue> follow = UnlockedFollowUps(tree, catalog, 3, swap, nullptr);
    ASSERT_EQ(follow.size(), 1u);
    EXPECT_EQ(follow[0].key, "dep.d");
    EXPECT_EQ(follow[0].under, 4);
    EXPECT_EQ(follow[0].move, Move::kFollowUp);
    // Not at another incumbent, and not of a node that is no swap.
    EXPECT_TRUE(UnlockedFollowUps(tree, catalog, kRootId, swap, nullptr).empty());
    EXPECT_TRUE(UnlockedFollowUps(tree, catalog, 3, kept, nullptr).empty());
  }
}

// A batch node whose incumbent moved before its turn runs on the new one only if nothing there
// rules it out: a declared alternative kept first, or a requirement its branch held (a
// follow-up of a swap, re-dispatched alone, lacks the alternative the swap put in).
TEST(MovesTest, ConflictOnPathNamesWhatRulesANodeOutAfterAKeep) {
  std::vector<ActionSpec> actions = Alternatives(Env("x.x", "X"));
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  tree.Upsert(MakeNode(3, kRootId, "alloc.a", "", Outcome::kKept, 1));
  Node follow = MakeNode(5, 3, "dep.d", "", Outcome::kRunning, 2);
  EXPECT_EQ(ConflictOnPath(tree, catalog, follow, 3), "dep.d requires alt.b, which is not on it");
  follow.critic.flags = {CompanionFlag("alt.b")};  // as a pair with what it requires
  EXPECT_EQ(ConflictOnPath(tree, catalog, follow, 3), "alt.b conflicts with alloc.a");
  EXPECT_EQ(ConflictOnPath(tree, catalog, follow, kRootId), "");
  Node swap = MakeNode(6, 3, "alloc.a", "", Outcome::kRunning, 3);
  swap.critic.flags = {MoveFlag(Move::kDrop), DropFlag("alloc.a"), CompanionFlag("alt.b")};
  EXPECT_EQ(ConflictOnPath(tree, catalog, swap, 3), "") << "a swap takes the alternative out";
  EXPECT_EQ(ConflictOnPath(tree, catalog, MakeNode(7, 3, "x.x", "", Outcome::kRunning, 4), 3), "");
}

}  // namespace
}  // namespace arbor
