#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "report/sample_tree_testing.h"
#include "report/views.h"

namespace arbor {
namespace {

using report_testing::MakeNode;
using report_testing::SampleTree;

CampaignView SampleView(Goal goal = Goal::kMax) {
  CampaignView view;
  view.meta.name = "toy";
  view.meta.state = CampaignState::kFinished;
  view.meta.stop_reason = StopReason::kMaxNodes;
  view.meta.elapsed_s = 12.5;
  view.nodes = SampleTree();
  view.metric_name = "ops_per_s";
  view.goal = goal;
  view.target = 3000;
  view.max_nodes = 60;
  view.max_time_s = 7200;
  return view;
}

TEST(StatusJsonTest, ExactShape) {
  nlohmann::json expected = nlohmann::json::parse(R"({
      "campaign": "toy", "state": "finished", "stop_reason": "max_nodes",
      "nothing_evaluated": null,
      "nodes": {"total": 7, "kept": 2, "reverted": 1, "crashed": 1, "pruned": 0,
                "skipped": 0, "running": 1, "pending": 1},
      "baseline": {"metric": "ops_per_s", "value": 1000.0},
      "best": {"node": 4, "value": 1800.0, "speedup": 1.8, "ci_low": null, "ci_high": null},
      "elapsed_s": 12.5, "budget": {"max_nodes": 60, "max_time_s": 7200.0},
      "anomalies": [],
      "llm": {"prompt_tokens": 0, "completion_tokens": 0, "cost": 0.0},
      "moves": {"introspect": 0, "carry": 0, "prerequisite": 0, "revisit": 0, "retune": 0,
                "remeasure": 0, "retry": 0, "pair": 0, "drop": 0, "follow_up": 0, "fix": 0, "stack": 0,
                "refresh": 0}})");
  EXPECT_EQ(StatusJson(SampleView()), expected);
}

// A finished campaign with no kept, reverted or crashed node says why and what to do next; a
// running one, or one that evaluated something, says nothing.
TEST(StatusJsonTest, NothingEvaluatedSaysWhyAndTheNextStep) {
  CampaignView view = SampleView();
  EXPECT_EQ(NothingEvaluatedHint(view), "");
  std::vector<Node> only_root;
  for (Node n : view.nodes) {
    if (n.id == kRootId) only_root.push_back(n);
    if (n.id != kRootId && n.outcome == Outcome::kKept) {
      n.outcome = Outcome::kPruned;
      only_root.push_back(n);
    }
  }
  view.nodes = only_root;
  view.meta.stop_reason = StopReason::kExhausted;
  const std::string hint = NothingEvaluatedHint(view);
  EXPECT_EQ(hint.rfind("nothing was evaluated (exhausted): no candidate could run (2 pruned, 0 "
                       "skipped",
                       0),
            0u)
      << hint;
  EXPECT_EQ(StatusJson(view)["nothing_evaluated"], hint);
  EXPECT_NE(StatusText(view).find("\nwhy       " + hint + "\n"), std::string::npos);
  view.meta.stop_reason = StopReason::kMaxTime;
  EXPECT_NE(NothingEvaluatedHint(view).find("raise [search] max_time"), std::string::npos);
  view.meta.state = CampaignState::kRunning;
  EXPECT_EQ(NothingEvaluatedHint(view), "");
  EXPECT_TRUE(StatusJson(view)["nothing_evaluated"].is_null());
}

TEST(StatusJsonTest, MovesAndNoiseAreCounted) {
  CampaignView view = SampleView();
  view.nodes[2].critic.flags = {"move:revisit"};
  view.nodes[3].critic.flags = {"move:retune"};
  view.nodes[4].critic.flags = {"outliers", "move:retune"};
  view.meta.repetitions = 12;
  view.meta.noise_cv = 0.07;
  view.meta.noise_mde = 0.05;
  nlohmann::json status = StatusJson(view);
  EXPECT_EQ(status["moves"]["revisit"], 1);
  EXPECT_EQ(status["moves"]["retune"], 2);
  EXPECT_EQ(status["moves"]["carry"], 0);
  EXPECT_EQ(status["noise"]["repetitions"], 12);
  std::string text = StatusText(view);
  EXPECT_NE(text.find("moves     re-queued 1 revisit, 2 retune\n"), std::string::npos) << text;
  EXPECT_NE(text.find("12 repetitions per arm"), std::string::npos) << text;
}

TEST(StatusJsonTest, AnomaliesAreListedWithTheirDiagnosis) {
  CampaignView view = SampleView();
  Node& n = view.nodes[2];
  n.outcome = Outcome::kReverted;
  n.critic.flags = {"anomaly"};
  n.critic.rca = RcaClass::kAnomaly;
  n.diagnosis = "anomaly: re-run: check passed, the metric claims ×1e+306";
  nlohmann::json a = StatusJson(view)["anomalies"];
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0]["node"], n.id);
  EXPECT_EQ(a[0]["rca"], "anomaly");
  EXPECT_EQ(a[0]["outcome"], "reverted");
  EXPECT_EQ(a[0]["unkept"], false);
  EXPECT_EQ(a[0]["diagnosis"], n.diagnosis);
  std::string text = StatusText(view);
  EXPECT_NE(text.find("anomalies 1 (gains no benchmark explains):\n  #" + std::to_string(n.id)),
            std::string::npos)
      << text;
}

