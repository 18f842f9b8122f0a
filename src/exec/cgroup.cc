#include "exec/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

namespace arbor {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool WriteText(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  int saved = errno;
  close(fd);
  errno = saved;
  return ok;
}

bool HasWord(const std::string& text, const std::string& word) {
  std::istringstream in(text);
  std::string w;
  while (in >> w) {
    if (w == word) return true;
  }
  return false;
}

// The directory under which this process's command cgroups go, or a reason why there is none.
struct Parent {
  std::string dir;
  std::string problem;
};

Parent FindParent() {
  // This process's cgroup in each hierarchy: "ID:controllers:/path" (v2: "0::/path").
  std::string v1_path, v2_path;
  bool have_v1 = false, have_v2 = false;
  std::istringstream cg(ReadAll("/proc/self/cgroup"));
  for (std::string line; std::getline(cg, line);) {
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string controllers = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    std::replace(controllers.begin(), controllers.end(), ',', ' ');
    if (HasWord(controllers, "pids")) have_v1 = true, v1_path = path;
    if (line.compare(0, 3, "0::") == 0) have_v2 = true, v2_path = path;
  }
  // Mount points: "... root mountpoint opts - fstype source superopts".
  std::istringstream mi(ReadAll("/proc/self/mountinfo"));
  std::string v1_dir, v2_dir;
  for (std::string line; std::getline(mi, line);) {
    std::istringstream f(line);
    std::string id, parent, dev, root, point, opts, tok, fstype, source, super;
    f >> id >> parent >> dev >> root >> point >> opts;
    while (f >> tok && tok != "-") {
    }
    f >> fstype >> source >> super;
    std::replace(super.begin(), super.end(), ',', ' ');
    auto under = [&](const std::string& path) {
      std::string rel = path;
      if (root != "/" && rel.compare(0, root.size(), root) == 0) rel = rel.substr(root.size());
      return point + (rel == "/" ? "" : rel);
    };
    if (fstype == "cgroup" && have_v1 && HasWord(super, "pids") && v1_dir.empty()) {
      v1_dir = under(v1_path);
    } else if (fstype == "cgroup2" && have_v2 && v2_dir.empty()) {
      v2_dir = under(v2_path);
    }
  }
  if (!v1_dir.empty()) {
    if (access(v1_dir.c_str(), W_OK) == 0) return {v1_dir, ""};
    return {"", "the pids cgroup " + v1_dir + " is not writable"};
  }
  if (!v2_dir.empty()) {
    if (!HasWord(ReadAll(v2_dir + "/cgroup.controllers"), "pids")) {
      return {"", "the cgroup v2 subtree " + v2_dir + " has no pids controller delegated"};
    }
    if (!HasWord(ReadAll(v2_dir + "/cgroup.subtree_control"), "pids") &&
        !WriteText(v2_dir + "/cgroup.subtree_control", "+pids")) {
      return {"", "cannot enable the pids controller in " + v2_dir + "/cgroup.subtree_control (" +
                      std::strerror(errno) + ")"};
    }
    if (access(v2_dir.c_str(), W_OK) == 0) return {v2_dir, ""};
    return {"", "the cgroup v2 subtree " + v2_dir + " is not writable"};
  }
  return {"", "no pids cgroup controller is mounted (neither cgroup v1 pids nor cgroup v2)"};
}

std::vector<int> ReadPids(const std::string& dir) {
  std::vector<int> out;
  std::istringstream in(ReadAll(dir + "/cgroup.procs"));
  for (int pid; in >> pid;) out.push_back(pid);
  return out;
}

bool IsZombieOrGone(int pid) {
  std::string stat = ReadAll("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z';
}

// Kills the members of `dir` until only zombies are left or `budget_s` has passed.
int KillMembers(const std::string& dir, double budget_s) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<long>(budget_s * 1000));
  std::set<int> killed;
  for (;;) {
    bool live = false;
    for (int pid : ReadPids(dir)) {
      if (IsZombieOrGone(pid)) continue;
      live = true;
      if (kill(pid, SIGKILL) == 0) killed.insert(pid);
    }
    if (!live || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return static_cast<int>(killed.size());
}

void RemoveDir(const std::string& dir) {
  for (int i = 0; i < 200 && rmdir(dir.c_str()) != 0 && errno == EBUSY; ++i) {
    KillMembers(dir, 0.1);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// Cgroups named "arbor-PID-N" whose Arbor is gone: what a killed run left behind.
void RemoveStale(const std::string& parent) {
  DIR* d = opendir(parent.c_str());
  if (d == nullptr) return;
  std::vector<std::string> stale;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind("arbor-", 0) != 0) continue;
    int owner = std::atoi(name.c_str() + 6);
    if (owner > 0 && owner != getpid() && kill(owner, 0) != 0 && errno == ESRCH) {
      stale.push_back(parent + "/" + name);
    }
  }
  closedir(d);
  for (const std::string& dir : stale) RemoveDir(dir);
}

int CountUserProcesses(uid_t uid) {
  int n = 0;
  DIR* d = opendir("/proc");
  if (d == nullptr) return 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    struct stat st {};
    if (stat((std::string("/proc/") + e->d_name).c_str(), &st) == 0 && st.st_uid == uid) ++n;
  }
  closedir(d);
  return n;
}

}  // namespace

