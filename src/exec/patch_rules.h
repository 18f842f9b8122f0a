// Internal to exec/: the per-path rules shared by CheckPatch and CheckWorktreeChanges
// (patch_policy.h lists them). Each returns ok or the violation's "patch policy: ..." Error.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "exec/patch_policy.h"
#include "util/result.h"

namespace arbor::patch_rules {

constexpr std::string_view kSymlinkMode = "120000";
constexpr std::string_view kGitlinkMode = "160000";

// "patch policy: <rule>: "<path>" <why>", the path C-quoted so the message stays one line.
Error Violation(std::string_view rule, std::string_view path, std::string_view why);

// bad-path, absolute-path, path-traversal, git-dir, and submodule for .gitmodules.
Status CheckPathShape(const std::string& path);

// through-symlink: a parent directory of `path` is a symlink on disk under `worktree` (lstat,
// never followed), or one of `new_symlinks` (lower-cased paths this change makes symlinks).
// symlink: `path` itself is a symlink on disk, unless `deleted` (unlinking one is harmless).
// `path` must have passed CheckPathShape.
Status CheckSymlinks(const std::string& worktree, const std::string& path, bool deleted,
                     const std::set<std::string>& new_symlinks);

// outside-allowlist.
Status CheckAllowed(const std::string& path, const PatchPolicy& policy);

std::string Lower(std::string_view s);

}  // namespace arbor::patch_rules
