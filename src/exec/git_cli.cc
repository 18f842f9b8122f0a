#include "exec/git_cli.h"

#include <algorithm>
#include <cstdlib>

#include "util/escape.h"
#include "util/strings.h"

namespace arbor {

const char* const kGitCommand =
    "git -c core.hooksPath=/dev/null -c commit.gpgsign=false -c core.fsmonitor=false ";

std::map<std::string, std::string> GitEnv() {
  std::map<std::string, std::string> env = {
      {"GIT_CONFIG_NOSYSTEM", "1"}, {"GIT_TERMINAL_PROMPT", "0"}, {"LC_ALL", "C"}};
  const char* path = std::getenv("PATH");
  env["PATH"] = path != nullptr && *path != '\0' ? path : "/usr/local/bin:/usr/bin:/bin";
  if (const char* home = std::getenv("HOME")) env["HOME"] = home;
  return env;
}

Result<CapturedRun> RunGitCli(const std::string& args, const std::string& cwd, double timeout_s) {
  ARBOR_TRY_ASSIGN(auto run, RunCaptured(kGitCommand + args, cwd, GitEnv(), timeout_s));
  if (run.result.status == RunResult::Status::kExited && run.result.exit_code == 127) {
    return MakeError("git is not installed (not found on PATH)");
  }
  return run;
}

Result<std::vector<std::string>> StageIgnoredPaths(const std::string& worktree,
                                                   const std::vector<std::string>& paths) {
  std::vector<std::string> staged;
  if (paths.empty()) return staged;
  std::string quoted;
  for (const std::string& p : paths) quoted += " " + ShellQuote(p);
  ARBOR_TRY_ASSIGN(
      auto listed,
      RunGitCli("ls-files -z --others --ignored --exclude-standard --" + quoted, worktree));
  if (!listed.result.ok()) {
    return MakeError("git ls-files failed in " + worktree + ": " + Trim(listed.err));
  }
  for (const std::string& path : Split(listed.out, '\0')) {
    if (!path.empty()) staged.push_back(path);
  }
  if (staged.empty()) return staged;
  std::sort(staged.begin(), staged.end());
  std::string names;
  for (const std::string& p : staged) names += " " + ShellQuote(p);
  ARBOR_TRY_ASSIGN(auto added, RunGitCli("add -f --" + names, worktree));
  if (!added.result.ok()) {
    return MakeError("git add -f failed in " + worktree + ": " + Trim(added.err));
  }
  return staged;
}

std::string IgnoredPathsWarning(const std::vector<std::string>& staged) {
  if (staged.empty()) return "";
  std::vector<std::string> shown(
      staged.begin(), staged.begin() + static_cast<long>(std::min<size_t>(3, staged.size())));
  std::string list = Join(shown, ", ");
  if (staged.size() > shown.size())
    list += " and " + std::to_string(staged.size() - shown.size()) + " more";
  return "warning: the repository ignores " + list +
         ", which this change writes; committed anyway (git add -f) so the branch holds what "
         "was measured";
}

}  // namespace arbor
