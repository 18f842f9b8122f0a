// Process reaper: finds and kills what a command left behind. Internal to exec/.
//
// The Arbor process is a child subreaper, so every orphan of a command (a double-forked
// daemon, a `setsid` child whose parent exited) is re-parented to us instead of to init. A
// process-wide registry of the main children of the commands currently running lets one
// command's sweep tell its own leftovers from those of a concurrent command:
//   * a process whose session (or process group) is the command's session is the command's
//     (RunCommand puts each main child in a session of its own, sid == its pid);
//   * a process whose ancestor chain reaches us through an adopted orphan that left every
//     live session is attributed by start time: it belongs to the runs that started before
//     it. It is killed when that is only this run (or no live run at all); when it could be
//     another live run's too, it is left for the last of them.
// Every child of the Arbor process must be started through RunCommand (or be registered
// here), or a sweep would take it for an adopted orphan. process_reaper.cc also holds
// runner.h's public sweeps, KillOrphans and KillProcessesWithin.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

namespace arbor::internal {

// One row of /proc/PID/stat.
struct ProcInfo {
  pid_t pid = 0;
  pid_t ppid = 0;
  pid_t pgid = 0;
  pid_t sid = 0;
  char state = '?';          // 'Z' for zombies
  uint64_t start_ticks = 0;  // start time in clock ticks since boot
};

// Every process visible in /proc (processes we may not read are skipped).
std::vector<ProcInfo> ScanProcesses();

// Whether /proc/PID/environ (the environment the process was started with) holds `entry`
// ("NAME=value") exactly (kExact), or an entry that starts with it (kPrefix). False when it
// cannot be read (gone, a zombie, another user's).
enum class EnvMatch { kExact, kPrefix };
bool EnvironHolds(pid_t pid, std::string_view entry, EnvMatch match);

// Makes this process a child subreaper, once.
void EnsureSubreaper();

// The registry lock. Hold it across fork() and RegisterRunLocked() so a fresh child is never
// seen unregistered by a concurrent sweep.
std::unique_lock<std::mutex> LockRegistry();
void RegisterRunLocked(pid_t main_pid);
void UnregisterRunLocked(pid_t main_pid);

// True while a process (not a zombie) other than `except` lives in session `sid`.
bool SessionHasLive(pid_t sid, pid_t except);

// Kills (SIGKILL) every leftover of the run whose main child is `main_pid` (already exited,
// not yet reaped: the caller reaps it) and reaps those re-parented to us, repeating until none
// is left or `budget_s` has passed. Returns how many live processes it killed.
int KillLeftovers(pid_t main_pid, double budget_s);

// Kills every adopted orphan no running command can claim; see runner.h KillOrphans().
int KillUnclaimedOrphans(double budget_s);

// For a signal handler just before the process exits (async-signal-safe, signal_sweep.cc):
// SIGKILLs every descendant of this process but the watchdog, repeating while it finds any
// (at most five rounds). Reaches what left its command's process group and session: a
// double-forked daemon is this subreaper's adopted child until this process is gone.
void KillDescendantsFromSignal();

}  // namespace arbor::internal
