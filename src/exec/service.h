// Service: a command that runs in the background — a server — and everything it starts, until
// Stop().
//
// Start() runs the command as RunCommand would (runner.h: /bin/sh -c in a session of its own,
// exactly the given environment, the limits, stdout and stderr captured to their files with the
// same head-and-tail truncation, counted over the service's whole life) and returns at once. The
// command is forked by a thread of the Service that lives until Stop(): PR_SET_PDEATHSIG follows
// the thread that forked, so a service started from a short-lived thread (a build lane) would
// die with it.
//
// The service's processes are its shell until it exits, every process in its session or
// process group, in its pids cgroup (created whenever the machine has a writable pids
// hierarchy, or for RunSpec::max_processes), whose environment holds `marker` (an entry of the
// command's environment, "NAME=value": processes inherit it, so a daemon that double-forked
// into a session of its own is found by it), every descendant of one of those, and every
// process in a session or process group one of them leads (or led, when seen before). The watchdog
// (watchdog.h) is told the marker: if Arbor dies, it kills them all.
//
// The shell is reaped only by Stop() and stays registered with the reaper meanwhile, so the
// sweeps of commands run next to the service (a benchmark's) leave its orphans alone
// (process_reaper.h: they started after it). A process of the service that ends as our child
// (a daemon is re-parented to Arbor, a child subreaper) is reaped as soon as it is seen, and how
// it ended is kept: that is how a daemon's crash is told from a clean exit.
//
// One owner; not thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "exec/runner.h"
#include "util/result.h"

namespace arbor {

namespace internal {
struct Spawned;
}

class Service {
 public:
  struct Spec {
    RunSpec run;         // timeout_s is not used: a service runs until Stop()
    std::string marker;  // "NAME=value", an entry of run.env; required
  };

  // How a process of the service ended.
  struct Ending {
    int exit_code = 0;
    int signal = 0;  // > 0: killed by this signal
    bool failed() const { return exit_code != 0 || signal != 0; }
    // 3: a crash signal (SEGV, ABRT, BUS, FPE, ILL); 2: another failure; 1: a signal that
    // stops a process on request (TERM, KILL, INT, HUP, PIPE); 0: a clean exit.
    int Weight() const;
    // "exited with code 3", "was killed by signal 11 (SIGSEGV)", "exited with code 0".
    std::string Describe() const;
  };

  static Result<std::unique_ptr<Service>> Start(Spec spec);
  ~Service();  // Stop(0)
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  pid_t pid() const { return pid_; }
  // Whether any process of the service is alive (a zombie is not).
  bool Alive();
  // The shell's ending once it has exited (a daemonising server's shell exits 0 at once while
  // the daemon serves); nullopt while it runs.
  std::optional<Ending> ShellEnding();
  // Why the service is gone, once Alive() is false: the shell's ending when it failed, else the
  // most telling ending among its processes seen to end as our children (a crash signal before
  // an exit code, either before the SIGTERM a worker gets when its master dies, first seen on a
  // tie), else the shell's.
  std::optional<Ending> CauseOfEnd();
  // Live processes of the service now (for tests and diagnoses).
  std::set<pid_t> Members();

  // Stops it: SIGTERM to every process of the service, up to `grace_s` for all of them to end,
  // then SIGKILL until none is left; then drains what they wrote (at most two seconds),
  // completes the output files and reaps the shell. Idempotent. Returns how many processes
  // needed SIGKILL.
  int Stop(double grace_s);

 private:
  explicit Service(Spec spec);
  void Pump();  // the thread: forks the command, then moves its output until told to stop
  // Every process of the service (zombies included), reaping those of them that are our
  // children and recording how they ended. Caller holds the reaper's registry lock.
  std::set<pid_t> ScanLocked(bool* any_live);
  void NoteShellLocked();
  bool LiveLocked();  // one scan's answer

  Spec spec_;
  std::unique_ptr<internal::Spawned> spawned_;
  pid_t pid_ = -1;
  std::thread thread_;
  int wake_read_ = -1;
  int wake_write_ = -1;
  bool stopped_ = false;
  std::optional<Ending> shell_;
  std::optional<Ending> cause_;  // the most telling ending of its processes seen so far
  // The live processes of the last scan (pid -> start time): a zombie is in no session, cgroup
  // or environment any more, and is known as the service's only by having been seen alive.
  std::map<pid_t, uint64_t> known_;
};

}  // namespace arbor
