// The watchdog's loop (watchdog.h) over real processes; the whole path through the arbor
// binary and a kill -9 is IntegrationStop.AKill9OfArborTakesWhatItsCommandsStartedWithIt.
#include "exec/watchdog.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace arbor {
namespace {

// A shell in a session of its own whose child sleeps; returns the shell's pid (== its sid)
// once the session exists: on a loaded machine the child may not have run setsid() by the time
// the watchdog is told of it, and a session that does not exist yet cannot be killed.
pid_t StartSession() {
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(ready[0]);
    setsid();
    close(ready[1]);  // the parent's read returns: the session exists
    execl("/bin/sh", "sh", "-c", "sleep 3301.5 & wait", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(ready[1]);
  char byte = 0;
  while (read(ready[0], &byte, 1) < 0 && errno == EINTR) {
  }
  close(ready[0]);
  return pid;
}

bool SessionAlive(pid_t sid) {
  // The shell may be our zombie, and so may its killed sleep once an earlier test of this
  // binary made it a child subreaper: reap what has ended, then ask whether any member is left.
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  return kill(-sid, 0) == 0;
}

TEST(WatchdogTest, WhenItsPeerClosesItKillsTheSessionsItWasToldOfAndNoOther) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);  // not the shells'
  const pid_t tracked = StartSession();
  const pid_t forgotten = StartSession();
  const pid_t dog = fork();
  if (dog == 0) {
    close(fds[1]);
    _exit(WatchdogMain(fds[0]));
  }
  close(fds[0]);
  const std::string lines = "+" + std::to_string(tracked) + "\n+" + std::to_string(forgotten) +
                            "\n-" + std::to_string(forgotten) + "\n";
  ASSERT_EQ(write(fds[1], lines.data(), lines.size()), static_cast<ssize_t>(lines.size()));
  usleep(100 * 1000);
  EXPECT_TRUE(SessionAlive(tracked));  // nothing happens while the peer is open
  close(fds[1]);
  int status = 0;
  ASSERT_EQ(waitpid(dog, &status, 0), dog);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  waitpid(tracked, nullptr, 0);  // the shell, killed: reap it so only its child could remain
  for (int i = 0; i < 100 && SessionAlive(tracked); ++i) usleep(20 * 1000);
  EXPECT_FALSE(SessionAlive(tracked)) << "the tracked session's sleep outlived the watchdog";
  EXPECT_TRUE(SessionAlive(forgotten)) << "a session the watchdog was told to forget was killed";
  kill(-forgotten, SIGKILL);
  waitpid(forgotten, nullptr, 0);
}

// A process in a session of its own whose environment holds `entry`: a double-forked daemon's
// shape, which no tracked session reaches.
pid_t StartMarked(const std::string& entry) {
  const pid_t pid = fork();
  if (pid == 0) {
    setsid();
    char* env[] = {const_cast<char*>(entry.c_str()), nullptr};
    execle("/bin/sleep", "sleep", "3302.5", static_cast<char*>(nullptr), env);
    _exit(127);
  }
  return pid;
}

TEST(WatchdogTest, ItKillsTheProcessesHoldingAMarkerItWasToldOf) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  const std::string tag = std::to_string(getpid());
  const pid_t marked = StartMarked("ARBOR_SERVE_ID=/w/" + tag + "/a");
  const pid_t forgotten = StartMarked("ARBOR_SERVE_ID=/w/" + tag + "/b");
  const pid_t other = StartMarked("ARBOR_SERVE_ID=/w/" + tag + "/a-but-longer");
  const pid_t dog = fork();
  if (dog == 0) {
    close(fds[1]);
    _exit(WatchdogMain(fds[0]));
  }
  close(fds[0]);
  const std::string lines = "=ARBOR_SERVE_ID=/w/" + tag + "/a\n=ARBOR_SERVE_ID=/w/" + tag +
                            "/b\n~ARBOR_SERVE_ID=/w/" + tag + "/b\n";
  ASSERT_EQ(write(fds[1], lines.data(), lines.size()), static_cast<ssize_t>(lines.size()));
  usleep(100 * 1000);
  close(fds[1]);
  int status = 0;
  ASSERT_EQ(waitpid(dog, &status, 0), dog);
  // Our children: a killed one becomes a zombie, reaped here with its signal.
  ASSERT_EQ(waitpid(marked, &status, 0), marked);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_EQ(waitpid(forgotten, &status, WNOHANG), 0) << "a forgotten marker's process was killed";
  EXPECT_EQ(waitpid(other, &status, WNOHANG), 0) << "a marker is an exact entry, not a prefix";
  for (pid_t p : {forgotten, other}) {
    kill(p, SIGKILL);
    waitpid(p, nullptr, 0);
  }
}

}  // namespace
}  // namespace arbor
