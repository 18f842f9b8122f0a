// The search benchmark's landscape as a real target: `arbor_landscape_target --campaign` writes
// the campaign file, and the real `arbor` binary runs it (processes, git, SQLite), so what the
// in-process benchmark measures is the same engine a user runs.
#include <gtest/gtest.h>

#include <map>

#include "campaign_checks.h"
#include "harness.h"

namespace arbor::integration {
namespace {

// compute is 70% of the time: kernel.fast triples it (the big win); io.cache doubles io (a win
// that only shows once compute is fast); mem.crashy always crashes; math.approx breaks the
// check; sched.neutral does nothing despite its prior.
constexpr char kLandscape[] = R"({
  "name": "it-small",
  "description": "integration test: a win, a later win, a crash, an accuracy breaker, a dud",
  "repetitions": 3,
  "noise": {"cv": 0.01},
  "components": [
    {"name": "compute", "layer": "kernel", "share": 0.7},
    {"name": "io", "layer": "system", "share": 0.3}
  ],
  "actions": [
    {"id": "kernel.fast", "layer": "kernel", "category": "algorithm",
     "effects": {"compute": 3.0}, "prior": {"speedup": 2.5, "cost_s": 10}},
    {"id": "io.cache", "layer": "system", "category": "io",
     "effects": {"io": 2.0}, "prior": {"speedup": 1.5, "cost_s": 10}},
    {"id": "mem.crashy", "layer": "system", "category": "memory",
     "effects": {"compute": 1.5}, "crash_rate": 1.0, "prior": {"speedup": 2.0, "cost_s": 5}},
    {"id": "math.approx", "layer": "compiler", "category": "fp",
     "effects": {"compute": 1.6}, "accuracy_fail": 1.0, "prior": {"speedup": 1.8, "cost_s": 5}},
    {"id": "sched.neutral", "layer": "framework", "category": "sched",
     "effects": {"io": 1.0}, "prior": {"speedup": 1.3, "cost_s": 10}}
  ]
})";

TEST(IntegrationSearchLandscape, TheRealEngineRunsALandscapeTargetToItsOptimum) {
  TempWorkspace ws;
  const std::string file = ws.aux() + "/it-small.json";
  WriteFile(file, kLandscape);
  const std::string state = ws.aux() + "/state";
  ProcResult optimum = RunProcess({LANDSCAPE_TARGET_BIN, "--optimum"}, ws.repo(),
                                  {{"LANDSCAPE_FILE", file}, {"LANDSCAPE_SEED", "3"}});
  ASSERT_EQ(optimum.exit_code, 0) << optimum.Describe();
  nlohmann::json opt = nlohmann::json::parse(optimum.out);
  ASSERT_TRUE(opt.value("exact", false)) << optimum.out;
  ProcResult campaign =
      RunProcess({LANDSCAPE_TARGET_BIN, "--campaign", "--state", state, "--max-nodes", "12"},
                 ws.repo(), {{"LANDSCAPE_FILE", file}, {"LANDSCAPE_SEED", "3"}});
  ASSERT_EQ(campaign.exit_code, 0) << campaign.Describe();
  ws.Write("arbor.toml", campaign.out);
  ws.CommitAll();

  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<TreeNode> nodes = LoadTree(ws);
  ExpectTreeInvariants(nodes);
  std::map<std::string, std::string> outcome;  // the last verdict of each candidate
  for (const TreeNode& n : nodes) {
    if (n.outcome != "pruned") outcome[n.Key()] = n.outcome;
  }
  EXPECT_EQ(outcome["kernel.fast"], "kept");
  EXPECT_EQ(outcome["io.cache"], "kept");
  EXPECT_EQ(outcome["mem.crashy"], "crashed");
  EXPECT_EQ(outcome["math.approx"], "reverted");
  EXPECT_NE(outcome["sched.neutral"], "kept");
  for (const TreeNode& n : nodes) {
    if (n.action == "mem.crashy") {
      EXPECT_NE(n.diagnosis.find("SIGABRT"), std::string::npos) << n.diagnosis;
    }
    if (n.action == "math.approx") {
      EXPECT_NE(n.diagnosis.find("accuracy"), std::string::npos) << n.diagnosis;
    }
  }
  // The kept path is the landscape's exact optimum.
  std::map<std::string, std::string> kept;
  for (const TreeNode& n : nodes) {
    if (n.outcome == "kept") kept[n.action] = n.value.empty() ? "on" : n.value;
  }
  std::map<std::string, std::string> best =
      opt.at("config").get<std::map<std::string, std::string>>();
  EXPECT_EQ(kept, best) << optimum.out;
  // Every benchmark run went through the target program's measurement stream.
  EXPECT_NE(ReadFile(state).find("bench "), std::string::npos);
}

}  // namespace
}  // namespace arbor::integration
