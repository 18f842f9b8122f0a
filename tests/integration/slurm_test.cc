// Campaigns through a real Slurm cluster ([executor] kind = "slurm", docs/slurm.md). Run by
// tests/slurm/with-slurm.sh, which starts a private single-node cluster on this machine and
// exports SLURM_CONF; without it every test is skipped (the ctest `slurm` test always has it).
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <set>

#include "campaign_checks.h"
#include "harness.h"

namespace arbor::integration {
namespace {

bool HaveCluster() { return std::getenv("SLURM_CONF") != nullptr; }

#define REQUIRE_CLUSTER() \
  if (!HaveCluster()) GTEST_SKIP() << "no SLURM_CONF: run through tests/slurm/with-slurm.sh"

std::string Executor(const TempWorkspace& ws, const std::string& more = "") {
  return "\n[executor]\nkind = \"slurm\"\nshared_dir = \"" + ws.root() + "\"\n" + more;
}

// The ids of this user's queued or running jobs whose comment starts with `comment`.
std::vector<std::string> Jobs(const std::string& comment = "") {
  ProcResult q = RunProcess({"squeue", "-h", "-o", "%i %k"}, "/");
  EXPECT_EQ(q.exit_code, 0) << q.Describe();
  std::vector<std::string> ids;
  size_t at = 0;
  while (at < q.out.size()) {
    size_t end = q.out.find('\n', at);
    std::string line = q.out.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? q.out.size() : end + 1;
    size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    if (line.compare(space + 1, comment.size(), comment) == 0) ids.push_back(line.substr(0, space));
  }
  return ids;
}

// Every "job" event of node `id` (`arbor show --json`).
std::vector<nlohmann::json> JobEvents(const TempWorkspace& ws, int64_t id) {
  nlohmann::json show = ws.ArborJson({"show", std::to_string(id), "--json"});
  std::vector<nlohmann::json> out;
  if (!show.contains("events")) return out;
  for (const auto& e : show["events"]) {
    if (e.value("kind", "") == "job") out.push_back(e);
  }
  return out;
}

TEST(IntegrationSlurm, ToyCampaignGivesTheLocalAnswerAndRecordsItsJobs) {
  REQUIRE_CLUSTER();
  auto ws = TempWorkspace::Toy();
  ws->Write("arbor.toml", ReadFile(ws->repo() + "/arbor.toml") + Executor(*ws));
  ws->CommitAll();
  ProcResult run = ws->Arbor({"run", "arbor.toml", "--quiet"}, {}, 1800);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  ExpectToyFinished(*ws);
  std::vector<TreeNode> nodes = LoadTree(*ws);
  ExpectTreeInvariants(nodes);
  // The same kept / reverted / crashed / pruned / skipped sets as the local run of this seed
  // (IntegrationToy.FullCampaignReachesTheKnownAnswer holds the local run to the same answer).
  ExpectToyOutcomes(*ws, nodes);
  std::set<std::string> job_ids;
  for (const TreeNode& n : nodes) {
    if (n.outcome == "skipped" || n.outcome == "pruned") continue;
    std::vector<nlohmann::json> jobs = JobEvents(*ws, n.id);
    EXPECT_FALSE(jobs.empty()) << "node " << n.id << " (" << n.Key() << ") records no job";
    for (const auto& e : jobs) {
      ASSERT_TRUE(e.contains("data") && e["data"].is_object()) << e.dump();
      EXPECT_EQ(e["data"].value("executor", ""), "slurm");
      std::string id = e["data"].value("job", "");
      EXPECT_FALSE(id.empty()) << e.dump();
      EXPECT_TRUE(job_ids.insert(id).second) << "job " << id << " recorded twice";
    }
  }
  EXPECT_TRUE(Jobs().empty()) << "jobs left queued after the campaign";
}

// A small campaign: one action doubles a constant metric; its first `step` run hangs (once,
// marked by a file) so that the test, or Slurm, can end the job.
void WriteHangingCampaign(TempWorkspace* ws, const std::string& step, const std::string& marker,
                          const std::string& executor_extra) {
  std::string hang = "if [ -n \"$FAST\" ] && [ ! -e '" + marker + "' ]; then touch '" + marker +
                     "'; sleep 400; fi\n";
  ws->Write("build.sh", step == "build" ? hang : "true\n");
  ws->Write("bench.sh", (step == "bench" ? hang : std::string()) +
                            "v=$((100 + ARBOR_REPETITION % 3)); [ -n \"$FAST\" ] && v=$((v * 2))\n"
                            "echo \"{\\\"v\\\": $v}\"\n");
  ws->Write("arbor.toml",
            "[campaign]\nname = \"sl\"\nseed = 1\n"
            "[target]\nbuild = \"sh build.sh\"\nbench = \"sh bench.sh\"\ntimeout = \"10m\"\n"
            "[metric]\nsource = \"json:v\"\nrepetitions = 3\n"
            "[search]\nmax_nodes = 6\n"
            "[critic]\nmin_effect = 0.1\n"
            "[[action]]\nid = \"app.fast\"\nlayer = \"application\"\ncategory = \"algo\"\n"
            "speedup = 2.0\napply = { env = { FAST = \"1\" } }\n" +
                Executor(*ws, executor_extra));
  ws->CommitAll();
}

// The crashed (lost) node and its one retry.
void ExpectLostThenRetried(const TempWorkspace& ws, const std::string& diagnosis_part) {
  std::vector<TreeNode> nodes = LoadTree(ws);
  const TreeNode* lost = nullptr;
  const TreeNode* kept = nullptr;
  for (const TreeNode& n : nodes) {
    if (n.action != "app.fast") continue;
    if (n.outcome == "crashed") lost = &n;
    if (n.outcome == "kept") kept = &n;
  }
  ASSERT_NE(lost, nullptr) << DescribeTree(nodes);
  EXPECT_EQ(lost->diagnosis.rfind("infrastructure: ", 0), 0u) << lost->diagnosis;
  EXPECT_NE(lost->diagnosis.find(diagnosis_part), std::string::npos) << lost->diagnosis;
  EXPECT_TRUE(HasEvent(ws, lost->id, "rca", "infrastructure"));
  ASSERT_NE(kept, nullptr) << "the lost node runs once more and is kept\n" << DescribeTree(nodes);
  EXPECT_EQ(kept->parent, lost->parent);
  bool infra_job = false;
  for (const auto& e : JobEvents(ws, lost->id)) {
    infra_job |= e["data"].value("infrastructure", false);
  }
  EXPECT_TRUE(infra_job) << "the lost job is recorded on the node";
  EXPECT_TRUE(Jobs().empty());
}

TEST(IntegrationSlurm, ABenchmarkJobCancelledMidRunIsReconciledAndTheCampaignGoesOn) {
  REQUIRE_CLUSTER();
  TempWorkspace ws;
  std::string marker = ws.aux() + "/hung";
  WriteHangingCampaign(&ws, "bench", marker, "");
  auto arbor = ws.StartArbor({"run", "arbor.toml", "--quiet"});
  // Wait (bounded, not timed) until the hanging benchmark job runs, then cancel it.
  std::vector<std::string> ids;
  for (int i = 0; i < 1200 && ids.empty(); ++i) {
    if (access(marker.c_str(), F_OK) == 0) ids = Jobs("n");
    if (ids.empty()) usleep(200 * 1000);
  }
  ASSERT_EQ(ids.size(), 1u) << "the hanging benchmark job never showed up in squeue";
  ProcResult cancel = RunProcess({"scancel", ids.front()}, "/");
  ASSERT_EQ(cancel.exit_code, 0) << cancel.Describe();
  ProcResult run = arbor->Wait(900);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  ExpectLostThenRetried(ws, "Slurm job " + ids.front() + " was cancelled (scancel)");
}

// kill -9 of Arbor with a benchmark job in flight, then resume: whatever Slurm still runs of
// the campaign is cancelled (not adopted: docs/slurm.md), the step is replayed, and the
// campaign finishes with nothing left queued.
TEST(IntegrationSlurm, KillNineWithAJobInFlightThenResume) {
  REQUIRE_CLUSTER();
  TempWorkspace ws;
  std::string marker = ws.aux() + "/hung";
  WriteHangingCampaign(&ws, "bench", marker, "");
  auto arbor = ws.StartArbor({"run", "arbor.toml", "--quiet"});
  std::vector<std::string> ids;
  for (int i = 0; i < 1200 && ids.empty(); ++i) {
    if (access(marker.c_str(), F_OK) == 0) ids = Jobs("n");
    if (ids.empty()) usleep(200 * 1000);
  }
  ASSERT_EQ(ids.size(), 1u) << "the hanging benchmark job never showed up in squeue";
  arbor->Signal(SIGKILL);
  arbor->Wait(60);
  ProcResult resumed = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 900);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.Describe();
  // srun died with Arbor (SIGKILL), but the job itself ran on: the resumed run cancels it.
  EXPECT_NE(resumed.err.find("arbor: cancelled 1 Slurm job(s) a previous run left"),
            std::string::npos)
      << resumed.err;
  std::vector<TreeNode> nodes = LoadTree(ws);
  ExpectTreeInvariants(nodes);
  const TreeNode* fast = FindKey(nodes, "app.fast");
  ASSERT_NE(fast, nullptr) << DescribeTree(nodes);
  EXPECT_EQ(fast->outcome, "kept") << "the replayed step runs again (the marker now exists)\n"
                                   << DescribeTree(nodes);
  EXPECT_TRUE(Jobs().empty()) << "jobs left queued after the resumed campaign";
}

TEST(IntegrationSlurm, AJobOverItsSlurmTimeLimitIsATimeout) {
  REQUIRE_CLUSTER();
  TempWorkspace ws;
  // Slurm's smallest limit is one minute; the build sleeps far longer, once.
  WriteHangingCampaign(&ws, "build", ws.aux() + "/hung", "time_limit = \"1m\"\n");
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 900);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  ExpectLostThenRetried(ws, "exceeded its Slurm time limit");
  std::vector<TreeNode> nodes = LoadTree(ws);
  for (const TreeNode& n : nodes) {
    if (n.outcome == "crashed") {
      EXPECT_NE(n.diagnosis.find("build timed out"), std::string::npos) << n.diagnosis;
    }
  }
}

}  // namespace
}  // namespace arbor::integration
