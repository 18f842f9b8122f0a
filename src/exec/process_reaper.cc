#include "exec/process_reaper.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "exec/runner.h"
#include "exec/watchdog.h"

namespace arbor::internal {
namespace {

std::mutex g_registry_mu;
// The same main children, for a signal handler (KillRunningCommandsFromSignal): it may take
// no lock and allocate nothing, so a fixed table of lock-free atomics mirrors LiveRuns. A
// command started while every slot is taken (more than kSignalSlots at once) is not in it.
constexpr int kSignalSlots = 256;
std::atomic<pid_t> g_signal_slots[kSignalSlots];
static_assert(std::atomic<pid_t>::is_always_lock_free);
// Main child pid of every command currently running -> its start time (clock ticks).
std::map<pid_t, uint64_t>& LiveRuns() {
  static auto* runs = new std::map<pid_t, uint64_t>();
  return *runs;
}

bool ReadSmallFile(const char* path, std::string* out) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1024];
  out->clear();
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return !out->empty();
}

// Parses /proc/PID/stat. The command name (field 2) may hold spaces and parentheses, so the
// fields are counted from the last ')'.
bool ParseStat(std::string_view text, ProcInfo* p) {
  size_t close_paren = text.rfind(')');
  if (close_paren == std::string_view::npos) return false;
  p->pid = static_cast<pid_t>(std::strtol(text.data(), nullptr, 10));
  std::string_view rest = text.substr(close_paren + 1);
  int field = 2;  // the field just read
  size_t i = 0;
  while (i < rest.size() && field < 22) {
    while (i < rest.size() && rest[i] == ' ') ++i;
    size_t j = i;
    while (j < rest.size() && rest[j] != ' ') ++j;
    ++field;
    std::string token(rest.substr(i, j - i));
    switch (field) {
      case 3:
        p->state = token.empty() ? '?' : token[0];
        break;
      case 4:
        p->ppid = static_cast<pid_t>(std::strtol(token.c_str(), nullptr, 10));
        break;
      case 5:
        p->pgid = static_cast<pid_t>(std::strtol(token.c_str(), nullptr, 10));
        break;
      case 6:
        p->sid = static_cast<pid_t>(std::strtol(token.c_str(), nullptr, 10));
        break;
      case 22:
        p->start_ticks = std::strtoull(token.c_str(), nullptr, 10);
        break;
      default:
        break;
    }
    i = j;
  }
  return field == 22 && p->pid > 0;
}

bool StatOf(pid_t pid, ProcInfo* p) {
  std::string text;
  std::string path = "/proc/" + std::to_string(pid) + "/stat";
  return ReadSmallFile(path.c_str(), &text) && ParseStat(text, p);
}

// The processes of `procs` that belong to the run of `main_pid` (0: to no live run at all).
// Caller holds the registry lock.
std::vector<const ProcInfo*> Attribute(const std::vector<ProcInfo>& procs, pid_t main_pid) {
  const pid_t self = getpid();
  const auto& runs = LiveRuns();
  std::unordered_map<pid_t, const ProcInfo*> by_pid;
  for (const ProcInfo& p : procs) by_pid[p.pid] = &p;
  // The ancestor whose parent is us, or nullptr when the chain does not lead to us.
  auto chain_top = [&](const ProcInfo* p) -> const ProcInfo* {
    for (int depth = 0; p != nullptr && depth < 4096; ++depth) {
      if (p->ppid == self) return p;
      auto it = by_pid.find(p->ppid);
      p = it == by_pid.end() ? nullptr : it->second;
    }
    return nullptr;
  };
  std::vector<const ProcInfo*> out;
  const pid_t watchdog =
      arbor::internal::WatchdogPid();  // our child, but no command's (exec/watchdog.h)
  for (const ProcInfo& p : procs) {
    if (p.pid == self || p.pid == main_pid || p.pid == watchdog) continue;
    if (main_pid > 0 && (p.sid == main_pid || p.pgid == main_pid)) {
      out.push_back(&p);
      continue;
    }
    const ProcInfo* top = chain_top(&p);
    if (top == nullptr) continue;
    if (top->pid == main_pid) {
      out.push_back(&p);
      continue;
    }
    if (runs.count(top->pid) || runs.count(top->sid)) continue;  // another live command's
    // An adopted orphan outside every live session: only runs started before it can own it.
    bool other_owner = false;
    for (const auto& [run_pid, run_start] : runs) {
      if (run_pid != main_pid && run_start <= top->start_ticks) other_owner = true;
    }
    if (!other_owner) out.push_back(&p);
  }
  return out;
}

int Sweep(pid_t main_pid, double budget_s) {
  const pid_t self = getpid();
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(budget_s));
  std::set<pid_t> killed;
  for (;;) {
    bool pending = false;
    {
      auto lock = LockRegistry();
      std::vector<ProcInfo> procs = ScanProcesses();
      for (const ProcInfo* p : Attribute(procs, main_pid)) {
        if (p->state == 'Z') {
          // Ours to reap, or about to be re-parented to us when its dying parent is gone.
          if (p->ppid == self) waitpid(p->pid, nullptr, WNOHANG);
          if (p->ppid == self || killed.count(p->ppid)) pending = true;
          continue;
        }
        if (kill(p->pid, SIGKILL) == 0) {
          killed.insert(p->pid);
          pending = true;
        }
      }
      if (main_pid > 0) kill(-main_pid, SIGKILL);
    }
    if (!pending || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return static_cast<int>(killed.size());
}

}  // namespace

