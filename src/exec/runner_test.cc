#include "exec/runner.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "exec/test_util.h"
#include "util/escape.h"

namespace arbor {
namespace {

using test::ProcessesWithArg;
using test::TempDir;

class RunnerTest : public ::testing::Test {
 protected:
  RunSpec Spec(const std::string& command) const {
    RunSpec spec;
    spec.command = command;
    spec.cwd = dir_.path();
    spec.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}};
    spec.timeout_s = 60;
    spec.grace_s = 1;
    spec.stdout_path = dir_.path() + "/out";
    spec.stderr_path = dir_.path() + "/err";
    return spec;
  }
  RunResult Run(const RunSpec& spec) const {
    auto r = RunCommand(spec);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : RunResult{};
  }
  std::string Out() const { return ReadTail(dir_.path() + "/out", 1 << 20); }
  std::string Err() const { return ReadTail(dir_.path() + "/err", 1 << 20); }
  std::string Path(const std::string& name) const { return dir_.path() + "/" + name; }

  TempDir dir_;
};

TEST_F(RunnerTest, KillProcessesWithinKillsWhatWorksInTheFolderOnly) {
  std::filesystem::create_directories(Path("wt/sub"));
  std::filesystem::create_directories(Path("elsewhere"));
  auto start = [](const std::string& cwd) {
    pid_t pid = fork();
    if (pid == 0) {
      if (chdir(cwd.c_str()) != 0) _exit(1);
      execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
      _exit(1);
    }
    return pid;
  };
  pid_t inside = start(Path("wt/sub"));
  pid_t outside = start(Path("elsewhere"));
  // Both have entered their folders once /proc shows the cwd.
  for (int i = 0; i < 200; ++i) {
    std::error_code ec;
    auto a = std::filesystem::read_symlink("/proc/" + std::to_string(inside) + "/cwd", ec);
    auto b = std::filesystem::read_symlink("/proc/" + std::to_string(outside) + "/cwd", ec);
    if (a.filename() == "sub" && b.filename() == "elsewhere") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(KillProcessesWithin(Path("wt")), 1);
  int status = 0;
  ASSERT_EQ(waitpid(inside, &status, 0), inside);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_EQ(waitpid(outside, &status, WNOHANG), 0);  // still running
  kill(outside, SIGKILL);
  waitpid(outside, &status, 0);
  EXPECT_EQ(KillProcessesWithin(Path("missing")), 0);
}

TEST_F(RunnerTest, ExitCodeAndOutput) {
  RunResult r = Run(Spec("echo out; echo err >&2; exit 3"));
  EXPECT_EQ(r.status, RunResult::Status::kExited);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(Out(), "out\n");
  EXPECT_EQ(Err(), "err\n");
  EXPECT_EQ(r.killed_leftovers, 0);
  EXPECT_TRUE(Run(Spec("true")).ok());
}

TEST_F(RunnerTest, Signal) {
  RunResult r = Run(Spec("kill -SEGV $$"));
  EXPECT_EQ(r.status, RunResult::Status::kSignaled);
  EXPECT_EQ(r.signal, SIGSEGV);
}

TEST_F(RunnerTest, TimeoutTerminatesTheGroup) {
  RunSpec spec = Spec("sleep 100");
  spec.timeout_s = 0.5;
  spec.grace_s = 0.5;
  auto t0 = std::chrono::steady_clock::now();
  RunResult r = Run(spec);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status, RunResult::Status::kTimedOut);
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_GE(took, 0.4);
  EXPECT_LT(took, 20);
}

TEST_F(RunnerTest, IgnoredTermGetsKill) {
  RunSpec spec = Spec("trap '' TERM; echo started; sleep 3001.25; echo after");
  spec.timeout_s = 0.3;
  spec.grace_s = 0.7;
  auto t0 = std::chrono::steady_clock::now();
  RunResult r = Run(spec);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status, RunResult::Status::kTimedOut);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_GE(took, 0.9);
  EXPECT_LT(took, 20);
  EXPECT_EQ(Out(), "started\n");
  EXPECT_TRUE(ProcessesWithArg("3001.25").empty());
}

