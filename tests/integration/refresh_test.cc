// Refreshes on the real binary (docs/search.md, step 2, refreshes): an action whose command derives
// a file from the state it runs on (as PGO trains a profile with the flags and knobs of its
// day), declared `refresh = true`, runs again once a later keep changed that state.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "campaign_checks.h"
#include "harness.h"

namespace arbor::integration {
namespace {

// The benchmark pays 30 for a derived file that matches the knob F, and charges 10 for one
// that does not; F = 1 pays 50. `train` (ranked first) derives the file from F = 0: +30%.
// F = 1 on top of it still pays (+50 - 40: 140 against 130), and leaves the file stale; run
// again there, `train` matches F = 1: 180.
std::string Campaign(bool refresh) {
  return std::string(
             "[campaign]\nname = \"refresh\"\nworkspace = \".\"\n\n"
             "[target]\nbuild = \"true\"\ncheck = \"true\"\nbench = \"sh bench.sh\"\n\n"
             "[metric]\nname = \"v\"\nsource = \"json:v\"\nrepetitions = 3\n\n"
             "[critic]\nmin_effect = 0.05\n\n"
             "[search]\nmax_nodes = 5\n\n"
             "[[action]]\nid = \"train\"\nlayer = \"compiler\"\nspeedup = 1.3\n") +
         (refresh ? "refresh = true\n" : "") +
         "apply = { run = 'echo \"${F:-0}\" > derived.txt' }\n\n"
         "[[action]]\nid = \"knob.f\"\nlayer = \"application\"\nspeedup = 1.2\n"
         "apply = { env = { F = \"1\" } }\n";
}

void WriteTarget(TempWorkspace* ws, bool refresh) {
  ws->Write("bench.sh",
            "#!/bin/sh\n"
            "f=${F:-0}; v=100\n"
            "[ \"$f\" = 1 ] && v=$((v + 50))\n"
            "if [ -f derived.txt ]; then\n"
            "  if [ \"$(cat derived.txt)\" = \"$f\" ]; then v=$((v + 30)); else v=$((v - 10)); fi\n"
            "fi\n"
            "echo \"{\\\"v\\\": $v}\"\n");
  ws->Write("arbor.toml", Campaign(refresh));
  ws->CommitAll();
}

double BestMetric(const TempWorkspace& ws) {
  nlohmann::json status = ws.ArborJson({"status", "--json"});
  EXPECT_TRUE(status.contains("best") && status["best"].contains("value")) << status.dump();
  return status["best"].value("value", 0.0);
}

TEST(IntegrationRefresh, ACommandsDerivedFileIsDerivedAgainAfterALaterKeep) {
  TempWorkspace ws;
  WriteTarget(&ws, /*refresh=*/true);
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 300);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<TreeNode> nodes = LoadTree(ws);
  ExpectTreeInvariants(nodes);
  const TreeNode* first = nullptr;
  const TreeNode* knob = nullptr;
  const TreeNode* again = nullptr;
  for (const TreeNode& n : nodes) {
    if (n.outcome != "kept") continue;
    if (n.action == "knob.f") knob = &n;
    if (n.action == "train") (HasFlag(n, "move:refresh") ? again : first) = &n;
  }
  ASSERT_TRUE(first && knob && again) << DescribeTree(nodes);
  // In that order, each on the one before: the refresh runs on the state of the keep.
  EXPECT_EQ(knob->parent, first->id) << DescribeTree(nodes);
  EXPECT_EQ(again->parent, knob->id) << DescribeTree(nodes);
  EXPECT_NE(again->opened.find("refresh = true"), std::string::npos) << again->opened;
  EXPECT_DOUBLE_EQ(BestMetric(ws), 180) << DescribeTree(nodes);
  // The branch holds the file derived from the final state.
  ProcResult derived = ws.Git({"show", "arbor/refresh:derived.txt"});
  ASSERT_EQ(derived.exit_code, 0) << derived.Describe();
  EXPECT_EQ(derived.out, "1\n");
  nlohmann::json status = ws.ArborJson({"status", "--json"});
  EXPECT_EQ(status["moves"].value("refresh", 0), 1) << status.dump();
}

// The same campaign without the declaration: the file stays as the first run derived it.
TEST(IntegrationRefresh, WithoutTheDeclarationTheDerivedFileStaysStale) {
  TempWorkspace ws;
  WriteTarget(&ws, /*refresh=*/false);
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 300);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<TreeNode> nodes = LoadTree(ws);
  for (const TreeNode& n : nodes) EXPECT_FALSE(HasFlag(n, "move:refresh")) << n.id;
  EXPECT_DOUBLE_EQ(BestMetric(ws), 140) << DescribeTree(nodes);
}

}  // namespace
}  // namespace arbor::integration
