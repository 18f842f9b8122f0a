#include "app/stop.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>

#include "app/campaign.h"
#include "app/paths.h"
#include "app/slurm.h"
#include "arbor/exit_codes.h"
#include "exec/runner.h"
#include "util/strings.h"

namespace arbor {
namespace {

// Whether some process holds the campaign's lock (CampaignLock in campaign.cc keeps an
// exclusive flock for the whole run; the kernel drops it when the process exits, even a
// kill -9 or a zombie not yet reaped).
bool LockHeld(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(fd);
  return held;
}

// Waits until the lock is free or `seconds` pass; whether it was freed.
bool WaitForRelease(const std::string& path, double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (LockHeld(path)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

// ", cancelled N Slurm job(s) of the campaign" when there were any; "" otherwise.
std::string CancelLeftovers(const std::string& job_name, std::string* error) {
  if (job_name.empty()) return "";
  int n = CancelSlurmJobs(job_name, SlurmClientEnv());
  if (n < 0) {
    *error =
        "squeue/scancel failed: the campaign's Slurm jobs (" + job_name + ") may still be queued";
    return "";
  }
  return n > 0 ? "; cancelled " + std::to_string(n) + " Slurm job(s) named " + job_name : "";
}

}  // namespace

Result<std::string> StopCommand(const StopOptions& options) {
  ARBOR_TRY_ASSIGN(auto spec, LoadSpec(options.file));
  CampaignPaths paths = PathsFor(spec);
  const bool slurm = spec.executor.kind == ExecutorSpec::Kind::kSlurm;
  const std::string job_name = slurm ? SlurmJobName(spec.name, paths.state_dir) : "";
  std::string slurm_error;
  const std::string who = "campaign '" + spec.name + "'";
  if (access(paths.lock.c_str(), F_OK) != 0 || !LockHeld(paths.lock)) {
    // Nothing runs; a killed run may still have left jobs in Slurm.
    std::string why = access(paths.lock.c_str(), F_OK) != 0
                          ? "it has never run in " + spec.workspace
                          : "stale lock " + paths.lock + ": no process holds it";
    std::string cancelled = CancelLeftovers(job_name, &slurm_error);
    return MakeError(who + " is not running (" + why + ")" + cancelled +
                         (slurm_error.empty() ? "" : "; " + slurm_error),
                     kExitState);
  }
  auto lock_text = ReadFileBounded(paths.lock, 64);
  std::string pid_text(lock_text.ok() ? Trim(*lock_text) : "");
  long pid = 0;
  try {
    pid = std::stol(pid_text);
  } catch (...) {
    pid = 0;
  }
  if (pid <= 1 || std::to_string(pid) != pid_text) {
    return MakeError(
        who + " is running but its lock " + paths.lock + " names no pid ('" + pid_text + "')",
        kExitState);
  }
  if (kill(static_cast<pid_t>(pid), SIGTERM) != 0) {
    return MakeError("cannot signal pid " + pid_text + " of " + who + ": " + std::strerror(errno),
                     kExitState);
  }
  std::string text;
  if (WaitForRelease(paths.lock, options.timeout_s)) {
    text = "stopped " + who + " (pid " + pid_text + ") after its current step";
  } else {
    // The step outlasted the bound: a second signal makes the run leave at once (it cancels
    // its Slurm jobs itself); resume replays the unfinished step.
    kill(static_cast<pid_t>(pid), SIGTERM);
    if (!WaitForRelease(paths.lock, 30)) {
      std::string cancelled = CancelLeftovers(job_name, &slurm_error);
      return MakeError(who + " (pid " + pid_text + ") did not exit after two SIGTERMs" + cancelled,
                       kExitInternal);
    }
    text = "stopped " + who + " (pid " + pid_text + ") at once: its current step outlasted " +
           FormatDouble(options.timeout_s) + "s; `arbor resume` replays it";
  }
  text += CancelLeftovers(job_name, &slurm_error);
  if (!slurm_error.empty()) return MakeError(text + "; but " + slurm_error, kExitInternal);
  return text + "\n";
}

}  // namespace arbor
