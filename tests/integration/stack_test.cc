// Stacks on the real binary (docs/search.md, step 3): ideas that each measure a gain too small
// for the gate to keep are applied together, as one node, and kept when their sum is a gain.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "campaign_checks.h"
#include "harness.h"

namespace arbor::integration {
namespace {

// Four ideas make the benchmark 2% faster each, under a min_effect of 5%: none can be kept
// alone, no two together, all four together (+8%) can. A fifth costs 2%.
TEST(IntegrationStacks, SmallGainsTooSmallToKeepAloneAreKeptTogether) {
  TempWorkspace ws;
  ws.Write("bench.sh",
           "#!/bin/sh\n"
           "awk -v g=\"$A$B$C$D\" -v s=\"$S\" 'BEGIN { v = 100 * 1.02 ^ length(g);"
           " if (s == 1) v *= 0.98; printf \"{\\\"v\\\": %g}\\n\", v }'\n");
  std::string toml =
      "[campaign]\nname = \"stack\"\nworkspace = \".\"\n\n"
      "[target]\nbuild = \"true\"\ncheck = \"true\"\nbench = \"sh bench.sh\"\n\n"
      "[metric]\nname = \"v\"\nsource = \"json:v\"\nrepetitions = 3\n\n"
      "[critic]\nmin_effect = 0.05\n\n"
      "[search]\nmax_nodes = 10\n";
  for (const char* v : {"A", "B", "C", "D", "S"}) {
    toml += std::string("\n[[action]]\nid = \"knob-") + v +
            "\"\nlayer = \"application\"\ncategory = \"knob\"\nspeedup = 1.05\n"
            "apply = { env = { " +
            v + " = \"1\" } }\n";
  }
  ws.Write("arbor.toml", toml);
  ws.CommitAll();
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 300);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<TreeNode> nodes = LoadTree(ws);
  ExpectTreeInvariants(nodes);
  const TreeNode* kept = nullptr;
  for (const TreeNode& n : nodes) {
    if (n.outcome == "kept" && n.id != 1) {
      EXPECT_EQ(kept, nullptr) << "one keep: the stack\n" << DescribeTree(nodes);
      kept = &n;
    }
  }
  ASSERT_NE(kept, nullptr) << DescribeTree(nodes);
  EXPECT_TRUE(HasFlag(*kept, "move:stack")) << DescribeTree(nodes);
  EXPECT_NE(kept->opened.find("a stack of 4 ideas"), std::string::npos) << kept->opened;
  // The branch holds the four, not the one that costs.
  ProcResult env = ws.Git({"show", "arbor/stack:arbor-best.env"});
  ASSERT_EQ(env.exit_code, 0) << env.Describe();
  for (const char* v : {"A='1'", "B='1'", "C='1'", "D='1'"}) {
    EXPECT_NE(env.out.find(v), std::string::npos) << v << "\n" << env.out;
  }
  EXPECT_EQ(env.out.find("S="), std::string::npos) << env.out;
  ProcResult status = ws.Arbor({"status", "--json"});
  ASSERT_EQ(status.exit_code, 0) << status.Describe();
  EXPECT_GE(nlohmann::json::parse(status.out)["moves"].value("stack", 0), 1) << status.out;
}

}  // namespace
}  // namespace arbor::integration
