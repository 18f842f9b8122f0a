// The pids cgroup on the real cgroup filesystem (skipped where none is writable).
#include "exec/cgroup.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "exec/runner.h"
#include "exec/test_util.h"

namespace arbor {
namespace {

namespace fs = std::filesystem;
using test::ProcessesWithArg;
using test::Slurp;

// "" when a pids cgroup can be created here, else why not.
std::string PidsCgroupProblem() {
  auto probe = PidsCgroup::Create(8);
  return probe.ok() ? "" : probe.error().message;
}

#define SKIP_WITHOUT_PIDS_CGROUP()                                   \
  if (std::string problem = PidsCgroupProblem(); !problem.empty()) { \
    GTEST_SKIP() << "no writable pids cgroup here: " << problem;     \
  }

TEST(PidsCgroupTest, CreatesALimitedCgroupAndRemovesIt) {
  SKIP_WITHOUT_PIDS_CGROUP();
  std::string path;
  {
    auto cg = PidsCgroup::Create(5);
    ASSERT_TRUE(cg.ok()) << cg.error().message;
    path = (*cg)->path();
    EXPECT_TRUE(fs::is_directory(path));
    EXPECT_EQ(Slurp(path + "/pids.max"), "5\n");
    EXPECT_TRUE((*cg)->Members().empty());
  }
  EXPECT_FALSE(fs::exists(path)) << "the cgroup outlived its owner";
}

TEST(PidsCgroupTest, ChildJoinsAndKillAllEndsItsDescendants) {
  SKIP_WITHOUT_PIDS_CGROUP();
  auto cg = PidsCgroup::Create(16);
  ASSERT_TRUE(cg.ok()) << cg.error().message;
  int fd = (*cg)->procs_fd();
  pid_t pid = fork();
  if (pid == 0) {
    if (!PidsCgroup::JoinFromChild(fd)) _exit(3);
    setsid();  // leaving the session does not leave the cgroup
    execl("/bin/sh", "sh", "-c", "sleep 3101.5 & sleep 3101.5 & setsid sleep 3101.5 & wait",
          static_cast<char*>(nullptr));
    _exit(4);
  }
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 200 && ProcessesWithArg("3101.5").size() < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(ProcessesWithArg("3101.5").size(), 3u);
  EXPECT_GE((*cg)->Members().size(), 4u);
  EXPECT_EQ((*cg)->KillAll(), 4);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status));
  // The sleeps were our grandchildren: as a test process we are not their reaper, init is.
  for (int i = 0; i < 200 && !ProcessesWithArg("3101.5").empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(ProcessesWithArg("3101.5").empty());
}

TEST(PidsCgroupTest, RemovesCgroupsOfAKilledArbor) {
  SKIP_WITHOUT_PIDS_CGROUP();
  std::string parent;
  {
    auto cg = PidsCgroup::Create(5);
    ASSERT_TRUE(cg.ok()) << cg.error().message;
    parent = fs::path((*cg)->path()).parent_path().string();
  }
  // Pid 2^22 + 1 is above the kernel's pid_max: its owner is certainly gone.
  std::string stale = parent + "/arbor-4194305-0";
  ASSERT_EQ(mkdir(stale.c_str(), 0755), 0) << stale;
  auto cg = PidsCgroup::Create(5);
  ASSERT_TRUE(cg.ok()) << cg.error().message;
  EXPECT_FALSE(fs::exists(stale));
}

TEST(PidsCgroupTest, ForkBombInARunnerCommandStopsAtTheLimitAndIsKilled) {
  SKIP_WITHOUT_PIDS_CGROUP();
  test::TempDir dir;
  RunSpec spec;
  // Each round starts sleepers until fork fails; the shell then gives up with an error.
  spec.command = "for i in $(seq 40); do sleep 3102.5 & done; wait";
  spec.cwd = dir.path();
  spec.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}};
  spec.timeout_s = 60;
  spec.max_processes = 10;
  spec.stdout_path = dir.path() + "/out";
  spec.stderr_path = dir.path() + "/err";
  auto r = RunCommand(spec);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->ok());
  EXPECT_NE(Slurp(dir.path() + "/err").find("fork"), std::string::npos)
      << Slurp(dir.path() + "/err");
  // The shell and seq count too: at most 9 sleepers ever ran, and all were killed.
  EXPECT_GE(r->killed_leftovers, 1);
  EXPECT_LE(r->killed_leftovers, 9);
  EXPECT_TRUE(ProcessesWithArg("3102.5").empty());
}

TEST(PidsCgroupTest, TheLimitIsEnforceableHere) {
  SKIP_WITHOUT_PIDS_CGROUP();
  EXPECT_EQ(ProcessLimitProblem(), "");
}

}  // namespace
}  // namespace arbor
