#include "exec/service.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <unordered_map>
#include <vector>

#include "exec/process_reaper.h"
#include "exec/spawn.h"
#include "exec/watchdog.h"

namespace arbor {
namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point After(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(std::max(0.0, seconds)));
}

void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

Service::Ending FromWaitStatus(int wstatus) {
  Service::Ending e;
  if (WIFSIGNALED(wstatus)) {
    e.signal = WTERMSIG(wstatus);
  } else {
    e.exit_code = WEXITSTATUS(wstatus);
  }
  return e;
}

}  // namespace

int Service::Ending::Weight() const {
  switch (signal) {
    case 0:
      return exit_code != 0 ? 2 : 0;
    case SIGSEGV:
    case SIGABRT:
    case SIGBUS:
    case SIGFPE:
    case SIGILL:
      return 3;
    case SIGTERM:
    case SIGKILL:
    case SIGINT:
    case SIGHUP:
    case SIGPIPE:
      return 1;
    default:
      return 2;
  }
}

std::string Service::Ending::Describe() const {
  if (signal > 0) {
    const char* name = sigabbrev_np(signal);
    return "was killed by signal " + std::to_string(signal) +
           (name != nullptr ? std::string(" (SIG") + name + ")" : "");
  }
  return "exited with code " + std::to_string(exit_code);
}

Service::Service(Spec spec)
    : spec_(std::move(spec)), spawned_(std::make_unique<internal::Spawned>()) {}

Result<std::unique_ptr<Service>> Service::Start(Spec spec) {
  const size_t eq = spec.marker.find('=');
  if (eq == std::string::npos || eq == 0 || spec.run.env.count(spec.marker.substr(0, eq)) == 0 ||
      spec.run.env.at(spec.marker.substr(0, eq)) != spec.marker.substr(eq + 1)) {
    return MakeError("Service: the marker '" + spec.marker +
                     "' must be an entry of its environment");
  }
  std::unique_ptr<Service> service(new Service(std::move(spec)));
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return MakeError(std::string("pipe: ") + std::strerror(errno));
  service->wake_read_ = fds[0];
  service->wake_write_ = fds[1];
  // Shared: the thread may still be inside set_value when Start has its answer.
  auto started = std::make_shared<std::promise<Status>>();
  std::future<Status> answer = started->get_future();
  Service* self = service.get();
  service->thread_ = std::thread([self, started] {
    Status s =
        internal::Spawn(self->spec_.run, internal::CgroupUse::kWhenAvailable, self->spawned_.get());
    const bool ok = s.ok();
    started->set_value(std::move(s));
    if (ok) self->Pump();
  });
  Status s = answer.get();
  if (!s.ok()) {
    service->thread_.join();
    service->stopped_ = true;
    return s.error();
  }
  service->pid_ = service->spawned_->pid;
  internal::WatchdogTrackMarker(service->spec_.marker);
  return service;
}

Service::~Service() {
  if (!stopped_) Stop(0);
  if (wake_read_ >= 0) close(wake_read_);
  if (wake_write_ >= 0) close(wake_write_);
}

void Service::Pump() {
  internal::Capture& out = spawned_->out;
  internal::Capture& err = spawned_->err;
  for (internal::Capture* c : {&out, &err}) fcntl(c->pipe.get(), F_SETFL, O_NONBLOCK);
  std::vector<char> buf(1 << 16);
  bool draining = false;
  Clock::time_point drain_until;
  for (;;) {
    if (draining && (Clock::now() >= drain_until || (!out.pipe.valid() && !err.pipe.valid()))) {
      break;
    }
    pollfd fds[3] = {{out.pipe.get(), POLLIN, 0},
                     {err.pipe.get(), POLLIN, 0},
                     {draining ? -1 : wake_read_, POLLIN, 0}};
    const int timeout_ms = draining ? 50 : -1;
    if (poll(fds, 3, timeout_ms) < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) out.Pump(buf.data(), buf.size());
    if (fds[1].revents != 0) err.Pump(buf.data(), buf.size());
    if (fds[2].revents != 0) {
      // Stop() has killed every process: what they wrote is still in the pipes. Anything still
      // holding them open now is unkillable or not the service's; do not wait for it long.
      draining = true;
      drain_until = After(2.0);
    }
  }
  out.pipe.reset();
  err.pipe.reset();
  out.Finish();
  err.Finish();
}

void Service::NoteShellLocked() {
  if (shell_ || pid_ <= 0) return;
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
      info.si_pid != pid_) {
    return;
  }
  Ending e;
  if (info.si_code == CLD_EXITED) {
    e.exit_code = info.si_status;
  } else {
    e.signal = info.si_status;
  }
  shell_ = e;
}

