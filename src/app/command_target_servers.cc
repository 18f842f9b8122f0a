#include "app/command_target_servers.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <thread>

#include "exec/scrubbing.h"
#include "util/strings.h"

namespace arbor {
namespace fs = std::filesystem;

namespace {

using Steady = std::chrono::steady_clock;

double Since(Steady::time_point t) {
  return std::chrono::duration<double>(Steady::now() - t).count();
}

// A loopback port free now (the kernel's choice for a bind to port 0). Another process could
// take it before the server binds it; the server then fails to start and says so in its log.
int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// Whether 127.0.0.1:port accepts a connection within `timeout_s`: the readiness test when
// [target.serve] has no `ready` command.
bool Accepts(int port, double timeout_s) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  if (!ok && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    ok = poll(&p, 1, static_cast<int>(timeout_s * 1000)) == 1 &&
         getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
  }
  close(fd);
  return ok;
}

// A run of `command` in the server's environment, its output in `dir`.
RunSpec Helper(const RunSpec& server, const std::string& command, const std::string& dir,
               double timeout_s) {
  RunSpec rs;
  rs.command = command;
  rs.cwd = server.cwd;
  rs.env = server.env;
  rs.timeout_s = std::max(0.1, timeout_s);
  rs.stdout_path = dir + "/stdout";
  rs.stderr_path = dir + "/stderr";
  return rs;
}

std::string DescribeRun(const Result<RunResult>& r) {
  if (!r.ok()) return "could not start: " + r.error().message;
  switch (r->status) {
    case RunResult::Status::kExited:
      return "exit code " + std::to_string(r->exit_code);
    case RunResult::Status::kSignaled:
      return "killed by signal " + std::to_string(r->signal);
    case RunResult::Status::kTimedOut:
      return "timed out";
  }
  return "";
}

// The step a server's ending makes: killed by a signal is a crash of that signal; an exit code
// is the command's failure (a shell reports a child killed by N as 128 + N).
void SetEnding(const Service::Ending& e, StepResult* step) {
  step->exit_code = e.exit_code;
  step->signal = e.signal;
  step->kind = ExitKind::kFailed;
  if (e.signal > 0) {
    step->kind = ExitKind::kSignaled;
  } else if (e.exit_code > 128 && e.exit_code < 128 + 32) {
    step->kind = ExitKind::kSignaled;
    step->signal = e.exit_code - 128;
  }
}

// Whether the service ends within `grace_s` (polled every 20 ms).
bool EndsWithin(Service& service, double grace_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
  while (service.Alive()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace

struct TargetServers::Entry {
  NodeId node = kNoNode;
  std::string worktree;
  EnvOverlay env;
  std::string dir;    // runs/n<node>/serve-<label>
  std::string label;  // serve-<label>, for messages
  int port = 0;
  int users = 0;  // commands running against it now
  std::unique_ptr<Service> service;
  RunSpec run;  // how it was started: `ready` and `stop` run in the same environment
};

TargetServers::TargetServers(const CampaignSpec* spec, std::string runs_dir)
    : spec_(spec), runs_dir_(std::move(runs_dir)) {}

TargetServers::~TargetServers() { StopAll(); }

std::vector<std::unique_ptr<TargetServers::Entry>>::iterator TargetServers::FindLocked(
    Entry* entry) {
  return std::find_if(entries_.begin(), entries_.end(),
                      [entry](const std::unique_ptr<Entry>& e) { return e.get() == entry; });
}

TargetServers::Lease TargetServers::Acquire(const RunContext& ctx, const RunSpec& base,
                                            const std::string& role) {
  std::lock_guard<std::mutex> lock(mu_);
  Lease lease;
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    Entry* e = it->get();
    if (e->node != ctx.node || e->worktree != ctx.worktree || e->env != ctx.env) continue;
    if (e->service->Alive()) {
      ++e->users;
      lease.entry = e;
      lease.port = e->port;
      return lease;
    }
    lease.failure = DiedLocked(e, "after its last run, before this " + role);
    return lease;
  }
  // One idle server at a time: another state's must not share the machine with this one.
  for (auto it = entries_.begin(); it != entries_.end();) {
    if ((*it)->users == 0) {
      StopLocked(it, true);
      it = entries_.begin();
    } else {
      ++it;
    }
  }
  StepResult failure;
  Result<Entry*> started = StartLocked(ctx, base, &failure);
  if (!started.ok()) {
    failure.kind = ExitKind::kSpawnError;
    failure.detail = Scrubbed("cannot start the server: " + started.error().message);
    lease.failure = failure;
    return lease;
  }
  if (*started == nullptr) {
    lease.failure = failure;
    return lease;
  }
  ++(*started)->users;
  lease.entry = *started;
  lease.port = (*started)->port;
  return lease;
}

Result<TargetServers::Entry*> TargetServers::StartLocked(const RunContext& ctx, const RunSpec& base,
                                                         StepResult* failure) {
  const ServeSpec& serve = spec_->target.serve;
  const auto start = Steady::now();
  auto e = std::make_unique<Entry>();
  e->node = ctx.node;
  e->worktree = ctx.worktree;
  e->env = ctx.env;
  e->label = "serve-" + ctx.label;
  e->dir = runs_dir_ + "/n" + std::to_string(ctx.node) + "/" + e->label;
  std::error_code ec;
  fs::remove_all(e->dir, ec);  // a replayed step starts from an empty folder
  for (const char* sub : {"/out", "/ready", "/stop"}) fs::create_directories(e->dir + sub, ec);
  if (ec) return MakeError("cannot create " + e->dir + ": " + ec.message());
  e->port = FreeLoopbackPort();
  if (e->port == 0) return MakeError("no free loopback port");
  Service::Spec spec;
  spec.run = base;
  spec.run.command = serve.command;
  spec.run.cwd = ctx.worktree;
  spec.run.cpu_limit_s.reset();  // a CPU-time limit would add up over every run it serves
  spec.run.stdout_path = e->dir + "/stdout";
  spec.run.stderr_path = e->dir + "/stderr";
  spec.run.stdin_data.clear();
  spec.run.env["ARBOR_OUT"] = e->dir + "/out";
  spec.run.env.erase("ARBOR_REPETITION");
  spec.run.env["ARBOR_PORT"] = std::to_string(e->port);
  spec.run.env[kMarkerName] = e->dir;
  spec.marker = std::string(kMarkerName) + "=" + e->dir;
  e->run = spec.run;
  ARBOR_TRY_ASSIGN(e->service, Service::Start(spec));
  Entry* entry = e.get();
  entries_.push_back(std::move(e));

  // Ready: `ready` exits 0 (or the port accepts), while the server lives, within ready_timeout.
  const double timeout_s = serve.ready_timeout_s;
  std::string last = "never polled";
  double pause_s = 0.05;
  for (;;) {
    if (!entry->service->Alive()) {
      *failure = DiedLocked(entry, "before it was ready");
      break;
    }
    const double left = timeout_s - Since(start);
    bool ready = false;
    if (serve.ready.empty()) {
      ready = Accepts(entry->port, std::clamp(left, 0.05, 1.0));
      last = "127.0.0.1:" + std::to_string(entry->port) + " refused the connection";
    } else {
      auto r = RunCommand(
          Helper(entry->run, serve.ready, entry->dir + "/ready", std::clamp(left, 1.0, 30.0)));
      ready = r.ok() && r->ok();
      last = "`ready` last gave " + DescribeRun(r);
    }
    if (ready) {
      if (entry->service->Alive()) return entry;
      *failure = DiedLocked(entry, "as it became ready");
      break;
    }
    if (Since(start) >= timeout_s) {
      failure->kind = ExitKind::kTimedOut;
      failure->detail = Scrubbed("the server (" + entry->label + ") was not ready within " +
                                 FormatDouble(timeout_s) + "s (serve.ready_timeout; " + last + ")");
      const std::string dir = entry->dir;
      StopLocked(FindLocked(entry), false);
      failure->log_dir = dir;
      failure->tail = TailOf(dir);
      break;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(pause_s, left)));
    pause_s = std::min(pause_s * 1.5, 0.5);
  }
  // `entry` is gone from entries_ now (DiedLocked and the timeout stopped it).
  failure->duration_s = Since(start);
  return nullptr;
}

StepResult TargetServers::DiedLocked(Entry* entry, const std::string& when) {
  const std::optional<Service::Ending> ending = entry->service->CauseOfEnd();
  StepResult step;
  step.kind = ExitKind::kFailed;
  step.log_dir = entry->dir;
  std::string what = "ended";
  if (ending && ending->failed()) {
    SetEnding(*ending, &step);
    what = ending->Describe();
    if (step.kind == ExitKind::kSignaled && ending->signal == 0) {
      // Its shell's 128 + N: the server itself was killed by signal N.
      what = Service::Ending{0, step.signal}.Describe() + " (its shell exited with code " +
             std::to_string(ending->exit_code) + ")";
    }
  } else if (ending) {
    what = "ended: every process of it exited";  // a clean exit, but it was to keep serving
  }
  step.detail = Scrubbed("the server (" + entry->label + ") " + what + " " + when);
  const std::string dir = entry->dir;
  StopLocked(FindLocked(entry), false);
  step.tail = TailOf(dir);  // complete and scrubbed now
  return step;
}

std::string TargetServers::TailOf(const std::string& dir) const {
  std::string tail = ReadTail(dir + "/stderr", 2048);
  if (Trim(tail).empty()) tail = ReadTail(dir + "/stdout", 2048);
  return Scrubbed(std::move(tail));
}

void TargetServers::Release(const Lease& lease, const std::string& role, StepResult* step) {
  if (lease.entry == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = FindLocked(lease.entry);
  if (it == entries_.end()) return;
  Entry* e = it->get();
  --e->users;
  const std::string own = step->ok() ? ""
                                     : "; the " + role + " itself: " +
                                           (step->kind == ExitKind::kFailed
                                                ? "exit code " + std::to_string(step->exit_code)
                                                : std::string(ExitKindName(step->kind)));
  if (e->service->Alive()) {
    // A failed command against a live server: if the server no longer answers, it is the
    // server that broke (a worker died, a deadlock); its log says why, and it is restarted for
    // the next run. Otherwise the command's failure stands.
    // A timeout says enough (and a slow server answers late, not never); a command that could
    // not start says nothing of the server.
    const std::string& ready = spec_->target.serve.ready;
    if (step->ok() || step->kind == ExitKind::kTimedOut || step->kind == ExitKind::kSpawnError ||
        e->users > 0) {
      return;
    }
    bool answers = false;
    if (ready.empty()) {
      answers = Accepts(e->port, 5.0);
    } else {
      auto r = RunCommand(Helper(e->run, ready, e->dir + "/ready", 10.0));
      answers = r.ok() && r->ok();
    }
    if (answers) return;
    // A server that stops answering may be on its way out: a master that crashed, whose
    // workers have yet to get their SIGTERM, or a core being written. Its ending says more than
    // its silence (the signal), so it has a moment to come.
    if (!EndsWithin(*e->service, 2.0)) {
      const std::string dir = e->dir;
      step->detail =
          Scrubbed("the server (" + e->label + ") stopped answering during the " + role + own);
      StopLocked(it, false);
      step->tail = TailOf(dir);
      return;
    }
  }
  // The server died during the command: that is the step's crash, whatever the command said.
  StepResult died = DiedLocked(e, "during the " + role + own);
  step->kind = died.kind;
  step->exit_code = died.exit_code;
  step->signal = died.signal;
  step->detail = died.detail;
  step->tail = died.tail;
}

void TargetServers::StopLocked(std::vector<std::unique_ptr<Entry>>::iterator it, bool graceful) {
  if (it == entries_.end()) return;
  Entry& e = **it;
  const ServeSpec& serve = spec_->target.serve;
  if (graceful && !serve.stop.empty() && e.service->Alive()) {
    // The graceful stop and the server's own exit share stop_timeout.
    const auto start = Steady::now();
    (void)RunCommand(Helper(e.run, serve.stop, e.dir + "/stop", serve.stop_timeout_s));
    while (e.service->Alive() && Since(start) < serve.stop_timeout_s) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  e.service->Stop(2.0);
  for (const char* sub : {"", "/ready", "/stop"}) ScrubDir(e.dir + sub);
  entries_.erase(it);
}

void TargetServers::ScrubDir(const std::string& dir) const {
  // The process's one Scrubber (exec/scrubbing.h), as for every command's kept output.
  for (const std::string& log : {dir + "/stdout", dir + "/stderr"}) ScrubKept(log);
}

std::string TargetServers::Scrubbed(std::string text) const {
  return ScrubInstalled(std::move(text));
}

void TargetServers::StopIn(const std::string& worktree) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    if ((*it)->worktree == worktree) {
      StopLocked(it, true);
      it = entries_.begin();
    } else {
      ++it;
    }
  }
}

void TargetServers::StopNode(NodeId node, const std::string& worktree) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    if ((*it)->node == node || (!worktree.empty() && (*it)->worktree == worktree)) {
      StopLocked(it, true);
      it = entries_.begin();
    } else {
      ++it;
    }
  }
}

void TargetServers::StopAll() {
  std::lock_guard<std::mutex> lock(mu_);
  while (!entries_.empty()) StopLocked(entries_.begin(), true);
}

int TargetServers::running() {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(entries_.size());
}

Result<std::string> ServerStoppingWorkspace::Prepare(NodeId node, const std::string& commit) {
  auto path = inner_->Prepare(node, commit);
  if (path.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    worktrees_[node] = *path;
  }
  return path;
}

Status ServerStoppingWorkspace::Release(NodeId node) {
  std::string worktree;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = worktrees_.find(node);
    if (it != worktrees_.end()) {
      worktree = it->second;
      worktrees_.erase(it);
    }
  }
  servers_->StopNode(node, worktree);
  return inner_->Release(node);
}

Status ServerStoppingWorkspace::ReleaseAll() {
  servers_->StopAll();
  {
    std::lock_guard<std::mutex> lock(mu_);
    worktrees_.clear();
  }
  return inner_->ReleaseAll();
}

}  // namespace arbor
