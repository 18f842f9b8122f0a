// Refreshes on the real binary (docs/search.md, step 2, refreshes): an action whose command derives
// a file from the state it runs on (as PGO trains a profile with the flags and knobs of its
// day), declared `refresh = true`, runs again on top of every change measured on a state that
// holds it, so that the change is judged with a file derived from itself.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "campaign_checks.h"
#include "harness.h"

namespace arbor::integration {
namespace {

// The benchmark pays 30 for a derived file that matches the knob F, and charges 40 for one
// that does not; F = 1 pays 50. `train` (ranked first) derives the file from F = 0: +30%.
// F = 1 on top of it, with the file left as it was, loses (+50 - 70: 110 against 130), as a
// change measured on a stale PGO profile does; with `train` run again on top of it, it pays
// (180).
constexpr const char* kTrain = "echo \"${F:-0}\" > derived.txt";

std::string Campaign(bool refresh, int parallel, const std::string& train) {
  return std::string(
             "[campaign]\nname = \"refresh\"\nworkspace = \".\"\n\n"
             "[target]\nbuild = \"true\"\ncheck = \"true\"\nbench = \"sh bench.sh\"\n\n"
             "[metric]\nname = \"v\"\nsource = \"json:v\"\nrepetitions = 3\n\n"
             "[critic]\nmin_effect = 0.05\n\n"
             "[search]\nmax_nodes = 5\nparallel = " +
             std::to_string(parallel) +
             "\n\n"
             "[[action]]\nid = \"train\"\nlayer = \"compiler\"\nspeedup = 1.3\n") +
         (refresh ? "refresh = true\n" : "") + "apply = { run = '" + train +
         "' }\n\n"
         "[[action]]\nid = \"knob.f\"\nlayer = \"application\"\nspeedup = 1.2\n"
         "apply = { env = { F = \"1\" } }\n";
}

void WriteTarget(TempWorkspace* ws, bool refresh, int parallel = 1,
                 const std::string& train = kTrain) {
  ws->Write("bench.sh",
            "#!/bin/sh\n"
            "f=${F:-0}; v=100\n"
            "[ \"$f\" = 1 ] && v=$((v + 50))\n"
            "if [ -f derived.txt ]; then\n"
            "  if [ \"$(cat derived.txt)\" = \"$f\" ]; then v=$((v + 30)); else v=$((v - 40)); fi\n"
            "fi\n"
            "echo \"{\\\"v\\\": $v}\"\n");
  ws->Write("arbor.toml", Campaign(refresh, parallel, train));
  ws->CommitAll();
}

double BestMetric(const TempWorkspace& ws) {
  nlohmann::json status = ws.ArborJson({"status", "--json"});
  EXPECT_TRUE(status.contains("best") && status["best"].contains("value")) << status.dump();
  return status["best"].value("value", 0.0);
}

// Sequential (parallel = 1) and with implementations in flight beside the measurement
// (parallel = 2, parallel.cc): the same tree.
class IntegrationRefreshP : public ::testing::TestWithParam<int> {};

TEST_P(IntegrationRefreshP, AChangeOnAStateWithADerivedFileIsMeasuredWithTheFileDerivedAgain) {
  TempWorkspace ws;
  WriteTarget(&ws, /*refresh=*/true, GetParam());
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 300);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<TreeNode> nodes = LoadTree(ws);
  ExpectTreeInvariants(nodes);
  const TreeNode* first = nullptr;
  const TreeNode* knob = nullptr;
  for (const TreeNode& n : nodes) {
    if (n.outcome != "kept") continue;
    if (n.action == "knob.f") knob = &n;
    if (n.action == "train") first = &n;
  }
  ASSERT_TRUE(first && knob) << DescribeTree(nodes);
  // The knob on the trained state, with `train` run again on top of it in the same node.
  EXPECT_EQ(knob->parent, first->id) << DescribeTree(nodes);
  EXPECT_TRUE(HasFlag(*knob, "rerun:train")) << DescribeTree(nodes);
  const std::string shown = ws.ArborJson({"show", std::to_string(knob->id), "--json"}).dump();
  EXPECT_NE(shown.find("train run again on the new state (refresh = true)"), std::string::npos)
      << shown;
  EXPECT_DOUBLE_EQ(BestMetric(ws), 180) << DescribeTree(nodes);
  // The branch holds the file derived from the final state; the keep needed no refresh node.
  ProcResult derived = ws.Git({"show", "arbor/refresh:derived.txt"});
  ASSERT_EQ(derived.exit_code, 0) << derived.Describe();
  EXPECT_EQ(derived.out, "1\n");
  nlohmann::json status = ws.ArborJson({"status", "--json"});
  EXPECT_EQ(status["moves"].value("refresh", 0), 0) << status.dump();
}

INSTANTIATE_TEST_SUITE_P(Parallel, IntegrationRefreshP, ::testing::Values(1, 2));

// The command run again fails on the knob's state (as a PGO training run may): the knob's node
// fails at its apply step, says where, and publishes no constraint against the knob, whose
// failure it was not alone.
TEST(IntegrationRefresh, ACommandRunAgainThatFailsIsNoEvidenceAgainstTheChange) {
  TempWorkspace ws;
  WriteTarget(
      &ws, /*refresh=*/true, 1,
      "[ \"${F:-0}\" = 1 ] && { echo training crashed >&2; exit 3; }; " + std::string(kTrain));
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 300);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<TreeNode> nodes = LoadTree(ws);
  ExpectTreeInvariants(nodes);
  const TreeNode* knob = nullptr;
  for (const TreeNode& n : nodes) {
    if (n.action == "knob.f" && n.outcome == "crashed" && knob == nullptr) knob = &n;
  }
  ASSERT_NE(knob, nullptr) << DescribeTree(nodes);
  EXPECT_TRUE(HasFlag(*knob, "rerun:train")) << DescribeTree(nodes);
  EXPECT_TRUE(HasFlag(*knob, "rerun-failed")) << DescribeTree(nodes);
  EXPECT_NE(knob->diagnosis.find("run again on top (refresh = true), train"), std::string::npos)
      << knob->diagnosis;
  nlohmann::json shown = ws.ArborJson({"show", std::to_string(knob->id), "--json"});
  EXPECT_TRUE(shown.value("constraints", nlohmann::json::array()).empty()) << shown.dump();
  EXPECT_DOUBLE_EQ(BestMetric(ws), 130) << DescribeTree(nodes);
}

// The same campaign without the declaration: the knob is measured on the stale file, loses and
// is reverted; the best stays the trained state.
TEST(IntegrationRefresh, WithoutTheDeclarationAChangeIsMeasuredOnTheStaleFile) {
  TempWorkspace ws;
  WriteTarget(&ws, /*refresh=*/false);
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 300);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<TreeNode> nodes = LoadTree(ws);
  for (const TreeNode& n : nodes) {
    EXPECT_FALSE(HasFlag(n, "move:refresh")) << n.id;
    EXPECT_FALSE(HasFlag(n, "rerun:train")) << n.id;
  }
  EXPECT_DOUBLE_EQ(BestMetric(ws), 130) << DescribeTree(nodes);
}

}  // namespace
}  // namespace arbor::integration
