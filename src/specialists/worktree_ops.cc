#include "specialists/worktree_ops.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "exec/git_cli.h"
#include "exec/runner.h"
#include "util/escape.h"
#include "util/strings.h"

namespace arbor {
namespace {

// Git's stderr as at most `max` non-empty lines joined by newlines.
std::string GitMessage(const CapturedRun& run, size_t max) {
  std::vector<std::string> lines;
  for (const std::string& line : Split(run.err, '\n')) {
    std::string t = Trim(line);
    if (!t.empty() && lines.size() < max) lines.push_back(std::move(t));
  }
  if (lines.empty()) return "git exited with code " + std::to_string(run.result.exit_code);
  return Join(lines, "\n");
}

Status Git(const std::string& args, const std::string& worktree, double timeout_s) {
  ARBOR_TRY_ASSIGN(CapturedRun run, RunGitCli(args, worktree, timeout_s));
  if (!run.result.ok()) return MakeError("git " + args + ": " + GitMessage(run, 1));
  return {};
}

}  // namespace

Status ResetWorktree(const std::string& worktree, const std::string& commit, double timeout_s) {
  ARBOR_TRY(
      Git("reset -q --hard " + ShellQuote(commit.empty() ? "HEAD" : commit), worktree, timeout_s));
  return Git("clean -q -fd", worktree, timeout_s);
}

Status ApplyDiff(const std::string& worktree, const std::string& diff, double timeout_s) {
  Result<CapturedRun> run =
      RunCaptured(std::string(kGitCommand) + "apply -p1 --whitespace=nowarn -", worktree, GitEnv(),
                  timeout_s, diff);
  if (!run) return MakeError("could not run git: " + run.error().message);
  if (!run->result.ok()) return MakeError(GitMessage(*run, 10));
  return {};
}

Status WriteFiles(const std::string& worktree, const std::vector<FileBlock>& files) {
  namespace fs = std::filesystem;
  for (const FileBlock& f : files) {
    fs::path path = fs::path(worktree) / f.path;
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec) return MakeError("cannot create the folder of " + f.path + ": " + ec.message());
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return MakeError("cannot write " + f.path + ": " + std::strerror(errno));
    size_t done = 0;
    while (done < f.content.size()) {
      ssize_t n = write(fd, f.content.data() + done, f.content.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        std::string why = std::strerror(errno);
        close(fd);
        return MakeError("cannot write " + f.path + ": " + why);
      }
      done += static_cast<size_t>(n);
    }
    if (close(fd) != 0) return MakeError("cannot write " + f.path + ": " + std::strerror(errno));
  }
  return {};
}

}  // namespace arbor
