// Watchdog: what Arbor's commands started dies with Arbor, even when Arbor is killed with
// SIGKILL or crashes (it cleans up after itself otherwise: runner.h, KillOrphans).
//
// A command's shell has PR_SET_PDEATHSIG = SIGKILL, so it dies with Arbor; its children (a
// benchmark's server and client, a build's compilers) would be re-parented to init and run
// on. The watchdog is a small process of its own (this binary, re-executed as `arbor
// __watchdog`, so that nothing of a multi-threaded parent is used after fork), started once
// by a campaign run. It holds one end of a socket pair whose other end only Arbor holds;
// Arbor tells it the session of every command it starts and ends ("+pid\n", "-pid\n": the
// runner puts each command in a session of its own, sid == its shell's pid). When Arbor's end
// closes — however Arbor ended — the watchdog SIGKILLs every process still in one of those
// sessions or process groups, every process whose environment holds one of the markers Arbor
// told it of ("=NAME=value\n", "~NAME=value\n": a server's, service.h), and every descendant
// of one, repeating for up to two seconds, then exits. It is in a session of its own (a terminal's
// Ctrl-C does not reach it) with /dev/null as stdin, stdout and stderr (it never holds Arbor's
// output pipes open).
//
// Limit: a process that left its command's session (setsid, a double-forked daemon) and
// whose parent had already exited was Arbor's adopted orphan; unless it carries a marker (a
// server's processes do), once Arbor is gone nothing ties it to the campaign, and the next
// `arbor run`/`resume` kills it (KillProcessesWithin its worktrees), as before. A pids cgroup
// (`[target] max_processes`) holds every descendant, but one left by a killed Arbor is only emptied
// by the next run too.
#pragma once

#include <sys/types.h>

#include <string>

#include "util/result.h"

namespace arbor {

// Starts the watchdog once per process (later calls do nothing). An Error when it cannot
// start; a campaign goes on without it (it warns).
Status StartWatchdog();

// The watchdog process's main: reads registrations from `fd` until it closes, then kills.
// Returns the exit status. `arbor __watchdog` calls it with fd 3.
int WatchdogMain(int fd);

namespace internal {

// Async-signal-safe, lock-free: tell the watchdog (when one runs) of a command's session.
void WatchdogTrack(pid_t sid);
void WatchdogForget(pid_t sid);
// Tell the watchdog of an environment entry ("NAME=value") every process of a service carries
// (service.h): if Arbor dies, every process whose environment holds it is killed too, however
// it detached from its command's session.
void WatchdogTrackMarker(const std::string& entry);
void WatchdogForgetMarker(const std::string& entry);
// The watchdog's pid, 0 when none runs: the reaper's sweeps must not take it for an orphan.
pid_t WatchdogPid();

}  // namespace internal
}  // namespace arbor
