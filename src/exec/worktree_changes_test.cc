// CheckWorktreeChanges on real temporary git repositories.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "exec/git_cli.h"
#include "exec/patch_policy.h"
#include "exec/runner.h"
#include "exec/test_util.h"
#include "util/strings.h"

namespace arbor {
namespace {

namespace fs = std::filesystem;

class WorktreeChangesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Write("src/a.cc", "int a;\n");
    Write("README.md", "hi\n");
    base_ =
        Sh("git init -q && git add -A && "
           "git -c user.name=t -c user.email=t@example.com commit -qm base && "
           "git rev-parse HEAD");
  }

  std::string Sh(const std::string& command) {
    Result<CapturedRun> r = RunCaptured(command, repo_.path(), GitEnv());
    EXPECT_TRUE(r.ok() && r->result.ok()) << command << ": " << (r.ok() ? r->err : "");
    return r.ok() ? Trim(r->out) : "";
  }
  void Write(const std::string& rel, const std::string& text) {
    fs::path p = fs::path(repo_.path()) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string Check(const PatchPolicy& policy = {}) {
    Status s = CheckWorktreeChanges(repo_.path(), base_, policy);
    return s.ok() ? "ok" : s.error().message;
  }

  test::TempDir repo_;
  std::string base_;
};

TEST_F(WorktreeChangesTest, BenignEditsPass) {
  Write("src/a.cc", "int a = 1;\n");
  Write("src/new/b.cc", "int b;\n");
  Sh("git rm -q README.md");
  EXPECT_EQ(Check(), "ok");
  EXPECT_EQ(Check(PatchPolicy{{"src/**", "*.md"}}), "ok");
}

TEST_F(WorktreeChangesTest, NewSymlinkIsRefused) {
  ASSERT_EQ(symlink("/etc", (repo_.path() + "/src/etc").c_str()), 0);
  EXPECT_EQ(Check(), "patch policy: symlink: \"src/etc\" is a symlink in the worktree");
}

TEST_F(WorktreeChangesTest, TrackedFileTurnedIntoAStagedSymlinkIsRefused) {
  Sh("rm README.md && ln -s /etc/passwd README.md && git add README.md");
  EXPECT_EQ(Check(), "patch policy: symlink: \"README.md\" is a symlink in the worktree");
}

TEST_F(WorktreeChangesTest, WritesIntoAGitDirectoryAreRefused) {
  Write(".GIT/config", "[core]\n\thooksPath = /tmp/evil\n");
  EXPECT_EQ(Check(), "patch policy: git-dir: \".GIT/config\" is inside a .git directory");
}

TEST_F(WorktreeChangesTest, ReplacedTopLevelGitIsRefused) {
  Sh("mv .git .git-real && ln -s .git-real .git");
  EXPECT_EQ(Check(), "patch policy: git-dir: \".git\" was replaced by a symlink");
}

TEST_F(WorktreeChangesTest, GitlinkInTheIndexIsRefused) {
  Sh("git update-index --add --cacheinfo 160000," + base_ + ",vendor/lib");
  EXPECT_EQ(Check(),
            "patch policy: submodule: \"vendor/lib\" is a submodule (gitlink, mode 160000)");
}

TEST_F(WorktreeChangesTest, NestedRepositoryIsRefused) {
  Sh("git init -q vendor/x && echo x > vendor/x/f");
  EXPECT_EQ(Check(), "patch policy: submodule: \"vendor/x\" is a nested git repository");
}

TEST_F(WorktreeChangesTest, GitmodulesIsRefused) {
  Write(".gitmodules", "[submodule \"x\"]\n\tpath = x\n\turl = https://evil.example/x\n");
  EXPECT_EQ(Check(),
            "patch policy: submodule: \".gitmodules\" configures submodules (.gitmodules)");
}

TEST_F(WorktreeChangesTest, FileOutsideTheAllowlistIsRefused) {
  Write("src/a.cc", "int a = 2;\n");
  Write("CMakeLists.txt", "project(x)\n");
  EXPECT_EQ(Check(PatchPolicy{{"src/**"}}),
            "patch policy: outside-allowlist: \"CMakeLists.txt\" matches none of src/**");
}

TEST_F(WorktreeChangesTest, UnknownBaseIsAnErrorNotAViolation) {
  std::string message = CheckWorktreeChanges(repo_.path(), "-nope", {}).error().message;
  EXPECT_FALSE(StartsWith(message, "patch policy:")) << message;
  EXPECT_NE(message.find("git diff"), std::string::npos) << message;
}

}  // namespace
}  // namespace arbor
