#include "exec/git_workspace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "exec/git_cli.h"
#include "exec/runner.h"
#include "exec/test_util.h"
#include "util/strings.h"

namespace arbor {
namespace {

namespace fs = std::filesystem;
using test::Slurp;
using test::TempDir;

class GitWorkspaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_ = dir_.path() + "/repo";
    fs::create_directories(repo_);
  }

  // Runs a shell command in `cwd` (default: the repo) and returns its trimmed stdout.
  std::string Sh(const std::string& command, std::string cwd = "") {
    std::map<std::string, std::string> env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"},
                                              {"HOME", dir_.path()},
                                              {"GIT_CONFIG_NOSYSTEM", "1"}};
    auto r = RunCaptured(command, cwd.empty() ? repo_ : cwd, env);
    EXPECT_TRUE(r.ok());
    if (!r.ok()) return "";
    EXPECT_TRUE(r->result.ok()) << command << ": " << r->err;
    return Trim(r->out);
  }
  std::string Git(const std::string& args, std::string cwd = "") {
    return Sh("git -c user.name=t -c user.email=t@t " + args, std::move(cwd));
  }
  void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
  // A repository with one commit: a.txt and a .gitignore for build/.
  void InitRepo() {
    Git("init -q -b main");
    Write(repo_ + "/a.txt", "one\n");
    Write(repo_ + "/.gitignore", "build/\n");
    Git("add -A");
    Git("commit -q -m initial");
  }
  std::string OpenOk(GitWorkspace& ws) {
    auto r = ws.Open();
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : "";
  }
  std::string PrepareOk(GitWorkspace& ws, NodeId node, const std::string& commit) {
    auto r = ws.Prepare(node, commit);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : "";
  }

  TempDir dir_;
  std::string repo_;
};

TEST_F(GitWorkspaceTest, OpenRefusesNonRepository) {
  GitWorkspace ws(repo_, "demo");
  auto r = ws.Open();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("is not a git repository"), std::string::npos)
      << r.error().message;
  GitWorkspace missing(dir_.path() + "/nowhere", "demo");
  ASSERT_FALSE(missing.Open().ok());
  EXPECT_NE(missing.Open().error().message.find("is not a git repository"), std::string::npos);
}

TEST_F(GitWorkspaceTest, OpenRefusesEmptyRepository) {
  Git("init -q");
  GitWorkspace ws(repo_, "demo");
  auto r = ws.Open();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("has no commits yet"), std::string::npos) << r.error().message;
}

TEST_F(GitWorkspaceTest, OpenRefusesDirtyWorkspace) {
  InitRepo();
  Write(repo_ + "/a.txt", "changed\n");
  for (int i = 0; i < 6; ++i) Write(repo_ + "/new" + std::to_string(i), "x");
  GitWorkspace ws(repo_, "demo");
  auto r = ws.Open();
  ASSERT_FALSE(r.ok());
  const std::string& msg = r.error().message;
  EXPECT_NE(msg.find("a.txt"), std::string::npos) << msg;
  EXPECT_NE(msg.find("and 2 more"), std::string::npos) << msg;
  EXPECT_NE(msg.find("commit or stash them first"), std::string::npos) << msg;
}

TEST_F(GitWorkspaceTest, OpenRefusesSubdirectory) {
  InitRepo();
  fs::create_directories(repo_ + "/sub");
  GitWorkspace ws(repo_ + "/sub", "demo");
  auto r = ws.Open();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("top directory"), std::string::npos) << r.error().message;
}

TEST_F(GitWorkspaceTest, OpenCreatesBranchAndRecordsBase) {
  InitRepo();
  std::string head = Git("rev-parse HEAD");
  GitWorkspace ws(repo_, "demo");
  EXPECT_EQ(OpenOk(ws), head);
  EXPECT_EQ(Git("rev-parse arbor/demo"), head);
  EXPECT_EQ(Trim(Slurp(ws.state_dir() + "/base")), head);
  EXPECT_NE(Slurp(repo_ + "/.git/info/exclude").find("/.arbor/"), std::string::npos);
  EXPECT_EQ(Slurp(repo_ + "/.gitignore"), "build/\n");  // the user's file is untouched

  // State files and worktrees do not make the workspace dirty; the base stays the first HEAD.
  PrepareOk(ws, 2, head);
  Write(repo_ + "/b.txt", "b\n");
  Git("add b.txt");
  Git("commit -q -m second");
  EXPECT_EQ(Git("status --porcelain"), "");
  GitWorkspace again(repo_, "demo");
  EXPECT_EQ(OpenOk(again), head);
  size_t count = 0;
  for (const auto& line : Split(Slurp(repo_ + "/.git/info/exclude"), '\n')) {
    if (line == "/.arbor/") ++count;
  }
  EXPECT_EQ(count, 1u);

  GitWorkspace bad(repo_, "bad..name");
  EXPECT_FALSE(bad.Open().ok());
}

