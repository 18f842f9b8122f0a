#include "exec/runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "exec/cgroup.h"
#include "exec/process_reaper.h"
#include "exec/scrubbing.h"
#include "exec/spawn.h"
#include "exec/unique_fd.h"
#include "util/sigpipe.h"

namespace arbor {
namespace {

using SteadyClock = std::chrono::steady_clock;

double SecondsSince(SteadyClock::time_point t) {
  return std::chrono::duration<double>(SteadyClock::now() - t).count();
}

SteadyClock::time_point After(SteadyClock::time_point t, double seconds) {
  return t + std::chrono::duration_cast<SteadyClock::duration>(
                 std::chrono::duration<double>(std::max(0.0, seconds)));
}

// Drains output, feeds stdin and enforces the timeout until the main child has exited, then
// kills its leftovers and reaps it.
Result<RunResult> SuperviseChild(pid_t pid, const RunSpec& spec, internal::Capture* out,
                                 internal::Capture* err, internal::Feeder* feeder,
                                 PidsCgroup* cgroup) {
  const auto start = SteadyClock::now();
  const auto deadline = After(start, spec.timeout_s);
  UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  for (internal::Capture* c : {out, err}) fcntl(c->pipe.get(), F_SETFL, O_NONBLOCK);
  if (feeder->pipe.valid()) fcntl(feeder->pipe.get(), F_SETFL, O_NONBLOCK);
  std::vector<char> buf(1 << 16);

  enum class Phase { kRunning, kTerminating, kKilled } phase = Phase::kRunning;
  auto kill_at = deadline;
  bool exited = false;
  bool timed_out = false;
  double duration = 0;
  for (;;) {
    auto now = SteadyClock::now();
    auto wake = phase == Phase::kRunning ? deadline : kill_at;
    double wait_s = std::chrono::duration<double>(wake - now).count();
    // Without a pidfd, exit is noticed by polling; while terminating, so is the session.
    double cap = (!pidfd.valid() || phase != Phase::kRunning) ? 0.02 : 1.0;
    if (exited) cap = 0.02;
    int timeout_ms = static_cast<int>(std::ceil(std::clamp(wait_s, 0.0, cap) * 1000));
    pollfd fds[4];
    int n = 0;
    for (internal::Capture* c : {out, err}) fds[n++] = {c->pipe.get(), POLLIN, 0};
    fds[n++] = {feeder->pipe.get(), POLLOUT, 0};
    fds[n++] = {exited ? -1 : pidfd.get(), POLLIN, 0};
    poll(fds, n, timeout_ms);
    if (fds[0].revents != 0) out->Pump(buf.data(), buf.size());
    if (fds[1].revents != 0) err->Pump(buf.data(), buf.size());
    if (fds[2].revents & POLLOUT) {
      feeder->Push();
    } else if (fds[2].revents != 0) {
      feeder->pipe.reset();
    }
    if (!exited) {
      siginfo_t info{};
      if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == pid) {
        exited = true;
        duration = SecondsSince(start);
      }
    }
    now = SteadyClock::now();
    if (phase == Phase::kRunning) {
      if (exited) break;
      if (now >= deadline) {
        timed_out = true;
        kill(-pid, SIGTERM);
        phase = Phase::kTerminating;
        kill_at = After(now, spec.grace_s);
      }
    } else if (phase == Phase::kTerminating) {
      // The grace period is for the whole group to clean up, not only the shell.
      if (exited && !internal::SessionHasLive(pid, pid)) break;
      if (now >= kill_at) {
        kill(-pid, SIGKILL);
        phase = Phase::kKilled;
      }
    } else if (exited) {
      break;
    }
  }

  RunResult r;
  // The cgroup holds every descendant, however it detached: killing through it first also
  // stops a fork bomb that a sweep of /proc would chase.
  if (cgroup != nullptr) r.killed_leftovers = cgroup->KillAll();
  r.killed_leftovers += internal::KillLeftovers(pid, 10.0);
  // Whatever the command wrote before it ended is still in the pipes. Anything still holding
  // them open now is unkillable or another command's; do not wait for it long.
  feeder->pipe.reset();
  const auto drain_until = After(SteadyClock::now(), 2.0);
  while ((out->pipe.valid() || err->pipe.valid()) && SteadyClock::now() < drain_until) {
    pollfd fds[2] = {{out->pipe.get(), POLLIN, 0}, {err->pipe.get(), POLLIN, 0}};
    if (poll(fds, 2, 100) <= 0) break;
    if (fds[0].revents != 0) out->Pump(buf.data(), buf.size());
    if (fds[1].revents != 0) err->Pump(buf.data(), buf.size());
  }

  int wstatus = 0;
  {
    auto lock = internal::LockRegistry();
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    internal::UnregisterRunLocked(pid);
  }
  if (WIFSIGNALED(wstatus)) {
    r.status = RunResult::Status::kSignaled;
    r.signal = WTERMSIG(wstatus);
  } else {
    r.status = RunResult::Status::kExited;
    r.exit_code = WEXITSTATUS(wstatus);
  }
  if (timed_out) r.status = RunResult::Status::kTimedOut;
  r.duration_s = duration;
  out->Finish();
  err->Finish();
  r.stdout_truncated = out->truncated;
  r.stderr_truncated = err->truncated;
  return r;
}

}  // namespace

Result<RunResult> RunCommand(const RunSpec& spec) {
  SigpipeBlock sigpipe_block;  // a command that stops reading its stdin must not kill Arbor
  internal::Spawned s;
  ARBOR_TRY(internal::Spawn(spec, internal::CgroupUse::kForLimit, &s));
  Result<RunResult> result =
      SuperviseChild(s.pid, spec, &s.out, &s.err, &s.feeder, s.limit.cgroup.get());
  s.out.file.reset();
  s.err.file.reset();
  // Nothing the command started is alive now: nothing writes these files any more.
  if (spec.output == RunSpec::Output::kKept) {
    ScrubKept(spec.stdout_path);
    ScrubKept(spec.stderr_path);
    for (const std::string& path : spec.kept_paths) ScrubKept(path);
  }
  return result;
}

std::string ProcessLimitProblem() { return ProcessLimitUnsupportedReason(); }

}  // namespace arbor
