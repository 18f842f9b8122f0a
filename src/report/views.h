// Views of a campaign: status, tree (JSON, ASCII, DOT) and one node in detail.
//
// Pure functions over model values: no I/O, no store, no clock. The caller (app/) loads the
// nodes, samples, profile and events and prints what these return. The JSON shapes are a
// contract documented in docs/cli.md ("Machine-readable output"): fields may be added, never
// renamed. Text views are for people and may change freely.
//
// Every function accepts nodes in any order and tolerates an incomplete tree (a node whose
// parent is missing is drawn as an extra root). Work is linear in the number of nodes (plus
// sorting), and nothing recurses, so campaigns with 100k nodes or 100k-deep chains render.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/model.h"
#include "core/model/spec.h"

namespace arbor {

// A job a cluster executor has queued or running for the campaign (Slurm: `squeue`).
struct ExecutorJob {
  std::string id;
  std::string state;      // "PENDING", "RUNNING", ...
  std::string comment;    // which node and run: "n12/bench-3"
  std::string elapsed;    // as the executor prints it ("1:02")
  std::string nodes;      // where it runs (empty while pending)
  std::string partition;  // which partition ([executor] or a role's table: docs/slurm.md)
};

// What the status views need: the stored campaign facts plus the parts of the spec that give
// them meaning.
struct CampaignView {
  CampaignMeta meta;
  std::vector<Node> nodes;
  std::string metric_name;
  Goal goal = Goal::kMax;
  std::optional<double> target;
  int max_nodes = 0;
  double max_time_s = 0;
  // Cluster executors only; nullopt for a local campaign (the views then show no jobs).
  std::optional<std::vector<ExecutorJob>> jobs;
  std::string jobs_error;  // the executor could not be asked: the jobs are unknown
};

// Why a campaign that finished without evaluating a single change did so, and the next step
// to take, in one line ("" while it is running, stopped, or evaluated something). `arbor run`
// prints it and exits kExitNothingEvaluated; `arbor status` shows it (docs/cli.md).
std::string NothingEvaluatedHint(const CampaignView& view);

// `arbor status --json`. "best" is the incumbent (the kept chain from the root, latest kept
// child at each level, as Tree::Incumbent); it is the root itself while nothing is kept.
// Besides the documented fields, "nodes" also counts "pending" so the counts add up to total.
// With a cluster executor, "jobs" lists its queued/running jobs (null when they are unknown,
// with "jobs_error" saying why).
nlohmann::json StatusJson(const CampaignView& view);
// A compact human summary: state, counts, baseline -> best with speedup, elapsed, kept path.
std::string StatusText(const CampaignView& view);

// `arbor tree --format json`: {"nodes": [...]} in id order. "score" is null for the root and
// for nodes never dispatched (seq 0).
nlohmann::json TreeJson(const std::vector<Node>& nodes);

struct AsciiOptions {
  bool color = false;  // ANSI colours on the outcome words
};
// An indented tree, one line per node, children by dispatch order (undispatched last, by id).
// Nodes on the incumbent path carry a '*' before their id. Indentation is capped for very
// deep trees (the deepest columns are kept, a "···" marks the cut) so output stays linear.
std::string TreeAscii(const std::vector<Node>& nodes, const AsciiOptions& options = {});
struct DotOptions {
  // For the HTML report: each box links to "#node-<id>", pruned and skipped nodes are drawn
  // dashed, and the tree runs left to right (a wide search stays readable when it scrolls).
  bool for_report = false;
};
// Graphviz DOT: one box per node filled by outcome, edges parent -> child.
std::string TreeDot(const std::vector<Node>& nodes, const DotOptions& options = {});

// The run whose failure ended a node's step: a build, check, benchmark or profile that failed
// or printed no metric, or a specialist's implementation. Where its full logs are, and the last
// lines of each stream as the reader (app/run_logs.h) made them: bounded, scrubbed of secrets,
// control characters escaped (VisibleTail, util/escape.h), so a \r progress bar shows as "\r".
struct FailedRun {
  std::string label;  // the run's folder: "build", "check", "bench-0", "profile", "apply", ...
  std::string dir;    // runs/n<id>/<label>, holding `stdout` and `stderr` in full
  std::string exit;   // how it ended (ExitKindName: "failed", "bad_output", ...); "" unknown
  std::vector<std::string> out;  // the tail of stdout, one escaped line each
  std::vector<std::string> err;  // the tail of stderr
};
// The tail of one stream as `arbor show`, the live log and `arbor try` print it, each line
// after `indent`: "TITLE (last N lines):" then "  | LINE" per line, or "TITLE: (empty)".
std::string TailText(std::string_view title, const std::vector<std::string>& lines,
                     std::string_view indent);
// The block `arbor show` and the live log print, each line after `indent`:
//   failed run  bench-0 (bad_output)
//     logs      DIR/stdout, DIR/stderr
//     stdout (last 2 lines):
//       | ...
std::string FailedRunText(const FailedRun& run, std::string_view indent = "");
// {"label", "exit" (null when unknown), "dir", "stdout": {"path", "tail": [lines]},
//  "stderr": {"path", "tail"}}: `failed_run` in `arbor show --json`, the dashboard's node and
// the failure's event line of `--events`/`--json`.
nlohmann::json FailedRunJson(const FailedRun& run);

// `arbor show NODE`: everything about one node. The caller passes the node's own samples,
// its profile (if one was taken) and its events; they are listed in a stable order (samples
// by arm then rep, profile components by share descending, events by time then id).
// `failed`, when the node's last run failed, is shown after the diagnosis (`failed_run` in
// JSON, null otherwise).
std::string ShowText(const Node& node, const std::vector<Sample>& samples,
                     const std::optional<Profile>& profile, const std::vector<Event>& events,
                     const FailedRun* failed = nullptr);
nlohmann::json ShowJson(const Node& node, const std::vector<Sample>& samples,
                        const std::optional<Profile>& profile, const std::vector<Event>& events,
                        const FailedRun* failed = nullptr);

// Where one run of a node went, read from its "job" event (a cluster executor's run;
// docs/store-schema.md). `host` is "" for events written before hosts were recorded.
struct JobPlace {
  std::string label;  // "build", "bench-3", "confirm-cand-1", ...
  std::string executor;
  std::string job;
  std::string host;
};
// The "job" events among `events`, in their order; other events are skipped.
std::vector<JobPlace> JobPlaces(const std::vector<Event>& events);
// One line per host, in order of first use: "cn7: 9 runs in Slurm job(s) 41, 42".
std::vector<std::string> PlacesByHost(const std::vector<JobPlace>& places);

}  // namespace arbor
