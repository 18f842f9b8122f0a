// Service (service.h) over real processes: foreground servers, double-forked daemons, servers
// that ignore SIGTERM or crash, and their neighbours' sweeps.
#include "exec/service.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "exec/test_util.h"

namespace arbor {
namespace {

using test::TempDir;

class ServiceTest : public ::testing::Test {
 protected:
  Service::Spec Spec(const std::string& command) const {
    Service::Spec spec;
    spec.run.command = command;
    spec.run.cwd = dir_.path();
    spec.run.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"ARBOR_SERVE_ID", Path("mark")}};
    spec.run.stdout_path = Path("out");
    spec.run.stderr_path = Path("err");
    spec.marker = "ARBOR_SERVE_ID=" + Path("mark");
    return spec;
  }
  std::unique_ptr<Service> Start(const std::string& command) const {
    auto s = Service::Start(Spec(command));
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
    return s.ok() ? std::move(*s) : nullptr;
  }
  std::string Path(const std::string& name) const { return dir_.path() + "/" + name; }
  // The pid a command wrote into `name`, waiting for it (the machine may be loaded).
  pid_t WaitPid(const std::string& name) const {
    for (int i = 0; i < 1000; ++i) {
      std::string text = test::Slurp(Path(name));
      if (!text.empty() && text.back() == '\n') return std::atoi(text.c_str());
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }
  // Waits until `what` holds, for at most 20 s.
  template <typename F>
  static bool Eventually(F what) {
    for (int i = 0; i < 1000; ++i) {
      if (what()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  TempDir dir_;
};

// A daemon: a subshell forks it and exits, and it leaves the command's session (setsid), so
// only its marker (and the cgroup, where there is one) ties it to the service.
constexpr const char* kDaemon =
    "(setsid sh -c 'echo $$ > daemon.pid; exec sleep 3403.5' > /dev/null 2>&1 &); exit 0";

TEST_F(ServiceTest, AForegroundServerRunsUntilStoppedAndItsOutputIsKept) {
  auto s = Start("echo hello; echo oops >&2; echo $$ > shell.pid; exec sleep 3401.5");
  ASSERT_NE(s, nullptr);
  const pid_t pid = WaitPid("shell.pid");
  ASSERT_GT(pid, 0);
  EXPECT_EQ(pid, s->pid());  // exec: the shell became the server
  EXPECT_TRUE(s->Alive());
  EXPECT_FALSE(s->ShellEnding().has_value());
  EXPECT_TRUE(s->Members().count(pid));
  EXPECT_EQ(s->Stop(2.0), 0);  // sleep ends on SIGTERM: nothing needed SIGKILL
  EXPECT_FALSE(test::Alive(pid));
  EXPECT_FALSE(s->Alive());
  EXPECT_EQ(test::Slurp(Path("out")), "hello\n");
  EXPECT_EQ(test::Slurp(Path("err")), "oops\n");
}

TEST_F(ServiceTest, ADoubleForkedDaemonIsFoundByItsMarkerAndStopped) {
  auto s = Start(kDaemon);
  ASSERT_NE(s, nullptr);
  const pid_t daemon = WaitPid("daemon.pid");
  ASSERT_GT(daemon, 0);
  ASSERT_TRUE(Eventually([&] { return s->ShellEnding().has_value(); }));
  EXPECT_FALSE(s->ShellEnding()->failed());
  EXPECT_TRUE(s->Alive()) << "the daemon serves on after its launcher exited";
  EXPECT_TRUE(s->Members().count(daemon));
  // A command run beside it, and the idle sweep of orphans, leave it alone: it started after
  // the service's registered shell (process_reaper.h).
  RunSpec beside;
  beside.command = "true";
  beside.stdout_path = Path("beside.out");
  beside.stderr_path = Path("beside.err");
  ASSERT_TRUE(RunCommand(beside).ok());
  KillOrphans();
  EXPECT_TRUE(test::Alive(daemon));
  s->Stop(2.0);
  EXPECT_FALSE(test::Alive(daemon));
  EXPECT_FALSE(s->Alive());
}

// Daemonising is a race for a scan of /proc: the launcher may fork the daemon after /proc was
// listed and exit before its own entry is read. The service must never look gone meanwhile.
TEST_F(ServiceTest, ADaemonIsNeverMissedWhileItDaemonises) {
  for (int round = 0; round < 20; ++round) {
    auto s = Start("(setsid sh -c 'exec sleep 3405.5' > /dev/null 2>&1 &); exit 0");
    ASSERT_NE(s, nullptr);
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(s->Alive()) << "round " << round << ", look " << i;
    s->Stop(2.0);
  }
}

TEST_F(ServiceTest, ADaemonIgnoringSigtermIsKilled) {
  auto s = Start(
      "(setsid sh -c 'trap \"\" TERM; echo $$ > daemon.pid; while :; do sleep 1; done' "
      "> /dev/null 2>&1 &); exit 0");
  ASSERT_NE(s, nullptr);
  const pid_t daemon = WaitPid("daemon.pid");
  ASSERT_GT(daemon, 0);
  EXPECT_GE(s->Stop(0.3), 1);
  EXPECT_FALSE(test::Alive(daemon));
}

// The daemon crashes; its worker is stopped by the daemon's end (a SIGTERM, as PDEATHSIG would
// send): the crash is the cause, not the worker's SIGTERM that came after it.
TEST_F(ServiceTest, ADaemonThatCrashesEndsTheServiceWithItsSignal) {
  auto s = Start(
      "(setsid sh -c 'sleep 3406.5 & w=$!; echo $$ > daemon.pid; "
      "while [ ! -e crash ]; do sleep 0.05; done; kill -TERM $w; sleep 0.2; kill -SEGV $$' "
      "> /dev/null 2>&1 &); exit 0");
  ASSERT_NE(s, nullptr);
  ASSERT_GT(WaitPid("daemon.pid"), 0);
  ASSERT_TRUE(Eventually([&] { return s->ShellEnding().has_value(); }));
  EXPECT_TRUE(s->Alive());
  ASSERT_EQ(std::system(("touch '" + Path("crash") + "'").c_str()), 0);
  ASSERT_TRUE(Eventually([&] { return !s->Alive(); }));
  ASSERT_TRUE(s->CauseOfEnd().has_value());
  EXPECT_EQ(s->CauseOfEnd()->signal, SIGSEGV) << s->CauseOfEnd()->Describe();
  EXPECT_EQ(s->CauseOfEnd()->Describe(), "was killed by signal 11 (SIGSEGV)");
}

TEST_F(ServiceTest, AServerThatExitsReportsItsCode) {
  auto s = Start("echo failing >&2; exit 3");
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(Eventually([&] { return !s->Alive(); }));
  ASSERT_TRUE(s->CauseOfEnd().has_value());
  EXPECT_EQ(s->CauseOfEnd()->exit_code, 3);
  s->Stop(0);
  EXPECT_EQ(test::Slurp(Path("err")), "failing\n");
}

TEST_F(ServiceTest, TheMarkerMustBeInTheEnvironment) {
  Service::Spec spec = Spec("exec sleep 3404.5");
  spec.marker = "ARBOR_SERVE_ID=elsewhere";
  auto s = Service::Start(spec);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("marker"), std::string::npos) << s.error().message;
}

TEST_F(ServiceTest, KillProcessesWithEnvTakesWhatAKilledRunLeft) {
  // What a service's processes look like to the next run: marked, nobody's children.
  auto s = Start(kDaemon);
  ASSERT_NE(s, nullptr);
  const pid_t daemon = WaitPid("daemon.pid");
  ASSERT_GT(daemon, 0);
  EXPECT_EQ(KillProcessesWithEnv("ARBOR_SERVE_ID=" + Path("other")), 0);
  EXPECT_TRUE(test::Alive(daemon));
  EXPECT_GE(KillProcessesWithEnv("ARBOR_SERVE_ID=" + dir_.path() + "/"), 1);
  EXPECT_TRUE(Eventually([&] { return !test::Alive(daemon); }));
}

}  // namespace
}  // namespace arbor
