#include "report/panels.h"

#include <gtest/gtest.h>

#include "report/sample_tree_testing.h"

namespace arbor {
namespace {

using report_testing::SampleTree;

CampaignView SampleView() {
  CampaignView view;
  view.meta.name = "sample";
  view.metric_name = "ops";
  view.nodes = SampleTree();
  // Verdicts arrive in this order: #2 (t=10), #5 (t=20), #4 (t=30), #3 (t=40).
  for (Node& n : view.nodes) {
    if (n.id == 2) n.finished_s = 10;
    if (n.id == 5) n.finished_s = 20;
    if (n.id == 4) {
      n.finished_s = 30;
      n.critic.ci_low = 1.1;
      n.critic.ci_high = 1.3;
      n.critic.confirmed = true;
    }
    if (n.id == 3) n.finished_s = 40;
  }
  view.meta.elapsed_s = 45;
  return view;
}

TEST(CurveJson, StepsAtEveryKeepWithItsInterval) {
  nlohmann::json c = CurveJson(SampleView(), 100);
  EXPECT_EQ(c["baseline"], 1000.0);
  EXPECT_EQ(c["evaluated"], 4);  // #2, #5, #4, #3: not the root, running or pending ones
  ASSERT_EQ(c["keeps"].size(), 2u);
  EXPECT_EQ(c["keeps"][0]["node"], 2);
  EXPECT_EQ(c["keeps"][0]["n"], 1);
  EXPECT_DOUBLE_EQ(c["keeps"][0]["speedup"].get<double>(), 1.5);
  EXPECT_TRUE(c["keeps"][0]["ci_low"].is_null());
  const nlohmann::json& k = c["keeps"][1];
  EXPECT_EQ(k["node"], 4);
  EXPECT_EQ(k["action"], "kernel.tiled[32]");
  EXPECT_EQ(k["n"], 3);
  EXPECT_EQ(k["t"], 30.0);
  EXPECT_DOUBLE_EQ(k["speedup"].get<double>(), 1.2);  // 1800 over the previous best, 1500
  EXPECT_DOUBLE_EQ(k["metric_low"].get<double>(), 1650);
  EXPECT_DOUBLE_EQ(k["metric_high"].get<double>(), 1950);
  EXPECT_TRUE(k["confirmed"].get<bool>());
  ASSERT_EQ(c["points"].size(), 4u);
  EXPECT_EQ(c["points"][1]["node"], 5);
  EXPECT_EQ(c["points"][1]["outcome"], "reverted");
  EXPECT_TRUE(c["points"][3]["metric"].is_null());  // the crash has no metric
}

TEST(CurveJson, ThinsPointsButKeepsEveryKeep) {
  CampaignView view;
  Node root;
  root.id = kRootId;
  root.outcome = Outcome::kBaseline;
  root.metric = 10;
  view.nodes.push_back(root);
  for (int i = 2; i <= 1001; ++i) {
    Node n;
    n.id = i;
    n.parent = kRootId;
    n.seq = i;
    n.outcome = i % 100 == 0 ? Outcome::kKept : Outcome::kReverted;
    n.metric = 10 + i;
    n.finished_s = i;
    view.nodes.push_back(n);
  }
  nlohmann::json c = CurveJson(view, 50);
  EXPECT_EQ(c["evaluated"], 1000);
  EXPECT_EQ(c["points_total"], 1000);
  EXPECT_LE(c["points"].size(), 50u);
  EXPECT_GE(c["points"].size(), 25u);
  EXPECT_EQ(c["keeps"].size(), 10u);
}

TEST(CurveJson, MinGoalTurnsIntervalsIntoLowerMetrics) {
  CampaignView view = SampleView();
  view.goal = Goal::kMin;
  nlohmann::json c = CurveJson(view, 100);
  const nlohmann::json& k = c["keeps"][1];
  EXPECT_DOUBLE_EQ(k["metric_low"].get<double>(), 1500 / 1.1);
  EXPECT_EQ(c["goal"], "min");
}

TEST(FunnelBuilder, CountsStagesAndChargesTimeToTheStageAnEventCloses) {
  FunnelBuilder f;
  int64_t id = 0;
  auto add = [&](NodeId node, const char* kind, double t) {
    f.Add(Event{++id, node, kind, "", "", t});
  };
  add(2, "proposed", 0);
  add(2, "dispatched", 0);
  add(2, "built", 5);
  add(2, "checked", 6);
  add(2, "measured", 16);
  add(2, "kept", 16.5);
  add(2, "reprofiled", 20);
  add(3, "proposed", 20);
  add(3, "dispatched", 20);
  add(3, "crashed", 22);
  add(kNoNode, "stopped", 23);
  EXPECT_EQ(f.last_event_id(), 11);

  std::vector<Node> nodes = SampleTree();
  nodes[1].critic.confirmed = true;  // #2
  nlohmann::json j = f.Json(nodes);
  auto count = [&](const std::string& stage) {
    for (const auto& s : j["stages"]) {
      if (s["stage"] == stage) return s["count"].get<int64_t>();
    }
    return int64_t{-1};
  };
  auto seconds = [&](const std::string& stage) {
    for (const auto& s : j["time_s"]) {
      if (s["stage"] == stage) return s["seconds"].get<double>();
    }
    return -1.0;
  };
  EXPECT_EQ(count("proposed"), 2);
  EXPECT_EQ(count("dispatched"), 2);
  EXPECT_EQ(count("built"), 1);
  EXPECT_EQ(count("kept"), 2);  // the sample tree holds two kept nodes
  EXPECT_EQ(count("confirmed"), 1);
  EXPECT_DOUBLE_EQ(seconds("apply+build"), 5);
  EXPECT_DOUBLE_EQ(seconds("check"), 1);
  EXPECT_DOUBLE_EQ(seconds("benchmark"), 10);
  EXPECT_DOUBLE_EQ(seconds("decide"), 0.5);
  EXPECT_DOUBLE_EQ(seconds("profile"), 3.5);
  EXPECT_DOUBLE_EQ(seconds("failed step"), 2);
  EXPECT_EQ(j["events"], 11);
}

TEST(KeptPathJson, FollowsTheIncumbentPath) {
  nlohmann::json j = KeptPathJson(SampleTree());
  ASSERT_EQ(j["nodes"].size(), 2u);
  EXPECT_EQ(j["nodes"][0]["node"], 2);
  EXPECT_EQ(j["nodes"][0]["layer"], "compiler");
  EXPECT_EQ(j["nodes"][0]["cost_s"], 30.0);
  EXPECT_EQ(j["nodes"][1]["node"], 4);
  EXPECT_EQ(j["nodes"][1]["values"], "32");
}

TEST(NoiseJson, NullBeforeThePreflight) {
  CampaignMeta meta;
  EXPECT_TRUE(NoiseJson(meta, 0.01)["cv"].is_null());
  meta.noise_cv = 0.02;
  meta.noise_mde = 0.03;
  meta.repetitions = 5;
  nlohmann::json j = NoiseJson(meta, 0.01);
  EXPECT_EQ(j["cv"], 0.02);
  EXPECT_EQ(j["mde"], 0.03);
  EXPECT_EQ(j["repetitions"], 5);
  EXPECT_EQ(j["min_effect"], 0.01);
}

TEST(TreePageJson, PagesInIdOrderWhateverTheInputOrder) {
  std::vector<Node> nodes = SampleTree();  // ids 1, 2, 3, 4, 5, 6, 7 in a shuffled order
  std::swap(nodes[0], nodes[6]);
  nlohmann::json page = TreePageJson(nodes, 2, 3);
  EXPECT_EQ(page["total"], 7);
  ASSERT_EQ(page["nodes"].size(), 3u);
  EXPECT_EQ(page["nodes"][0]["id"], 3);
  EXPECT_EQ(page["nodes"][2]["id"], 5);
  EXPECT_EQ(page["nodes"][0]["outcome"], "crashed");
  EXPECT_TRUE(TreePageJson(nodes, 7, 10)["nodes"].empty());
  // Same shape as `arbor tree --format json`.
  EXPECT_EQ(TreePageJson(SampleTree(), 0, 100)["nodes"], TreeJson(SampleTree())["nodes"]);
}

}  // namespace
}  // namespace arbor