TEST_F(RunnerTest, DoubleForkedChildIsKilled) {
  RunResult r = Run(Spec("(sleep 3002.25 & echo $! > " + Path("pid") + "); exit 0"));
  EXPECT_TRUE(r.ok());
  EXPECT_GE(r.killed_leftovers, 1);
  std::string pid = ReadTail(Path("pid"));
  ASSERT_FALSE(pid.empty());
  EXPECT_FALSE(test::Alive(std::atoi(pid.c_str())));
  EXPECT_TRUE(ProcessesWithArg("3002.25").empty());
}

TEST_F(RunnerTest, SetsidChildIsKilled) {
  RunResult r = Run(Spec("setsid sleep 3003.25 & echo $! > " + Path("pid") + "; exit 0"));
  EXPECT_TRUE(r.ok());
  std::string pid = ReadTail(Path("pid"));
  ASSERT_FALSE(pid.empty());
  EXPECT_FALSE(test::Alive(std::atoi(pid.c_str())));
  EXPECT_TRUE(ProcessesWithArg("3003.25").empty());
}

TEST_F(RunnerTest, DaemonThatLeftTheSessionIsKilled) {
  // The daemon's parent exits at once: it is adopted by us from another session.
  RunResult r = Run(Spec("sh -c 'setsid -f sleep 3004.25; exit 0'; sleep 0.2; exit 0"));
  EXPECT_TRUE(r.ok());
  EXPECT_GE(r.killed_leftovers, 1);
  EXPECT_TRUE(ProcessesWithArg("3004.25").empty());
}

// What a signal handler does before the process exits at once: the command's group, and a
// daemon that double-forked out of its session and ignores SIGTERM (this process's adopted
// child), are killed; the rest of the process tree is not touched. Runs in a forked child,
// which plays Arbor and exits like the handler does. Its sleeps' arguments are its own: ctest runs
// tests two at a time, and another test's live sleeps would look like survivors.
TEST_F(RunnerTest, TheSignalSweepKillsTheGroupAndTheDaemonsThatLeftIt) {
  const std::string daemon_pid = Path("daemon"), group_pid = Path("group");
  const pid_t arbor = fork();
  ASSERT_GE(arbor, 0);
  if (arbor == 0) {
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);  // as Arbor is (not inherited across fork)
    RunSpec spec =
        Spec("sh -c \"setsid sh -c 'trap \\\"\\\" TERM; echo \\$\\$ > " + daemon_pid +
             "; exec sleep 3007.25' &\"; sleep 3008.25 & echo $! > " + group_pid + "; wait");
    std::thread([spec] { (void)RunCommand(spec); }).detach();
    for (int i = 0; i < 1000; ++i) {
      if (!ReadTail(daemon_pid).empty() && !ReadTail(group_pid).empty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    KillRunningCommandsFromSignal();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(arbor, &status, 0), arbor);
  for (const std::string& file : {daemon_pid, group_pid}) {
    const std::string text = ReadTail(file);
    ASSERT_FALSE(text.empty()) << file << " was never written";
    const pid_t pid = std::atoi(text.c_str());
    for (int i = 0; i < 200 && test::Alive(pid); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_FALSE(test::Alive(pid)) << file << " " << pid << " outlived the sweep";
    if (test::Alive(pid)) kill(pid, SIGKILL);
  }
  EXPECT_TRUE(ProcessesWithArg("3007.25").empty());
}

TEST_F(RunnerTest, ManyBackgroundChildrenAreKilled) {
  RunResult r = Run(Spec(
      "i=0; while [ $i -lt 40 ]; do (sleep 3005.25 &); setsid sleep 3005.25 & i=$((i+1)); done"));
  EXPECT_TRUE(r.ok());
  EXPECT_GE(r.killed_leftovers, 80);
  EXPECT_TRUE(ProcessesWithArg("3005.25").empty());
}

TEST_F(RunnerTest, OutputFloodIsCapped) {
  RunSpec spec = Spec("yes | head -c 100000000; echo tail >&2");
  spec.output_limit_bytes = 1 << 20;
  RunResult r = Run(spec);
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.stdout_truncated);
  EXPECT_FALSE(r.stderr_truncated);
  EXPECT_EQ(std::filesystem::file_size(Path("out")), 1u << 20);
  EXPECT_EQ(Err(), "tail\n");
}

TEST_F(RunnerTest, OutputFloodKeepsTheEndWhereResultsArePrinted) {
  RunSpec spec = Spec("yes | head -c 50000000; echo; echo '{\"v\": 7}'");
  spec.output_limit_bytes = 1 << 20;
  RunResult r = Run(spec);
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.stdout_truncated);
  EXPECT_LE(std::filesystem::file_size(Path("out")), 1u << 20);
  std::string tail = ReadTail(Path("out"), 64);
  EXPECT_NE(tail.find("{\"v\": 7}"), std::string::npos) << tail;
  EXPECT_NE(ReadTail(Path("out"), 300000).find("[arbor: output truncated here]"),
            std::string::npos);
}

