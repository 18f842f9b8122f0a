// Runner: runs one shell command as a real process, isolated and bounded.
//
// Promises: the command runs in its own process group (setsid) under `/bin/sh -c`, with
// exactly the given environment (nothing inherited unless passed; /bin/sh itself exports PWD),
// stdin from stdin_data or /dev/null, resource limits applied to the shell and inherited,
// stdout and stderr captured to files (each truncated at output_limit_bytes; the child is
// never blocked by a full pipe). On timeout the whole group gets SIGTERM, then after
// `grace_s` SIGKILL. When Run() returns, no process started by the command is left alive —
// including children that ignored SIGTERM, left the process group, or double-forked into the
// background (the runner is a child subreaper and kills every adopted descendant).
// Kept output is scrubbed of secrets before Run() returns (RunSpec::output).
// Failures of the command are data in RunResult; only "could not even start" is an Error
// (output files not writable, cwd missing, /bin/sh not executable, a limit that cannot be set).
// With max_processes the command runs in a pids cgroup of its own, and whatever is still in it
// when the command ends is killed through it too.
// Thread-safe: concurrent calls do not kill each other's processes (an orphan that left its
// session while several commands ran, and could be any of theirs, is killed when the last of
// them ends). Every child of the Arbor process must be started here (see process_reaper.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace arbor {

struct RunSpec {
  std::string command;  // run by /bin/sh -c
  std::string cwd;      // "" = the caller's; a directory that cannot be entered is an Error
  std::map<std::string, std::string> env;  // the complete environment of the command
  double timeout_s = 600;
  double grace_s = 2;
  std::optional<double> memory_limit_mb;  // RLIMIT_AS
  std::optional<double> cpu_limit_s;      // RLIMIT_CPU
  // Processes the command may have at once (pids cgroup; RLIMIT_NPROC for a non-root user
  // without one; an Error when neither can bind: see exec/cgroup.h).
  std::optional<int> max_processes;
  long long output_limit_bytes = 16LL << 20;
  std::string stdout_path;  // required: where stdout goes
  std::string stderr_path;  // required: where stderr goes
  // The CPUs the command and every process it starts are pinned to (sched_setaffinity in the
  // child, before exec); empty: not pinned. A CPU the machine lacks fails the spawn.
  std::vector<int> cpus;
  std::string stdin_data;  // written to the command's stdin, then closed (empty: /dev/null)
  // Kept: the captured output stays where users, reports and prompts read it, so it is
  // scrubbed of secrets (the installed Scrubber, exec/scrubbing.h) once the command and every
  // process it started have ended, before RunCommand returns. Transient: the caller reads it
  // back and deletes it (git's output, which must stay exact).
  enum class Output { kKept, kTransient };
  Output output = Output::kKept;
  // Files or folders the command writes into that Arbor keeps ($ARBOR_OUT, an agent's report
  // and task folder): scrubbed with kept output.
  std::vector<std::string> kept_paths;
};

struct RunResult {
  enum class Status { kExited, kSignaled, kTimedOut };
  Status status = Status::kExited;
  int exit_code = 0;  // kExited
  int signal = 0;     // kSignaled (or the signal that ended it after a timeout)
  double duration_s = 0;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  int killed_leftovers = 0;  // descendants still alive after the command ended, killed by us
  bool ok() const { return status == Status::kExited && exit_code == 0; }
};

Result<RunResult> RunCommand(const RunSpec& spec);

// Reads at most `max_bytes` from the end of a file (for diagnoses); "" if unreadable.
std::string ReadTail(const std::string& path, size_t max_bytes = 4096);
// Reads a whole file, or an Error naming the path (unreadable, or larger than max_bytes).
Result<std::string> ReadFileBounded(const std::string& path, size_t max_bytes = 64 << 20);

// Convenience for internal tools (git): runs argv-style command text and captures stdout into
// a string. Uses RunCommand with temporary capture files in $TMPDIR (or /tmp). `stdin_data`
// is written to the command's stdin (empty: /dev/null).
struct CapturedRun {
  RunResult result;
  std::string out;
  std::string err;
};
Result<CapturedRun> RunCaptured(const std::string& command, const std::string& cwd,
                                const std::map<std::string, std::string>& env,
                                double timeout_s = 120, const std::string& stdin_data = "");

// PATH and HOME of the engine (a default PATH when it is unset or empty; no HOME when it is):
// the environment of a tool Arbor runs for itself (git, /bin/sh, a coding-agent CLI), which
// finds itself and its configuration while nothing else of Arbor's environment leaks into it.
std::map<std::string, std::string> EngineEnv();

// Kills every process adopted by this (subreaper) process that no running command can claim:
// leftovers whose command could not be told apart while several commands ran at once (see
// process_reaper.h). Call it when no command is running (idle, shutdown). Returns the count.
int KillOrphans();

// For a signal handler that ends the process at once (async-signal-safe: no lock, no
// allocation): SIGKILL to the process group of every command running now, then to every
// descendant of this process (the watchdog excepted), which includes what a command moved out
// of its group and session (a double-forked daemon, a `setsid` child): this process is a
// subreaper, so such orphans are its children until it exits (docs/reliability.md).
void KillRunningCommandsFromSignal();

// "" when RunSpec::max_processes can be enforced on this machine, else a one-line reason (for
// a campaign to refuse to start instead of running its commands without the limit).
std::string ProcessLimitProblem();

// Kills (SIGKILL) every process of this user, other than this one, whose working directory is
// `dir` or lies under it, repeating until none is left (at most a few rounds). A killed Arbor's
// commands die with it (PR_SET_PDEATHSIG), but their children — a coding agent started by the
// shell — do not and would go on writing into a worktree the next run recreates at the same
// path; the campaign's own folders are Arbor's alone (the campaign lock), so whatever still
// works in them is a leftover. Returns how many it killed. A process whose environment holds
// the entry `spare_env` ("NAME=value", when not empty) is spared: a cluster job's, which its
// scheduler ends (or the next run adopts).
int KillProcessesWithin(const std::string& dir, const std::string& spare_env = "");

// Kills (SIGKILL) every process of this user, other than this one, whose environment holds an
// entry starting with `entry_prefix` ("ARBOR_SERVE_ID=/path/runs/"), repeating until none is
// left (a few rounds). For the servers a killed Arbor left: they carry their marker however
// they detached (service.h). Returns how many it killed.
int KillProcessesWithEnv(const std::string& entry_prefix);

}  // namespace arbor
