// The moves that keep every candidate reachable (moves.h): pure rules over hand-built trees.
// The same rules inside the real Orchestrator over fakes are in moves_loop_test.cc.
#include "core/search/moves.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "core/testing/critic_rig_testing.h"
#include "core/testing/moves_testing.h"

namespace arbor {
namespace {

using critic_rig::Env;
using moves_testing::MakeNode;
using moves_testing::Reverted;
using moves_testing::Valued;

TEST(MovesTest, NamesRoundTrip) {
  for (Move m : kAllMoves) {
    EXPECT_EQ(ParseMove(MoveName(m)), m);
    Node n;
    n.critic.flags = {"outliers", MoveFlag(m)};
    EXPECT_EQ(MoveOf(n), m);
  }
  EXPECT_FALSE(ParseMove("nope").has_value());
  EXPECT_FALSE(MoveOf(Node{}).has_value());
}

TEST(MovesTest, ASupersededRetuneIsCarriedToTheNewIncumbent) {
  // #2 kept gemm=naive; a re-tune gemm=simd waits under #2 (#4) when #3 (flag) is kept there.
  std::vector<ActionSpec> actions = {Valued("gemm", {"naive", "blocked", "simd"}),
                                     Env("flag.x", "X")};
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  tree.Upsert(MakeNode(2, 1, "gemm", "naive", Outcome::kKept, 1));
  tree.Upsert(MakeNode(3, 2, "flag.x", "", Outcome::kKept, 2));
  Node retune = MakeNode(4, 2, "gemm", "simd", Outcome::kPending, 0);
  retune.critic.requeued_from = 2;
  tree.Upsert(retune);
  std::vector<Requeue> carried = CarryOver(tree, catalog, 3);
  ASSERT_EQ(carried.size(), 1u);
  EXPECT_EQ(carried[0].from, 4);
  EXPECT_EQ(carried[0].move, Move::kCarry);
  // Already pending at the new incumbent: not twice.
  Node moved = MakeNode(5, 3, "gemm", "simd", Outcome::kPending, 0);
  tree.Upsert(moved);
  EXPECT_TRUE(CarryOver(tree, catalog, 3).empty());
}

TEST(MovesTest, RevisitAndRetuneAreOncePerIncumbentNotOncePerCampaign) {
  std::vector<ActionSpec> actions = {Valued("gemm", {"naive", "blocked"}), Env("dud.a", "A"),
                                     Env("flag.x", "X"), Env("flag.y", "Y"), Env("flag.z", "Z")};
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  Node dud = MakeNode(2, 1, "dud.a", "", Outcome::kReverted, 1);
  dud.critic.rca = RcaClass::kNoGain;
  tree.Upsert(dud);
  tree.Upsert(MakeNode(3, 1, "gemm", "naive", Outcome::kKept, 2));
  tree.Upsert(MakeNode(4, 3, "flag.x", "", Outcome::kKept, 3));
  std::vector<Requeue> first = Revisit(tree, catalog, 4);
  ASSERT_EQ(first.size(), 2u);  // dud.a revisited, gemm re-tuned to blocked
  EXPECT_EQ(first[0].move, Move::kRevisit);
  EXPECT_EQ(first[1].move, Move::kRetune);
  EXPECT_EQ(first[1].value, "blocked");
  // Both tried at #4 (reverted again): nothing left there.
  Node dud2 = MakeNode(5, 4, "dud.a", "", Outcome::kReverted, 4);
  dud2.critic.rca = RcaClass::kNoGain;
  dud2.critic.requeued_from = 2;
  tree.Upsert(dud2);
  Node gemm2 = MakeNode(6, 4, "gemm", "blocked", Outcome::kReverted, 5);
  gemm2.critic.rca = RcaClass::kNoGain;
  gemm2.critic.requeued_from = 3;
  tree.Upsert(gemm2);
  EXPECT_TRUE(Revisit(tree, catalog, 4).empty());
  // A new keep changes the context: both are eligible again (the old rule: never again), but
  // dud.a, tried twice now, backs off until 2 keeps followed its latest try; gemm=blocked, tried
  // once, comes at once. The last resort (no back-off) offers both.
  tree.Upsert(MakeNode(7, 4, "flag.y", "", Outcome::kKept, 6));
  std::vector<Requeue> again = Revisit(tree, catalog, 7);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].value, "blocked");
  EXPECT_EQ(Revisit(tree, catalog, 7, /*back_off=*/false).size(), 2u);
  tree.Upsert(MakeNode(8, 7, "flag.z", "", Outcome::kKept, 7));
  std::vector<Requeue> later = Revisit(tree, catalog, 8);
  ASSERT_EQ(later.size(), 2u);
  EXPECT_EQ(later[0].from, 2);
  EXPECT_EQ(later[0].move, Move::kRevisit);
}

