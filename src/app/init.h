// `arbor init [FILE] [--force] [--detect [--bench COMMAND]]` (docs/cli.md).
//
// Without --detect: the commented template (config/template.h). With --detect: the campaign
// file config/detect.h derives from the repository the file is written at the top of; this
// file gathers detection's inputs (the git file listing, the build files' text, the
// libraries, commands, CPUs and transparent-huge-page mode of this machine) and writes the
// result. Either way the new file is listed in the repository's .git/info/exclude (unless git
// already tracks it), so that an uncommitted campaign file leaves the workspace clean for
// `arbor run`.
#pragma once

#include <string>

#include "util/result.h"

namespace arbor {

struct InitOptions {
  std::string file = "arbor.toml";
  bool force = false;   // overwrite an existing file
  bool detect = false;  // --detect
  std::string bench;    // --bench (with --detect)
};

// The text to print on stdout: what was written and the next steps. Errors carry their exit
// code: kExitUsage for an existing file without --force or --bench without --detect,
// kExitState when the folder is not the top of a git repository or detection finds no build
// system or benchmark.
Result<std::string> InitCommand(const InitOptions& options);

}  // namespace arbor
