// A small synthetic campaign for the command-agent and parallel tests: a target whose
// "measurement" is computed rather than timed, and a shell script that plays a coding-agent CLI
// behind `[specialists.kernel] backend = "command"` (docs/specialists.md).
//
// The target (bench.c) prints 1000 x SPEED (speed.h) x TUNE (tune.h) x $BOOST x $EXTRA with a
// 1% deterministic noise term, so every win is a fixed factor and the campaign's answer does not
// depend on how busy the machine is. `./bench --check` fails when $WRONG is set.
//
// The agent (aux/agent.sh) copies its stdin to aux/seen-<node>.md, sleeps, acts on the marker in
// the prompt's "Goal:" line and records its start and end times in aux/times-<node>-<pid>:
//   MARK=double-speed  edits speed.h (x2) and reports confidence, findings and a proposal of
//                      the env action `sys.extra` (EXTRA=1.3);
//   MARK=double-tune   edits tune.h (x2);
//   MARK=exit3         prints a line on stderr and exits 3;
//   MARK=symlink       creates a symlink to /etc in its worktree;
//   MARK=noop          changes nothing.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness.h"

namespace arbor::integration {

// What the double-speed agent reports.
inline constexpr char kAgentFinding[] = "speed.h's SPEED constant scales the whole run";
inline constexpr char kProposedAction[] = "sys.extra";

// `[[action]]` blocks for the campaign file.
std::string AgentAction(const std::string& id, const std::string& mark, double speedup);
std::string EnvAction(const std::string& id, const std::string& env, double speedup);

// Writes bench.c, speed.h, tune.h and arbor.toml (campaign `name`, `parallel` specialists in
// flight, `actions` appended) into the repository and commits; writes aux/agent.sh, whose
// every run sleeps `agent_sleep_s` before acting.
void WriteAgentCampaign(TempWorkspace& ws, const std::string& name, int parallel,
                        double agent_sleep_s, const std::string& actions);

// One agent run, from aux/times-*: [start, end] in seconds.
struct AgentRun {
  std::string node;
  double start = 0;
  double end = 0;
};
std::vector<AgentRun> AgentRuns(const TempWorkspace& ws);
// Two runs whose intervals intersect, if any.
bool AnyOverlap(const std::vector<AgentRun>& runs);
// How many agent runs have started (aux/seen-* files).
int AgentStarts(const TempWorkspace& ws);

// Number of entries `git worktree list --porcelain` prints (1: the main checkout only).
int WorktreeCount(const TempWorkspace& ws);

}  // namespace arbor::integration
