// CheckWorktreeChanges (patch_policy.h): the patch rules for specialists that edit a worktree
// directly. git reports what changed (tracked files against the base commit, untracked files
// not ignored); the rules are the patch rules, with modes from `git diff --raw`.
//
// git never reports paths inside a directory named .git, so writes there (hooks, config) are
// not seen here; what is checked is that the worktree's own .git entry was not replaced,
// since every later git call (snapshot, diff) would run against whatever it points to.
#include <sys/stat.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "exec/git_cli.h"
#include "exec/patch_policy.h"
#include "exec/patch_rules.h"
#include "exec/runner.h"
#include "util/escape.h"
#include "util/strings.h"

namespace arbor {
namespace {

using namespace patch_rules;  // NOLINT(google-build-using-namespace): exec/'s own rules

struct Change {
  bool gitlink = false;  // mode 160000 on either side, in the index or the worktree
  bool symlink = false;  // mode 120000 after the change
  bool deleted = false;
  bool nested_repo = false;  // "?? dir/": a directory git treats as another repository
};

// <worktree>/.git must be a directory or a one-line "gitdir: <path>" file, never a symlink.
Status CheckDotGit(const std::string& worktree) {
  struct stat st {};
  std::string path = worktree + "/.git";
  if (lstat(path.c_str(), &st) != 0) return Violation("git-dir", ".git", "was removed");
  if (S_ISLNK(st.st_mode)) return Violation("git-dir", ".git", "was replaced by a symlink");
  if (S_ISDIR(st.st_mode)) return {};
  Result<std::string> text = ReadFileBounded(path, 4096);
  std::string line = text ? Trim(*text) : "";
  if (!S_ISREG(st.st_mode) || !StartsWith(line, "gitdir: ") ||
      line.find('\n') != std::string::npos) {
    return Violation("git-dir", ".git", "is not a plain \"gitdir:\" file");
  }
  return {};
}

// Splits NUL-separated git output into records (the last one may be empty).
std::vector<std::string> Records(const std::string& out) {
  std::vector<std::string> records = Split(out, '\0');
  if (!records.empty() && records.back().empty()) records.pop_back();
  return records;
}

Result<std::string> GitOut(const std::string& args, const std::string& worktree) {
  ARBOR_TRY_ASSIGN(CapturedRun run, RunGitCli(args, worktree));
  if (!run.result.ok()) {
    std::string err = Trim(run.err);
    return MakeError("git " + args + " failed in " + worktree + ": " +
                     err.substr(0, err.find('\n')));
  }
  return std::move(run.out);
}

// Every changed path: tracked changes with their modes, then untracked files.
Result<std::map<std::string, Change>> Changes(const std::string& worktree,
                                              const std::string& base_commit) {
  std::map<std::string, Change> changes;
  // The index against the base (a gitlink added with update-index shows only here), then the
  // worktree against the base.
  for (const char* cached : {"--cached ", ""}) {
    ARBOR_TRY_ASSIGN(std::string raw,
                     GitOut(std::string("diff --raw -z --no-renames ") + cached +
                                "--end-of-options " + ShellQuote(base_commit) + " --",
                            worktree));
    std::vector<std::string> records = Records(raw);
    for (size_t i = 0; i + 1 < records.size(); i += 2) {
      // ":<old mode> <new mode> <old sha> <new sha> <status>" then the path.
      std::vector<std::string> fields = Split(records[i], ' ');
      if (fields.size() < 5 || fields[0].size() < 2) return MakeError("unexpected git diff --raw");
      Change& c = changes[records[i + 1]];
      c.deleted = StartsWith(fields[4], "D");
      c.gitlink = c.gitlink || fields[0].substr(1) == kGitlinkMode || fields[1] == kGitlinkMode;
      c.symlink = c.symlink || (!c.deleted && fields[1] == kSymlinkMode);
    }
  }
  ARBOR_TRY_ASSIGN(std::string status,
                   GitOut("status --porcelain=v1 -z --untracked-files=all", worktree));
  std::vector<std::string> records = Records(status);
  for (size_t i = 0; i < records.size(); ++i) {
    const std::string& r = records[i];
    if (r.size() < 4) return MakeError("unexpected git status output");
    std::string path = r.substr(3);
    if (r[0] == 'R' || r[0] == 'C') ++i;  // the source follows; it shows in the diff too
    if (!StartsWith(r, "??")) continue;   // tracked: the diff has it, with modes
    Change& c = changes[path];
    if (EndsWith(path, "/")) c.nested_repo = true;
  }
  return changes;
}

}  // namespace

Status CheckWorktreeChanges(const std::string& worktree, const std::string& base_commit,
                            const PatchPolicy& policy) {
  ARBOR_TRY(CheckDotGit(worktree));
  ARBOR_TRY_ASSIGN(auto changes, Changes(worktree, base_commit));
  auto bare = [](std::string path) {
    while (EndsWith(path, "/")) path.pop_back();
    return path;
  };
  for (const auto& [path, c] : changes) ARBOR_TRY(CheckPathShape(bare(path)));
  std::set<std::string> none;
  for (const auto& [path, c] : changes) {
    ARBOR_TRY(CheckSymlinks(worktree, bare(path), c.deleted, none));
  }
  for (const auto& [path, c] : changes) {
    if (c.nested_repo) return Violation("submodule", bare(path), "is a nested git repository");
    if (c.gitlink) return Violation("submodule", path, "is a submodule (gitlink, mode 160000)");
    if (c.symlink) {
      return Violation("symlink", path, "is a symlink (mode 120000)");
    }
  }
  for (const auto& [path, c] : changes) ARBOR_TRY(CheckAllowed(bare(path), policy));
  return {};
}

}  // namespace arbor
