// CommandTarget's environment (pass_env) and TargetServers' lifecycle over real /bin/sh
// servers: reuse, one idle server at a time, deaths and failures to become ready, stops. The
// same end to end through the arbor binary: tests/integration/serve_test.cc.
#include "app/command_target_servers.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "app/command_target.h"

namespace arbor {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool Alive(pid_t pid) {
  std::string stat = Slurp("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

TEST(CommandTargetEnvTest, PassEnvPassesNamesAndGlobsButNoSecretByGlob) {
  setenv("ARBOR_T_CUDA", "0", 1);
  setenv("ARBOR_T_MY_A", "a", 1);
  setenv("ARBOR_T_MY_TOKEN", "tok-123456", 1);
  setenv("ARBOR_T_MY_DECLARED", "declared-123456", 1);
  setenv("ARBOR_T_OTHER", "x", 1);
  CampaignSpec spec;
  spec.secrets = {"ARBOR_T_MY_DECLARED"};
  EXPECT_EQ(CommandTarget::InheritedEnv(spec).count("ARBOR_T_MY_A"), 0u) << "nothing by default";
  spec.target.pass_env = {"ARBOR_T_CUDA", "ARBOR_T_MY_*"};
  std::map<std::string, std::string> env = CommandTarget::InheritedEnv(spec);
  EXPECT_EQ(env["ARBOR_T_CUDA"], "0");
  EXPECT_EQ(env["ARBOR_T_MY_A"], "a");
  EXPECT_EQ(env.count("ARBOR_T_MY_TOKEN"), 0u) << "a credential's name is never matched by a glob";
  EXPECT_EQ(env.count("ARBOR_T_MY_DECLARED"), 0u) << "nor is a declared secret";
  EXPECT_EQ(env.count("ARBOR_T_OTHER"), 0u);
  EXPECT_FALSE(env["PATH"].empty());
  // Named, a secret passes: the user asked for it.
  spec.target.pass_env = {"ARBOR_T_MY_TOKEN", "ARBOR_T_MY_DECLARED"};
  env = CommandTarget::InheritedEnv(spec);
  EXPECT_EQ(env["ARBOR_T_MY_TOKEN"], "tok-123456");
  EXPECT_EQ(env["ARBOR_T_MY_DECLARED"], "declared-123456");
  for (const char* name : {"ARBOR_T_CUDA", "ARBOR_T_MY_A", "ARBOR_T_MY_TOKEN",
                           "ARBOR_T_MY_DECLARED", "ARBOR_T_OTHER"}) {
    unsetenv(name);
  }
  EXPECT_TRUE(CommandTarget::LooksLikeSecret("HF_TOKEN"));
  EXPECT_TRUE(CommandTarget::LooksLikeSecret("aws_secret_access_key"));
  EXPECT_TRUE(CommandTarget::LooksLikeSecret("DB_PASSWORD"));
  EXPECT_FALSE(CommandTarget::LooksLikeSecret("CUDA_VISIBLE_DEVICES"));
  EXPECT_FALSE(CommandTarget::LooksLikeSecret("OMP_NUM_THREADS"));
}

class TargetServersTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "arbor-servers-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    fs::create_directories(dir_ + "/wt");
    fs::create_directories(dir_ + "/runs");
    // Each server writes its pid where its state says (S), then waits.
    spec_.target.serve.command =
        "echo $$ > \"pid.$S\"; echo \"$ARBOR_PORT\" > \"port.$S\"; exec sleep 3501.5";
    spec_.target.serve.ready = "test -s \"pid.$S\"";
    spec_.target.serve.ready_timeout_s = 20;
  }
  void TearDown() override {
    servers_.reset();
    fs::remove_all(dir_);
  }
  TargetServers& servers() {
    if (!servers_) servers_ = std::make_unique<TargetServers>(&spec_, dir_ + "/runs");
    return *servers_;
  }
  RunContext Ctx(NodeId node, const std::string& state, const std::string& label) const {
    RunContext ctx;
    ctx.node = node;
    ctx.worktree = dir_ + "/wt";
    ctx.env = {{"S", state}};
    ctx.label = label;
    return ctx;
  }
  RunSpec Base(const RunContext& ctx) const {
    RunSpec rs;
    rs.env = {{"PATH", "/usr/bin:/bin"}, {"ARBOR_NODE", std::to_string(ctx.node)}};
    for (const auto& [k, v] : ctx.env) rs.env[k] = v;
    return rs;
  }
  TargetServers::Lease Acquire(NodeId node, const std::string& state, const std::string& label) {
    RunContext ctx = Ctx(node, state, label);
    return servers().Acquire(ctx, Base(ctx), "bench");
  }
  pid_t Pid(const std::string& state) const {
    return static_cast<pid_t>(std::atoi(Slurp(dir_ + "/wt/pid." + state).c_str()));
  }

