// Process-count limits for one command. Internal to exec/ (RunSpec::max_processes is the API).
//
// PidsCgroup: a fresh cgroup of the kernel's pids controller with pids.max = the limit, under
// the pids hierarchy this process lives in — cgroup v1 (the controller's own mount, e.g.
// /sys/fs/cgroup/pids) or cgroup v2 (a delegated subtree with "pids" available). The
// command's child joins it before exec by writing its pid into procs_fd() (JoinFromChild is
// async-signal-safe), so every descendant counts against the limit and none can leave it.
// KillAll() SIGKILLs whatever is in it until only zombies are left: a fork bomb cannot outrun
// it, since the limit bounds the count and a killed process forks no more. The destructor
// kills what is left and removes the cgroup. A cgroup left by a killed Arbor (named after its
// pid) is removed by the next Create() in the same hierarchy.
//
// RLIMIT_NPROC is the fallback where no pids cgroup is writable, but only for a non-root user:
// it does not bind root. It counts every process of the user, so the limit set is the user's
// current count plus max_processes. As root without a pids cgroup a limit cannot be enforced,
// and ProcessLimitUnsupportedReason() says so (a campaign refuses to start rather than run
// commands unlimited).
#pragma once

#include <sys/resource.h>

#include <memory>
#include <string>
#include <vector>

#include "exec/unique_fd.h"
#include "util/result.h"

namespace arbor {

class PidsCgroup {
 public:
  static Result<std::unique_ptr<PidsCgroup>> Create(int max_processes);
  ~PidsCgroup();
  PidsCgroup(const PidsCgroup&) = delete;
  PidsCgroup& operator=(const PidsCgroup&) = delete;

  const std::string& path() const { return path_; }
  int procs_fd() const { return procs_fd_.get(); }  // close-on-exec, open for writing
  // Moves the calling process into the cgroup; async-signal-safe (for a child after fork).
  static bool JoinFromChild(int procs_fd);

  std::vector<int> Members() const;  // pids in the cgroup (zombies may be listed)
  // SIGKILLs every member until none but zombies is left (or a few seconds have passed);
  // returns how many live processes it killed.
  int KillAll();

 private:
  PidsCgroup(std::string path, UniqueFd procs_fd)
      : path_(std::move(path)), procs_fd_(std::move(procs_fd)) {}
  std::string path_;
  UniqueFd procs_fd_;
};

// "" when a process-count limit can be enforced for commands here (a writable pids cgroup, or
// RLIMIT_NPROC as a non-root user), else one line naming the problem.
std::string ProcessLimitUnsupportedReason();

// How one command's process limit is enforced: a cgroup, or an RLIMIT_NPROC for the child.
struct ProcessLimit {
  std::unique_ptr<PidsCgroup> cgroup;
  bool use_rlimit = false;
  rlimit nproc{};
};
Result<ProcessLimit> PrepareProcessLimit(int max_processes);

}  // namespace arbor