TEST_F(RunnerTest, BackgroundWriterHoldingThePipeDoesNotHang) {
  RunSpec spec = Spec("(while :; do echo spam; sleep 0.01; done &); echo main");
  auto t0 = std::chrono::steady_clock::now();
  RunResult r = Run(spec);
  EXPECT_TRUE(r.ok());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10);
  EXPECT_NE(Out().find("main\n"), std::string::npos);
}

TEST_F(RunnerTest, StdinData) {
  RunSpec spec = Spec("cat");
  spec.stdin_data = "hello\nworld\n";
  EXPECT_TRUE(Run(spec).ok());
  EXPECT_EQ(Out(), "hello\nworld\n");

  spec = Spec("wc -c");
  spec.stdin_data = std::string(3 << 20, 'x');
  EXPECT_TRUE(Run(spec).ok());
  EXPECT_EQ(std::atoi(Out().c_str()), 3 << 20);

  spec = Spec("exit 0");  // never reads: EPIPE, not a SIGPIPE for us
  spec.stdin_data = std::string(8 << 20, 'x');
  EXPECT_TRUE(Run(spec).ok());

  spec = Spec("cat");  // no stdin_data: /dev/null
  EXPECT_TRUE(Run(spec).ok());
  EXPECT_EQ(Out(), "");
}

TEST_F(RunnerTest, EnvironmentIsExactlyTheSpec) {
  ASSERT_EQ(setenv("ARBOR_RUNNER_TEST_LEAK", "leaked", 1), 0);
  RunSpec spec = Spec("env");
  spec.env["FOO"] = "bar baz";
  EXPECT_TRUE(Run(spec).ok());
  std::string out = Out();
  EXPECT_NE(out.find("FOO=bar baz\n"), std::string::npos);
  EXPECT_NE(out.find("PATH=/usr/local/bin:/usr/bin:/bin\n"), std::string::npos);
  EXPECT_EQ(out.find("ARBOR_RUNNER_TEST_LEAK"), std::string::npos);
  EXPECT_EQ(out.find("HOME="), std::string::npos);
  unsetenv("ARBOR_RUNNER_TEST_LEAK");

  spec.env["BAD=NAME"] = "x";
  EXPECT_FALSE(RunCommand(spec).ok());
}

TEST_F(RunnerTest, CwdAndClosedDescriptors) {
  int leak = open(Path("marker-file").c_str(), O_WRONLY | O_CREAT, 0644);  // no O_CLOEXEC
  ASSERT_GE(leak, 0);
  RunResult r = Run(Spec("pwd; ls -l /proc/$$/fd"));
  close(leak);
  EXPECT_TRUE(r.ok());
  std::string out = Out();
  EXPECT_EQ(out.substr(0, out.find('\n')), std::filesystem::canonical(dir_.path()).string());
  EXPECT_EQ(out.find("marker-file"), std::string::npos) << out;
}

