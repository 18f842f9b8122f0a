// How Arbor runs the git CLI: the same options and environment for every call.
//
// Promises: user hooks never run (core.hooksPath=/dev/null), no signing prompts, no fsmonitor
// daemons, no system config, no terminal prompts, C locale; git sees only PATH and HOME of the
// engine. GitWorkspace and the patch policy both go through RunGitCli so they cannot drift.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "exec/runner.h"
#include "util/result.h"

namespace arbor {

// Prefix of every git command line: "git -c core.hooksPath=/dev/null ... " (ends in a space).
extern const char* const kGitCommand;

// The complete environment of a git call.
std::map<std::string, std::string> GitEnv();

// Runs `<kGitCommand><args>` in `cwd`; an Error only when git could not run at all (not found
// on PATH, or the process could not start). A non-zero exit is data in the CapturedRun.
Result<CapturedRun> RunGitCli(const std::string& args, const std::string& cwd,
                              double timeout_s = 600);

// Stages with `git add -f` those of `paths` (relative to the worktree `worktree`) that exist,
// are not tracked, and that the repository ignores (.gitignore, info/exclude,
// core.excludesFile): a change that writes them means them, yet `git add -A` would leave them
// out, and the kept commit would not be the state that was measured. Returns the paths it
// staged, sorted; an Error when git failed.
Result<std::vector<std::string>> StageIgnoredPaths(const std::string& worktree,
                                                   const std::vector<std::string>& paths);

// One line for a node's summary naming files staged by StageIgnoredPaths ("" for none).
std::string IgnoredPathsWarning(const std::vector<std::string>& staged);

}  // namespace arbor
