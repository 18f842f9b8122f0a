// KillDescendantsFromSignal (process_reaper.h): every process this one started, found and
// killed from a signal handler. Only async-signal-safe calls: open/read/close on /proc, the
// getdents64 system call, kill, nanosleep; no allocation (static tables: the handler runs
// once, just before the process exits) and no lock.
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "exec/process_reaper.h"
#include "exec/watchdog.h"

namespace arbor::internal {
namespace {

constexpr int kMaxProcesses = 1 << 15;
struct Row {
  pid_t pid;
  pid_t ppid;
};
Row g_rows[kMaxProcesses];
bool g_marked[kMaxProcesses];

struct DirEntry64 {  // struct linux_dirent64
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[1];
};

// Decimal digits of `text` as a pid; 0 when it is not one.
pid_t ParsePid(const char* text) {
  pid_t v = 0;
  if (*text == '\0') return 0;
  for (; *text != '\0'; ++text) {
    if (*text < '0' || *text > '9' || v > 100000000) return 0;
    v = v * 10 + (*text - '0');
  }
  return v;
}

// The parent of `pid` from /proc/<pid>/stat ("pid (comm) S ppid ..."), or 0 when it is gone,
// unreadable or a zombie (dead already: nothing to kill, its children were re-parented).
pid_t ParentOf(const char* pid_text) {
  char path[64] = "/proc/";
  int len = 6;
  for (const char* c = pid_text; *c != '\0' && len < 50; ++c) path[len++] = *c;
  const char* tail = "/stat";
  for (const char* c = tail; *c != '\0'; ++c) path[len++] = *c;
  path[len] = '\0';
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[512];
  ssize_t n;
  do {
    n = read(fd, buf, sizeof buf - 1);
  } while (n < 0 && errno == EINTR);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  ssize_t paren = -1;  // the command name may hold ')': the last one ends it
  for (ssize_t i = 0; i < n; ++i) {
    if (buf[i] == ')') paren = i;
  }
  if (paren < 0 || paren + 4 >= n || buf[paren + 2] == 'Z') return 0;
  pid_t ppid = 0;
  for (ssize_t i = paren + 4; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i) {
    ppid = ppid * 10 + (buf[i] - '0');
  }
  return ppid;
}

// Fills g_rows with every live process; returns how many.
int Scan() {
  const int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return 0;
  int count = 0;
  alignas(8) char entries[8192];
  for (;;) {
    const long got = syscall(SYS_getdents64, dir, entries, sizeof entries);
    if (got <= 0) break;
    for (long off = 0; off < got;) {
      const auto* e = reinterpret_cast<const DirEntry64*>(entries + off);
      off += e->reclen;
      const pid_t pid = ParsePid(e->name);
      if (pid <= 0 || count >= kMaxProcesses) continue;
      const pid_t ppid = ParentOf(e->name);
      if (ppid > 0) g_rows[count++] = Row{pid, ppid};
    }
  }
  close(dir);
  return count;
}

}  // namespace

void KillDescendantsFromSignal() {
  const pid_t self = getpid();
  const pid_t watchdog = WatchdogPid();
  for (int round = 0; round < 5; ++round) {
    const int count = Scan();
    int marked = 0;
    for (int i = 0; i < count; ++i) g_marked[i] = false;
    // Children first, then their descendants, until a pass marks nothing new. The watchdog is
    // a child too, and must live on to take what this misses.
    for (bool more = true; more;) {
      more = false;
      for (int i = 0; i < count; ++i) {
        if (g_marked[i] || g_rows[i].pid == watchdog) continue;
        bool ours = g_rows[i].ppid == self;
        for (int j = 0; !ours && j < count; ++j) {
          ours = g_marked[j] && g_rows[j].pid == g_rows[i].ppid;
        }
        if (ours) {
          g_marked[i] = more = true;
          ++marked;
        }
      }
    }
    if (marked == 0) return;
    for (int i = 0; i < count; ++i) {
      if (g_marked[i]) kill(g_rows[i].pid, SIGKILL);
    }
    const timespec pause{0, 20 * 1000 * 1000};  // let the killed die before looking again
    nanosleep(&pause, nullptr);
  }
}

}  // namespace arbor::internal
