// Campaigns through a real Slurm cluster ([executor] kind = "slurm", docs/slurm.md). Run by
// tests/slurm/with-slurm.sh, which starts a private single-node cluster on this machine and
// exports SLURM_CONF; without it every test is skipped (the ctest `slurm` test always has it).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "campaign_checks.h"
#include "harness.h"
#include "slurm_checks.h"

namespace arbor::integration {
namespace {

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
  std::set<std::string> allocations;
  int measured_nodes = 0;
  for (const TreeNode& n : nodes) {
    // Skipped, pruned and (at the budget's end) still pending nodes never ran.
    if (n.outcome == "skipped" || n.outcome == "pruned" || n.outcome == "pending") continue;
    std::vector<nlohmann::json> jobs = JobEvents(*ws, n.id);
    EXPECT_FALSE(jobs.empty()) << "node " << n.id << " (" << n.Key() << ") records no job";
    // One measurement = the runs of one protocol phase: "bench-" (the baseline's own runs),
    // "base-"/"cand-" (the A/B), "confirm-…", "final-…". Each is one allocation on one host.
    std::map<std::string, std::set<std::string>> allocation_of;
    std::map<std::string, std::set<std::string>> host_of;
    for (const auto& e : jobs) {
      ASSERT_TRUE(e.contains("data") && e["data"].is_object()) << e.dump();
      EXPECT_EQ(e["data"].value("executor", ""), "slurm");
      std::string id = e["data"].value("job", "");
      std::string host = e["data"].value("host", "");
      EXPECT_FALSE(id.empty()) << e.dump();
      EXPECT_EQ(host, "arbornode") << "where the run went: " << e.dump();
      EXPECT_NE(e.value("message", "").find(" on arbornode ("), std::string::npos) << e.dump();
      EXPECT_TRUE(job_ids.insert(id).second) << "job " << id << " recorded twice";
      std::string label = e["data"].value("label", "");
      std::string phase;
      for (const char* p : {"bench-", "base-", "cand-", "confirm-", "final-"}) {
        if (label.rfind(p, 0) == 0) phase = p;
      }
      if (phase.empty()) continue;  // build, check, profile: jobs of their own
      if (phase == "cand-") phase = "base-";
      ASSERT_NE(id.find('.'), std::string::npos) << "a measurement's run is a step: " << e.dump();
      allocation_of[phase].insert(id.substr(0, id.find('.')));
      host_of[phase].insert(host);
    }
    for (const auto& [phase, ids] : allocation_of) {
      EXPECT_EQ(ids.size(), 1u) << "node " << n.id << " " << phase
                                << " ran in more than one allocation";
      EXPECT_EQ(host_of[phase].size(), 1u);
      EXPECT_TRUE(allocations.insert(*ids.begin()).second)
          << "allocation " << *ids.begin() << " served two measurements";
    }
    measured_nodes += allocation_of.count("base-") ? 1 : 0;
  }
  EXPECT_GT(measured_nodes, 2) << "the A/B of several nodes ran in allocations";
  EXPECT_TRUE(Jobs().empty()) << "jobs left queued after the campaign";
  // Where each measurement ran, in `arbor show` and in the report.
  const TreeNode* kept = nullptr;
  for (const TreeNode& n : nodes) {
    if (n.outcome == "kept" && n.parent != 0) kept = &n;
  }
  ASSERT_NE(kept, nullptr);
  ProcResult show = ws->Arbor({"show", std::to_string(kept->id), "arbor.toml"});
  ASSERT_EQ(show.exit_code, 0) << show.Describe();
  EXPECT_NE(show.out.find("\n  ran on    arbornode: "), std::string::npos) << show.out;
  nlohmann::json shown = ws->ArborJson({"show", std::to_string(kept->id), "--json"});
  ASSERT_TRUE(shown["ran_on"].is_array() && !shown["ran_on"].empty()) << shown.dump();
  EXPECT_EQ(shown["ran_on"][0].value("host", ""), "arbornode");
  ProcResult report = ws->Arbor({"report", "arbor.toml", "--out", ws->aux() + "/r.html"});
  ASSERT_EQ(report.exit_code, 0) << report.Describe();
  std::string html = ReadFile(ws->aux() + "/r.html");
  EXPECT_NE(html.find("<tr><th>ran on</th><td>arbornode: "), std::string::npos);
  // Finished: nothing queued, said in one line; a Slurm that cannot be asked costs one line.
  ProcResult status = ws->Arbor({"status", "arbor.toml"});
  EXPECT_NE(status.out.find("\njobs      none queued or running\n"), std::string::npos)
      << status.out;
  ProcResult blind = ws->Arbor({"status", "arbor.toml"}, {{"SLURM_CONF", ws->aux() + "/none"}});
  EXPECT_EQ(blind.exit_code, 0) << blind.Describe();
  EXPECT_NE(blind.out.find("\npath      "), std::string::npos) << blind.out;
  EXPECT_NE(blind.out.find("\njobs      unknown: squeue failed"), std::string::npos) << blind.out;
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
  ws->Write("arbor.toml", FastCampaign("sl", Executor(*ws, executor_extra)));
  ws->CommitAll();
}

// Starts `arbor run` on a campaign whose first candidate benchmark hangs, and waits (bounded,
// not timed) until that job runs; `*ids` gets the campaign's jobs then (one is expected).
std::unique_ptr<Process> StartWithAHangingBenchmark(TempWorkspace* ws,
                                                    std::vector<std::string>* ids) {
  std::string marker = ws->aux() + "/hung";
  WriteHangingCampaign(ws, "bench", marker, "");
  auto arbor = ws->StartArbor({"run", "arbor.toml", "--quiet"});
  ids->clear();
  for (int i = 0; i < 1200 && ids->empty(); ++i) {
    if (access(marker.c_str(), F_OK) == 0) *ids = Jobs("n");
    if (ids->empty()) usleep(200 * 1000);
  }
  return arbor;
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
  std::vector<std::string> ids;
  auto arbor = StartWithAHangingBenchmark(&ws, &ids);
  ASSERT_EQ(ids.size(), 1u) << "the hanging benchmark job never showed up in squeue";
  ProcResult cancel = RunProcess({"scancel", ids.front()}, "/");
  ASSERT_EQ(cancel.exit_code, 0) << cancel.Describe();
  ProcResult run = arbor->Wait(900);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  // The job was the measurement's allocation; the run lost was its step "<id>.<step>".
  ExpectLostThenRetried(ws, "Slurm job " + ids.front() + ".");
  ExpectLostThenRetried(ws, " was cancelled (scancel)");
}

// `arbor status` shows the benchmark's job while it runs; `arbor stop` during it leaves nothing
// in Slurm, and the campaign continues to its answer.
TEST(IntegrationSlurm, StatusShowsTheRunningJobAndStopLeavesNothingQueued) {
  REQUIRE_CLUSTER();
  TempWorkspace ws;
  std::vector<std::string> ids;
  auto arbor = StartWithAHangingBenchmark(&ws, &ids);
  ASSERT_EQ(ids.size(), 1u) << "the hanging benchmark job never showed up in squeue";
  ProcResult status = ws.Arbor({"status", "arbor.toml"});
  ASSERT_EQ(status.exit_code, 0) << status.Describe();
  EXPECT_NE(status.out.find("\njobs      1 queued or running\n  " + ids.front() + "  RUNNING  n"),
            std::string::npos)
      << status.out;
  EXPECT_NE(status.out.find("/measure  "), std::string::npos) << status.out;
  nlohmann::json json = ws.ArborJson({"status", "arbor.toml", "--json"});
  ASSERT_TRUE(json["jobs"].is_array()) << json.dump();
  ASSERT_EQ(json["jobs"].size(), 1u) << json.dump();
  EXPECT_EQ(json["jobs"][0].value("id", ""), ids.front());
  EXPECT_EQ(json["jobs"][0].value("state", ""), "RUNNING");
  EXPECT_EQ(json["jobs"][0].value("nodes", ""), "arbornode");
  EXPECT_EQ(json["jobs"][0].value("partition", ""), "arbor") << "the test cluster's default";

  // The step sleeps far longer than --timeout: the run is told twice and leaves at once.
  ProcResult stop = ws.Arbor({"stop", "arbor.toml", "--timeout", "2s"});
  ASSERT_EQ(stop.exit_code, 0) << stop.Describe();
  EXPECT_NE(stop.out.find("stopped campaign 'sl' (pid " + std::to_string(arbor->pid())),
            std::string::npos)
      << stop.out;
  EXPECT_EQ(arbor->Wait(60).exit_code, 130);
  EXPECT_TRUE(ActiveJobs().empty()) << "nothing of the campaign stays queued or running";
  ProcResult again = ws.Arbor({"stop", "arbor.toml"});
  EXPECT_EQ(again.exit_code, 4) << again.Describe();

  ProcResult resumed = ws.Arbor({"resume", "arbor.toml", "--quiet"}, {}, 900);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.Describe();
  std::vector<TreeNode> nodes = LoadTree(ws);
  ExpectTreeInvariants(nodes);
  const TreeNode* fast = FindKey(nodes, "app.fast");
  ASSERT_NE(fast, nullptr) << DescribeTree(nodes);
  EXPECT_EQ(fast->outcome, "kept") << DescribeTree(nodes);
  EXPECT_TRUE(Jobs().empty());
}

// kill -9 of Arbor with a benchmark job in flight, then resume: the measurement's allocation
// is cancelled (a measurement is redone, never adopted: docs/slurm.md; builds, checks and
// profiles are adopted, slurm_adopt_test.cc), the step is replayed, and the campaign finishes
// with nothing left queued.
TEST(IntegrationSlurm, KillNineWithAJobInFlightThenResume) {
  REQUIRE_CLUSTER();
  TempWorkspace ws;
  std::vector<std::string> ids;
  auto arbor = StartWithAHangingBenchmark(&ws, &ids);
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

// With parallel specialists, benchmarks still run one at a time: each benchmark logs when it
// starts and ends (nanoseconds, this machine's clock, appended to one file); the log must be
// start/end pairs of the same run, never two benchmarks open at once.
TEST(IntegrationSlurm, WithParallelSpecialistsBenchmarksNeverOverlap) {
  REQUIRE_CLUSTER();
  TempWorkspace ws;
  const std::string log = ws.aux() + "/bench.log";
  ws.Write("bench.sh", "echo \"$(date +%s%N) start $SLURM_JOB_ID.$SLURM_STEP_ID\" >> '" + log +
                           "'\n"
                           "v=$((100 + ARBOR_REPETITION % 3)); [ -n \"$FAST\" ] && v=$((v * 2))\n"
                           "sleep 0.2\n"
                           "echo \"$(date +%s%N) end $SLURM_JOB_ID.$SLURM_STEP_ID\" >> '" +
                           log +
                           "'\n"
                           "echo \"{\\\"v\\\": $v}\"\n");
  std::string actions;
  for (const char* id : {"app.fast", "app.a", "app.b", "app.c"}) {
    actions += std::string("[[action]]\nid = \"") + id +
               "\"\nlayer = \"application\"\ncategory = \"algo\"\nspeedup = 1.5\n"
               "apply = { env = { " +
               (std::string(id) == "app.fast" ? "FAST" : "X_" + std::string(id + 4)) +
               " = \"1\" } }\n";
  }
  ws.Write("arbor.toml",
           "[campaign]\nname = \"par\"\nseed = 1\n"
           "[target]\nbuild = \"true\"\nbench = \"sh bench.sh\"\n"
           "timeout = \"10m\"\n"
           "[metric]\nsource = \"json:v\"\nrepetitions = 3\n"
           "[search]\nmax_nodes = 8\nparallel = 2\n[critic]\nmin_effect = 0.1\n" +
               actions + Executor(ws));
  ws.CommitAll();
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 1800);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<std::pair<std::string, std::string>> entries;  // (nanoseconds, "start id")
  std::stringstream lines(ReadFile(log));
  for (std::string line; std::getline(lines, line);) {
    size_t space = line.find(' ');
    ASSERT_NE(space, std::string::npos) << line;
    entries.emplace_back(line.substr(0, space), line.substr(space + 1));
  }
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return a.first.size() != b.first.size() ? a.first.size() < b.first.size() : a.first < b.first;
  });
  ASSERT_GT(entries.size(), 20u) << "benchmarks of several nodes ran";
  for (size_t i = 0; i + 1 < entries.size(); i += 2) {
    const std::string& open = entries[i].second;
    const std::string& close = entries[i + 1].second;
    ASSERT_EQ(open.rfind("start ", 0), 0u) << "two benchmarks overlapped near entry " << i;
    EXPECT_EQ(close, "end " + open.substr(6)) << "benchmark " << open << " overlapped another";
  }
  EXPECT_EQ(entries.size() % 2, 0u);
  std::vector<TreeNode> nodes = LoadTree(ws);
  ExpectTreeInvariants(nodes);
  const TreeNode* fast = FindKey(nodes, "app.fast");
  ASSERT_NE(fast, nullptr) << DescribeTree(nodes);
  EXPECT_EQ(fast->outcome, "kept") << DescribeTree(nodes);
  EXPECT_TRUE(Jobs().empty());
}

}  // namespace
}  // namespace arbor::integration
