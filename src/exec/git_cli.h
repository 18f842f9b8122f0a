// How Arbor runs the git CLI: the same options and environment for every call.
//
// Promises: user hooks never run (core.hooksPath=/dev/null), no signing prompts, no fsmonitor
// daemons, no system config, no terminal prompts, C locale; git sees only PATH and HOME of the
// engine. GitWorkspace and the patch policy both go through RunGitCli so they cannot drift.
#pragma once

#include <map>
#include <string>

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

}  // namespace arbor