TEST_F(GitWorkspaceTest, PrepareSnapshotPromoteRoundTrip) {
  InitRepo();
  GitWorkspace ws(repo_, "demo");
  std::string base = OpenOk(ws);
  std::string wt = PrepareOk(ws, 2, base);
  EXPECT_EQ(wt, ws.WorktreePath(2));
  EXPECT_TRUE(fs::path(wt).is_absolute());
  EXPECT_EQ(Git("rev-parse HEAD", wt), base);

  Write(wt + "/a.txt", "two\n");
  Write(wt + "/new.txt", "new\n");
  auto snap = ws.Snapshot(2, "node 2: tweak", {{"B_VAR", "x y"}, {"A_VAR", "it's"}});
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_NE(*snap, base);
  EXPECT_EQ(Git("show " + *snap + ":a.txt"), "two");
  EXPECT_EQ(Git("show " + *snap + ":new.txt"), "new");
  EXPECT_EQ(Git("log -1 --format=%an/%s " + *snap), "arbor/node 2: tweak");
  std::string env = Git("show " + *snap + ":arbor-best.env");
  EXPECT_NE(env.find("# Written by Arbor"), std::string::npos);
  EXPECT_NE(env.find("export A_VAR='it'\\''s'\nexport B_VAR='x y'"), std::string::npos) << env;
  EXPECT_EQ(Sh(". ./arbor-best.env && printf '%s|%s' \"$A_VAR\" \"$B_VAR\"", wt), "it's|x y");

  // Nothing changed since: the same commit.
  auto again = ws.Snapshot(2, "again", {{"B_VAR", "x y"}, {"A_VAR", "it's"}});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *snap);

  ASSERT_TRUE(ws.Promote(*snap).ok());
  ASSERT_TRUE(ws.Promote(*snap).ok());
  EXPECT_EQ(Git("rev-parse arbor/demo"), *snap);
  EXPECT_EQ(Git("rev-parse main"), base);  // the user's branch does not move

  std::string child = PrepareOk(ws, 3, *snap);
  EXPECT_EQ(Slurp(child + "/new.txt"), "new\n");
  EXPECT_EQ(Slurp(child + "/a.txt"), "two\n");
  // Only the overlay changes: still a commit.
  auto env_only = ws.Snapshot(3, "env only", {{"A_VAR", "other"}});
  ASSERT_TRUE(env_only.ok());
  EXPECT_NE(*env_only, *snap);
  EXPECT_EQ(Git("diff --name-only " + *snap + " " + *env_only), "arbor-best.env");
  EXPECT_EQ(Git("status --porcelain"), "");
}

// A repository whose .gitignore matches arbor-best.env (`*.env`): the file is committed
// anyway, so an environment-only keep still moves the branch to a commit that holds it.
TEST_F(GitWorkspaceTest, TheEnvFileIsCommittedEvenWhenTheRepositoryIgnoresIt) {
  InitRepo();
  Write(repo_ + "/.gitignore", "build/\n*.env\n");
  Git("commit -q -am 'ignore env files'");
  GitWorkspace ws(repo_, "demo");
  std::string base = OpenOk(ws);
  PrepareOk(ws, 2, base);
  auto snap = ws.Snapshot(2, "env only", {{"A_VAR", "1"}});
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_NE(*snap, base);
  EXPECT_EQ(Git("diff --name-only " + base + " " + *snap), "arbor-best.env");
  EXPECT_NE(Git("show " + *snap + ":arbor-best.env").find("export A_VAR='1'"), std::string::npos);
  ASSERT_TRUE(ws.Promote(*snap).ok());
  EXPECT_EQ(Git("rev-parse arbor/demo"), *snap);
}