// A keep that changed the whole program a lot re-tunes the parameters kept before it: batch 8
// kept at -O1, batch 16 lost there; after -O3 (+63%) both neighbours are measured again. A
// small keep does not, nor is the keep's own parameter offered twice (Neighbours' job).
TEST(MovesTest, ALargeKeepReTunesTheParametersKeptBeforeIt) {
  std::vector<ActionSpec> actions = {Valued("batch", {"4", "8", "16"}), Valued("opt", {"O2", "O3"}),
                                     Env("flag.x", "X")};
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  tree.Upsert(MakeNode(2, 1, "batch", "8", Outcome::kKept, 1));
  Node sixteen = MakeNode(3, 2, "batch", "16", Outcome::kReverted, 2);
  sixteen.gain = -0.04;
  tree.Upsert(sixteen);
  Node small = MakeNode(4, 2, "flag.x", "", Outcome::kKept, 3);
  small.gain = 0.10;
  tree.Upsert(small);
  EXPECT_TRUE(RetunesAtLargeKeep(tree, catalog, 4).empty());
  Node o3 = MakeNode(5, 4, "opt", "O3", Outcome::kKept, 4);
  o3.gain = 0.63;
  tree.Upsert(o3);
  auto retuned = [&](NodeId at) {  // the keys offered, each a re-tune of its parameter's keep
    std::vector<std::string> keys;
    for (const Requeue& q : RetunesAtLargeKeep(tree, catalog, at)) {
      EXPECT_EQ(q.move, Move::kRetune);
      keys.push_back(RetriedKey(tree, q));
      EXPECT_EQ(tree.Find(q.from)->action_id, SplitCandidateKey(keys.back()).first);
    }
    return keys;
  };
  EXPECT_EQ(retuned(5), (std::vector<std::string>{"batch[16]", "batch[4]"}));
  // batch 16 tried twice on the path: it waits for two keeps after its latest try.
  Node again = MakeNode(6, 5, "batch", "16", Outcome::kReverted, 5);
  tree.Upsert(again);
  Node large = MakeNode(7, 5, "flag.x", "", Outcome::kKept, 6);
  large.gain = 0.40;
  tree.Upsert(large);
  EXPECT_EQ(retuned(7), (std::vector<std::string>{"batch[4]", "opt[O2]"}));
  // batch taken back out by a kept drop: no value of it is re-tuned (it is not applied).
  Node drop = MakeNode(8, 7, "batch", "8", Outcome::kKept, 7);
  drop.critic.flags = {MoveFlag(Move::kDrop), DropFlag("batch[8]")};
  tree.Upsert(drop);
  Node later = MakeNode(9, 8, "flag.x", "", Outcome::kKept, 8);
  later.gain = 0.30;
  tree.Upsert(later);
  EXPECT_EQ(retuned(9), std::vector<std::string>{"opt[O2]"});
}

TEST(MovesTest, AKeptValueQueuesItsNeighboursAtOnce) {
  std::vector<ActionSpec> actions = {Valued("tile", {"1", "2", "4", "8", "16"}),
                                     Env("flag.x", "X")};
  Catalog catalog(actions);
  auto values = [](const std::vector<Requeue>& qs) {
    std::vector<std::string> out;
    for (const Requeue& q : qs) {
      EXPECT_EQ(q.move, Move::kRetune);
      out.push_back(q.value.value_or("?"));
    }
    return out;
  };
  {
    Tree tree;
    tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
    tree.Upsert(MakeNode(2, 1, "tile", "4", Outcome::kKept, 1));
    // The next value first, then the one before, each a re-tune of the kept node.
    std::vector<Requeue> first = Neighbours(tree, catalog, 2);
    EXPECT_EQ(values(first), (std::vector<std::string>{"8", "2"}));
    ASSERT_FALSE(first.empty());
    EXPECT_EQ(first[0].from, 2);
    // At the end of the list, one neighbour; none for an action without values or a pair.
    tree.Upsert(MakeNode(3, 2, "tile", "16", Outcome::kKept, 2));
    EXPECT_EQ(values(Neighbours(tree, catalog, 3)), (std::vector<std::string>{"8"}));
    tree.Upsert(MakeNode(4, 3, "flag.x", "", Outcome::kKept, 3));
    EXPECT_TRUE(Neighbours(tree, catalog, 4).empty());
    Node pair = MakeNode(5, 1, "tile", "2", Outcome::kKept, 4);
    pair.critic.flags = {MoveFlag(Move::kPair), CompanionFlag("flag.x")};
    tree.Upsert(pair);
    EXPECT_TRUE(Neighbours(tree, catalog, 5).empty());
  }
  // tile=8 reverted twice on the path (under the root and under #2): it waits for 2 keeps
  // after its latest try, so the keep of tile=4 right after queues only 2.
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  tree.Upsert(MakeNode(2, 1, "flag.x", "", Outcome::kKept, 1));
  for (auto [id, parent] : {std::pair<NodeId, NodeId>{3, 1}, {4, 2}}) {
    Node eight = MakeNode(id, parent, "tile", "8", Outcome::kReverted, id);
    eight.critic.rca = RcaClass::kNoGain;
    tree.Upsert(eight);
  }
  tree.Upsert(MakeNode(5, 2, "tile", "4", Outcome::kKept, 5));
  EXPECT_EQ(values(Neighbours(tree, catalog, 5)), (std::vector<std::string>{"2"}));
}

