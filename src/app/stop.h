// `arbor stop`: stops a running campaign the way SIGTERM does (after its current step, state
// saved), waits for it to exit, and with [executor] kind = "slurm" cancels whatever of the
// campaign's jobs is still queued or running (docs/cli.md, docs/slurm.md).
#pragma once

#include <string>

#include "util/result.h"

namespace arbor {

struct StopOptions {
  std::string file = "arbor.toml";
  double timeout_s = 60;  // how long the current step may take to finish after SIGTERM
};

// The text to print when the campaign stopped. Errors: kExitState when nothing is running (no
// lock, or a stale one: no process holds it), kExitInternal when the process outlived both
// signals. When the first SIGTERM's step outlasts `timeout_s`, a second SIGTERM makes the run
// leave at once (as a second Ctrl-C does; `arbor resume` replays the unfinished step).
Result<std::string> StopCommand(const StopOptions& options);

}  // namespace arbor
