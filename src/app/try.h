// `arbor try [FILE]`: a dry run of a campaign's commands on the unmodified workspace, for a
// newcomer's first command (docs/first-hour.md).
//
// It builds, checks, benchmarks `runs` times and profiles once (when the campaign declares a
// profile command) exactly as the baseline node of `arbor run` would: the same CommandTarget,
// so the same environment, timeouts, output caps, process-group kills and secret scrubbing, in
// a fresh detached checkout of HEAD like a node's worktree. What each step did is printed as it
// ends (command, exit, duration, the visible tails of stdout and stderr), then each benchmark
// run's metric or the parser's error with the text it read, the noise across the runs, the
// profile's components and which actions target them.
//
// Promises: nothing is stored. The checkout and the run folders live in a temporary directory
// outside the workspace, removed (with git's note of the checkout) before it returns; no
// .arbor/ state, no commit, no branch, no knowledge-base entry.
#pragma once

#include <cstdio>
#include <string>

#include "util/result.h"

namespace arbor {

struct TryOptions {
  std::string file = "arbor.toml";
  int runs = 3;  // benchmark runs
};

// Prints to `out` as the steps end. Returns kExitOk when a campaign can start (the build and
// the check pass and every benchmark run gave a metric), kExitBaseline when it cannot, and
// kExitInterrupted after SIGINT/SIGTERM; an Error (kExitConfig, kExitState) when it could not
// even try.
Result<int> TryCommand(const TryOptions& options, std::FILE* out);

}  // namespace arbor
