// Harness for the integration tests: temporary git workspaces and the real `arbor` binary.
//
// A TempWorkspace is a fresh directory holding a git repository (`repo/`, committed) and a
// scratch folder outside it (`aux/`) for files tests want to share with commands without
// dirtying the repository. Every process is started with fork/exec (no shell in between, so
// paths are never re-parsed), in its own process group, with a timeout after which the whole
// group is killed. The knowledge base is redirected into the workspace so tests neither read
// nor write the user's.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace arbor::integration {

struct ProcResult {
  int exit_code = -1;  // valid when signal == 0
  int signal = 0;      // the signal that ended the process, or 0
  bool timed_out = false;
  std::string out;
  std::string err;
  // "exit 3" / "signal 9" / "timed out", plus stderr: for assertion messages.
  std::string Describe() const;
};

using EnvMap = std::map<std::string, std::string>;

// A started child. Wait() collects its output; the destructor kills the group if still running.
class Process {
 public:
  Process(const std::vector<std::string>& argv, const std::string& cwd, const EnvMap& env);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  // Sends `sig` to the child only (not its group): what an external `kill -9 PID` does.
  void Signal(int sig);
  // Reads output until the child exits or `timeout_s` passes (then SIGKILLs the group).
  ProcResult Wait(double timeout_s);

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  bool reaped_ = false;
};

// Runs argv to completion. `env` adds to (or overrides) the current environment, minus every
// inherited ARBOR_* variable.
ProcResult RunProcess(const std::vector<std::string>& argv, const std::string& cwd,
                      const EnvMap& env = {}, double timeout_s = 300);

std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& content);
// True if /proc/<pid> exists and is not a zombie.
bool ProcessAlive(pid_t pid);

class TempWorkspace {
 public:
  TempWorkspace();   // empty repo/ (git init), aux/; nothing committed yet
  ~TempWorkspace();  // removes everything unless ARBOR_KEEP_TMP is set
  TempWorkspace(const TempWorkspace&) = delete;
  TempWorkspace& operator=(const TempWorkspace&) = delete;

  // A workspace holding a copy of examples/toy, committed.
  static std::unique_ptr<TempWorkspace> Toy();

  const std::string& root() const { return root_; }
  const std::string& repo() const { return repo_; }
  const std::string& aux() const { return aux_; }

  void Write(const std::string& relative, const std::string& content);  // under repo/
  void CommitAll();
  ProcResult Git(const std::vector<std::string>& args, double timeout_s = 60) const;

  // Runs `arbor args...` in repo/. `env` adds variables (e.g. ARBOR_CRASH_AT).
  ProcResult Arbor(const std::vector<std::string>& args, const EnvMap& env = {},
                   double timeout_s = 600) const;
  std::unique_ptr<Process> StartArbor(const std::vector<std::string>& args,
                                      const EnvMap& env = {}) const;
  // Runs arbor and parses its stdout as one JSON document; fails the test on error.
  nlohmann::json ArborJson(const std::vector<std::string>& args) const;

 private:
  EnvMap ArborEnv(const EnvMap& extra) const;
  std::string root_;
  std::string repo_;
  std::string aux_;
};

}  // namespace arbor::integration