// A line-search step reverted flat (no gain, its interval reaching 1) goes on to the next value
// in its direction; one measured clearly slower, or at the end of the list, ends the line; a
// first try (not a re-tune) or a pair starts none.
TEST(MovesTest, AFlatLineSearchStepGoesOnToTheNextValue) {
  std::vector<ActionSpec> actions = {Valued("isa", {"sse4", "avx2", "avx512"}),
                                     Valued("tile", {"1", "2", "4", "8"}), Env("flag.x", "X")};
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  tree.Upsert(MakeNode(2, 1, "isa", "sse4", Outcome::kKept, 1));
  tree.Upsert(MakeNode(3, 2, "tile", "4", Outcome::kKept, 2));
  auto step = [](NodeId id, NodeId parent, const char* action, const char* value, double lo,
                 double hi) {
    Node n = MakeNode(id, parent, action, value, Outcome::kReverted, id);
    n.critic.rca = RcaClass::kNoGain;
    n.critic.flags = {MoveFlag(Move::kRetune)};
    n.critic.ci_low = lo;
    n.critic.ci_high = hi;
    return n;
  };
  // avx2 measured flat on top of sse4 (now under the incumbent #3): avx512 is next.
  const Node avx2 = step(4, 3, "isa", "avx2", 0.99, 1.01);
  tree.Upsert(avx2);
  std::vector<Requeue> qs = LineStep(tree, catalog, 3, avx2);
  ASSERT_EQ(qs.size(), 1u);
  EXPECT_EQ(qs[0].from, 2);  // a re-tune of the kept value
  EXPECT_EQ(qs[0].value, "avx512");
  EXPECT_EQ(qs[0].move, Move::kRetune);
  // Down the list too: tile=2 flat below the kept 4 → 1.
  const Node two = step(5, 3, "tile", "2", 0.98, 1.005);
  tree.Upsert(two);
  EXPECT_EQ(LineStep(tree, catalog, 3, two)[0].value, "1");
  // Clearly slower: the line ends.
  const Node eight = step(6, 3, "tile", "8", 0.90, 0.95);
  tree.Upsert(eight);
  EXPECT_TRUE(LineStep(tree, catalog, 3, eight).empty());
  // Already tried at the incumbent: not again.
  Node tried = MakeNode(7, 3, "isa", "avx512", Outcome::kReverted, 7);
  tried.critic.rca = RcaClass::kNoGain;
  tree.Upsert(tried);
  EXPECT_TRUE(LineStep(tree, catalog, 3, avx2).empty());
  // The end of the list; a first try (no re-tune); a pair.
  const Node one = step(8, 3, "tile", "1", 0.99, 1.01);
  tree.Upsert(one);
  EXPECT_TRUE(LineStep(tree, catalog, 3, one).empty());
  Node first = step(9, 3, "tile", "8", 0.99, 1.01);
  first.critic.flags.clear();
  EXPECT_TRUE(LineStep(tree, catalog, 3, first).empty());
  Node pair = step(10, 3, "tile", "8", 0.99, 1.01);
  pair.critic.flags.push_back(CompanionFlag("flag.x"));
  EXPECT_TRUE(LineStep(tree, catalog, 3, pair).empty());
}

TEST(MovesTest, APrerequisiteCrashIsRetriedAfterTheNextKeep) {
  std::vector<ActionSpec> actions = {Env("simd.avx", "AVX"), Env("march.native", "MARCH"),
                                     Env("seg.v", "SEG")};
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  Node ill = MakeNode(2, 1, "simd.avx", "", Outcome::kCrashed, 1);
  ill.critic.rca = RcaClass::kPrerequisite;
  tree.Upsert(ill);
  Node seg = MakeNode(3, 1, "seg.v", "", Outcome::kCrashed, 2);
  seg.critic.rca = RcaClass::kRuntimeCrash;  // a crash for another reason is not retried this way
  tree.Upsert(seg);
  tree.Upsert(MakeNode(4, 1, "march.native", "", Outcome::kKept, 3));
  std::vector<Requeue> retries = PrerequisiteRetries(tree, catalog, 4);
  ASSERT_EQ(retries.size(), 1u);
  EXPECT_EQ(retries[0].from, 2);
  EXPECT_EQ(retries[0].move, Move::kPrerequisite);
  EXPECT_NE(retries[0].reason.find("march.native"), std::string::npos) << retries[0].reason;
}