// A change that writes a file the repository ignores: staged by StageIgnoredPaths, it is in
// the node's commit; an ignored file nobody named (a build output) is not.
TEST_F(GitWorkspaceTest, IgnoredFilesAChangeNamesAreCommittedOthersAreNot) {
  InitRepo();
  Write(repo_ + "/.gitignore", "build/\n*.env\n");
  Git("commit -q -am 'ignore env files'");
  GitWorkspace ws(repo_, "demo");
  std::string base = OpenOk(ws);
  std::string wt = PrepareOk(ws, 2, base);
  Write(wt + "/tuning.env", "FAST=1\n");
  Write(wt + "/a.txt", "two\n");
  fs::create_directories(wt + "/build");
  Write(wt + "/build/out.o", "obj");
  auto staged = StageIgnoredPaths(wt, {"tuning.env", "a.txt", "missing.env"});
  ASSERT_TRUE(staged.ok()) << staged.error().message;
  EXPECT_EQ(*staged, std::vector<std::string>{"tuning.env"});
  EXPECT_NE(IgnoredPathsWarning(*staged).find("ignores tuning.env"), std::string::npos);
  EXPECT_EQ(IgnoredPathsWarning({}), "");
  auto snap = ws.Snapshot(2, "patch", {});
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_EQ(Git("show " + *snap + ":tuning.env"), "FAST=1");
  EXPECT_EQ(Git("ls-tree -r --name-only " + *snap),
            ".gitignore\na.txt\narbor-best.env\ntuning.env");
}

// The commit must hold the node's state and the branch must reach it, or the keep fails
// loudly: a clean filter that rewrites arbor-best.env, a commit without arbor-best.env.
TEST_F(GitWorkspaceTest, AStateTheBranchWouldNotHoldIsAnError) {
  InitRepo();
  Write(repo_ + "/.gitattributes", "*.env filter=strip\n");
  Git("add .gitattributes");
  Git("commit -q -m attributes");
  Git("config filter.strip.clean 'sed s/export/#/'");
  GitWorkspace ws(repo_, "demo");
  std::string base = OpenOk(ws);
  PrepareOk(ws, 2, base);
  auto snap = ws.Snapshot(2, "env", {{"A_VAR", "1"}});
  ASSERT_FALSE(snap.ok());
  EXPECT_NE(snap.error().message.find("its commit does not hold its environment"),
            std::string::npos)
      << snap.error().message;

  Git("config --unset filter.strip.clean");
  Write(repo_ + "/b.txt", "b\n");
  Git("add b.txt");
  Git("commit -q -m 'a commit Arbor did not make'");
  std::string foreign = Git("rev-parse HEAD");
  Status promoted = ws.Promote(foreign);
  ASSERT_FALSE(promoted.ok());
  EXPECT_NE(promoted.error().message.find("does not hold arbor-best.env"), std::string::npos)
      << promoted.error().message;
  EXPECT_TRUE(ws.Promote(base).ok()) << "the base is the baseline's state, without the file";
}

TEST_F(GitWorkspaceTest, PrepareReusesACleanWorktree) {
  InitRepo();
  GitWorkspace ws(repo_, "demo");
  std::string base = OpenOk(ws);
  std::string wt = PrepareOk(ws, 2, base);
  fs::create_directories(wt + "/build");
  Write(wt + "/build/cache", "kept");  // ignored build output survives reuse
  EXPECT_EQ(PrepareOk(ws, 2, base), wt);
  EXPECT_EQ(Slurp(wt + "/build/cache"), "kept");
}

TEST_F(GitWorkspaceTest, PrepareAfterCrashGivesACleanWorktree) {
  InitRepo();
  GitWorkspace ws(repo_, "demo");
  std::string base = OpenOk(ws);
  std::string wt = PrepareOk(ws, 4, base);
  Write(wt + "/a.txt", "half-applied\n");
  Write(wt + "/junk.txt", "junk\n");
  EXPECT_EQ(PrepareOk(ws, 4, base), wt);
  EXPECT_EQ(Slurp(wt + "/a.txt"), "one\n");
  EXPECT_FALSE(fs::exists(wt + "/junk.txt"));
  EXPECT_EQ(Git("status --porcelain", wt), "");

  // At another commit: moved to the requested one.
  Write(wt + "/a.txt", "three\n");
  auto snap = ws.Snapshot(4, "three", {});
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(PrepareOk(ws, 4, base), wt);
  EXPECT_EQ(Git("rev-parse HEAD", wt), base);

  // A broken worktree link (crash while creating it) is rebuilt, not mistaken for the repo.
  fs::remove(wt + "/.git");
  EXPECT_EQ(PrepareOk(ws, 4, *snap), wt);
  EXPECT_EQ(Git("rev-parse HEAD", wt), *snap);
  EXPECT_EQ(Git("rev-parse --show-toplevel", wt), fs::canonical(wt).string());

  // Folder deleted behind git's back: the stale registration is pruned.
  fs::remove_all(wt);
  EXPECT_EQ(PrepareOk(ws, 4, base), wt);
  EXPECT_EQ(Slurp(wt + "/a.txt"), "one\n");
}

