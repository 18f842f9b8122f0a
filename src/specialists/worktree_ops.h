// Worktree operations of specialists that change code from text (the LLM specialist): reset to
// a commit, apply a diff, write whole files. Every git call goes through exec/git_cli.h (hooks
// disabled, no system config, PATH/HOME only). None of them checks the patch policy: callers
// run CheckPatch / CheckPaths first. Safe to call from several threads for different
// worktrees.
#pragma once

#include <string>
#include <vector>

#include "specialists/llm_answer.h"
#include "util/result.h"

namespace arbor {

// `git reset --hard <commit>` then `git clean -fd`: tracked files as at `commit`, untracked
// files and folders removed (ignored ones are kept, like build folders). An Error names the
// git command and its first line of stderr.
Status ResetWorktree(const std::string& worktree, const std::string& commit, double timeout_s);

// `git apply -p1 --whitespace=nowarn -` with `diff` on stdin, so git applies the very text
// the policy checked. An Error holds git's own message (its stderr lines, at most 10).
Status ApplyDiff(const std::string& worktree, const std::string& diff, double timeout_s);

// Writes each file under `worktree`, creating parent folders. The file itself is opened with
// O_NOFOLLOW (a symlink is never written through; the policy already refuses symlinked
// parents); an existing file keeps its mode, a new one is 0644. Stops at the first failure.
Status WriteFiles(const std::string& worktree, const std::vector<FileBlock>& files);

}  // namespace arbor
