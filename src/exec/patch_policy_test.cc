#include "exec/patch_policy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "exec/test_util.h"

namespace arbor {
namespace {

// The error message of CheckPatch in an empty worktree, or "ok".
std::string Check(const std::string& diff, const PatchPolicy& policy = {}) {
  test::TempDir worktree;
  Status s = CheckPatch(diff, worktree.path(), policy);
  return s.ok() ? "ok" : s.error().message;
}

std::string NewFile(const std::string& path, const std::string& mode = "100644") {
  std::string tab = path.find(' ') != std::string::npos ? "\t" : "";  // as git writes it
  return "diff --git a/" + path + " b/" + path + "\nnew file mode " + mode +
         "\n--- /dev/null\n+++ b/" + path + tab + "\n@@ -0,0 +1 @@\n+x\n";
}

TEST(ParsePatchTest, ReadsGitHeadersModesAndRenames) {
  auto files = ParsePatch(
      "free text\n"
      "diff --git a/src/a.cc b/src/a.cc\nindex 1111111..2222222 100644\n"
      "--- a/src/a.cc\n+++ b/src/a.cc\n@@ -1,2 +1,2 @@\n ctx\n-old\n+new\n"
      "diff --git a/old.txt b/new dir/new.txt\nsimilarity index 90%\n"
      "rename from old.txt\nrename to new dir/new.txt\n"
      "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
      "diff --git a/gone b/gone\ndeleted file mode 100644\n--- a/gone\n+++ /dev/null\n"
      "@@ -1 +0,0 @@\n-x\n");
  ASSERT_TRUE(files.ok()) << files.error().message;
  ASSERT_EQ(files->size(), 4u);
  EXPECT_EQ((*files)[0].old_path, "src/a.cc");
  EXPECT_EQ((*files)[0].new_mode, "100644");
  EXPECT_TRUE((*files)[1].renamed);
  EXPECT_EQ((*files)[1].old_path, "old.txt");
  EXPECT_EQ((*files)[1].new_path, "new dir/new.txt");
  EXPECT_EQ((*files)[2].old_mode, "100644");
  EXPECT_EQ((*files)[2].new_mode, "100755");
  EXPECT_TRUE((*files)[3].deleted);
  EXPECT_EQ((*files)[3].old_path, "gone");
}

TEST(ParsePatchTest, PlainDiffsWithTimestampsAndDevNull) {
  auto files = ParsePatch(
      "--- /dev/null\t2024-01-01\n+++ b/with space.txt\t2024-01-02\n@@ -0,0 +1 @@\n+x\n");
  ASSERT_TRUE(files.ok()) << files.error().message;
  ASSERT_EQ(files->size(), 1u);
  EXPECT_TRUE((*files)[0].created);
  EXPECT_EQ((*files)[0].old_path, "");
  EXPECT_EQ((*files)[0].new_path, "with space.txt");
}

TEST(ParsePatchTest, UnquotesCStyleNames) {
  auto files = ParsePatch(
      "diff --git \"a/tab\\there\" \"b/caf\\303\\251 \\\"q\\\"\"\nsimilarity index 100%\n"
      "rename from \"tab\\there\"\nrename to \"caf\\303\\251 \\\"q\\\"\"\n");
  ASSERT_TRUE(files.ok()) << files.error().message;
  EXPECT_EQ((*files)[0].old_path, "tab\there");
  EXPECT_EQ((*files)[0].new_path, "caf\xc3\xa9 \"q\"");
}

TEST(ParsePatchTest, MinusLinesInsideAHunkAreNotHeaders) {
  auto files = ParsePatch("--- a/x\n+++ b/x\n@@ -1 +1 @@\n--- a/.git/config\n+++ b/.git/config\n");
  ASSERT_TRUE(files.ok()) << files.error().message;
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ((*files)[0].new_path, "x");
}

TEST(ParsePatchTest, MalformedInputNamesTheLine) {
  auto error = [](const std::string& diff) {
    auto r = ParsePatch(diff);
    return r.ok() ? std::string("ok") : r.error().message;
  };
  EXPECT_EQ(error("text\n@@ -1 +1 @@\n-a\n+b\n"), "line 2: hunk without a file header");
  EXPECT_EQ(error("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\nbogus\n"),
            "line 5: hunk ends early (4 lines missing)");
  EXPECT_EQ(error("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n"),
            "line 4: patch ends inside a hunk (1 lines missing)");
  EXPECT_EQ(error("--- \"a/x\\q\"\n+++ b/x\n"), "line 1: bad escape in quoted name");
  EXPECT_EQ(error("diff --git a/x b/x\n--- a/y\n+++ b/x\n"),
            "line 1: the file is named both \"y\" and \"x\"");
  EXPECT_EQ(error("--- a/x\n+++ b/x\n@@ -1 +1 zz\n"), "line 3: bad hunk header");
  EXPECT_EQ(error("diff --git a/x b/x\nold mode 10x644\n"), "line 2: bad file mode");
  // Found by tests/fuzz/patch_fuzz: a quoted name's "\012" is a newline; the message quotes
  // the unquoted name, escaped so it stays one line.
  EXPECT_EQ(error("diff --git \"a/x\" \"b/\\012y\"\nnew file mode 100644\n--- /dev/null\n"
                  "+++ \"b/x\"\n@@ -0,0 +1 @@\n+x\n"),
            "line 1: the file is named both \"x\" and \"\\ny\"");
}

TEST(CheckPatchTest, NamesTheRuleAndThePath) {
  EXPECT_EQ(Check(NewFile("../../etc/x")),
            "patch policy: path-traversal: \"../../etc/x\" leaves the worktree");
  EXPECT_EQ(Check(NewFile("/etc/x")), "patch policy: absolute-path: \"/etc/x\" is absolute");
  EXPECT_EQ(Check(NewFile("sub/.Git/hooks/x")),
            "patch policy: git-dir: \"sub/.Git/hooks/x\" is inside a .git directory");
  EXPECT_EQ(Check(NewFile("a\x01"
                          "b")),
            "patch policy: bad-path: \"a\\001b\" contains a control character");
  EXPECT_EQ(Check("--- a/x\n+++ b/a\\b\n@@ -1 +1 @@\n-a\n+b\n"),
            "patch policy: bad-path: \"a\\\\b\" contains a backslash");
  EXPECT_EQ(Check(NewFile("a/./b")),
            "patch policy: bad-path: \"a/./b\" has an empty or \".\" component");
  EXPECT_EQ(Check(NewFile("x", "120000")),
            "patch policy: symlink: \"x\" would be a symlink (mode 120000)");
  EXPECT_EQ(Check(NewFile("m", "160000")),
            "patch policy: submodule: \"m\" is a submodule (gitlink, mode 160000)");
  EXPECT_EQ(Check("just words\n"), "patch policy: empty-patch: patch changes no file");
  EXPECT_EQ(Check("@@ -1 +1 @@\n"), "patch policy: malformed: line 1: hunk without a file header");
  EXPECT_EQ(Check(NewFile("src/a.cc")), "ok");
}

TEST(CheckPatchTest, GitDirAliasesOfWindowsAndMacOs) {
  EXPECT_NE(Check(NewFile(".git./config")).find("git-dir"), std::string::npos);
  EXPECT_NE(Check(NewFile(".git /config")).find("git-dir"), std::string::npos);
  EXPECT_NE(Check(NewFile(".g\xe2\x80\x8cit/config")).find("git-dir"), std::string::npos);
  EXPECT_NE(Check(NewFile("GIT~1/config")).find("git-dir"), std::string::npos);
  EXPECT_NE(Check(NewFile("sub/.GITMODULES")).find("submodule"), std::string::npos);
  EXPECT_EQ(Check(NewFile(".github/workflows/ci.yml")), "ok");
  EXPECT_EQ(Check(NewFile(".gitignore")), "ok");
}

TEST(CheckPatchTest, SymlinkCreatedEarlierInThePatchIsNotWrittenThrough) {
  std::string diff = NewFile("Link", "120000") + NewFile("link/pwned");
  EXPECT_EQ(Check(diff),
            "patch policy: through-symlink: \"link/pwned\" goes through \"link\", a symlink "
            "this patch creates");
}

TEST(CheckPatchTest, ExistingSymlinksInTheWorktreeAreNeverFollowed) {
  test::TempDir worktree;
  test::TempDir outside;
  std::filesystem::create_directories(worktree.path() + "/src");
  ASSERT_EQ(symlink(outside.path().c_str(), (worktree.path() + "/src/out").c_str()), 0);
  ASSERT_EQ(symlink("/etc/hostname", (worktree.path() + "/leaf").c_str()), 0);
  Status through = CheckPatch(NewFile("src/out/x"), worktree.path(), {});
  ASSERT_FALSE(through.ok());
  EXPECT_EQ(through.error().message,
            "patch policy: through-symlink: \"src/out/x\" goes through \"src/out\", a symlink in "
            "the worktree");
  Status leaf = CheckPatch("--- a/leaf\n+++ b/leaf\n@@ -1 +1 @@\n-a\n+b\n", worktree.path(), {});
  ASSERT_FALSE(leaf.ok());
  EXPECT_EQ(leaf.error().message, "patch policy: symlink: \"leaf\" is a symlink in the worktree");
  // Deleting a symlink unlinks it; nothing is followed.
  EXPECT_TRUE(
      CheckPatch("diff --git a/leaf b/leaf\ndeleted file mode 120000\n", worktree.path(), {}).ok());
}

TEST(CheckPatchTest, RenamesAreCheckedOnBothSides) {
  std::string rename =
      "diff --git a/src/a.cc b/.git/hooks/pre-commit\nsimilarity index 100%\n"
      "rename from src/a.cc\nrename to .git/hooks/pre-commit\n";
  EXPECT_EQ(Check(rename),
            "patch policy: git-dir: \".git/hooks/pre-commit\" is inside a .git directory");
  std::string copy =
      "diff --git a/secret b/src/x\nsimilarity index 100%\n"
      "copy from secret\ncopy to src/x\n";
  EXPECT_EQ(Check(copy, PatchPolicy{{"src/**"}}),
            "patch policy: outside-allowlist: \"secret\" matches none of src/**");
}

TEST(CheckPatchTest, AllowlistGlobs) {
  PatchPolicy policy{{"src/**", "*.cc", "docs/"}};
  EXPECT_EQ(Check(NewFile("src/deep/er/x.h"), policy), "ok");
  EXPECT_EQ(Check(NewFile("bench/x.cc"), policy), "ok");
  EXPECT_EQ(Check(NewFile("docs/a/b.md"), policy), "ok");
  EXPECT_EQ(Check(NewFile("CMakeLists.txt"), policy),
            "patch policy: outside-allowlist: \"CMakeLists.txt\" matches none of src/**, *.cc, "
            "docs/");
  EXPECT_EQ(Check(NewFile("srcx/a.h"), policy),
            "patch policy: outside-allowlist: \"srcx/a.h\" matches none of src/**, *.cc, docs/");
}

TEST(CheckPatchTest, BinaryPatchesAreRefused) {
  EXPECT_EQ(Check("diff --git a/x.png b/x.png\nindex 1..2 100644\n"
                  "Binary files a/x.png and b/x.png differ\n"),
            "patch policy: binary: \"x.png\" is a binary patch, which cannot be inspected");
}

// The error message of CheckPaths in `worktree`, or "ok".
std::string CheckFiles(const std::vector<std::string>& paths, const std::string& worktree,
                       const PatchPolicy& policy = {}) {
  Status s = CheckPaths(paths, worktree, policy);
  return s.ok() ? "ok" : s.error().message;
}

TEST(CheckPathsTest, SamePerPathRulesAsPatches) {
  test::TempDir worktree;
  EXPECT_EQ(CheckFiles({"src/a.cc", "new/dir/b.h"}, worktree.path()), "ok");
  EXPECT_EQ(CheckFiles({}, worktree.path()), "patch policy: empty-patch: no file to write");
  EXPECT_EQ(CheckFiles({"src/a.cc", ".git/config"}, worktree.path()),
            "patch policy: git-dir: \".git/config\" is inside a .git directory");
  EXPECT_EQ(CheckFiles({"../x"}, worktree.path()),
            "patch policy: path-traversal: \"../x\" leaves the worktree");
  EXPECT_EQ(CheckFiles({"/etc/passwd"}, worktree.path()),
            "patch policy: absolute-path: \"/etc/passwd\" is absolute");
  EXPECT_EQ(CheckFiles({"a//b"}, worktree.path()),
            "patch policy: bad-path: \"a//b\" has an empty or \".\" component");
  EXPECT_EQ(CheckFiles({".GITMODULES"}, worktree.path()),
            "patch policy: submodule: \".GITMODULES\" configures submodules (.gitmodules)");
  EXPECT_EQ(CheckFiles({"docs/x.md"}, worktree.path(), PatchPolicy{{"src/**"}}),
            "patch policy: outside-allowlist: \"docs/x.md\" matches none of src/**");
}

TEST(CheckPathsTest, SymlinksInTheWorktreeAreNeverFollowed) {
  test::TempDir worktree;
  test::TempDir outside;
  ASSERT_EQ(symlink(outside.path().c_str(), (worktree.path() + "/out").c_str()), 0);
  ASSERT_EQ(symlink("/etc/hostname", (worktree.path() + "/leaf").c_str()), 0);
  EXPECT_EQ(CheckFiles({"out/x"}, worktree.path()),
            "patch policy: through-symlink: \"out/x\" goes through \"out\", a symlink in the "
            "worktree");
  EXPECT_EQ(CheckFiles({"leaf"}, worktree.path()),
            "patch policy: symlink: \"leaf\" is a symlink in the worktree");
}

}  // namespace
}  // namespace arbor
