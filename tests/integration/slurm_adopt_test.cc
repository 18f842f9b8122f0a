// kill -9 of Arbor while a build job runs in a real Slurm cluster, then resume (docs/slurm.md,
// "Jobs a killed run left"): the job still running is adopted, one that finished meanwhile is
// read back, one cancelled meanwhile is run again. Each build appends its $ARBOR_OUT to a
// counter file, so the tests see how often the held build really ran; the campaign's answer
// must equal the local, uninterrupted run's. Also: a job that cannot start within
// queue_timeout.
#include <glob.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <set>
#include <sstream>

#include "campaign_checks.h"
#include "harness.h"
#include "slurm_checks.h"

namespace arbor::integration {
namespace {

// One action (FAST) doubles the metric. The FAST node's first build holds until the test
// creates aux/release (bounded: 300 s), after touching aux/held.
void WriteCampaign(TempWorkspace* ws, const std::string& executor) {
  const std::string aux = ws->aux();
  ws->Write("build.sh", "echo \"$ARBOR_OUT\" >> '" + aux +
                            "/builds'\n"
                            "if [ -n \"$FAST\" ] && [ ! -e '" +
                            aux + "/held' ]; then touch '" + aux +
                            "/held'; i=0\n"
                            "  while [ ! -e '" +
                            aux +
                            "/release' ] && [ $i -lt 3000 ]; do sleep 0.1; i=$((i+1)); done\n"
                            "fi\n");
  ws->Write("bench.sh",
            "v=$((100 + ARBOR_REPETITION % 3)); [ -n \"$FAST\" ] && v=$((v * 2))\n"
            "echo \"{\\\"v\\\": $v}\"\n");
  ws->Write("arbor.toml", FastCampaign("ad", executor));
  ws->CommitAll();
}

std::set<std::string> Outcomes(const TempWorkspace& ws) {
  std::set<std::string> out;
  for (const TreeNode& n : LoadTree(ws)) out.insert(n.Key() + " " + n.outcome);
  return out;
}

// The answer of the same campaign run locally without interruption (nothing held).
const std::set<std::string>& Uninterrupted() {
  static const std::set<std::string> outcomes = [] {
    TempWorkspace ws;
    WriteFile(ws.aux() + "/held", "");
    WriteCampaign(&ws, "");
    ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 600);
    EXPECT_EQ(run.exit_code, 0) << run.Describe();
    return Outcomes(ws);
  }();
  return outcomes;
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// Paths matching `pattern`.
std::vector<std::string> Glob(const std::string& pattern) {
  glob_t g{};
  std::vector<std::string> out;
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.push_back(g.gl_pathv[i]);
  }
  globfree(&g);
  return out;
}

// Polls (bounded, not timed: 200 ms steps) until `done`.
template <typename F>
bool Await(F done) {
  for (int i = 0; i < 1500; ++i) {
    if (done()) return true;
    usleep(200 * 1000);
  }
  return false;
}

class SlurmAdopt : public ::testing::Test {
 protected:
  // Starts the campaign through Slurm, waits until the FAST build job holds, kills Arbor
  // with SIGKILL and returns that job's id.
  std::string KillWhileTheBuildRuns() {
    Uninterrupted();
    WriteCampaign(&ws_, Executor(ws_));
    auto arbor = ws_.StartArbor({"run", "arbor.toml", "--quiet"});
    std::vector<std::string> ids;
    Await([&] {
      if (Exists(ws_.aux() + "/held")) ids = Jobs("n2/build");
      return !ids.empty();
    });
    arbor->Signal(SIGKILL);
    arbor->Wait(60);
    return ids.size() == 1 ? ids[0] : "";
  }

  // How often the FAST node's own build ran (lines of the counter ending in /n2/build/out).
  int HeldBuildRuns() {
    std::stringstream lines(ReadFile(ws_.aux() + "/builds"));
    int n = 0;
    for (std::string line; std::getline(lines, line);) {
      n += line.size() > 13 && line.compare(line.size() - 13, 13, "/n2/build/out") == 0;
    }
    return n;
  }

  // The resumed campaign's answer and leftovers; returns node 2's "build" job event.
  nlohmann::json ExpectFinished(const ProcResult& resumed) {
    EXPECT_EQ(resumed.exit_code, 0) << resumed.Describe();
    EXPECT_EQ(Outcomes(ws_), Uninterrupted()) << DescribeTree(LoadTree(ws_));
    ExpectTreeInvariants(LoadTree(ws_));
    EXPECT_TRUE(ActiveJobs().empty()) << "nothing of the campaign stays queued or running";
    EXPECT_TRUE(Glob(ws_.repo() + "/.arbor/ad/jobs/*").empty()) << "every job folder settled";
    for (const auto& e : JobEvents(ws_, 2)) {
      if (e["data"].value("label", "") == "build") return e;
    }
    ADD_FAILURE() << "node 2 records no build job";
    return {};
  }