std::set<pid_t> Service::ScanLocked(bool* any_live) {
  const pid_t self = getpid();
  const pid_t watchdog = internal::WatchdogPid();
  const std::vector<internal::ProcInfo> procs = internal::ScanProcesses();
  std::set<int> in_cgroup;
  if (spawned_->limit.cgroup) {
    for (int p : spawned_->limit.cgroup->Members()) in_cgroup.insert(p);
  }
  std::unordered_map<pid_t, std::vector<pid_t>> children;
  std::unordered_map<pid_t, const internal::ProcInfo*> by_pid;
  std::vector<pid_t> todo;
  for (const internal::ProcInfo& p : procs) {
    children[p.ppid].push_back(p.pid);
    by_pid[p.pid] = &p;
    if (p.pid == self || p.pid == watchdog) continue;
    auto known = known_.find(p.pid);
    if (p.sid == pid_ || p.pgid == pid_ || in_cgroup.count(p.pid) != 0 ||
        (known != known_.end() && known->second == p.start_ticks) ||
        (p.state != 'Z' &&
         internal::EnvironHolds(p.pid, spec_.marker, internal::EnvMatch::kExact))) {
      todo.push_back(p.pid);
    }
  }
  std::set<pid_t> all;
  auto close_over_children = [&] {
    while (!todo.empty()) {
      const pid_t pid = todo.back();
      todo.pop_back();
      if (pid == self || pid == watchdog || !all.insert(pid).second) continue;
      for (pid_t c : children[pid]) todo.push_back(c);
    }
  };
  close_over_children();
  // A session or process group one of them made (a daemon's setsid) is the service's too: so a
  // daemon that ended before it was seen, or cleared its environment, is still found.
  for (const internal::ProcInfo& p : procs) {
    if (all.count(p.pid) == 0 && (all.count(p.sid) != 0 || all.count(p.pgid) != 0 ||
                                  known_.count(p.sid) != 0 || known_.count(p.pgid) != 0)) {
      todo.push_back(p.pid);
    }
  }
  close_over_children();
  std::set<pid_t> live;
  known_.clear();
  for (pid_t pid : all) {
    const internal::ProcInfo* p = by_pid[pid];
    if (p->state != 'Z') {
      live.insert(pid);
      known_[pid] = p->start_ticks;
      continue;
    }
    // A process of the service that ended as our child (a daemon re-parented to us): how it
    // ended is why the service is gone. The shell is reaped only by Stop().
    int wstatus = 0;
    if (pid != pid_ && p->ppid == self && waitpid(pid, &wstatus, WNOHANG) == pid) {
      const Ending e = FromWaitStatus(wstatus);
      if (!cause_ || e.Weight() > cause_->Weight()) cause_ = e;
    }
  }
  NoteShellLocked();
  if (any_live != nullptr) *any_live = !live.empty() || (!shell_ && pid_ > 0);
  return live;
}

bool Service::LiveLocked() {
  bool live = false;
  ScanLocked(&live);
  return live;
}

bool Service::Alive() {
  if (stopped_) return false;
  // A scan is not atomic: a process forked after /proc was listed, by one that has ended since
  // (a daemon's second fork), is missed. Only three scans apart say the service is gone: on a
  // loaded machine two scans 5 ms apart both missed a daemon mid-fork (a test suite beside a
  // benchmark: "the server ended: every process of it exited" while it was serving).
  constexpr int kPauseMs[] = {0, 5, 50};
  for (int pause : kPauseMs) {
    if (pause > 0) SleepMs(pause);
    auto lock = internal::LockRegistry();
    if (LiveLocked()) return true;
  }
  return false;
}

std::optional<Service::Ending> Service::ShellEnding() {
  if (!stopped_) {
    auto lock = internal::LockRegistry();
    NoteShellLocked();
  }
  return shell_;
}

std::optional<Service::Ending> Service::CauseOfEnd() {
  ShellEnding();
  if (shell_ && shell_->failed()) return shell_;
  if (cause_) return cause_;
  return shell_;
}

std::set<pid_t> Service::Members() {
  if (stopped_) return {};
  auto lock = internal::LockRegistry();
  return ScanLocked(nullptr);
}

int Service::Stop(double grace_s) {
  if (stopped_) return 0;
  stopped_ = true;
  // Whatever ends now ends because it was asked to: not a crash to remember.
  const std::optional<Ending> shell_before = shell_;
  const std::optional<Ending> cause_before = cause_;
  {
    auto lock = internal::LockRegistry();
    std::set<pid_t> live = ScanLocked(nullptr);
    kill(-pid_, SIGTERM);
    for (pid_t p : live) kill(p, SIGTERM);
  }
  const Clock::time_point grace_end = After(grace_s);
  while (Clock::now() < grace_end) {
    {
      auto lock = internal::LockRegistry();
      if (!LiveLocked()) break;
    }
    SleepMs(20);
  }
  // SIGKILL until two scans in a row find nothing (see Alive()).
  std::set<pid_t> killed;
  const Clock::time_point give_up = After(10.0);
  for (int empty_scans = 0; empty_scans < 2;) {
    {
      auto lock = internal::LockRegistry();
      std::set<pid_t> live = ScanLocked(nullptr);
      kill(-pid_, SIGKILL);
      for (pid_t p : live) {
        if (kill(p, SIGKILL) == 0) killed.insert(p);
      }
      empty_scans = live.empty() ? empty_scans + 1 : 0;
    }
    if (Clock::now() >= give_up) break;
    SleepMs(2);
  }
  int count = static_cast<int>(killed.size());
  // The cgroup holds what hid from the scans; the reaper's sweep reaps what is left of the
  // session, as after any command.
  if (spawned_->limit.cgroup) count += spawned_->limit.cgroup->KillAll();
  count += internal::KillLeftovers(pid_, 2.0);
  const char wake = 1;
  ssize_t ignored = write(wake_write_, &wake, 1);
  (void)ignored;
  thread_.join();
  {
    auto lock = internal::LockRegistry();
    int wstatus = 0;
    while (waitpid(pid_, &wstatus, 0) < 0 && errno == EINTR) {
    }
    internal::UnregisterRunLocked(pid_);
  }
  shell_ = shell_before;
  cause_ = cause_before;
  internal::WatchdogForgetMarker(spec_.marker);
  spawned_->limit.cgroup.reset();  // removes it
  return count;
}

}  // namespace arbor
