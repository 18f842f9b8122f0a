#include "harness.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

extern char** environ;

namespace arbor::integration {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Resolves a bare command name through PATH before fork (execvp is not async-signal-safe).
std::string ResolveExecutable(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return name;
}

std::vector<std::string> MergedEnv(const EnvMap& extra) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    std::string key = entry.substr(0, entry.find('='));
    // The tests decide every ARBOR_* variable (a stray ARBOR_CRASH_AT would kill runs).
    if (extra.count(key) == 0 && key.rfind("ARBOR_", 0) != 0) out.push_back(entry);
  }
  for (const auto& [key, value] : extra) out.push_back(key + "=" + value);
  return out;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Appends what is readable on `*fd` to `*sink`; closes it at EOF.
void Drain(int* fd, std::string* sink) {
  char buf[65536];
  for (;;) {
    ssize_t n = read(*fd, buf, sizeof buf);
    if (n > 0) {
      sink->append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    close(*fd);
    *fd = -1;
    return;
  }
}

}  // namespace

std::string ProcResult::Describe() const {
  std::string what = timed_out ? "timed out"
                     : signal  ? "signal " + std::to_string(signal)
                               : "exit " + std::to_string(exit_code);
  std::string tail = err.size() > 4000 ? err.substr(err.size() - 4000) : err;
  return what + "; stderr:\n" + tail;
}

Process::Process(const std::vector<std::string>& argv, const std::string& cwd, const EnvMap& env) {
  std::vector<std::string> args = argv;
  args[0] = ResolveExecutable(args[0]);
  std::vector<std::string> env_strings = MergedEnv(env);
  std::vector<char*> c_args = CStrings(args);
  std::vector<char*> c_env = CStrings(env_strings);
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2: " << std::strerror(errno);
    return;
  }
  pid_ = fork();
  if (pid_ == 0) {
    // Child: only async-signal-safe calls from here on.
    setpgid(0, 0);
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    if (chdir(cwd.c_str()) != 0) _exit(126);
    execve(c_args[0], c_args.data(), c_env.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  out_fd_ = out_pipe[0];
  err_fd_ = err_pipe[0];
  if (pid_ < 0) {
    ADD_FAILURE() << "fork: " << std::strerror(errno);
    reaped_ = true;
    return;
  }
  setpgid(pid_, pid_);  // also from the parent, so Signal/kill(-pid) work immediately
  fcntl(out_fd_, F_SETFL, O_NONBLOCK);
  fcntl(err_fd_, F_SETFL, O_NONBLOCK);
}

Process::~Process() {
  if (!reaped_ && pid_ > 0) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (out_fd_ >= 0) close(out_fd_);
  if (err_fd_ >= 0) close(err_fd_);
}

void Process::Signal(int sig) {
  if (!reaped_ && pid_ > 0) kill(pid_, sig);
}

ProcResult Process::Wait(double timeout_s) {
  ProcResult r;
  auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
  std::optional<Clock::time_point> reaped_at;
  int status = 0;
  while (!reaped_ || out_fd_ >= 0 || err_fd_ >= 0) {
    pollfd fds[2];
    int n = 0;
    if (out_fd_ >= 0) fds[n++] = {out_fd_, POLLIN, 0};
    if (err_fd_ >= 0) fds[n++] = {err_fd_, POLLIN, 0};
    if (n > 0) {
      poll(fds, static_cast<nfds_t>(n), 50);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (out_fd_ >= 0) Drain(&out_fd_, &r.out);
    if (err_fd_ >= 0) Drain(&err_fd_, &r.err);
    if (!reaped_ && waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped_ = true;
      reaped_at = Clock::now();
    }
    if (!reaped_ && Clock::now() > deadline) {
      r.timed_out = true;
      kill(-pid_, SIGKILL);
      kill(pid_, SIGKILL);
    }
    // A grandchild may still hold the pipes after the child is gone: stop waiting for EOF.
    if (reaped_at && Clock::now() - *reaped_at > std::chrono::seconds(2)) break;
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

ProcResult RunProcess(const std::vector<std::string>& argv, const std::string& cwd,
                      const EnvMap& env, double timeout_s) {
  Process p(argv, cwd, env);
  return p.Wait(timeout_s);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& content) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

bool ProcessAlive(pid_t pid) {
  std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) return false;
  size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] != 'Z';
}

TempWorkspace::TempWorkspace() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") + "/arbor-it-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp: " << std::strerror(errno);
    return;
  }
  root_ = buf.data();
  repo_ = root_ + "/repo";
  aux_ = root_ + "/aux";
  fs::create_directories(repo_);
  fs::create_directories(aux_);
  ProcResult init = Git({"init", "-q"});
  EXPECT_EQ(init.exit_code, 0) << init.Describe();
}

TempWorkspace::~TempWorkspace() {
  if (root_.empty()) return;
  if (std::getenv("ARBOR_KEEP_TMP") != nullptr) {
    std::fprintf(stderr, "kept %s\n", root_.c_str());
    return;
  }
  std::error_code ec;
  fs::remove_all(root_, ec);
}

std::unique_ptr<TempWorkspace> TempWorkspace::Toy() {
  auto ws = std::make_unique<TempWorkspace>();
  for (const auto& entry : fs::directory_iterator(TOY_DIR)) {
    std::string name = entry.path().filename().string();
    if (name == ".arbor" || name == "toy") continue;  // state or binary of a local demo run
    fs::copy(entry.path(), fs::path(ws->repo()) / name, fs::copy_options::recursive);
  }
  ws->CommitAll();
  return ws;
}

void TempWorkspace::Write(const std::string& relative, const std::string& content) {
  WriteFile(repo_ + "/" + relative, content);
}

void TempWorkspace::CommitAll() {
  ProcResult add = Git({"add", "-A"});
  ASSERT_EQ(add.exit_code, 0) << add.Describe();
  ProcResult commit = Git({"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"});
  ASSERT_EQ(commit.exit_code, 0) << commit.Describe();
}

ProcResult TempWorkspace::Git(const std::vector<std::string>& args, double timeout_s) const {
  std::vector<std::string> argv = {"git"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv, repo_, {}, timeout_s);
}

EnvMap TempWorkspace::ArborEnv(const EnvMap& extra) const {
  EnvMap env = {{"ARBOR_KB", root_ + "/kb.db"}};
  for (const auto& [k, v] : extra) env[k] = v;
  return env;
}

ProcResult TempWorkspace::Arbor(const std::vector<std::string>& args, const EnvMap& env,
                                double timeout_s) const {
  std::vector<std::string> argv = {ARBOR_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv, repo_, ArborEnv(env), timeout_s);
}

std::unique_ptr<Process> TempWorkspace::StartArbor(const std::vector<std::string>& args,
                                                   const EnvMap& env) const {
  std::vector<std::string> argv = {ARBOR_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return std::make_unique<Process>(argv, repo_, ArborEnv(env));
}

nlohmann::json TempWorkspace::ArborJson(const std::vector<std::string>& args) const {
  ProcResult r = Arbor(args, {}, 120);
  std::string cmd;
  for (const auto& a : args) cmd += " " + a;
  EXPECT_EQ(r.exit_code, 0) << "arbor" << cmd << ": " << r.Describe();
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << "arbor" << cmd << " printed no JSON:\n" << r.out;
  return j;
}

}  // namespace arbor::integration