// Pairs when nothing else is left: a declared requires completed first, then an accuracy
// failure with each no-gain idea (the best measured first), then two no-gain ideas (the highest
// summed gain first); never a declared conflict, never a pair tried or waiting, at most `limit`.
TEST(MovesTest, PairsComeInOrderWithoutConflictsOrRepeats) {
  ActionSpec needs = Env("y.y", "Y");
  needs.requires_ = {"z.z"};
  ActionSpec d = Env("d.d", "D");
  d.conflicts = {"c.c"};
  std::vector<ActionSpec> actions = {Env("a.a", "A"), Env("b.b", "B"), Env("c.c", "C"), d,
                                     Env("x.x", "X"), needs,           Env("z.z", "Z")};
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  auto revert = [&](NodeId id, const std::string& action, RcaClass rca, double gain) {
    tree.Upsert(Reverted(id, action, rca, gain));
  };
  revert(2, "a.a", RcaClass::kNoGain, -0.01);
  revert(3, "b.b", RcaClass::kNoGain, -0.03);
  revert(4, "c.c", RcaClass::kNotConfirmed, 0.005);
  revert(5, "d.d", RcaClass::kNoGain, 0.01);
  revert(6, "x.x", RcaClass::kAccuracy, 0.0);
  revert(7, "z.z", RcaClass::kNoGain, -0.02);  // z.z: also a no-gain idea
  auto keys = [](const std::vector<Requeue>& qs) {
    std::vector<std::string> out;
    for (const Requeue& q : qs) {
      EXPECT_EQ(q.move, Move::kPair);
      out.push_back(*q.with + "+" + q.key);
    }
    return out;
  };
  std::vector<std::string> all = keys(Pairs(tree, catalog, kRootId, 100));
  ASSERT_GE(all.size(), 6u);
  EXPECT_EQ(all[0], "z.z+y.y");  // the declared requires
  // x.x broke accuracy: with each no-gain idea, the best measured first.
  EXPECT_EQ(std::vector<std::string>(all.begin() + 1, all.begin() + 6),
            (std::vector<std::string>{"d.d+x.x", "c.c+x.x", "a.a+x.x", "z.z+x.x", "b.b+x.x"}));
  // Then no-gain pairs by their optimistic speedup: every prior here is the same ×1.3, so the
  // pairs with the best measured partner come first, the other side on top (its promise is
  // what could pay); d.d with c.c conflicts and never comes.
  EXPECT_EQ(all[6], "d.d+a.a");
  EXPECT_EQ(all[7], "d.d+z.z");
  EXPECT_EQ(std::count(all.begin(), all.end(), "c.c+d.d"), 0);
  EXPECT_EQ(std::count(all.begin(), all.end(), "d.d+c.c"), 0);
  EXPECT_EQ(all.size(), 1u + 5u + (10u - 1u));  // C(5,2) no-gain pairs, one conflicting
  // A limit takes the first; a pair already waiting (either way round) is not offered again.
  EXPECT_EQ(keys(Pairs(tree, catalog, kRootId, 2)),
            (std::vector<std::string>{"z.z+y.y", "d.d+x.x"}));
  Node waiting = MakeNode(8, kRootId, "d.d", "", Outcome::kPending, 0);
  waiting.critic.flags = {MoveFlag(Move::kPair), CompanionFlag("x.x")};
  tree.Upsert(waiting);
  EXPECT_EQ(keys(Pairs(tree, catalog, kRootId, 2)),
            (std::vector<std::string>{"z.z+y.y", "c.c+x.x"}));
}

// A value that died of SIGILL while another value of its parameter is kept: its prerequisite
// may be an idea that paid nothing alone (no keep ever brings it), so it is paired with each
// no-gain idea, the best measured first, as a re-tune of the kept parameter.
TEST(MovesTest, ACrashForAMissingPrerequisiteIsPairedWithTheIdeasThatPaidNothing) {
  std::vector<ActionSpec> actions = {Valued("isa", {"sse4", "avx512"}), Env("a.a", "A"),
                                     Env("b.b", "B")};
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  Node kept = MakeNode(2, kRootId, "isa", "sse4", Outcome::kKept, 1);
  kept.overlay = {{"V_isa", "sse4"}};
  tree.Upsert(kept);
  Node sigill = MakeNode(3, 2, "isa", "avx512", Outcome::kCrashed, 2);
  sigill.critic.rca = RcaClass::kPrerequisite;
  tree.Upsert(sigill);
  for (auto [id, action, gain] : {std::tuple{4, "a.a", -0.02}, std::tuple{5, "b.b", 0.004}}) {
    Node n = MakeNode(id, 2, action, "", Outcome::kReverted, id);
    n.critic.rca = RcaClass::kNoGain;
    n.gain = gain;
    tree.Upsert(n);
  }
  std::vector<std::string> all;
  for (const Requeue& q : Pairs(tree, catalog, 2, 100)) all.push_back(*q.with + "+" + q.key);
  ASSERT_GE(all.size(), 2u);
  EXPECT_EQ(all[0], "b.b+isa[avx512]");
  EXPECT_EQ(all[1], "a.a+isa[avx512]");
  EXPECT_EQ(std::count(all.begin(), all.end(), "b.b+isa[sse4]"), 0);  // applied: not again
}