TEST(StatusJsonTest, SpeedupForMinGoal) {
  CampaignView view = SampleView(Goal::kMin);
  // For a "min" metric the same numbers mean the incumbent got slower: baseline / best.
  EXPECT_DOUBLE_EQ(StatusJson(view)["best"]["speedup"].get<double>(), 1000.0 / 1800.0);
  view.nodes[3].metric = 250;  // #4 now a latency of 250 against 1000
  EXPECT_DOUBLE_EQ(StatusJson(view)["best"]["speedup"].get<double>(), 4.0);
}

TEST(StatusJsonTest, BestFollowsLatestKeptChain) {
  std::vector<Node> nodes = {MakeNode(1, kNoNode, "baseline", Outcome::kBaseline, 0),
                             MakeNode(2, 1, "a", Outcome::kKept, 1),
                             MakeNode(3, 2, "b", Outcome::kKept, 2),
                             MakeNode(4, 1, "c", Outcome::kKept, 5),
                             MakeNode(5, 4, "d", Outcome::kKept, 6),
                             MakeNode(6, 5, "e", Outcome::kReverted, 7)};
  nodes[0].metric = 100;
  nodes[2].metric = 400;  // better, but on the abandoned chain
  nodes[4].metric = 150;
  CampaignView view;
  view.nodes = nodes;
  nlohmann::json status = StatusJson(view);
  EXPECT_EQ(status["best"]["node"], 5);
  EXPECT_EQ(status["best"]["value"], 150.0);
  EXPECT_DOUBLE_EQ(status["best"]["speedup"].get<double>(), 1.5);
  EXPECT_EQ(status["nodes"]["kept"], 4);
  EXPECT_EQ(status["nodes"]["total"], 6);
  EXPECT_NE(StatusText(view).find("path      baseline → c → d\n"), std::string::npos);
}

TEST(StatusJsonTest, NothingKeptYet) {
  CampaignView view;
  view.meta.name = "fresh";
  view.nodes = {MakeNode(1, kNoNode, "baseline", Outcome::kBaseline, 0),
                MakeNode(2, 1, "a", Outcome::kReverted, 1)};
  view.nodes[0].metric = 10;
  nlohmann::json status = StatusJson(view);
  EXPECT_EQ(status["state"], "running");
  EXPECT_TRUE(status["stop_reason"].is_null());
  EXPECT_EQ(status["best"]["node"], 1);
  EXPECT_EQ(status["best"]["speedup"], 1.0);
}

