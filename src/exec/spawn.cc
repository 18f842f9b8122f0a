#include "exec/spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "exec/process_reaper.h"

namespace arbor::internal {
namespace {

// pids.max for a cgroup that only holds a command's processes: the kernel's largest pid count.
constexpr int kNoProcessLimit = 1 << 22;

std::string ErrnoText(int err) { return std::strerror(err); }

// Everything the child needs, prepared before fork(): after it only async-signal-safe calls.
struct ChildPlan {
  const char* cwd = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  int status_fd = -1;  // close-on-exec; gets {stage, errno} when a step before exec fails
  bool limit_as = false;
  rlimit as{};
  bool limit_cpu = false;
  rlimit cpu{};
  int cgroup_procs_fd = -1;  // the pids cgroup to join, or -1
  bool limit_nproc = false;
  rlimit nproc{};
  bool pin = false;  // RunSpec::cpus: the command and its children run on these CPUs only
  cpu_set_t cpus{};
  int max_fd = 1024;
  pid_t parent_pid = 0;
};

enum ChildStage {
  kStageDup,
  kStageChdir,
  kStageRlimitAs,
  kStageRlimitCpu,
  kStageExec,
  kStagePids,
  kStageAffinity
};
const char* StageText(int stage) {
  static const char* const kText[] = {"redirect stdio",        "enter the working directory",
                                      "set the memory limit",  "set the CPU limit",
                                      "execute /bin/sh",       "set the process limit",
                                      "pin to the lane's CPUs"};
  return stage >= 0 && stage <= kStageAffinity ? kText[stage] : kText[kStageExec];
}

[[noreturn]] void ChildFail(const ChildPlan& plan, int stage) {
  int msg[2] = {stage, errno};
  ssize_t ignored = write(plan.status_fd, msg, sizeof msg);
  (void)ignored;
  _exit(127);
}

[[noreturn]] void ChildExec(const ChildPlan& plan) {
  setsid();
  if (plan.cgroup_procs_fd >= 0 && !PidsCgroup::JoinFromChild(plan.cgroup_procs_fd)) {
    ChildFail(plan, kStagePids);
  }
  // If Arbor itself is killed (kill -9), the command dies with it instead of running on as an
  // orphan; its own descendants are reaped by the next Arbor's KillOrphans()/session sweep.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != plan.parent_pid) _exit(127);  // the parent died before prctl took effect
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s) {
    if (s != SIGKILL && s != SIGSTOP) sigaction(s, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (dup2(plan.stdin_fd, 0) < 0 || dup2(plan.stdout_fd, 1) < 0 || dup2(plan.stderr_fd, 2) < 0) {
    ChildFail(plan, kStageDup);
  }
  if (plan.cwd != nullptr && chdir(plan.cwd) != 0) ChildFail(plan, kStageChdir);
  if (plan.limit_as && setrlimit(RLIMIT_AS, &plan.as) != 0) ChildFail(plan, kStageRlimitAs);
  if (plan.limit_cpu && setrlimit(RLIMIT_CPU, &plan.cpu) != 0) ChildFail(plan, kStageRlimitCpu);
  if (plan.limit_nproc && setrlimit(RLIMIT_NPROC, &plan.nproc) != 0) ChildFail(plan, kStagePids);
  // Inherited across fork and exec: every process the command starts stays on these CPUs.
  if (plan.pin && sched_setaffinity(0, sizeof plan.cpus, &plan.cpus) != 0) {
    ChildFail(plan, kStageAffinity);
  }
  // Nothing of Arbor leaks into the command: every descriptor above stderr closes at exec
  // (the status pipe too, which is how the parent learns that exec succeeded).
  if (syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */) != 0) {
    for (int fd = 3; fd < plan.max_fd; ++fd) {
      if (fd != plan.status_fd) close(fd);
    }
  }
  execve("/bin/sh", plan.argv, plan.envp);
  ChildFail(plan, kStageExec);
}

Result<UniqueFd> OpenOutput(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return MakeError("cannot write " + path + ": " + ErrnoText(errno));
  return UniqueFd(fd);
}

// A close-on-exec pipe whose ends are above stderr (so dup2 in the child never clobbers one).
Status MakePipe(UniqueFd* read_end, UniqueFd* write_end) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return MakeError("pipe: " + ErrnoText(errno));
  *read_end = UniqueFd(fds[0]).AboveStdio();
  *write_end = UniqueFd(fds[1]).AboveStdio();
  return {};
}

}  // namespace

void Capture::Write(const char* data, long long size) {
  for (long long off = 0; off < size;) {
    ssize_t w = write(file.get(), data + off, static_cast<size_t>(size - off));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;  // disk full: the output is lost, the command still runs
    off += w;
  }
}

bool Capture::Pump(char* buf, size_t size) {
  ssize_t n = read(pipe.get(), buf, size);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
  if (n <= 0) {
    pipe.reset();
    return false;
  }
  long long keep = std::min<long long>(n, std::max<long long>(0, HeadLimit() - kept));
  Write(buf, keep);
  kept += keep;
  if (keep < n) {
    truncated = true;
    tail.append(buf + keep, static_cast<size_t>(n - keep));
    auto cap = static_cast<size_t>(TailLimit());
    if (tail.size() > 2 * cap + 1) {  // trim rarely: amortised O(1) per byte
      tail.erase(0, tail.size() - cap);
    }
  }
  return true;
}

void Capture::Finish() {
  if (!truncated) return;
  // The marker and the tail together fit in what the head left of the limit.
  std::string marker = "\n[arbor: output truncated here]\n";
  auto room = static_cast<size_t>(std::max<long long>(0, limit - kept));
  if (marker.size() > room) marker.clear();
  size_t cap = room - marker.size();
  if (tail.size() > cap) tail.erase(0, tail.size() - cap);
  Write(marker.data(), static_cast<long long>(marker.size()));
  Write(tail.data(), static_cast<long long>(tail.size()));
  kept += static_cast<long long>(marker.size() + tail.size());
  tail.clear();
}

