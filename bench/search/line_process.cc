#include "bench/search/line_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <utility>

#include "util/sigpipe.h"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX, for posix_spawnp

namespace arbor::search {
namespace {

constexpr size_t kStderrTail = 4096;

std::string ErrnoText(int e) { return std::strerror(e); }

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

// A close-on-exec pipe whose ends are above stderr, so the child's dup2 onto 0/1/2 always
// copies (a dup2 onto the same number would keep close-on-exec and close it at exec).
Status MakePipe(int* read_end, int* write_end) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return MakeError("pipe: " + ErrnoText(errno));
  for (int i = 0; i < 2; ++i) {
    if (fds[i] <= STDERR_FILENO) {
      int moved = fcntl(fds[i], F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
      close(fds[i]);
      fds[i] = moved;
    }
  }
  *read_end = fds[0];
  *write_end = fds[1];
  return {};
}

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

}  // namespace

Result<std::unique_ptr<LineProcess>> LineProcess::Start(const std::vector<std::string>& argv) {
  if (argv.empty()) return MakeError("LineProcess: empty command");
  std::unique_ptr<LineProcess> p(new LineProcess());
  int child_in = -1;
  int child_out = -1;
  int child_err = -1;
  Status s = MakePipe(&child_in, &p->in_);
  if (s.ok()) s = MakePipe(&p->out_, &child_out);
  if (s.ok()) s = MakePipe(&p->err_, &child_err);
  if (!s.ok()) {
    for (int* fd : {&child_in, &child_out, &child_err}) CloseFd(fd);
    return s.error();
  }
  // posix_spawn rather than fork: safe in a multi-threaded harness, and glibc reports a failed
  // exec (missing interpreter) as its return value. Every pipe end is close-on-exec; the
  // dup2'd copies on 0/1/2 are not.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, child_in, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, child_out, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, child_err, STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int rc = posix_spawnp(&p->pid_, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  for (int* fd : {&child_in, &child_out, &child_err}) CloseFd(fd);
  if (rc != 0) {
    p->pid_ = -1;
    p->reaped_ = true;
    return MakeError("cannot start " + argv[0] + ": " + ErrnoText(rc));
  }
  return p;
}

LineProcess::~LineProcess() {
  Kill();
  CloseFds();
}

void LineProcess::CloseFds() {
  CloseFd(&in_);
  CloseFd(&out_);
  CloseFd(&err_);
}

Status LineProcess::WriteLine(const std::string& line) {
  if (in_ < 0) return MakeError("the child's stdin is closed");
  std::string data = line + "\n";
  SigpipeBlock block;
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = write(in_, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return MakeError("writing to the child: " + ErrnoText(errno));
    off += static_cast<size_t>(n);
  }
  return {};
}

void LineProcess::CloseStdin() { CloseFd(&in_); }

void LineProcess::ReadStderr() {
  char buf[4096];
  ssize_t n = read(err_, buf, sizeof buf);
  if (n < 0 && errno == EINTR) return;
  if (n <= 0) {
    CloseFd(&err_);
    return;
  }
  stderr_tail_.append(buf, static_cast<size_t>(n));
  if (stderr_tail_.size() > kStderrTail) stderr_tail_.erase(0, stderr_tail_.size() - kStderrTail);
}

bool LineProcess::Pump(double timeout_s) {
  pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};  // a negative fd is ignored
  int ms = static_cast<int>(timeout_s * 1000);
  int n = poll(fds, 2, ms < 0 ? 0 : ms);
  if (n < 0) return errno == EINTR;
  if (n == 0) return false;
  if (fds[1].revents != 0) ReadStderr();
  if (fds[0].revents != 0) {
    char buf[4096];
    ssize_t got = read(out_, buf, sizeof buf);
    if (got > 0) {
      out_buf_.append(buf, static_cast<size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      CloseFd(&out_);
    }
  }
  return true;
}

Result<std::optional<std::string>> LineProcess::ReadLine(double timeout_s) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    size_t nl = out_buf_.find('\n');
    if (nl != std::string::npos) {
      std::string line = out_buf_.substr(0, nl);
      out_buf_.erase(0, nl + 1);
      return std::optional<std::string>(std::move(line));
    }
    if (out_ < 0) {
      if (out_buf_.empty()) return std::optional<std::string>();
      return std::optional<std::string>(std::exchange(out_buf_, {}));
    }
    double left = std::chrono::duration<double>(deadline - Clock::now()).count();
    if (left <= 0 || !Pump(left)) {
      return MakeError("no line from the child within " + Seconds(timeout_s));
    }
  }
}

Result<int> LineProcess::Finish(double timeout_s) {
  using Clock = std::chrono::steady_clock;
  CloseStdin();
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  while (!reaped_) {
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      reaped_ = true;
      return MakeError("waitpid: " + ErrnoText(errno));
    }
    if (r == pid_) {
      reaped_ = true;
      break;
    }
    double left = std::chrono::duration<double>(deadline - Clock::now()).count();
    if (left <= 0) {
      Kill();
      return MakeError("the child did not exit within " + Seconds(timeout_s));
    }
    if (out_ < 0 && err_ < 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // nothing left to poll
    } else {
      Pump(std::min(left, 0.05));  // keeps the child from blocking on a full pipe
    }
    out_buf_.clear();
  }
  // Exited: read what it left (stderr matters for messages), without waiting for descendants
  // that might still hold the pipes open.
  while ((out_ >= 0 || err_ >= 0) && Pump(0)) {
  }
  out_buf_.clear();
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    return MakeError("the child was killed by signal " + std::to_string(WTERMSIG(status)));
  }
  return MakeError("the child ended with wait status " + std::to_string(status));
}

void LineProcess::Kill() {
  if (reaped_ || pid_ <= 0) return;
  kill(pid_, SIGKILL);
  while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
}

std::string LineProcess::LastStderrLine() const {
  size_t end = stderr_tail_.find_last_not_of("\r\n \t");
  if (end == std::string::npos) return "";
  size_t begin = stderr_tail_.rfind('\n', end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  return stderr_tail_.substr(begin, end - begin + 1);
}

}  // namespace arbor::search