// Several failing ideas take turns: an accuracy failure with many partners does not fill the
// batch while a SIGILL waits for its prerequisite. Each failing idea's partners come best
// measured first, at most half a batch of them per idea; the rest of the batch goes to the
// next rule (two near-neutral ideas).
TEST(MovesTest, FailingIdeasTakeTurnsForTheirPartners) {
  std::vector<ActionSpec> actions = {
      Env("trap.t", "T", "1", {}, 2.0), Env("isa.i", "I", "1", {}, 2.0),
      Env("a.a", "A", "1", {}, 1.5),    Env("b.b", "B", "1", {}, 1.5),
      Env("c.c", "C", "1", {}, 1.5),    Env("d.d", "D", "1", {}, 1.5)};
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  tree.Upsert(Reverted(2, "trap.t", RcaClass::kAccuracy, 0.0));
  Node sigill = MakeNode(3, kRootId, "isa.i", "", Outcome::kCrashed, 3);
  sigill.critic.rca = RcaClass::kPrerequisite;
  tree.Upsert(sigill);
  tree.Upsert(Reverted(4, "a.a", RcaClass::kNoGain, 0.008));
  tree.Upsert(Reverted(5, "b.b", RcaClass::kNoGain, 0.004));
  tree.Upsert(Reverted(6, "c.c", RcaClass::kNoGain, -0.002));
  tree.Upsert(Reverted(7, "d.d", RcaClass::kNoGain, -0.006));
  auto batch = [&](int limit) {
    std::vector<std::string> out;
    for (const Requeue& q : Pairs(tree, catalog, kRootId, limit))
      out.push_back(*q.with + "+" + q.key);
    return out;
  };
  EXPECT_EQ(batch(4),
            (std::vector<std::string>{"a.a+trap.t", "a.a+isa.i", "b.b+trap.t", "b.b+isa.i"}));
  // One failing idea alone takes half a batch; the near-neutral pairs take the rest.
  tree.Upsert(Reverted(3, "isa.i", RcaClass::kNoGain, -0.01));
  const std::vector<std::string> alone = batch(4);
  ASSERT_EQ(alone.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(alone.begin(), alone.begin() + 2),
            (std::vector<std::string>{"a.a+trap.t", "b.b+trap.t"}));
  for (size_t i = 2; i < alone.size(); ++i) {
    EXPECT_EQ(alone[i].find("trap.t"), std::string::npos) << alone[i];
  }
}

// A pair is opened as a branch only on a single idea's node at the incumbent. A pair kept on a
// branch and un-kept later (a flaky check) sits under the incumbent with its own side's key, but
// its state holds more than that idea: a pair built on it was never selected, counted as tried
// by no rule, and offered again without end (generated landscape 1100018).
TEST(MovesTest, APairIsNeverOpenedOnABranchNodesState) {
  std::vector<ActionSpec> actions = {Env("k.k", "K"), Env("x.x", "X", "1", {}, 2.0),
                                     Env("f.f", "F")};
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  Node f = Reverted(2, "f.f", RcaClass::kNoGain, 0.004);  // under the baseline
  f.commit = "c2";
  tree.Upsert(f);
  Node kept = MakeNode(3, kRootId, "k.k", "", Outcome::kKept, 3);
  kept.commit = "c3";
  tree.Upsert(kept);
  Node unkept = MakeNode(4, 3, "x.x", "", Outcome::kReverted, 4);
  unkept.commit = "c4";
  unkept.critic.rca = RcaClass::kAccuracy;
  unkept.critic.flags = {MoveFlag(Move::kPair), std::string(kBranchFlag), "unkept"};
  tree.Upsert(unkept);
  const std::vector<Requeue> qs = Pairs(tree, catalog, 3, 4, nullptr, PairKinds::kHopeful, true);
  ASSERT_FALSE(qs.empty());
  for (const Requeue& q : qs) {
    EXPECT_NE(q.under, 4) << q.reason;
  }
  // The same node without the branch flag is a single idea's state: the pair builds on it.
  unkept.critic.flags = {"unkept"};
  tree.Upsert(unkept);
  bool on_it = false;
  for (const Requeue& q : Pairs(tree, catalog, 3, 4, nullptr, PairKinds::kHopeful, true)) {
    on_it |= q.under == 4;
  }
  EXPECT_TRUE(on_it);
}