void Feeder::Push() {
  ssize_t n = write(pipe.get(), data->data() + off, std::min<size_t>(data->size() - off, 65536));
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n < 0) {  // EPIPE: the command stopped reading
    pipe.reset();
    return;
  }
  off += static_cast<size_t>(n);
  if (off >= data->size()) pipe.reset();
}

Status Spawn(const RunSpec& spec, CgroupUse cgroup, Spawned* spawned) {
  EnsureSubreaper();
  if (spec.stdout_path.empty() || spec.stderr_path.empty()) {
    return MakeError("RunCommand: stdout_path and stderr_path are required");
  }
  std::vector<std::string> env_strings;
  for (const auto& [key, value] : spec.env) {
    if (key.empty() || key.find('=') != std::string::npos) {
      return MakeError("invalid environment variable name '" + key + "'");
    }
    env_strings.push_back(key + "=" + value);
  }
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string arg0 = "sh", arg1 = "-c", arg2 = spec.command;
  char* argv[] = {arg0.data(), arg1.data(), arg2.data(), nullptr};

  Capture& out = spawned->out;
  Capture& err = spawned->err;
  ARBOR_TRY_ASSIGN(auto out_file, OpenOutput(spec.stdout_path));
  ARBOR_TRY_ASSIGN(auto err_file, OpenOutput(spec.stderr_path));
  out.file = std::move(out_file);
  err.file = std::move(err_file);
  out.limit = err.limit = std::max(0LL, spec.output_limit_bytes);

  UniqueFd child_in, child_out, child_err, status_read, status_write;
  Feeder& feeder = spawned->feeder;
  feeder.data = &spec.stdin_data;
  if (spec.stdin_data.empty()) {
    child_in = UniqueFd(open("/dev/null", O_RDONLY | O_CLOEXEC)).AboveStdio();
    if (!child_in.valid()) return MakeError("cannot open /dev/null: " + ErrnoText(errno));
  } else {
    ARBOR_TRY(MakePipe(&child_in, &feeder.pipe));
  }
  ARBOR_TRY(MakePipe(&out.pipe, &child_out));
  ARBOR_TRY(MakePipe(&err.pipe, &child_err));
  ARBOR_TRY(MakePipe(&status_read, &status_write));

  ChildPlan plan;
  plan.parent_pid = getpid();
  plan.cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();
  plan.argv = argv;
  plan.envp = envp.data();
  plan.stdin_fd = child_in.get();
  plan.stdout_fd = child_out.get();
  plan.stderr_fd = child_err.get();
  plan.status_fd = status_write.get();
  if (spec.memory_limit_mb) {
    plan.limit_as = true;
    plan.as.rlim_cur = plan.as.rlim_max =
        static_cast<rlim_t>(std::max(1.0, *spec.memory_limit_mb) * 1024 * 1024);
  }
  if (spec.cpu_limit_s) {
    // SIGXCPU at the soft limit, SIGKILL a second later if the command ignores it.
    plan.limit_cpu = true;
    plan.cpu.rlim_cur = static_cast<rlim_t>(std::max(1.0, std::ceil(*spec.cpu_limit_s)));
    plan.cpu.rlim_max = plan.cpu.rlim_cur + 1;
  }
  if (!spec.cpus.empty()) {
    plan.pin = true;
    CPU_ZERO(&plan.cpus);
    for (int cpu : spec.cpus) {
      if (cpu < 0 || cpu >= CPU_SETSIZE)
        return MakeError("CPU " + std::to_string(cpu) + " out of range");
      CPU_SET(cpu, &plan.cpus);
    }
  }
  ProcessLimit& pids = spawned->limit;
  if (spec.max_processes) {
    ARBOR_TRY_ASSIGN(pids, PrepareProcessLimit(*spec.max_processes));
  } else if (cgroup == CgroupUse::kWhenAvailable) {
    // No limit to enforce: the cgroup only holds the processes (pids.max is the kernel's own
    // bound). Without a writable pids hierarchy the session, the reaper and the caller's
    // markers find them instead.
    auto created = PidsCgroup::Create(kNoProcessLimit);
    if (created.ok()) pids.cgroup = std::move(*created);
  }
  if (pids.cgroup) plan.cgroup_procs_fd = pids.cgroup->procs_fd();
  plan.limit_nproc = pids.use_rlimit;
  plan.nproc = pids.nproc;
  long open_max = sysconf(_SC_OPEN_MAX);
  plan.max_fd = static_cast<int>(std::clamp(open_max, 1024L, 1L << 20));

  pid_t pid;
  {
    auto lock = LockRegistry();
    pid = fork();
    if (pid == 0) ChildExec(plan);
    if (pid < 0) return MakeError("fork: " + ErrnoText(errno));
    RegisterRunLocked(pid);
  }
  child_in.reset();
  child_out.reset();
  child_err.reset();
  status_write.reset();

  int msg[2] = {0, 0};
  ssize_t got;
  do {
    got = read(status_read.get(), msg, sizeof msg);
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof msg)) {
    auto lock = LockRegistry();
    waitpid(pid, nullptr, 0);
    UnregisterRunLocked(pid);
    std::string what = StageText(msg[0]);
    if (msg[0] == kStageChdir) what += " " + spec.cwd;
    return MakeError("cannot start command: could not " + what + ": " + ErrnoText(msg[1]));
  }
  spawned->pid = pid;
  return {};
}

}  // namespace arbor::internal
