// The composition root: wires the real adapters (SQLite store, git workspace, command target,
// builtin specialist) into core's Orchestrator and runs, resumes or inspects a campaign.
// Every function returns the exit code to use, or an Error whose `code` is one of
// include/arbor/exit_codes.h.
#pragma once

#include <optional>
#include <string>

#include "core/model/spec.h"
#include "util/result.h"

namespace arbor {

struct RunOptions {
  std::string file = "arbor.toml";
  bool resume_only = false;  // `arbor resume`: there must be a campaign to continue
  // `arbor run --restart`: archive the campaign's state (app/archive.h) and start it over.
  bool restart = false;
  std::optional<int> max_nodes;
  std::optional<double> max_time_s;
  bool json = false;        // JSON lines on stdout
  std::string events_file;  // JSON lines appended here
  bool quiet = false;       // no status line / log lines on stderr
  bool no_critic = false;   // ablation only: median comparison, no A/B, no confirmation
  bool no_kb = false;       // neither read nor write the knowledge base (as [kb] enabled=false)
};

// Loads the campaign file; errors carry kExitConfig.
Result<CampaignSpec> LoadSpec(const std::string& file);
// An Error (kExitConfig) when [target] max_processes is set and cannot be enforced here.
Status CheckProcessLimit(const CampaignSpec& spec);
// Sends SIGINT and SIGTERM to `handler` from now on, and starts the watchdog (exec/watchdog.h):
// what the commands of this process start dies with it, a kill -9 included.
void HandleStopSignals(void (*handler)(int));
Result<int> RunCampaign(const RunOptions& options);
// `arbor __watchdog` (not a user's verb): the process a campaign run starts so that what its
// commands started dies with it, even after a kill -9 (exec/watchdog.h). Reads fd 3.
int WatchdogProcess();

enum class TreeFormat { kAscii, kJson, kDot };
struct ViewOptions {
  std::string file = "arbor.toml";
  bool json = false;
  TreeFormat format = TreeFormat::kAscii;
  bool color = false;
  bool prompt = false;  // show: the node's recorded prompts instead of its details
};
// Each returns the text to print on stdout.
Result<std::string> StatusCommand(const ViewOptions& options);
Result<std::string> TreeCommand(const ViewOptions& options);
// The one-line reason a finished campaign evaluated nothing, with the next step ("" otherwise).
Result<std::string> NothingEvaluated(const std::string& file);
Result<std::string> ShowCommand(const ViewOptions& options, long long node);

}  // namespace arbor
