#include "exec/git_cli.h"

#include <cstdlib>

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
  auto run = RunCaptured(kGitCommand + args, cwd, GitEnv(), timeout_s);
  if (!run) return run.error();
  if (run->result.status == RunResult::Status::kExited && run->result.exit_code == 127) {
    return MakeError("git is not installed (not found on PATH)");
  }
  return run;
}

}  // namespace arbor
