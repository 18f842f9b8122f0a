// LineProcess: a child process spoken to one line at a time, for the Optuna bridge.
//
// The child's stdin and stdout are pipes to us (a conversation, which popen cannot hold: it
// opens one direction only); its stderr goes to a third pipe whose last few KiB are kept for
// error messages. Reads wait at most a given time (poll), so a hung child is an Error, not a
// hung benchmark. Promises: the destructor kills (SIGKILL) and reaps a child still running, so
// no LineProcess ever leaves a process behind; a write to a child that has exited is an Error,
// never a SIGPIPE. One thread uses one LineProcess at a time.
//
// Not started through exec/RunCommand (the bench may not depend on exec/, and the child must
// be spoken to while it runs): an Arbor process that is a child subreaper running commands
// concurrently must not use it (see src/exec/process_reaper.h).
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace arbor::search {

class LineProcess {
 public:
  // Starts argv[0] (searched in PATH when it has no '/') with argv, in our environment. An
  // Error when it cannot be started (no such file, not executable, no pipes).
  static Result<std::unique_ptr<LineProcess>> Start(const std::vector<std::string>& argv);

  ~LineProcess();
  LineProcess(const LineProcess&) = delete;
  LineProcess& operator=(const LineProcess&) = delete;

  // Writes `line` and a newline to the child's stdin (blocking while its pipe is full).
  Status WriteLine(const std::string& line);
  // Closes the child's stdin (the child then reads end of file).
  void CloseStdin();
  // The next line of the child's stdout, without its newline; nullopt at end of file (an
  // unterminated last line is returned first). An Error when no line came within timeout_s.
  Result<std::optional<std::string>> ReadLine(double timeout_s);
  // Closes stdin and waits up to timeout_s for the child to exit, reading (and dropping) the
  // rest of its stdout meanwhile; kills it after that. The exit code, or an Error when it was
  // killed by a signal or timed out.
  Result<int> Finish(double timeout_s);
  // SIGKILL and reap (no-op once reaped).
  void Kill();

  // The end of the child's stderr read so far (at most 4 KiB).
  const std::string& stderr_tail() const { return stderr_tail_; }
  // The last non-empty line of stderr_tail(), for one-line messages.
  std::string LastStderrLine() const;
  pid_t pid() const { return pid_; }

 private:
  LineProcess() = default;
  // Waits up to timeout_s for output on stdout or stderr and reads what came; false on timeout.
  bool Pump(double timeout_s);
  void ReadStderr();
  void CloseFds();

  pid_t pid_ = -1;
  bool reaped_ = false;
  int in_ = -1;   // the child's stdin (our write end)
  int out_ = -1;  // the child's stdout (our read end); -1 after end of file
  int err_ = -1;  // the child's stderr (our read end); -1 after end of file
  std::string out_buf_;
  std::string stderr_tail_;
};

}  // namespace arbor::search
