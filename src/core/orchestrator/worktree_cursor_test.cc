#include "core/orchestrator/worktree_cursor.h"

#include <gtest/gtest.h>

namespace arbor {
namespace {

constexpr NodeId kA = 7;
constexpr NodeId kB = 8;

TEST(WorktreeCursor, AFreshCursorHoldsNothing) {
  // A resumed campaign starts here: nothing was built by this process.
  WorktreeCursor c;
  EXPECT_EQ(c.current(), kNoNode);
  EXPECT_EQ(c.base(), kNoNode);
  EXPECT_FALSE(c.IsPrepared(kA));
  EXPECT_FALSE(c.IsBuilt(kA));
  EXPECT_FALSE(c.IsBase(kA));
}

TEST(WorktreeCursor, NoNodeIsNeverHeld) {
  WorktreeCursor c;
  EXPECT_FALSE(c.IsPrepared(kNoNode));
  EXPECT_FALSE(c.IsBuilt(kNoNode));
  EXPECT_FALSE(c.IsBase(kNoNode));
}

TEST(WorktreeCursor, APreparedWorktreeIsCurrentButNotBuilt) {
  WorktreeCursor c;
  c.Prepared(kA, "/wt/7");
  EXPECT_TRUE(c.IsPrepared(kA));
  EXPECT_FALSE(c.IsBuilt(kA));
  EXPECT_EQ(c.current(), kA);
  EXPECT_EQ(c.worktree(), "/wt/7");
  c.Built(kA);
  EXPECT_TRUE(c.IsBuilt(kA));
  EXPECT_FALSE(c.IsPrepared(kB));
  EXPECT_FALSE(c.IsBuilt(kB));
}

TEST(WorktreeCursor, PreparingAnotherNodeForgetsTheBuild) {
  WorktreeCursor c;
  c.Prepared(kA, "/wt/7");
  c.Built(kA);
  c.Prepared(kB, "/wt/8");
  EXPECT_FALSE(c.IsPrepared(kA));
  EXPECT_FALSE(c.IsBuilt(kA));  // its outputs are in a worktree no longer current
  EXPECT_TRUE(c.IsPrepared(kB));
  EXPECT_FALSE(c.IsBuilt(kB));
  EXPECT_EQ(c.worktree(), "/wt/8");
}

TEST(WorktreeCursor, PreparingTheSameNodeAfreshForgetsTheBuild) {
  // StepApply recreates a half-applied worktree: what was built there is gone.
  WorktreeCursor c;
  c.Prepared(kA, "/wt/7");
  c.Built(kA);
  c.Prepared(kA, "/lane/7");
  EXPECT_TRUE(c.IsPrepared(kA));
  EXPECT_FALSE(c.IsBuilt(kA));
  EXPECT_EQ(c.worktree(), "/lane/7");
}

TEST(WorktreeCursor, NeedsBuildKeepsTheNodeCurrent) {
  WorktreeCursor c;
  c.Prepared(kA, "/wt/7");
  c.Built(kA);
  c.NeedsBuild();
  EXPECT_TRUE(c.IsPrepared(kA));
  EXPECT_FALSE(c.IsBuilt(kA));
  EXPECT_EQ(c.worktree(), "/wt/7");
  c.Built(kA);
  EXPECT_TRUE(c.IsBuilt(kA));
}

TEST(WorktreeCursor, ForgettingTheCurrentNodeForgetsItsBuild) {
  WorktreeCursor c;
  c.Prepared(kA, "/wt/7");
  c.Built(kA);
  c.Forget(kA);
  EXPECT_EQ(c.current(), kNoNode);
  EXPECT_FALSE(c.IsPrepared(kA));
  EXPECT_FALSE(c.IsBuilt(kA));
  // Prepared again later (a resumed step), it must be built again.
  c.Prepared(kA, "/wt/7");
  EXPECT_FALSE(c.IsBuilt(kA));
}

TEST(WorktreeCursor, ForgettingANodeThatIsNotCurrentChangesNothing) {
  WorktreeCursor c;
  c.Prepared(kA, "/wt/7");
  c.Built(kA);
  c.BaseBuilt(kB, "/wt/8");
  c.Forget(kB);  // the base arm's node: only BaseReleased lets go of it
  c.Forget(99);
  c.Forget(kNoNode);
  EXPECT_TRUE(c.IsBuilt(kA));
  EXPECT_EQ(c.worktree(), "/wt/7");
  EXPECT_TRUE(c.IsBase(kB));
  EXPECT_EQ(c.base_worktree(), "/wt/8");
}

TEST(WorktreeCursor, ForgetCurrentLetsGoOfWhateverIsCurrent) {
  WorktreeCursor c;
  c.Prepared(kA, "/wt/7");
  c.Built(kA);
  c.BaseBuilt(kB, "/wt/8");
  c.ForgetCurrent();
  EXPECT_EQ(c.current(), kNoNode);
  EXPECT_FALSE(c.IsBuilt(kA));
  EXPECT_TRUE(c.IsBase(kB));  // the base arm is held on its own
}

TEST(WorktreeCursor, TheBaseArmIsHeldApartFromTheCurrentWorktree) {
  WorktreeCursor c;
  c.BaseBuilt(kA, "/wt/7");
  EXPECT_TRUE(c.IsBase(kA));
  EXPECT_FALSE(c.IsPrepared(kA));  // built as a base, not as the node in flight
  EXPECT_FALSE(c.IsBuilt(kA));
  c.Prepared(kB, "/wt/8");
  c.Built(kB);
  EXPECT_TRUE(c.IsBase(kA));
  EXPECT_EQ(c.base_worktree(), "/wt/7");
  c.BaseReleased();
  EXPECT_EQ(c.base(), kNoNode);
  EXPECT_FALSE(c.IsBase(kA));
  EXPECT_TRUE(c.IsBuilt(kB));
  EXPECT_EQ(c.worktree(), "/wt/8");
}

TEST(WorktreeCursor, ANewBaseReplacesTheOldOne) {
  WorktreeCursor c;
  c.BaseBuilt(kA, "/wt/7");
  c.BaseBuilt(kB, "/wt/8");
  EXPECT_FALSE(c.IsBase(kA));
  EXPECT_TRUE(c.IsBase(kB));
  EXPECT_EQ(c.base_worktree(), "/wt/8");
}

TEST(WorktreeCursor, TheSameNodeMayBeCurrentAndBase) {
  // The final validation probes the best state as a base while it is current: one directory.
  WorktreeCursor c;
  c.Prepared(kA, "/wt/7");
  c.Built(kA);
  c.BaseBuilt(kA, "/wt/7");
  EXPECT_EQ(c.base(), c.current());
  c.BaseReleased();
  EXPECT_TRUE(c.IsBuilt(kA));  // the caller decides whether the release undid it (ConfirmFinal)
}

TEST(WorktreeCursor, ResetLetsGoOfEverything) {
  WorktreeCursor c;
  c.Prepared(kA, "/wt/7");
  c.Built(kA);
  c.BaseBuilt(kB, "/wt/8");
  c.Reset();
  EXPECT_EQ(c.current(), kNoNode);
  EXPECT_EQ(c.base(), kNoNode);
  EXPECT_FALSE(c.IsBuilt(kA));
  EXPECT_FALSE(c.IsBase(kB));
  c.Prepared(kA, "/wt/7");
  EXPECT_FALSE(c.IsBuilt(kA));  // after a reset every worktree is built again
}

}  // namespace
}  // namespace arbor