TEST_F(RunnerTest, MissingCwdIsAnError) {
  RunSpec spec = Spec("true");
  spec.cwd = Path("does-not-exist");
  auto r = RunCommand(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("does-not-exist"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("No such file"), std::string::npos) << r.error().message;
}

TEST_F(RunnerTest, UnwritableOutputIsAnError) {
  RunSpec spec = Spec("true");
  spec.stdout_path = Path("no/such/dir/out");
  EXPECT_FALSE(RunCommand(spec).ok());
  spec.stdout_path = "";
  EXPECT_FALSE(RunCommand(spec).ok());
}

TEST_F(RunnerTest, MemoryLimit) {
  RunSpec spec = Spec("x=$(head -c 300000000 /dev/zero | tr '\\0' a); echo ok");
  spec.memory_limit_mb = 100;
  RunResult r = Run(spec);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(Out().find("ok"), std::string::npos);
  spec.command = "echo small";
  EXPECT_TRUE(Run(spec).ok());
}

TEST_F(RunnerTest, CpuLimit) {
  RunSpec spec = Spec("while :; do :; done");
  spec.cpu_limit_s = 1;
  spec.timeout_s = 30;
  RunResult r = Run(spec);
  EXPECT_EQ(r.status, RunResult::Status::kSignaled);
  EXPECT_TRUE(r.signal == SIGXCPU || r.signal == SIGKILL) << r.signal;
}

TEST_F(RunnerTest, ConcurrentRunsDoNotKillEachOther) {
  // A keeps a child in a session of its own while B, started later, ends and sweeps.
  RunSpec a = Spec("setsid sh -c 'sleep 1.5; echo alive' & wait; echo done");
  a.stdout_path = Path("a.out");
  a.stderr_path = Path("a.err");
  RunResult ra;
  std::thread ta([&] { ra = Run(a); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  RunResult rb = Run(Spec("(sleep 3006.25 &); setsid sleep 3006.25 & exit 0"));
  ta.join();
  EXPECT_TRUE(rb.ok());
  EXPECT_GE(rb.killed_leftovers, 1);  // the one still in B's session
  EXPECT_TRUE(ra.ok());
  EXPECT_EQ(ReadTail(Path("a.out")), "alive\ndone\n");
  // B's setsid'd orphan could have been A's as far as /proc tells: it was left for the last
  // run to end, A, which killed it.
  EXPECT_LE(ra.killed_leftovers, 1);
  EXPECT_EQ(KillOrphans(), 0);
  EXPECT_TRUE(ProcessesWithArg("3006.25").empty());
}

TEST_F(RunnerTest, RunCaptured) {
  auto r = RunCaptured("echo hi; echo oops >&2; exit 4", dir_.path(), {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->result.exit_code, 4);
  EXPECT_EQ(r->out, "hi\n");
  EXPECT_EQ(r->err, "oops\n");
  EXPECT_FALSE(RunCaptured("true", Path("missing"), {}).ok());
}

TEST_F(RunnerTest, PinsTheCommandAndItsChildrenToItsCpus) {
  // The last CPU this test may use, so that pinning visibly narrows a multi-CPU set.
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  int cpu = -1;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &mine)) cpu = c;
  }
  ASSERT_GE(cpu, 0);
  RunSpec spec = Spec("sh -c 'grep Cpus_allowed_list /proc/self/status'");
  spec.cpus = {cpu};
  RunResult r = Run(spec);
  EXPECT_EQ(r.exit_code, 0) << Err();
  EXPECT_EQ(Out(), "Cpus_allowed_list:\t" + std::to_string(cpu) + "\n");
}

TEST_F(RunnerTest, APinToACpuOutOfRangeIsAnError) {
  RunSpec spec = Spec("true");
  spec.cpus = {CPU_SETSIZE};
  EXPECT_FALSE(RunCommand(spec).ok());
}

TEST(RunHelpersTest, ReadTailAndReadFileBounded) {
  TempDir dir;
  std::string path = dir.path() + "/f";
  std::string text;
  for (int i = 0; i < 1000; ++i) text += std::to_string(i % 10);
  std::ofstream(path) << text;
  EXPECT_EQ(ReadTail(path, 10), text.substr(990));
  EXPECT_EQ(ReadTail(path, 5000), text);
  EXPECT_EQ(ReadTail(dir.path() + "/missing"), "");
  EXPECT_EQ(*ReadFileBounded(path), text);
  EXPECT_EQ(*ReadFileBounded(path, 1000), text);
  EXPECT_FALSE(ReadFileBounded(path, 999).ok());
  auto missing = ReadFileBounded(dir.path() + "/missing");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("/missing"), std::string::npos);
}

TEST(RunHelpersTest, ShellQuote) {
  EXPECT_EQ(ShellQuote("abc-1.2/x"), "abc-1.2/x");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  TempDir dir;
  for (std::string s : {"it's", "$HOME `x` \"q\" \\n", "a\nb", "*", ""}) {
    auto r = RunCaptured("printf %s " + ShellQuote(s), dir.path(), {});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->out, s);
  }
}

}  // namespace
}  // namespace arbor
