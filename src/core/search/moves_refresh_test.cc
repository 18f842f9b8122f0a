// Refreshes (moves.h Refreshes): a kept `refresh` action's command run again once a later keep
// changed the state its files derive from. Pure rule over hand-built trees; the real binary's
// campaign is tests/integration/refresh_test.cc.
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

ActionSpec RunAction(const std::string& id, bool refresh) {
  ActionSpec a;
  a.id = id;
  a.layer = "compiler";
  a.category = id;
  a.apply.kind = ApplySpec::Kind::kRun;
  a.apply.run = "./train.sh";
  a.refresh = refresh;
  return a;
}

std::vector<std::string> Refreshed(const Tree& tree, const Catalog& catalog, NodeId kept) {
  std::vector<std::string> out;
  for (const Requeue& q : Refreshes(tree, catalog, kept)) {
    EXPECT_EQ(q.move, Move::kRefresh);
    out.push_back(q.key + " from #" + std::to_string(q.from));
  }
  return out;
}

TEST(MovesTest, AKeepAfterARefreshActionRunsItAgainOnTheNewState) {
  std::vector<ActionSpec> actions = {RunAction("pgo", true), RunAction("codegen", false),
                                     Env("flag.f", "F"), Env("flag.g", "G")};
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  tree.Upsert(MakeNode(2, kRootId, "codegen", "", Outcome::kKept, 1));
  // Its own keep: what it derived is fresh. A plain run action is never refreshed.
  tree.Upsert(MakeNode(3, 2, "pgo", "", Outcome::kKept, 2));
  EXPECT_TRUE(Refreshed(tree, catalog, 3).empty());
  // A reverted change changes nothing; a kept one makes the profile stale.
  tree.Upsert(MakeNode(4, 3, "flag.g", "", Outcome::kReverted, 3));
  Node f = MakeNode(5, 3, "flag.f", "", Outcome::kKept, 4);
  f.overlay = {{"F", "1"}};
  tree.Upsert(f);
  EXPECT_EQ(Refreshed(tree, catalog, 5), std::vector<std::string>{"pgo from #3"});
  // RequeueUnder names the move on the node: AppliedKeys is the refreshed change.
  Node refresh = MakeNode(6, 5, "pgo", "", Outcome::kKept, 5);
  refresh.critic.flags = {MoveFlag(Move::kRefresh)};
  refresh.critic.requeued_from = 3;
  tree.Upsert(refresh);
  EXPECT_EQ(MoveOf(refresh), Move::kRefresh);
  // The keep of a refresh offers none; the next keep refreshes the latest run.
  EXPECT_TRUE(Refreshed(tree, catalog, 6).empty());
  tree.Upsert(MakeNode(7, 6, "flag.g", "", Outcome::kKept, 6));
  EXPECT_EQ(Refreshed(tree, catalog, 7), std::vector<std::string>{"pgo from #6"});
  // A pair that applies it again is fresh; one that applies it as a companion too.
  Node pair = MakeNode(8, 7, "flag.g", "", Outcome::kKept, 7);
  pair.critic.flags = {MoveFlag(Move::kPair), CompanionFlag("pgo")};
  tree.Upsert(pair);
  EXPECT_TRUE(Refreshed(tree, catalog, 8).empty());
}

// Two refresh actions: the keep of one's refresh offers the other's that waited beside it, and
// nothing else; a refresh re-measured stays a refresh; one already running is not queued again.
TEST(MovesTest, RefreshesOfTwoActionsNeitherLoopNorGetLost) {
  std::vector<ActionSpec> actions = {RunAction("pgo", true), RunAction("tune", true),
                                     Env("flag.f", "F")};
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  tree.Upsert(MakeNode(2, kRootId, "pgo", "", Outcome::kKept, 1));
  tree.Upsert(MakeNode(3, 2, "tune", "", Outcome::kKept, 2));
  tree.Upsert(MakeNode(4, 3, "flag.f", "", Outcome::kKept, 3));
  EXPECT_EQ(Refreshed(tree, catalog, 4), (std::vector<std::string>{"pgo from #2", "tune from #3"}));
  for (auto [id, action] : {std::pair<NodeId, const char*>{5, "pgo"}, {6, "tune"}}) {
    Node r = MakeNode(id, 4, action, "", Outcome::kPending, 0);
    r.critic.flags = {MoveFlag(Move::kRefresh)};
    tree.Upsert(r);
  }
  // pgo's refresh is re-measured (reverted as a close call, then kept at more repetitions):
  // still a refresh, and its keep offers tune's, which waited beside it, and not pgo's.
  Node reverted = *tree.Find(5);
  reverted.outcome = Outcome::kReverted;
  reverted.step = Step::kDone;
  tree.Upsert(reverted);
  Node again = MakeNode(7, 4, "pgo", "", Outcome::kKept, 5);
  again.critic.flags = {MoveFlag(Move::kRemeasure), MoveFlag(Move::kRefresh)};
  tree.Upsert(again);
  EXPECT_TRUE(IsRefresh(again));
  EXPECT_EQ(MoveOf(again), Move::kRemeasure);
  EXPECT_EQ(Refreshed(tree, catalog, 7), std::vector<std::string>{"tune from #3"});
  // tune's refresh kept in turn: nothing waited beside it, so nothing more.
  Node tune = MakeNode(8, 7, "tune", "", Outcome::kKept, 6);
  tune.critic.flags = {MoveFlag(Move::kRefresh)};
  tree.Upsert(tune);
  EXPECT_TRUE(Refreshed(tree, catalog, 8).empty());
  // A keep beside a running refresh (a parallel batch's node, re-dispatched onto the keep):
  // only the other action's.
  Node running = MakeNode(9, 8, "pgo", "", Outcome::kRunning, 7);
  running.step = Step::kBuild;
  running.critic.flags = {MoveFlag(Move::kRefresh)};
  tree.Upsert(running);
  Node g = MakeNode(10, 8, "flag.f", "1", Outcome::kKept, 8);
  tree.Upsert(g);
  EXPECT_EQ(Refreshed(tree, catalog, 10), std::vector<std::string>{"tune from #8"});
}

