// Spawn: how exec/ starts one command. Internal to exec/ (runner.h and service.h are the API).
//
// Spawn() opens the output files, makes the pipes, prepares the process limit, forks and execs
// `/bin/sh -c command` in a session of its own (setsid) with exactly the given environment, the
// limits applied, every descriptor above stderr closed, and PR_SET_PDEATHSIG = SIGKILL: the
// command dies with the *thread* that called Spawn (prctl(2)), so a caller that returns before
// the command ends (service.h) calls it from a thread that lives as long as the command. The main
// child is registered with the reaper (process_reaper.h) before anyone can see it; the caller
// reaps it and unregisters it (under LockRegistry). Capture and Feeder move the output to its
// files and stdin_data to the command, driven by the caller's poll loop.
#pragma once

#include <sys/types.h>

#include <string>

#include "exec/cgroup.h"
#include "exec/runner.h"
#include "exec/unique_fd.h"
#include "util/result.h"

namespace arbor::internal {

// One captured stream: pipe -> file, at most `limit` bytes kept. Beyond the limit the file
// keeps the head and the last `limit / 4` bytes (after a marker line), because metrics and
// error messages are usually printed last: a flood must not hide the result at its end.
struct Capture {
  UniqueFd pipe;
  UniqueFd file;
  long long limit = 0;
  long long kept = 0;
  bool truncated = false;
  std::string tail;  // the most recent bytes beyond the head, at most TailLimit() of them

  long long TailLimit() const { return limit / 4; }
  long long HeadLimit() const { return limit - TailLimit(); }
  void Write(const char* data, long long size);
  // Reads what is available into `buf`'s bytes; false at EOF or on error (the pipe is then
  // closed).
  bool Pump(char* buf, size_t size);
  // Appends the kept tail once the stream is over.
  void Finish();
};

// Feeds stdin_data through a non-blocking pipe, then closes it.
struct Feeder {
  UniqueFd pipe;
  const std::string* data = nullptr;
  size_t off = 0;
  void Push();
};

// Whether the command gets a pids cgroup of its own: only for RunSpec::max_processes, or also
// without a limit whenever one can be created (a server: the cgroup then finds every process it
// started, however it detached).
enum class CgroupUse { kForLimit, kWhenAvailable };

struct Spawned {
  pid_t pid = -1;  // the main child (/bin/sh), registered; the caller reaps and unregisters it
  Capture out;
  Capture err;
  Feeder feeder;       // its `data` points into the RunSpec, which must outlive it
  ProcessLimit limit;  // the cgroup (when any) holds every descendant
};

// Starts `spec` (see the header comment). Errors are "could not even start": output files not
// writable, the working directory missing, /bin/sh not executable, a limit that cannot be set.
Status Spawn(const RunSpec& spec, CgroupUse cgroup, Spawned* out);

}  // namespace arbor::internal