TEST(StatusJsonTest, EmptyCampaign) {
  CampaignView view;
  view.metric_name = "t";
  nlohmann::json status = StatusJson(view);
  EXPECT_EQ(status["nodes"]["total"], 0);
  EXPECT_TRUE(status["baseline"]["value"].is_null());
  for (const char* key : {"node", "value", "speedup", "ci_low", "ci_high"}) {
    EXPECT_TRUE(status["best"][key].is_null()) << key;
  }
  EXPECT_FALSE(StatusText(view).empty());
}

TEST(StatusTextTest, Summary) {
  EXPECT_EQ(StatusText(SampleView()),
            "toy: finished (max_nodes)\n"
            "nodes     7 total, 2 kept, 1 reverted, 1 crashed, 1 running, 1 pending  "
            "(4 of 60 evaluated)\n"
            "metric    ops_per_s (max, target 3000)  1000 → 1800 at #4  ×1.80 (+80.0%)\n"
            "elapsed   12.5s of 2h\n"
            "path      baseline → compiler.O2 → kernel.tiled[32]\n");
}

TEST(StatusTextTest, LlmUsageLineOnlyWhenTokensWereSpent) {
  CampaignView view = SampleView();
  view.meta.llm_prompt_tokens = 48210;
  view.meta.llm_completion_tokens = 5312;
  view.meta.llm_cost = 0.4275;
  const std::string text = StatusText(view);
  EXPECT_NE(text.find("\nllm       48210 + 5312 tokens, cost 0.4275\nelapsed"), std::string::npos)
      << text;
  EXPECT_EQ(StatusText(SampleView()).find("llm"), std::string::npos);
}

TEST(StatusJobsTest, LocalCampaignsShowNoJobs) {
  CampaignView view = SampleView();
  EXPECT_FALSE(StatusJson(view).contains("jobs"));
  EXPECT_EQ(StatusText(view).find("jobs"), std::string::npos);
}

TEST(StatusJobsTest, ClusterJobsInTextAndJson) {
  CampaignView view = SampleView();
  view.jobs = std::vector<ExecutorJob>{{"41", "RUNNING", "n3/bench-2", "0:07", "arbornode", "gpu"},
                                       {"42", "PENDING", "n3/bench-3", "0:00", "", "gpu"}};
  nlohmann::json j = StatusJson(view);
  ASSERT_TRUE(j["jobs"].is_array());
  ASSERT_EQ(j["jobs"].size(), 2u);
  EXPECT_EQ(j["jobs"][0], nlohmann::json::parse(R"({"id": "41", "state": "RUNNING",
      "comment": "n3/bench-2", "elapsed": "0:07", "nodes": "arbornode", "partition": "gpu"})"));
  EXPECT_FALSE(j.contains("jobs_error"));
  std::string text = StatusText(view);
  EXPECT_NE(text.find("jobs      2 queued or running\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  41  RUNNING  n3/bench-2  0:07  arbornode  gpu\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  42  PENDING  n3/bench-3  0:00  -  gpu\n"), std::string::npos) << text;
  view.jobs->clear();
  EXPECT_NE(StatusText(view).find("jobs      none queued or running\n"), std::string::npos);
  EXPECT_EQ(StatusJson(view)["jobs"], nlohmann::json::array());
}

TEST(StatusJobsTest, UnknownJobsAreOneLineAndTheRestStays) {
  CampaignView view = SampleView();
  view.jobs = std::vector<ExecutorJob>{};
  view.jobs_error = "squeue failed: slurm_load_jobs error";
  std::string text = StatusText(view);
  EXPECT_NE(text.find("path      "), std::string::npos) << text;
  EXPECT_NE(text.find("jobs      unknown: squeue failed: slurm_load_jobs error\n"),
            std::string::npos)
      << text;
  nlohmann::json j = StatusJson(view);
  EXPECT_TRUE(j["jobs"].is_null());
  EXPECT_EQ(j["jobs_error"], "squeue failed: slurm_load_jobs error");
  EXPECT_EQ(j["campaign"], "toy");
}

}  // namespace
}  // namespace arbor
