#include "exec/watchdog.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "exec/process_reaper.h"

namespace arbor {
namespace {

std::atomic<int> g_fd{-1};    // Arbor's end of the socket pair
std::atomic<pid_t> g_pid{0};  // the watchdog

// "+123\n" or "-123\n", built without allocation (a signal handler may call this).
void Send(char sign, pid_t pid) {
  const int fd = g_fd.load();
  if (fd < 0 || pid <= 0) return;
  char buf[32];
  char digits[24];
  int n = 0;
  for (unsigned long v = static_cast<unsigned long>(pid); v > 0 && n < 24; v /= 10) {
    digits[n++] = static_cast<char>('0' + v % 10);
  }
  int len = 0;
  buf[len++] = sign;
  while (n > 0) buf[len++] = digits[--n];
  buf[len++] = '\n';
  // One short write on a stream socket; MSG_NOSIGNAL: a dead watchdog is no reason to die.
  // MSG_DONTWAIT: a stopped watchdog (SIGSTOP, a debugger) must not block command starts.
  while (send(fd, buf, static_cast<size_t>(len), MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
         errno == EINTR) {
  }
}

// "=ENTRY\n" or "~ENTRY\n" in one write (not from a signal handler: it allocates). An entry
// holding a newline could not be read back and is not sent.
void SendMarker(char sign, const std::string& entry) {
  const int fd = g_fd.load();
  if (fd < 0 || entry.empty() || entry.find('\n') != std::string::npos) return;
  const std::string line = sign + entry + "\n";
  while (send(fd, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno == EINTR) {
  }
}

// Every live process in one of `sessions` (as its session or process group) or whose
// environment holds one of `markers`, and every descendant of one.
std::vector<pid_t> Victims(const std::set<pid_t>& sessions, const std::set<std::string>& markers) {
  const std::vector<internal::ProcInfo> procs = internal::ScanProcesses();
  std::unordered_map<pid_t, std::vector<pid_t>> children;
  std::set<pid_t> marked;
  std::vector<pid_t> todo;
  auto marked_env = [&](pid_t pid) {
    for (const std::string& m : markers) {
      if (internal::EnvironHolds(pid, m, internal::EnvMatch::kExact)) return true;
    }
    return false;
  };
  for (const internal::ProcInfo& p : procs) {
    children[p.ppid].push_back(p.pid);
    if (sessions.count(p.sid) || sessions.count(p.pgid) ||
        (p.state != 'Z' && p.pid != getpid() && marked_env(p.pid))) {
      todo.push_back(p.pid);
    }
  }
  while (!todo.empty()) {
    const pid_t pid = todo.back();
    todo.pop_back();
    if (pid == getpid() || !marked.insert(pid).second) continue;
    for (pid_t c : children[pid]) todo.push_back(c);
  }
  std::vector<pid_t> out;
  for (const internal::ProcInfo& p : procs) {
    if (marked.count(p.pid) && p.state != 'Z') out.push_back(p.pid);
  }
  return out;
}

}  // namespace

Status StartWatchdog() {
  static std::once_flag once;
  static Status started;
  std::call_once(once, [] {
    // The binary's path now: exec'ing "/proc/self/exe" would find a tool's (valgrind's) image.
    char exe[4096];
    const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) {
      started = MakeError(std::string("watchdog: cannot tell this binary's path: ") +
                          std::strerror(errno));
      return;
    }
    exe[len] = '\0';
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
      started = MakeError(std::string("watchdog: socketpair: ") + std::strerror(errno));
      return;
    }
    // Above the standard descriptors (Arbor may have started with one closed), which the
    // child replaces with /dev/null.
    for (int& fd : fds) {
      if (fd <= 3) {
        const int moved = fcntl(fd, F_DUPFD_CLOEXEC, 4);
        close(fd);
        fd = moved;
      }
    }
    if (fds[0] < 0 || fds[1] < 0) {
      started = MakeError(std::string("watchdog: fcntl: ") + std::strerror(errno));
      return;
    }
    // Under the registry lock: a concurrent sweep never sees the new child unexempted.
    auto lock = internal::LockRegistry();
    const pid_t pid = fork();
    if (pid < 0) {
      started = MakeError(std::string("watchdog: fork: ") + std::strerror(errno));
      close(fds[0]);
      close(fds[1]);
      return;
    }
    if (pid == 0) {
      // Only async-signal-safe calls until exec: the parent may have threads.
      setsid();
      const int null = open("/dev/null", O_RDWR);
      if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
      }
      dup2(fds[0], 3);  // without close-on-exec (fds[0] > 3)
      // Nothing else of Arbor's (an events file, a socket) stays open; a kernel without
      // close_range (before 5.9) gets the loop.
      if (close_range(4, ~0U, 0) != 0) {
        for (int fd = 4; fd < 4096; ++fd) close(fd);
      }
      if (chdir("/") != 0) _exit(127);  // nor its working directory busy
      execl(exe, "arbor", "__watchdog", static_cast<char*>(nullptr));
      _exit(127);
    }
    close(fds[0]);
    g_pid.store(pid);
    g_fd.store(fds[1]);
  });
  return started;
}

int WatchdogMain(int fd) {
  signal(SIGINT, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  prctl(PR_SET_NAME, "arbor-watchdog", 0, 0, 0);
  std::set<pid_t> sessions;
  std::set<std::string> markers;
  std::string line;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // Arbor's end closed: it exited, or was killed
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] != '\n') {
        line += buf[i];
        continue;
      }
      if (line.size() > 1) {
        const pid_t pid = static_cast<pid_t>(std::strtol(line.c_str() + 1, nullptr, 10));
        if (line[0] == '+') sessions.insert(pid);
        if (line[0] == '-') sessions.erase(pid);
        if (line[0] == '=') markers.insert(line.substr(1));
        if (line[0] == '~') markers.erase(line.substr(1));
      }
      line.clear();
    }
  }
  if (sessions.empty() && markers.empty()) return 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (;;) {
    const std::vector<pid_t> victims = Victims(sessions, markers);
    if (victims.empty() || std::chrono::steady_clock::now() >= deadline) break;
    for (pid_t pid : victims) kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}

namespace internal {

void WatchdogTrack(pid_t sid) { Send('+', sid); }
void WatchdogForget(pid_t sid) { Send('-', sid); }

void WatchdogTrackMarker(const std::string& entry) { SendMarker('=', entry); }
void WatchdogForgetMarker(const std::string& entry) { SendMarker('~', entry); }
pid_t WatchdogPid() { return g_pid.load(); }

}  // namespace internal
}  // namespace arbor