// An idea that promised ×2 and measured -5% is the first suspect of an interaction: its pairs
// come before those of ideas that promised little. A pair that cannot pay even if one side
// delivers its promise (two -30% ideas that promised ×1.01; a fix costing more than the
// accuracy failure promised) is never tried.
TEST(MovesTest, PairsOfABrokenPromiseComeFirstAndHopelessPairsNever) {
  std::vector<ActionSpec> actions = {Env("p.p", "P", "1", {}, 2.0),  Env("q.q", "Q", "1", {}, 1.1),
                                     Env("r.r", "R", "1", {}, 1.1),  Env("s.s", "S", "1", {}, 1.01),
                                     Env("t.t", "T", "1", {}, 1.01), Env("x.x", "X", "1", {}, 1.3)};
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  auto revert = [&](NodeId id, const std::string& action, RcaClass rca, double gain) {
    tree.Upsert(Reverted(id, action, rca, gain));
  };
  revert(2, "q.q", RcaClass::kNoGain, 0.005);
  revert(3, "r.r", RcaClass::kNoGain, -0.005);
  revert(4, "p.p", RcaClass::kNoGain, -0.05);
  revert(5, "s.s", RcaClass::kNoGain, -0.30);
  revert(6, "t.t", RcaClass::kNoGain, -0.30);
  revert(7, "x.x", RcaClass::kAccuracy, 0.0);
  std::vector<std::string> all;
  for (const Requeue& q : Pairs(tree, catalog, kRootId, 100)) all.push_back(*q.with + "+" + q.key);
  // x.x (×1.3) with the partners whose loss it can outweigh, not with s.s or t.t (-30%).
  ASSERT_GE(all.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(all.begin(), all.begin() + 3),
            (std::vector<std::string>{"q.q+x.x", "r.r+x.x", "p.p+x.x"}));
  // Then p.p on top of each partner, the best measured partner first: ×2 × (1 + its gain).
  EXPECT_EQ(std::vector<std::string>(all.begin() + 3, all.begin() + 7),
            (std::vector<std::string>{"q.q+p.p", "r.r+p.p", "s.s+p.p", "t.t+p.p"}));
  EXPECT_EQ(
      std::count(all.begin(), all.end(), "s.s+t.t") + std::count(all.begin(), all.end(), "t.t+s.s"),
      0);
  EXPECT_EQ(std::count(all.begin(), all.end(), "s.s+x.x"), 0);
  // p.p about to be revisited alone (the cheaper hypothesis): the revisit takes the place of
  // its first pair, and none of its pairs come yet; the other pairs keep their order.
  Requeue revisit{4, "revisit", std::nullopt, Move::kRevisit};
  std::vector<std::string> led;
  for (const Requeue& q :
       PairsOrTheirSidesAlone(tree, Pairs(tree, catalog, kRootId, 100), {revisit})) {
    led.push_back(q.with ? *q.with + "+" + q.key : "alone:" + RetriedKey(tree, q));
  }
  std::vector<std::string> without_p;
  for (const std::string& k : all) {
    if (k.find("p.p") == std::string::npos) without_p.push_back(k);
  }
  without_p.insert(without_p.begin() + 2, "alone:p.p");
  EXPECT_EQ(led, without_p);
  // As a last resort (priors can be wrong), those too, after the hopeful ones.
  std::vector<std::string> every;
  for (const Requeue& q : Pairs(tree, catalog, kRootId, 100, nullptr, PairKinds::kEvery)) {
    every.push_back(*q.with + "+" + q.key);
  }
  ASSERT_GT(every.size(), all.size());
  EXPECT_EQ(std::vector<std::string>(every.begin(), every.begin() + 3),
            std::vector<std::string>(all.begin(), all.begin() + 3));
  EXPECT_EQ(std::count(every.begin(), every.end(), "s.s+x.x"), 1);
  EXPECT_EQ(std::count(every.begin(), every.end(), "s.s+t.t") +
                std::count(every.begin(), every.end(), "t.t+s.s"),
            1);
  // A promise measured at the incumbent (Amdahl on its profile) replaces the declared one:
  // promised nothing, p.p's pairs are the ones q.q's and r.r's promise makes.
  std::vector<std::string> flat;
  for (const Requeue& q : Pairs(tree, catalog, kRootId, 100, [](const ActionSpec& a) {
         return a.id == "p.p" ? 1.0 : a.speedup;
       })) {
    flat.push_back(*q.with + "+" + q.key);
  }
  EXPECT_EQ(std::count(flat.begin(), flat.end(), "q.q+p.p"), 0);
  EXPECT_EQ(std::count(flat.begin(), flat.end(), "p.p+q.q"), 1);
}

// A promise that pairs did not deliver fades: each pair a side lost in (measured, no gain)
// halves what its prior promises, so a wrong ×2 does not lead batch after batch. A pair that
// broke accuracy measured nothing: the side looking for its fix keeps its promise.
TEST(MovesTest, APromiseThatPairsDidNotDeliverFades) {
  std::vector<ActionSpec> actions = {Env("p.p", "P", "1", {}, 2.0), Env("q.q", "Q", "1", {}, 1.01),
                                     Env("r.r", "R", "1", {}, 1.01), Env("s.s", "S", "1", {}, 1.01),
                                     Env("x.x", "X", "1", {}, 1.3)};
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  tree.Upsert(Reverted(2, "q.q", RcaClass::kNoGain, 0.0));
  tree.Upsert(Reverted(3, "r.r", RcaClass::kNoGain, -0.01));
  tree.Upsert(Reverted(4, "s.s", RcaClass::kNoGain, -0.30));
  tree.Upsert(Reverted(5, "p.p", RcaClass::kNoGain, -0.05));
  tree.Upsert(Reverted(6, "x.x", RcaClass::kAccuracy, 0.0));
  auto pairs = [&] {
    std::vector<std::string> out;
    for (const Requeue& q : Pairs(tree, catalog, kRootId, 100))
      out.push_back(*q.with + "+" + q.key);
    return out;
  };
  auto has = [](const std::vector<std::string>& v, const char* k) {
    return std::count(v.begin(), v.end(), k) == 1;
  };
  // ×2 on top of s.s's -30% is still hopeful (×1.4).
  EXPECT_TRUE(has(pairs(), "s.s+p.p"));
  auto lost = [&](NodeId id, const char* own, const char* with, RcaClass rca) {
    Node n = Reverted(id, own, rca, -0.02);
    n.critic.flags = {MoveFlag(Move::kPair), CompanionFlag(with)};
    tree.Upsert(n);
  };
  lost(7, "p.p", "q.q", RcaClass::kNoGain);
  lost(8, "p.p", "r.r", RcaClass::kNotConfirmed);
  // Two pairs lost: p.p promises 1 + 1/4, which s.s's loss outweighs.
  EXPECT_FALSE(has(pairs(), "s.s+p.p"));
  // x.x's pairs broke accuracy twice: it is still paired with what could fix it.
  lost(9, "x.x", "q.q", RcaClass::kAccuracy);
  lost(10, "x.x", "r.r", RcaClass::kAccuracy);
  EXPECT_TRUE(has(pairs(), "p.p+x.x"));
}