  TempWorkspace ws_;
};

TEST_F(SlurmAdopt, AJobStillRunningIsAdoptedNotRunTwice) {
  REQUIRE_CLUSTER();
  std::string job = KillWhileTheBuildRuns();
  ASSERT_FALSE(job.empty()) << "the held build job never showed up in squeue";
  ASSERT_EQ(Jobs("n2/build"), std::vector<std::string>{job}) << "the job outlived Arbor";
  auto resumed = ws_.StartArbor({"resume", "arbor.toml", "--quiet"});
  // The resumed run marks the job's folder when it adopts it; only then may the build end.
  ASSERT_TRUE(Await([&] { return !Glob(ws_.repo() + "/.arbor/ad/jobs/*/adopted").empty(); }));
  WriteFile(ws_.aux() + "/release", "");
  ProcResult done = resumed->Wait(900);
  EXPECT_NE(done.err.find("arbor: adopted Slurm job(s) " + job + " (node 2 build)"),
            std::string::npos)
      << done.err;
  nlohmann::json event = ExpectFinished(done);
  EXPECT_EQ(event["data"].value("job", ""), job) << event.dump();
  EXPECT_EQ(event["data"].value("reconciled", ""), "adopted") << event.dump();
  EXPECT_NE(event.value("message", "").find("adopted: it outlived a killed run"),
            std::string::npos);
  EXPECT_EQ(HeldBuildRuns(), 1);
}

TEST_F(SlurmAdopt, AJobThatFinishedMeanwhileIsReadBack) {
  REQUIRE_CLUSTER();
  std::string job = KillWhileTheBuildRuns();
  ASSERT_FALSE(job.empty()) << "the held build job never showed up in squeue";
  WriteFile(ws_.aux() + "/release", "");
  ASSERT_TRUE(Await([&] {
    return !Glob(ws_.repo() + "/.arbor/ad/jobs/*/status").empty() && Jobs("n2/build").empty();
  }));
  ProcResult done = ws_.Arbor({"resume", "arbor.toml", "--quiet"}, {}, 900);
  EXPECT_NE(done.err.find("arbor: read 1 finished job(s)"), std::string::npos) << done.err;
  nlohmann::json event = ExpectFinished(done);
  EXPECT_EQ(event["data"].value("job", ""), job) << event.dump();
  EXPECT_EQ(event["data"].value("reconciled", ""), "read") << event.dump();
  EXPECT_EQ(HeldBuildRuns(), 1);
}

TEST_F(SlurmAdopt, AJobCancelledMeanwhileRunsAgainOnce) {
  REQUIRE_CLUSTER();
  std::string job = KillWhileTheBuildRuns();
  ASSERT_FALSE(job.empty()) << "the held build job never showed up in squeue";
  ProcResult cancel = RunProcess({"scancel", job}, "/");
  ASSERT_EQ(cancel.exit_code, 0) << cancel.Describe();
  ASSERT_TRUE(Await([&] { return Jobs("n2/build").empty(); }));
  ProcResult done = ws_.Arbor({"resume", "arbor.toml", "--quiet"}, {}, 900);
  EXPECT_NE(done.err.find("arbor: re-queued 1 lost job(s)"), std::string::npos) << done.err;
  nlohmann::json event = ExpectFinished(done);
  EXPECT_NE(event["data"].value("job", ""), job) << event.dump();
  EXPECT_EQ(event["data"].value("reconciled", ""), "requeued") << event.dump();
  EXPECT_EQ(event["data"].value("previous_job", ""), job) << event.dump();
  EXPECT_EQ(HeldBuildRuns(), 2) << "the cancelled run and its one re-run";
}

// A job that cannot start within [executor] queue_timeout (the only node held by an exclusive
// job of someone else) is cancelled, not left waiting: the baseline's build fails as an
// infrastructure timeout naming the queue. Once the node is free, resume finishes the campaign
// with the uninterrupted answer.
TEST(SlurmQueue, AJobThatCannotStartInTimeIsCancelled) {
  REQUIRE_CLUSTER();
  Uninterrupted();
  TempWorkspace ws;
  WriteFile(ws.aux() + "/held", "");  // nothing holds: the queue is the only obstacle
  WriteCampaign(&ws, Executor(ws, "queue_timeout = \"3s\"\n"));
  ProcResult blocker = RunProcess({"sbatch", "--parsable", "--exclusive", "--job-name=blocker",
                                   "--output=/dev/null", "--wrap=sleep 600"},
                                  "/");
  ASSERT_EQ(blocker.exit_code, 0) << blocker.Describe();
  const std::string id = blocker.out.substr(0, blocker.out.find_first_of(";\n"));
  ASSERT_TRUE(Await([&] {
    return RunProcess({"squeue", "-h", "-j", id, "-o", "%T"}, "/").out.rfind("RUNNING", 0) == 0;
  }));
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 300);
  EXPECT_NE(run.exit_code, 0) << run.Describe();
  EXPECT_NE((run.out + run.err).find("waited in the queue longer than queue_timeout"),
            std::string::npos)
      << run.Describe();
  EXPECT_EQ(Jobs(), std::vector<std::string>{id}) << "the campaign's pending job was cancelled";
  ASSERT_EQ(RunProcess({"scancel", id}, "/").exit_code, 0);
  ASSERT_TRUE(Await([&] { return ActiveJobs().empty(); }));
  ProcResult resumed = ws.Arbor({"resume", "arbor.toml", "--quiet"}, {}, 900);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.Describe();
  EXPECT_EQ(Outcomes(ws), Uninterrupted()) << DescribeTree(LoadTree(ws));
  EXPECT_TRUE(ActiveJobs().empty());
}

}  // namespace
}  // namespace arbor::integration