std::vector<ProcInfo> ScanProcesses() {
  std::vector<ProcInfo> out;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return out;
  std::string text;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::string path = std::string("/proc/") + e->d_name + "/stat";
    ProcInfo p;
    if (ReadSmallFile(path.c_str(), &text) && ParseStat(text, &p)) out.push_back(p);
  }
  closedir(dir);
  return out;
}

void EnsureSubreaper() {
  static std::once_flag once;
  std::call_once(once, [] { prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); });
}

std::unique_lock<std::mutex> LockRegistry() { return std::unique_lock<std::mutex>(g_registry_mu); }

void RegisterRunLocked(pid_t main_pid) {
  ProcInfo p;
  // The child cannot be reaped before we wait for it, so its stat is always readable.
  LiveRuns()[main_pid] = StatOf(main_pid, &p) ? p.start_ticks : 0;
  arbor::internal::WatchdogTrack(main_pid);
  for (std::atomic<pid_t>& slot : g_signal_slots) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, main_pid)) break;
  }
}

void UnregisterRunLocked(pid_t main_pid) {
  LiveRuns().erase(main_pid);
  arbor::internal::WatchdogForget(main_pid);
  for (std::atomic<pid_t>& slot : g_signal_slots) {
    pid_t mine = main_pid;
    if (slot.compare_exchange_strong(mine, 0)) break;
  }
}

bool EnvironHolds(pid_t pid, std::string_view entry, EnvMatch match) {
  std::string text;
  const std::string path = "/proc/" + std::to_string(pid) + "/environ";
  if (entry.empty() || !ReadSmallFile(path.c_str(), &text)) return false;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\0', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view item(text.data() + pos, end - pos);
    if (match == EnvMatch::kExact ? item == entry : item.substr(0, entry.size()) == entry) {
      return true;
    }
    pos = end + 1;
  }
  return false;
}

bool SessionHasLive(pid_t sid, pid_t except) {
  for (const ProcInfo& p : ScanProcesses()) {
    if (p.sid == sid && p.pid != except && p.state != 'Z') return true;
  }
  return false;
}

int KillLeftovers(pid_t main_pid, double budget_s) { return Sweep(main_pid, budget_s); }

int KillUnclaimedOrphans(double budget_s) { return Sweep(0, budget_s); }

}  // namespace arbor::internal

namespace arbor {

void KillRunningCommandsFromSignal() {
  for (std::atomic<pid_t>& slot : internal::g_signal_slots) {
    const pid_t pid = slot.load();
    if (pid > 0) kill(-pid, SIGKILL);  // its session's process group (setsid: pgid == pid)
  }
  internal::KillDescendantsFromSignal();  // and what left the group: adopted orphans
}

// The sweeps runner.h promises, on top of the registry above.
int KillOrphans() {
  internal::EnsureSubreaper();
  return internal::KillUnclaimedOrphans(10.0);
}

int KillProcessesWithin(const std::string& dir, const std::string& spare_env) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string root = fs::weakly_canonical(dir, ec).string();
  if (ec || root.empty() || root == "/") return 0;
  int killed = 0;
  for (int round = 0; round < 20; ++round) {
    int found = 0;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
      const std::string name = entry.path().filename().string();
      if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
      pid_t pid = static_cast<pid_t>(std::stol(name));
      if (pid == getpid()) continue;
      std::string cwd = fs::read_symlink(entry.path() / "cwd", ec).string();
      if (ec) continue;  // gone, or not ours to look at
      const std::string deleted = " (deleted)";
      if (cwd.size() > deleted.size() &&
          cwd.compare(cwd.size() - deleted.size(), deleted.size(), deleted) == 0) {
        cwd.resize(cwd.size() - deleted.size());
      }
      if (cwd != root && cwd.rfind(root + "/", 0) != 0) continue;
      if (!spare_env.empty() &&
          internal::EnvironHolds(pid, spare_env, internal::EnvMatch::kExact)) {
        continue;
      }
      if (kill(pid, SIGKILL) == 0) {
        ++found;
        ++killed;
      }
    }
    if (found == 0) break;
    usleep(20000);  // let the killed die before looking again (their children may remain)
  }
  return killed;
}

int KillProcessesWithEnv(const std::string& entry_prefix) {
  if (entry_prefix.empty()) return 0;
  int killed = 0;
  for (int round = 0; round < 20; ++round) {
    int found = 0;
    for (const internal::ProcInfo& p : internal::ScanProcesses()) {
      if (p.pid == getpid() || p.state == 'Z') continue;
      if (!internal::EnvironHolds(p.pid, entry_prefix, internal::EnvMatch::kPrefix)) continue;
      if (kill(p.pid, SIGKILL) == 0) {
        ++found;
        ++killed;
      }
    }
    if (found == 0) break;
    usleep(20000);  // let the killed die before looking again
  }
  return killed;
}

}  // namespace arbor
