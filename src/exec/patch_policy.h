// The patch policy: what a specialist's change may touch before Arbor applies or keeps it.
//
// Specialists (LLMs, coding-agent CLIs, the campaign file's `patch` actions) hand Arbor diffs
// to apply in a node's worktree, or edit the worktree directly. Before any `git apply`, and
// before a directly edited worktree is snapshotted, the change must pass these rules (stable
// names, docs/patch-policy.md):
//   bad-path           empty path, empty or "." component, backslash, NUL or control character
//   absolute-path      "/etc/passwd", also "a//etc/x" (absolute after the a/ b/ prefix)
//   path-traversal     a ".." component
//   git-dir            a component ".git" (any case, and its NTFS/HFS aliases)
//   submodule          .gitmodules, gitlinks (mode 160000), "Subproject commit" lines
//   symlink            a new symlink or a change to one (mode 120000), or a path that is a
//                      symlink in the worktree
//   through-symlink    a parent directory that is a symlink in the worktree (lstat, never
//                      followed) or that this patch creates as a symlink (CVE-2023-23946)
//   outside-allowlist  a path matching none of the policy's globs
//   binary             "GIT binary patch" / "Binary files ... differ": cannot be inspected
//   empty-patch        no file changed
//   malformed          the diff cannot be parsed the way git would
// Renames and copies are checked on both source and destination (CVE-2023-25652).
// A violation is an Error whose one-line message reads
//   patch policy: <rule>: "<path>" <why>
// Pure functions apart from lstat and (CheckWorktreeChanges) running git; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace arbor {

struct PatchPolicy {
  // Globs relative to the worktree root (PathGlobMatch: "src/**", "docs/*.md"); a glob
  // without '/' matches the file name at any depth ("*.cc"), one ending in '/' a whole
  // directory. Empty: every path is allowed (the other rules still apply).
  std::vector<std::string> allow;
};

// One file of a diff. Paths are as `git apply -p1` resolves them (the a/ b/ prefix removed,
// quoting undone); an absolute name stays absolute. A created file may have an empty
// old_path (plain "--- /dev/null" diffs), a deleted one an empty new_path.
struct PatchFile {
  std::string old_path, new_path;
  std::string old_mode, new_mode;  // "100644", "100755", "120000", "160000" or "" (unknown)
  bool created = false, deleted = false, renamed = false, copied = false, binary = false;
  bool subproject_lines = false;  // a hunk line "Subproject commit <sha>" (a gitlink's text)
};

// Parses a unified diff: git-style sections ("diff --git" with extended headers: old/new mode,
// new/deleted file mode, rename/copy from/to, (dis)similarity index, index, Binary files,
// GIT binary patch) and plain "--- x" / "+++ y" sections. Text before, between and after
// sections is ignored, as git does. Hunks are counted so a "--- " line inside a hunk is not a
// header. Malformed input (a hunk without a header, a short hunk, a bad escape, names that
// disagree) is an Error naming the 1-based line.
Result<std::vector<PatchFile>> ParsePatch(std::string_view diff);

// The paths a diff leaves in the worktree: created, changed, renamed-to and copied-to files,
// not deleted ones. Empty for a diff that does not parse.
std::vector<std::string> PatchTargets(std::string_view diff);

// Checks every file of `diff` against the rules above, the policy's allowlist and the
// worktree on disk (symlinks on the way to each path). Ok, or the first violation.
Status CheckPatch(std::string_view diff, const std::string& worktree, const PatchPolicy& policy);

// For whole files a specialist writes (an LLM's ```file: blocks): checks each path, relative
// to `worktree`, with the same per-path rules as CheckPatch (bad-path, absolute-path,
// path-traversal, git-dir, submodule for .gitmodules, symlink, through-symlink,
// outside-allowlist); no paths is an empty-patch. Ok, or the first violation.
Status CheckPaths(const std::vector<std::string>& paths, const std::string& worktree,
                  const PatchPolicy& policy);

// For specialists that edit the worktree directly: checks the changes of `worktree` relative
// to `base_commit` (tracked and untracked files, from `git status` and `git diff --raw`) with
// the same rules: new symlinks, gitlinks and nested repositories, .gitmodules, .git paths, a
// replaced top-level .git, files outside the allowlist. Ok, or the first violation; an Error
// without the "patch policy:" prefix when git could not be run.
Status CheckWorktreeChanges(const std::string& worktree, const std::string& base_commit,
                            const PatchPolicy& policy);

}  // namespace arbor