// A node built on a state that holds a kept refresh action runs it again on top of its own
// change (RefreshesToRun), so that it is measured with files derived from itself; its keep then
// needs no refresh. Not for the change itself (a refresh, or a pair with it), not for one it
// takes out, and on a branch's state for what the branch applied.
TEST(MovesTest, ANodeOnAStateWithARefreshActionRunsItAgainOnItsOwnChange) {
  std::vector<ActionSpec> actions = {RunAction("pgo", true), RunAction("tune", true),
                                     RunAction("codegen", false), Env("flag.f", "F"),
                                     Env("flag.g", "G")};
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  tree.Upsert(MakeNode(2, kRootId, "codegen", "", Outcome::kKept, 1));
  Node before = MakeNode(3, 2, "flag.f", "", Outcome::kPending, 0);
  EXPECT_TRUE(RefreshesToRun(tree, catalog, before).empty());  // no refresh action kept yet
  tree.Upsert(MakeNode(4, 2, "pgo", "", Outcome::kKept, 2));
  tree.Upsert(MakeNode(5, 4, "tune", "", Outcome::kReverted, 3));  // reverted: not in the state
  Node f = MakeNode(6, 4, "flag.f", "", Outcome::kPending, 0);
  EXPECT_EQ(RefreshesToRun(tree, catalog, f), std::vector<std::string>{"pgo"});
  Node refresh = MakeNode(7, 4, "pgo", "", Outcome::kPending, 0);
  refresh.critic.flags = {MoveFlag(Move::kRefresh)};
  EXPECT_TRUE(RefreshesToRun(tree, catalog, refresh).empty());
  Node pair = MakeNode(8, 4, "flag.g", "", Outcome::kPending, 0);
  pair.critic.flags = {MoveFlag(Move::kPair), CompanionFlag("pgo")};
  EXPECT_TRUE(RefreshesToRun(tree, catalog, pair).empty());
  Node drop = MakeNode(9, 4, "pgo", "", Outcome::kPending, 0);
  drop.critic.flags = {MoveFlag(Move::kDrop), DropFlag("pgo")};
  EXPECT_TRUE(RefreshesToRun(tree, catalog, drop).empty());

  // f kept, having run pgo again: fresh, so its keep queues no refresh, and the latest run of
  // pgo on the path is f's. Both refresh actions kept: each runs again, in path order.
  f.outcome = Outcome::kKept;
  f.step = Step::kDone;
  f.critic.flags = {RerunFlag("pgo")};
  tree.Upsert(f);
  EXPECT_TRUE(Refreshed(tree, catalog, 6).empty());
  tree.Upsert(MakeNode(10, 6, "tune", "", Outcome::kKept, 4));
  EXPECT_EQ(Refreshed(tree, catalog, 10), std::vector<std::string>{"pgo from #6"});
  Node g = MakeNode(11, 10, "flag.g", "", Outcome::kPending, 0);
  EXPECT_EQ(RefreshesToRun(tree, catalog, g), (std::vector<std::string>{"pgo", "tune"}));
  // On a reverted node's state (a branch's), what that node applied is in the state too.
  Node off = MakeNode(12, 2, "flag.g", "", Outcome::kReverted, 5);
  off.critic.flags = {MoveFlag(Move::kPair), CompanionFlag("tune")};
  tree.Upsert(off);
  Node branch = MakeNode(13, 12, "flag.f", "1", Outcome::kPending, 0);
  branch.critic.flags = {std::string(kBranchFlag)};
  tree.Upsert(branch);
  EXPECT_EQ(RefreshesToRun(tree, catalog, branch), std::vector<std::string>{"tune"});
}

// Defensive: only environment overlays are dropped today, and `refresh` needs a `run` action.
TEST(MovesTest, NoRefreshOfAChangeAKeptDropTookOut) {
  ActionSpec train = RunAction("tune.t", true);
  std::vector<ActionSpec> actions = {train, Env("flag.f", "F"), Env("flag.g", "G")};
  Catalog catalog(actions);
  Tree tree;
  tree.Upsert(MakeNode(kRootId, kNoNode, "baseline", "", Outcome::kBaseline, 0));
  tree.Upsert(MakeNode(2, kRootId, "tune.t", "", Outcome::kKept, 1));
  Node drop = MakeNode(3, 2, "tune.t", "", Outcome::kKept, 2);
  drop.critic.flags = {MoveFlag(Move::kDrop), DropFlag("tune.t")};
  tree.Upsert(drop);
  tree.Upsert(MakeNode(4, 3, "flag.f", "", Outcome::kKept, 3));
  EXPECT_TRUE(Refreshed(tree, catalog, 4).empty());
}

}  // namespace
}  // namespace arbor