Result<std::unique_ptr<PidsCgroup>> PidsCgroup::Create(int max_processes) {
  static std::mutex mu;  // one lookup of the hierarchy per process
  static Parent parent;
  static bool looked = false;
  static std::atomic<unsigned> counter{0};
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!looked) parent = FindParent();
    looked = true;
  }
  if (parent.dir.empty()) {
    return MakeError("cannot limit the number of processes: " + parent.problem);
  }
  RemoveStale(parent.dir);
  std::string path = parent.dir + "/arbor-" + std::to_string(getpid()) + "-" +
                     std::to_string(counter.fetch_add(1));
  if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    return MakeError("cannot create the pids cgroup " + path + ": " + std::strerror(errno));
  }
  if (!WriteText(path + "/pids.max", std::to_string(std::max(1, max_processes)))) {
    std::string why = std::strerror(errno);
    rmdir(path.c_str());
    return MakeError("cannot set " + path + "/pids.max: " + why);
  }
  UniqueFd fd(open((path + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) {
    std::string why = std::strerror(errno);
    rmdir(path.c_str());
    return MakeError("cannot open " + path + "/cgroup.procs: " + why);
  }
  return std::unique_ptr<PidsCgroup>(new PidsCgroup(path, std::move(fd).AboveStdio()));
}

PidsCgroup::~PidsCgroup() {
  KillAll();
  procs_fd_.reset();
  RemoveDir(path_);
}

bool PidsCgroup::JoinFromChild(int procs_fd) {
  char buf[24];
  int n = 0;
  char digits[24];
  for (long pid = getpid(); pid > 0; pid /= 10) digits[n++] = static_cast<char>('0' + pid % 10);
  for (int i = 0; i < n; ++i) buf[i] = digits[n - 1 - i];
  return write(procs_fd, buf, static_cast<size_t>(n)) == n;
}

std::vector<int> PidsCgroup::Members() const { return ReadPids(path_); }

int PidsCgroup::KillAll() { return KillMembers(path_, 5.0); }

std::string ProcessLimitUnsupportedReason() {
  Parent p = FindParent();
  if (!p.dir.empty() || geteuid() != 0) return "";
  return p.problem + ", and RLIMIT_NPROC does not bind root: run as another user or give " +
         "Arbor a writable pids cgroup";
}

Result<ProcessLimit> PrepareProcessLimit(int max_processes) {
  ProcessLimit limit;
  auto cgroup = PidsCgroup::Create(max_processes);
  if (cgroup.ok()) {
    limit.cgroup = std::move(*cgroup);
    return limit;
  }
  if (geteuid() == 0) {
    return MakeError(cgroup.error().message + ", and RLIMIT_NPROC does not bind root");
  }
  limit.use_rlimit = true;
  rlimit current{};
  getrlimit(RLIMIT_NPROC, &current);
  limit.nproc.rlim_cur = limit.nproc.rlim_max =
      std::min(current.rlim_max,
               static_cast<rlim_t>(CountUserProcesses(geteuid()) + std::max(1, max_processes)));
  return limit;
}

}  // namespace arbor
