// SigpipeBlock: while it lives, SIGPIPE is blocked in this thread, so writing to a child that
// stopped reading gives EPIPE instead of killing the process; a SIGPIPE such a write raised is
// discarded when it ends. Used by the command runner (exec/runner.cc) and the search
// benchmark's line-protocol child (bench/search/line_process.cc).
#pragma once

#include <pthread.h>
#include <signal.h>
#include <time.h>

namespace arbor {

class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&pipe_set_);
    sigaddset(&pipe_set_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_set_, &old_);
  }
  ~SigpipeBlock() {
    sigset_t pending;
    sigpending(&pending);
    if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      timespec zero{};
      sigtimedwait(&pipe_set_, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t pipe_set_{};
  sigset_t old_{};
  bool was_pending_ = false;
};

}  // namespace arbor