  std::string dir_;
  CampaignSpec spec_;
  std::unique_ptr<TargetServers> servers_;
};

TEST_F(TargetServersTest, AStateKeepsItsServerAndAnotherStatesReplacesAnIdleOne) {
  TargetServers::Lease a = Acquire(5, "a", "cand-0");
  ASSERT_FALSE(a.failure) << a.failure->detail;
  EXPECT_GT(a.port, 0);
  EXPECT_EQ(Slurp(dir_ + "/wt/port.a"), std::to_string(a.port) + "\n");
  const pid_t pid_a = Pid("a");
  StepResult step;
  servers().Release(a, "bench", &step);
  EXPECT_TRUE(step.ok());
  TargetServers::Lease again = Acquire(5, "a", "cand-1");
  EXPECT_EQ(again.port, a.port) << "the same state's server is reused";
  servers().Release(again, "bench", &step);
  EXPECT_TRUE(Alive(pid_a));
  // The other arm of the A/B: its own server; the idle one stops first.
  TargetServers::Lease b = Acquire(5, "b", "base-1");
  ASSERT_FALSE(b.failure) << b.failure->detail;
  EXPECT_FALSE(Alive(pid_a)) << "two idle servers at once";
  EXPECT_EQ(servers().running(), 1);
  EXPECT_TRUE(fs::exists(dir_ + "/runs/n5/serve-cand-0/stdout"));
  EXPECT_TRUE(fs::exists(dir_ + "/runs/n5/serve-base-1/stdout"));
  // A server in use is never stopped for another: concurrent checks of two lanes.
  TargetServers::Lease c = Acquire(6, "c", "check");
  ASSERT_FALSE(c.failure) << c.failure->detail;
  EXPECT_EQ(servers().running(), 2);
  servers().Release(b, "bench", &step);
  servers().Release(c, "check", &step);
  servers().StopNode(5, "");
  EXPECT_FALSE(Alive(Pid("b")));
  EXPECT_TRUE(Alive(Pid("c")));
  servers().StopIn(dir_ + "/wt");  // a build in the worktree
  EXPECT_FALSE(Alive(Pid("c")));
  EXPECT_EQ(servers().running(), 0);
}

TEST_F(TargetServersTest, AServerThatDiesDuringACommandIsTheStepsCrash) {
  TargetServers::Lease a = Acquire(7, "a", "cand-0");
  ASSERT_FALSE(a.failure) << a.failure->detail;
  const pid_t pid = Pid("a");
  kill(pid, SIGSEGV);
  for (int i = 0; i < 1000 && Alive(pid); ++i) usleep(10 * 1000);  // kill() does not wait
  // The benchmark itself passed.
  StepResult step;
  servers().Release(a, "bench", &step);
  EXPECT_EQ(step.kind, ExitKind::kSignaled);
  EXPECT_EQ(step.signal, SIGSEGV);
  EXPECT_EQ(step.detail,
            "the server (serve-cand-0) was killed by signal 11 (SIGSEGV) during the bench");
  EXPECT_EQ(servers().running(), 0);
  // The next run of the state starts a fresh one.
  TargetServers::Lease again = Acquire(7, "a", "cand-1");
  EXPECT_FALSE(again.failure);
}

TEST_F(TargetServersTest, AServerThatStopsAnsweringFailsTheCommandWithItsLog) {
  spec_.target.serve.command = "echo 'worker 3 deadlocked' >&2; exec sleep 3502.5";
  spec_.target.serve.ready = "test ! -e broken";
  TargetServers::Lease a = Acquire(8, "a", "cand-0");
  ASSERT_FALSE(a.failure) << a.failure->detail;
  std::ofstream(dir_ + "/wt/broken") << "";
  StepResult step;
  step.kind = ExitKind::kFailed;  // the benchmark could not reach it
  step.exit_code = 7;
  servers().Release(a, "bench", &step);
  EXPECT_EQ(step.kind, ExitKind::kFailed);
  EXPECT_EQ(step.detail,
            "the server (serve-cand-0) stopped answering during the bench; the bench itself: exit "
            "code 7");
  EXPECT_EQ(step.tail, "worker 3 deadlocked\n");
  EXPECT_EQ(servers().running(), 0);
}

TEST_F(TargetServersTest, AServerThatExitsBeforeItIsReadyFailsWithItsLog) {
  spec_.target.serve.command = "echo 'bad TS_THREADS' >&2; exit 4";
  TargetServers::Lease a = Acquire(9, "a", "check");
  ASSERT_TRUE(a.failure);
  EXPECT_EQ(a.failure->kind, ExitKind::kFailed);
  EXPECT_EQ(a.failure->exit_code, 4);
  EXPECT_EQ(a.failure->detail, "the server (serve-check) exited with code 4 before it was ready");
  EXPECT_EQ(a.failure->tail, "bad TS_THREADS\n");
  EXPECT_EQ(a.failure->log_dir, dir_ + "/runs/n9/serve-check");
  EXPECT_EQ(servers().running(), 0);
}

TEST_F(TargetServersTest, AServerNeverReadyIsStoppedAtTheTimeout) {
  spec_.target.serve.ready = "false";
  spec_.target.serve.ready_timeout_s = 0.5;
  TargetServers::Lease a = Acquire(10, "a", "check");
  ASSERT_TRUE(a.failure);
  EXPECT_EQ(a.failure->kind, ExitKind::kTimedOut);
  EXPECT_EQ(a.failure->detail,
            "the server (serve-check) was not ready within 0.5s (serve.ready_timeout; `ready` last "
            "gave exit code 1)");
  EXPECT_FALSE(Alive(Pid("a")));
  EXPECT_EQ(servers().running(), 0);
}

TEST_F(TargetServersTest, WithoutReadyTheServerIsReadyWhenItsPortAccepts) {
  // python3 is not a dependency: the shell cannot listen, so nothing ever accepts here.
  spec_.target.serve.ready = "";
  spec_.target.serve.ready_timeout_s = 0.5;
  TargetServers::Lease a = Acquire(11, "a", "check");
  ASSERT_TRUE(a.failure);
  EXPECT_EQ(a.failure->kind, ExitKind::kTimedOut);
  EXPECT_NE(a.failure->detail.find("refused the connection"), std::string::npos)
      << a.failure->detail;
}

TEST_F(TargetServersTest, StopRunsTheGracefulStopInTheServersEnvironment) {
  spec_.target.serve.stop = "echo \"$ARBOR_PORT $S\" > stopped; kill $(cat \"pid.$S\")";
  TargetServers::Lease a = Acquire(12, "a", "check");
  ASSERT_FALSE(a.failure) << a.failure->detail;
  const pid_t pid = Pid("a");
  StepResult step;
  servers().Release(a, "check", &step);
  servers().StopAll();
  EXPECT_EQ(Slurp(dir_ + "/wt/stopped"), std::to_string(a.port) + " a\n");
  EXPECT_FALSE(Alive(pid));
  EXPECT_TRUE(fs::exists(dir_ + "/runs/n12/serve-check/stop/stdout"));
}

}  // namespace
}  // namespace arbor
