// The small helpers of runner.h around RunCommand: file reading, captured runs, the engine's
// environment for the tools it runs.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "exec/runner.h"
#include "exec/unique_fd.h"

namespace arbor {
namespace {

// Reads up to `max_bytes` from `fd` at its current offset.
std::string ReadUpTo(int fd, size_t max_bytes) {
  std::string out;
  char buf[65536];
  while (out.size() < max_bytes) {
    ssize_t n = read(fd, buf, std::min(sizeof buf, max_bytes - out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// A fresh empty file in $TMPDIR (or /tmp), or an Error.
Result<std::string> TempFile(const char* stem) {
  const char* dir = std::getenv("TMPDIR");
  std::string path =
      std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/" + stem + "-XXXXXX";
  int fd = mkstemp(path.data());
  if (fd < 0)
    return MakeError("cannot create a temporary file " + path + ": " + std::strerror(errno));
  close(fd);
  return path;
}

}  // namespace

std::string ReadTail(const std::string& path, size_t max_bytes) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return "";
  struct stat st {};
  if (fstat(fd.get(), &st) == 0 && st.st_size > static_cast<off_t>(max_bytes)) {
    lseek(fd.get(), st.st_size - static_cast<off_t>(max_bytes), SEEK_SET);
  }
  return ReadUpTo(fd.get(), max_bytes);
}

Result<std::string> ReadFileBounded(const std::string& path, size_t max_bytes) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return MakeError("cannot read " + path + ": " + std::strerror(errno));
  std::string out = ReadUpTo(fd.get(), max_bytes);
  char extra;
  if (out.size() == max_bytes && read(fd.get(), &extra, 1) == 1) {
    return MakeError(path + " is larger than " + std::to_string(max_bytes) + " bytes");
  }
  return out;
}

Result<CapturedRun> RunCaptured(const std::string& command, const std::string& cwd,
                                const std::map<std::string, std::string>& env, double timeout_s,
                                const std::string& stdin_data) {
  ARBOR_TRY_ASSIGN(auto out_path, TempFile("arbor-out"));
  auto err_path = TempFile("arbor-err");
  if (!err_path) {
    unlink(out_path.c_str());
    return err_path.error();
  }
  RunSpec spec;
  spec.command = command;
  spec.cwd = cwd;
  spec.env = env;
  spec.timeout_s = timeout_s;
  spec.stdin_data = stdin_data;
  spec.stdout_path = out_path;
  spec.stderr_path = *err_path;
  spec.output = RunSpec::Output::kTransient;  // read back below, then deleted
  auto run = RunCommand(spec);
  CapturedRun captured;
  if (run) {
    captured.result = *run;
    captured.out = ReadTail(out_path, static_cast<size_t>(spec.output_limit_bytes));
    captured.err = ReadTail(*err_path, static_cast<size_t>(spec.output_limit_bytes));
  }
  unlink(out_path.c_str());
  unlink(err_path->c_str());
  if (!run) return run.error();
  return captured;
}

std::map<std::string, std::string> EngineEnv() {
  std::map<std::string, std::string> env;
  const char* path = std::getenv("PATH");
  env["PATH"] = path != nullptr && *path != '\0' ? path : "/usr/local/bin:/usr/bin:/bin";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    env["HOME"] = home;
  }
  return env;
}

}  // namespace arbor
