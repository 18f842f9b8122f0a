// The hostile and benign patch corpora (tests/data/{hostile,benign}_patches): every hostile
// patch is refused with the rule its first line names, every benign one is accepted and
// applies with `git apply --check`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "exec/git_cli.h"
#include "exec/patch_policy.h"
#include "exec/runner.h"
#include "exec/test_util.h"
#include "util/strings.h"

namespace arbor {
namespace {

namespace fs = std::filesystem;

const fs::path kData = fs::path(ARBOR_SOURCE_DIR) / "tests" / "data";

// The corpus files of `dir`, sorted by name.
std::vector<fs::path> Patches(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".patch") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// "# expect: <rule>" on the first line.
std::string ExpectedRule(const std::string& text) {
  std::string first = text.substr(0, text.find('\n'));
  return StartsWith(first, "# expect: ") ? Trim(first.substr(10)) : "";
}

TEST(PatchCorpusTest, EveryHostilePatchIsRefusedWithItsRule) {
  test::TempDir worktree;
  test::TempDir outside;
  ASSERT_EQ(symlink(outside.path().c_str(), (worktree.path() + "/linkdir").c_str()), 0);
  std::vector<fs::path> patches = Patches(kData / "hostile_patches");
  ASSERT_GE(patches.size(), 20u);
  std::map<std::string, int> per_rule;
  for (const fs::path& p : patches) {
    std::string text = test::Slurp(p.string());
    std::string rule = ExpectedRule(text);
    ASSERT_FALSE(rule.empty()) << p.filename() << " has no '# expect: <rule>' first line";
    Status s = CheckPatch(text, worktree.path(), PatchPolicy{});
    ASSERT_FALSE(s.ok()) << p.filename() << " was accepted";
    EXPECT_TRUE(StartsWith(s.error().message, "patch policy: " + rule + ": "))
        << p.filename() << ": expected " << rule << ", got: " << s.error().message;
    EXPECT_EQ(s.error().message.find('\n'), std::string::npos) << s.error().message;
    ++per_rule[rule];
  }
  for (const char* rule : {"absolute-path", "path-traversal", "git-dir", "submodule", "symlink",
                           "through-symlink", "binary", "bad-path", "empty-patch", "malformed"}) {
    EXPECT_GT(per_rule[rule], 0) << "no hostile patch for " << rule;
  }
  EXPECT_TRUE(fs::is_empty(outside.path()));
}

TEST(PatchCorpusTest, ReadmeListsEveryHostilePatchWithItsRule) {
  std::string readme = test::Slurp((kData / "hostile_patches" / "README.md").string());
  for (const fs::path& p : Patches(kData / "hostile_patches")) {
    std::string rule = ExpectedRule(test::Slurp(p.string()));
    std::string row = "| `" + p.filename().string() + "` |";
    size_t at = readme.find(row);
    ASSERT_NE(at, std::string::npos) << p.filename() << " is missing from README.md";
    std::string line = readme.substr(at, readme.find('\n', at) - at);
    EXPECT_TRUE(EndsWith(line, "| `" + rule + "` |")) << line;
  }
}

// Runs a shell command in `cwd`; fails the test when it does not succeed.
void Sh(const std::string& command, const std::string& cwd, const std::string& in = "") {
  Result<CapturedRun> r = RunCaptured(command, cwd, GitEnv(), 60, in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->result.ok()) << command << ": " << r->err;
}

TEST(PatchCorpusTest, EveryBenignPatchIsAcceptedAndApplies) {
  test::TempDir repo;
  fs::copy(kData / "benign_patches" / "base", repo.path(), fs::copy_options::recursive);
  Sh("git init -q && git add -A && git -c user.name=t -c user.email=t@example.com commit -qm base",
     repo.path());
  std::vector<fs::path> patches = Patches(kData / "benign_patches");
  ASSERT_GE(patches.size(), 5u);
  PatchPolicy everything_in_the_tree{{"src/**", "docs/", "scripts/*.sh", "*.md", "*.txt"}};
  for (const fs::path& p : patches) {
    SCOPED_TRACE(p.filename().string());
    std::string text = test::Slurp(p.string());
    Status s = CheckPatch(text, repo.path(), PatchPolicy{});
    EXPECT_TRUE(s.ok()) << s.error().message;
    Status allowed = CheckPatch(text, repo.path(), everything_in_the_tree);
    EXPECT_TRUE(allowed.ok()) << allowed.error().message;
    Sh(std::string(kGitCommand) + "apply -p1 --check -", repo.path(), text);
  }
}

}  // namespace
}  // namespace arbor