// x.x broke accuracy alone and with the fix search's group {p.p, q.q} (the same failure): no
// pair puts it with p.p or q.q again, r.r is still its partner. A group that passed its check
// (a probe) rules nobody out.
TEST(MovesTest, NoPairRepeatsWhatAFailedFixGroupHeld) {
  std::vector<ActionSpec> actions = {Env("p.p", "P"), Env("q.q", "Q"), Env("r.r", "R"),
                                     Env("x.x", "X", "1", {}, 1.5)};
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  tree.Upsert(Reverted(2, "p.p", RcaClass::kNoGain, 0.01));
  tree.Upsert(Reverted(3, "q.q", RcaClass::kNoGain, 0.0));
  tree.Upsert(Reverted(4, "r.r", RcaClass::kNoGain, -0.01));
  tree.Upsert(Reverted(5, "x.x", RcaClass::kAccuracy, 0.0));
  Node group = Reverted(6, "x.x", RcaClass::kAccuracy, 0.0);
  group.critic.flags = {MoveFlag(Move::kFix), CompanionFlag("p.p"), CompanionFlag("q.q")};
  auto partners = [&](const Tree& t) {
    std::vector<std::string> out;
    for (const Requeue& q : Pairs(t, catalog, kRootId, 100)) {
      if (q.key == "x.x") out.push_back(*q.with);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  Tree failed = tree;
  failed.Upsert(group);
  EXPECT_EQ(partners(failed), std::vector<std::string>{"r.r"});
  group.critic.rca = RcaClass::kNone;
  group.critic.flags.push_back(std::string(kProbeFlag));
  Tree probed = tree;
  probed.Upsert(group);
  EXPECT_EQ(partners(probed), (std::vector<std::string>{"p.p", "q.q", "r.r"}));
}

// The very last resort of the pairs: another value of a parameter kept on the path with each
// idea that paid nothing alone, the values next to the kept one first (the next one, then the
// one before). Only when asked for.
TEST(MovesTest, AsALastResortAKeptParameterIsRetunedWithEachRevert) {
  std::vector<ActionSpec> actions = {Valued("tile", {"8", "16", "32", "64"}), Env("q.q", "Q")};
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  tree.Upsert(MakeNode(2, kRootId, "tile", "16", Outcome::kKept, 1));
  Node q = MakeNode(3, 2, "q.q", "", Outcome::kReverted, 2);
  q.critic.rca = RcaClass::kNoGain;
  q.gain = -0.01;
  tree.Upsert(q);
  EXPECT_TRUE(Pairs(tree, catalog, 2, 100).empty());
  EXPECT_TRUE(Pairs(tree, catalog, 2, 100, nullptr, PairKinds::kEvery).empty());
  std::vector<std::string> out;
  for (const Requeue& r : Pairs(tree, catalog, 2, 100, nullptr, PairKinds::kRetunes)) {
    EXPECT_EQ(r.move, Move::kPair);
    EXPECT_EQ(r.from, 2);
    out.push_back(*r.with + "+" + r.key);
  }
  EXPECT_EQ(out, (std::vector<std::string>{"q.q+tile[32]", "q.q+tile[8]", "q.q+tile[64]"}));
}

// A pair that waited under an earlier incumbent and was superseded by a keep never ran: it is
// offered again at the new incumbent (a pair vetoed at the incumbent itself is not), and the
// keep does not carry it over as a single candidate.
TEST(MovesTest, ASupersededPairIsOfferedAgainNotCarriedOver) {
  ActionSpec needs = Env("y.y", "Y");
  needs.requires_ = {"z.z"};
  std::vector<ActionSpec> actions = {needs, Env("z.z", "Z"), Env("k.k", "K")};
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  Node waiting = MakeNode(2, kRootId, "y.y", "", Outcome::kPending, 0);
  waiting.critic.flags = {MoveFlag(Move::kPair), CompanionFlag("z.z")};
  tree.Upsert(waiting);
  tree.Upsert(MakeNode(3, kRootId, "k.k", "", Outcome::kKept, 1));
  EXPECT_TRUE(CarryOver(tree, catalog, 3).empty());
  Node superseded = waiting;
  superseded.outcome = Outcome::kPruned;
  superseded.step = Step::kDone;
  tree.Upsert(superseded);
  std::vector<Requeue> again = Pairs(tree, catalog, 3);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].key, "y.y");
  EXPECT_EQ(again[0].with, "z.z");
  // Vetoed at the incumbent itself: not offered again there.
  Node vetoed = MakeNode(4, 3, "y.y", "", Outcome::kPruned, 0);
  vetoed.critic.flags = {MoveFlag(Move::kPair), CompanionFlag("z.z")};
  tree.Upsert(vetoed);
  EXPECT_TRUE(Pairs(tree, catalog, 3).empty());
}

