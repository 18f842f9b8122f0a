// What the runs of a campaign's nodes printed, read back for people. Internal to app/.
//
// Each command a node runs has a folder runs/n<id>/<label>/ holding its `stdout` and `stderr`
// in full (up to [target] output_limit_mb): CommandTarget's for the build, check, benchmark and
// profile runs, the specialists' `apply` and `agent` for an implementation. A target command's
// folder also gets `exit`, one word saying how the step ended (ExitKindName: "ok", "failed",
// "bad_output", ...), written once its result is final, a metric or profile read included.
//
// One reader serves every view of that output: `arbor show`, the live log line of a failure
// (app/sinks.h), the HTML report, the dashboard's node and `arbor try`. What it returns is
// bounded (TailBounds), scrubbed of secrets (the logs were scrubbed on disk when the run ended;
// this scrubs again with the reader's values, and drops the bytes a secret cut by the start of
// the window could occupy) and made visible (VisibleTail, util/escape.h: a \r progress bar
// shows as "\r", no byte reaches a terminal that could move its cursor).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/model/ports.h"
#include "report/html.h"
#include "report/views.h"
#include "util/secrets.h"

namespace arbor {

struct TailBounds {
  size_t lines = 10;
  size_t bytes = 2048;
};

// The tail of the log at `path`: at most `bounds.lines` lines of its last `bounds.bytes` bytes,
// scrubbed and escaped, a line cut by the byte bound starting with "...". Empty when the file
// is missing or empty.
std::vector<std::string> LogTail(const std::string& path, const Scrubber& scrubber,
                                 TailBounds bounds = {});

// Writes `run_dir`/exit for `step` (best effort: a folder that cannot take it only loses the
// failure view). "" does nothing.
void RecordRunExit(const std::string& run_dir, const StepResult& step);

// The run whose failure ended a step of node `node`, by the time its `exit` (else its logs)
// was written. For a node whose `outcome` is kCrashed or kReverted: its newest run that failed
// (a run that recorded no exit counts when the node crashed: a specialist's implementation).
// For any other node (kept, the baseline): its newest run, when that one failed (a profile, a
// final check). nullopt otherwise: a node reverted by its measurement ran nothing that failed.
// The newest failed run, not the newest run: after a candidate's check fails, the Critic may
// check the incumbent again, and those runs are logged in the candidate's folder.
std::optional<FailedRun> ReadFailedRun(const std::string& runs_dir, NodeId node, Outcome outcome,
                                       const Scrubber& scrubber, TailBounds bounds = {});

// The tails of the newest runs of a node: at most `runs_per_node` runs, oldest first, each
// non-empty stream as one LogExcerpt whose text is LogTail's lines joined by newlines.
std::vector<LogExcerpt> ReadLogs(const std::string& runs_dir, NodeId node, const Scrubber& scrubber,
                                 size_t runs_per_node = 4, TailBounds bounds = {});

}  // namespace arbor
