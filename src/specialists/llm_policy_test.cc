// The LLM specialist and the patch policy: hostile answers end the task unapplied.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "specialists/llm_specialist.h"
#include "specialists/llm_testing.h"

namespace arbor {
namespace {

using namespace llm_testing;  // NOLINT(google-build-using-namespace): this test's helpers

TEST_F(LlmSpecialistTest, HostileChangesAreRefusedWithTheRuleAndNeverApplied) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {DiffBlock("diff --git a/.git/config b/.git/config\n--- "
                 "a/.git/config\n+++ b/.git/config\n"
                 "@@ -1 +1 @@\n-x\n+[core]\n"),
       "patch policy: git-dir: \".git/config\" is inside a .git directory"},
      {DiffBlock("--- /dev/null\n+++ b/../escape.txt\n@@ -0,0 +1 @@\n+x\n"),
       "patch policy: path-traversal: \"../escape.txt\" leaves the worktree"},
      {DiffBlock("diff --git a/link b/link\nnew file mode 120000\n--- "
                 "/dev/null\n+++ b/link\n"
                 "@@ -0,0 +1 @@\n+/etc/passwd\n"),
       "patch policy: symlink: \"link\" would be a symlink (mode 120000)"},
      {"```file:.git/hooks/pre-commit\n#!/bin/sh\n```\n",
       "patch policy: git-dir: \".git/hooks/pre-commit\" is inside a .git "
       "directory"},
  };
  for (const auto& [answer, rule] : cases) {
    chat_ = ScriptedChat();
    target_.contexts.clear();
    chat_.replies.push_back(Answer(answer));
    chat_.replies.push_back(Answer(DiffBlock(EditA("BETA"))));
    SpecialistResult r = Implement(&target_);
    EXPECT_EQ(r.status, Verdict::kFailed) << answer;
    EXPECT_EQ(r.diagnosis, rule);
    EXPECT_EQ(chat_.calls.size(), 1u) << "a policy violation is not retried";
    EXPECT_TRUE(target_.contexts.empty());
    EXPECT_EQ(A(), "alpha\nbeta\ngamma\n");
    EXPECT_EQ(Sh("git status --porcelain"), "");
    EXPECT_FALSE(fs::exists(root_ / "escape.txt"));
    EXPECT_FALSE(fs::exists(repo_ / ".git/hooks/pre-commit"));
  }
}

TEST_F(LlmSpecialistTest, FilesAreNeverWrittenThroughASymlinkedFolder) {
  fs::path outside = root_ / "outside";
  fs::create_directories(outside);
  fs::create_directory_symlink(outside, repo_ / "out");
  Sh("git add -A && git -c user.email=t@example.com -c user.name=t commit -qm "
     "link");
  base_commit_ = Trim(Sh("git rev-parse HEAD"));
  chat_.replies.push_back(Answer("```file:out/pwned\nx\n```\n"));
  SpecialistResult r = Implement(&target_);
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.diagnosis,
            "patch policy: through-symlink: \"out/pwned\" goes "
            "through \"out\", a symlink in the "
            "worktree");
  EXPECT_FALSE(fs::exists(outside / "pwned"));
}

TEST_F(LlmSpecialistTest, AllowlistComesFromTheSpecialistConfig) {
  config_.allow = {"src/**"};
  chat_.replies.push_back(Answer(DiffBlock(EditA("BETA"))));
  SpecialistResult r = Implement(&target_);
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.diagnosis, "patch policy: outside-allowlist: \"a.txt\" matches none of src/**");
}

}  // namespace
}  // namespace arbor