// A prerequisite that never comes: simd.avx crashed under the baseline and again after the
// first keep; the third try waits for 2 keeps after the second crash, the fourth for 4.
TEST(MovesTest, PrerequisiteRetriesBackOffExponentially) {
  std::vector<ActionSpec> actions = {Env("simd.avx", "AVX")};
  for (int i = 0; i < 8; ++i) actions.push_back(Env("k.k" + std::to_string(i), "K"));
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  NodeId id = 2;
  NodeId incumbent = kRootId;
  int seq = 1;
  auto crash = [&]() {
    Node ill = MakeNode(id++, incumbent, "simd.avx", "", Outcome::kCrashed, seq++);
    ill.critic.rca = RcaClass::kPrerequisite;
    tree.Upsert(ill);
  };
  int keeps = 0;
  auto keep = [&]() {
    Node k = MakeNode(id++, incumbent, "k.k" + std::to_string(keeps++), "", Outcome::kKept, seq++);
    incumbent = k.id;
    tree.Upsert(k);
    return !PrerequisiteRetries(tree, catalog, incumbent).empty();
  };
  crash();
  EXPECT_TRUE(keep());  // 1 crash: retried at the next keep
  crash();
  EXPECT_FALSE(keep());  // 2 crashes: 1 keep since the last is not enough
  EXPECT_TRUE(keep());   // 2 keeps since
  crash();
  EXPECT_FALSE(keep());  // 3 crashes: waits for 4 keeps
  EXPECT_FALSE(keep());
  EXPECT_FALSE(keep());
  EXPECT_TRUE(keep());
}

// Drops: a change kept on the path, taken back out, the latest keep first; only a change that
// is an environment overlay alone, whose variables no other applied change sets, and that no
// applied change requires. A kept drop takes its change off the path.
TEST(MovesTest, DropsTakeBackEnvironmentChangesNoOtherChangeDependsOn) {
  auto append = [](const std::string& id, const std::string& flag) {
    ActionSpec a = Env(id, "UNUSED");
    a.apply = ApplySpec{};
    a.apply.kind = ApplySpec::Kind::kAppend;
    a.apply.append["CFLAGS"] = flag;
    return a;
  };
  ActionSpec patch = Env("p.p", "UNUSED");
  patch.apply = ApplySpec{};
  patch.apply.kind = ApplySpec::Kind::kPatch;
  patch.apply.patch = "/dev/null";
  ActionSpec needs_a = Env("r.r", "R");
  needs_a.requires_ = {"a.a"};
  std::vector<ActionSpec> actions = {Env("a.a", "A"),     Env("b.b", "B"), append("c.c", "-x"),
                                     append("d.d", "-y"), patch,           needs_a};
  Catalog catalog(actions);
  Tree tree;
  Node root = MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0);
  root.overlay = {{"B", "0"}};  // the target's own value of B
  tree.Upsert(root);
  EnvOverlay overlay = root.overlay;
  const std::vector<std::pair<std::string, std::pair<std::string, std::string>>> keeps = {
      {"a.a", {"A", "1"}},          {"b.b", {"B", "1"}}, {"c.c", {"CFLAGS", "-x"}},
      {"d.d", {"CFLAGS", "-x -y"}}, {"p.p", {"", ""}},   {"r.r", {"R", "1"}}};
  NodeId id = kRootId;
  for (const auto& [action, var] : keeps) {
    Node k = MakeNode(id + 1, id, action, "", Outcome::kKept, id + 1);
    if (!var.first.empty()) overlay[var.first] = var.second;
    k.overlay = overlay;
    tree.Upsert(k);
    ++id;
  }
  const NodeId inc = id;  // #7
  auto keys = [](const std::vector<Requeue>& qs) {
    std::vector<std::string> out;
    for (const Requeue& q : qs) {
      EXPECT_EQ(q.move, Move::kDrop);
      out.push_back(q.key);
    }
    return out;
  };
  // Not p.p (a patch), c.c or d.d (both set CFLAGS), a.a (r.r requires it).
  EXPECT_EQ(keys(Drops(tree, catalog, inc)), (std::vector<std::string>{"r.r", "b.b"}));
  EXPECT_EQ(keys(Drops(tree, catalog, inc, /*of=*/3)), std::vector<std::string>{"b.b"});
  // B back at the value it had before b.b was kept; nothing else changes.
  EnvOverlay without = OverlayWithout(tree, catalog, inc, "b.b");
  EXPECT_EQ(without.at("B"), "0");
  EXPECT_EQ(without.at("A"), "1");
  EXPECT_EQ(without.at("CFLAGS"), "-x -y");
  EXPECT_EQ(OverlayWithout(tree, catalog, inc, "r.r").count("R"), 0u);
  // A drop waiting (or tried) at the incumbent is not offered again.
  Node waiting = MakeNode(8, inc, "b.b", "", Outcome::kPending, 0);
  waiting.critic.flags = {MoveFlag(Move::kDrop), DropFlag("b.b")};
  tree.Upsert(waiting);
  EXPECT_EQ(waiting.CandidateKey(), "-b.b");  // never b.b itself, tried again
  EXPECT_TRUE(AppliedKeys(waiting).empty());
  EXPECT_EQ(keys(Drops(tree, catalog, inc)), std::vector<std::string>{"r.r"});
  // Kept, it takes b.b off the path.
  waiting.outcome = Outcome::kKept;
  waiting.step = Step::kDone;
  waiting.seq = 8;
  tree.Upsert(waiting);
  EXPECT_EQ(tree.AppliedActions(8).count("b.b"), 0u);
  EXPECT_EQ(tree.AppliedActions(8).count("a.a"), 1u);
  EXPECT_EQ(keys(Drops(tree, catalog, 8)), std::vector<std::string>{"r.r"});
}

}  // namespace
}  // namespace arbor