TEST_F(GitWorkspaceTest, ReleaseIsIdempotent) {
  InitRepo();
  GitWorkspace ws(repo_, "demo");
  std::string base = OpenOk(ws);
  std::string wt = PrepareOk(ws, 2, base);
  Write(wt + "/dirty.txt", "x");
  EXPECT_TRUE(ws.Release(2).ok());
  EXPECT_FALSE(fs::exists(wt));
  EXPECT_TRUE(ws.Release(2).ok());
  EXPECT_TRUE(ws.Release(99).ok());
  EXPECT_EQ(Git("worktree list").find("n2"), std::string::npos);
}

TEST_F(GitWorkspaceTest, ReleaseAllRemovesEveryWorktreeALostProcessLeft) {
  InitRepo();
  GitWorkspace ws(repo_, "demo");
  std::string base = OpenOk(ws);
  std::string a = PrepareOk(ws, 2, base);
  std::string b = PrepareOk(ws, 3, base);
  Write(b + "/half-applied.txt", "x");
  EXPECT_TRUE(ws.ReleaseAll().ok());
  EXPECT_FALSE(fs::exists(a));
  EXPECT_FALSE(fs::exists(b));
  EXPECT_EQ(Git("worktree list").find("worktrees/n"), std::string::npos);
  EXPECT_TRUE(ws.ReleaseAll().ok());
}

TEST_F(GitWorkspaceTest, UserHooksNeverRun) {
  InitRepo();
  for (const char* hook : {"pre-commit", "post-checkout", "commit-msg"}) {
    std::string path = repo_ + "/.git/hooks/" + hook;
    Write(path, std::string("#!/bin/sh\ntouch ") + dir_.path() + "/hook-ran\nexit 1\n");
    fs::permissions(path, fs::perms::owner_all);
  }
  GitWorkspace ws(repo_, "demo");
  std::string base = OpenOk(ws);
  std::string wt = PrepareOk(ws, 2, base);
  Write(wt + "/a.txt", "hooked\n");
  auto snap = ws.Snapshot(2, "with hooks", {});
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_FALSE(fs::exists(dir_.path() + "/hook-ran"));
}

TEST_F(GitWorkspaceTest, SnapshotErrors) {
  InitRepo();
  GitWorkspace ws(repo_, "demo");
  std::string base = OpenOk(ws);
  EXPECT_FALSE(ws.Snapshot(7, "no worktree", {}).ok());
  PrepareOk(ws, 7, base);
  EXPECT_FALSE(ws.Snapshot(7, "bad name", {{"NOT-A-NAME", "x"}}).ok());
  EXPECT_FALSE(ws.Prepare(8, "0123456789abcdef0123456789abcdef01234567").ok());
  EXPECT_FALSE(ws.Promote("no-such-commit").ok());
}

TEST_F(GitWorkspaceTest, ArchiveSetsTheStateAndBranchAsideForAFreshStart) {
  InitRepo();
  GitWorkspace ws(repo_, "demo");
  auto none = ws.Archive();
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_EQ(*none, "") << "no state yet: nothing to archive";
  std::string base = OpenOk(ws);
  std::string wt = PrepareOk(ws, 2, base);
  Write(wt + "/a.txt", "two\n");
  auto kept = ws.Snapshot(2, "kept", {});
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  ASSERT_TRUE(ws.Promote(*kept).ok());
  Write(ws.state_dir() + "/arbor.db", "state");

  auto archived = ws.Archive();
  ASSERT_TRUE(archived.ok()) << archived.error().message;
  EXPECT_EQ(*archived, ws.state_dir() + ".archived-1");
  EXPECT_FALSE(fs::exists(ws.state_dir()));
  EXPECT_EQ(Slurp(*archived + "/arbor.db"), "state");
  EXPECT_EQ(Slurp(*archived + "/base"), base + "\n");
  EXPECT_EQ(Git("rev-parse arbor/demo.archived-1"), *kept) << "the kept commits stay reachable";
  EXPECT_EQ(Git("branch --list arbor/demo"), "");
  EXPECT_EQ(Git("worktree list").find("n2"), std::string::npos);

  // A fresh start records HEAD as its base; archiving again takes the next free name.
  EXPECT_EQ(OpenOk(ws), base);
  EXPECT_EQ(Git("rev-parse arbor/demo"), base);
  auto second = ws.Archive();
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(*second, ws.state_dir() + ".archived-2");
  EXPECT_TRUE(fs::exists(*archived));
}

}  // namespace
}  // namespace arbor
