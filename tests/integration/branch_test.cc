// Branches on the real binary (docs/search.md, "Branches"): a pair whose other side ran at the
// incumbent opens under that node, is judged against the incumbent, and once kept moves the
// main line (and the campaign branch) to its branch; `arbor tree`, `arbor show` and the report
// say where each branch started and why it was opened. And the fix search (docs/search.md, step
// 3): a change that fails its check, with groups of candidates, until its fix is found.
#include <gtest/gtest.h>

#include <string>

#include "campaign_checks.h"
#include "harness.h"

namespace arbor::integration {
namespace {

// A hidden pair: fast-x pays (×1.5) only with fix-f on, which costs 3% alone. Neither is ever
// kept alone; fast-x on top of fix-f's state is. With `trap`, fast-x instead fails the check
// unless fix-f is on (an accuracy trap with its fix, which the fix search finds), and `pads`
// more candidates cost 1% each.
void WriteTrap(TempWorkspace& ws, int max_nodes, bool trap = false, int pads = 1) {
  ws.Write("bench.sh",
           "#!/bin/sh\n"
           "awk -v x=\"$X\" -v f=\"$F\" -v p=\"$P$Q$R\" 'BEGIN { v = 100;"
           " if (x == 1 && (f == 1 || " +
               std::string(trap ? "1" : "0") +
               ")) v *= 1.5; if (f == 1) v *= 0.97; v *= 0.99 ^ length(p);"
               " printf \"{\\\"v\\\": %g}\\n\", v }'\n");
  ws.Write("check.sh", trap ? "#!/bin/sh\nif [ \"$X\" = 1 ] && [ \"$F\" != 1 ]; then\n"
                              "  echo 'accuracy: output differs'; exit 1\nfi\n"
                            : "#!/bin/sh\nexit 0\n");
  std::string toml =
      "[campaign]\nname = \"branch\"\nworkspace = \".\"\n\n"
      "[target]\nbuild = \"true\"\ncheck = \"sh check.sh\"\nbench = \"sh bench.sh\"\n\n"
      "[metric]\nname = \"v\"\nsource = \"json:v\"\nrepetitions = 3\n\n"
      "[search]\nmax_nodes = " +
      std::to_string(max_nodes) +
      "\n\n"
      "[[action]]\nid = \"fast-x\"\nlayer = \"kernel\"\ncategory = \"fast\"\n"
      "speedup = 2.0\napply = { env = { X = \"1\" } }\n\n"
      "[[action]]\nid = \"fix-f\"\nlayer = \"kernel\"\ncategory = \"fix\"\n"
      "speedup = 1.1\napply = { env = { F = \"1\" } }\n";
  const char* pad_vars[] = {"P", "Q", "R"};
  for (int i = 0; i < pads && i < 3; ++i) {
    toml += std::string("\n[[action]]\nid = \"pad-") + static_cast<char>('p' + i) +
            "\"\nlayer = \"application\"\ncategory = \"pad\"\n"
            "speedup = 1.05\napply = { env = { " +
            pad_vars[i] + " = \"1\" } }\n";
  }
  ws.Write("arbor.toml", toml);
  ws.CommitAll();
}

TEST(IntegrationBranches, APairOpensUnderItsSideAndMovesTheMainLineWhenKept) {
  TempWorkspace ws;
  WriteTrap(ws, 6);
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 300);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<TreeNode> nodes = LoadTree(ws);
  ExpectTreeInvariants(nodes);
  const TreeNode* fix = nullptr;
  const TreeNode* branch = nullptr;
  for (const TreeNode& n : nodes) {
    if (n.action == "fix-f" && !n.branch && n.with.empty() && !n.drop) fix = &n;
    if (n.action == "fast-x" && n.branch && n.outcome == "kept") branch = &n;
  }
  ASSERT_NE(fix, nullptr) << DescribeTree(nodes);
  ASSERT_NE(branch, nullptr) << DescribeTree(nodes);
  EXPECT_EQ(branch->parent, fix->id) << "fast-x builds on fix-f's state";
  EXPECT_NE(branch->opened.find("a pair (fix-f + fast-x)"), std::string::npos) << branch->opened;
  EXPECT_EQ(fix->outcome, "kept") << "carried onto the main line with the branch";
  EXPECT_TRUE(HasFlag(*fix, "carried")) << DescribeTree(nodes);
  EXPECT_NE(fix->diagnosis.find("carried: kept with #" + std::to_string(branch->id)),
            std::string::npos)
      << fix->diagnosis;
  EXPECT_NE(
      branch->diagnosis.find("the main line moves to the branch of #" + std::to_string(fix->id)),
      std::string::npos)
      << branch->diagnosis;
  const TreeNode* fast_alone = FindKey(nodes, "fast-x");
  ASSERT_NE(fast_alone, nullptr);
  EXPECT_EQ(fast_alone->outcome, "reverted");

  // The campaign branch holds the branch's state: both variables.
  ProcResult env = ws.Git({"show", "arbor/branch:arbor-best.env"});
  ASSERT_EQ(env.exit_code, 0) << env.Describe();
  EXPECT_NE(env.out.find("X='1'"), std::string::npos) << env.out;
  EXPECT_NE(env.out.find("F='1'"), std::string::npos) << env.out;

  // Where the branch started and why, in every view.
  ProcResult ascii = ws.Arbor({"tree"});
  ASSERT_EQ(ascii.exit_code, 0) << ascii.Describe();
  EXPECT_NE(ascii.out.find("branch of #" + std::to_string(fix->id) + ": a pair"), std::string::npos)
      << ascii.out;
  EXPECT_NE(ascii.out.find("carried onto the main line"), std::string::npos) << ascii.out;
  ProcResult show = ws.Arbor({"show", std::to_string(branch->id)});
  ASSERT_EQ(show.exit_code, 0) << show.Describe();
  EXPECT_NE(show.out.find("of #" + std::to_string(fix->id) + ": a pair (fix-f + fast-x)"),
            std::string::npos)
      << show.out;
  const std::string report = ws.aux() + "/report.html";
  ProcResult html = ws.Arbor({"report", "--out", report});
  ASSERT_EQ(html.exit_code, 0) << html.Describe();
  const std::string page = ReadFile(report);
  EXPECT_NE(page.find("branch opened"), std::string::npos);
}

// The same campaign as the hill-climb ablation would run it ([search] branches = false): the
// pair is one node under the incumbent applying both, and the answer is the same.
TEST(IntegrationBranches, WithoutBranchesThePairIsOneNodeUnderTheIncumbent) {
  TempWorkspace ws;
  WriteTrap(ws, 6);
  std::string toml = ReadFile(ws.repo() + "/arbor.toml");
  toml.replace(toml.find("max_nodes = 6"), 13, "max_nodes = 6\nbranches = false");
  ws.Write("arbor.toml", toml);
  ws.CommitAll();
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 300);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<TreeNode> nodes = LoadTree(ws);
  const TreeNode* pair = FindKey(nodes, "fix-f+fast-x");
  ASSERT_NE(pair, nullptr) << DescribeTree(nodes);
  EXPECT_FALSE(pair->branch);
  EXPECT_EQ(pair->outcome, "kept");
  for (const TreeNode& n : nodes) EXPECT_FALSE(n.branch) << DescribeTree(nodes);
  ProcResult env = ws.Git({"show", "arbor/branch:arbor-best.env"});
  EXPECT_NE(env.out.find("X='1'"), std::string::npos) << env.out;
  EXPECT_NE(env.out.find("F='1'"), std::string::npos) << env.out;
}

// fast-x fails its check unless fix-f is on; three more candidates cost 1% each. The fix
// search applies fast-x with every candidate that ran (a probe: its check passes, it is not
// measured), halves the group, and ends with fast-x and fix-f alone, measured and kept; the
// handed state has both and none of the others.
TEST(IntegrationFixSearch, TheFixOfAFailingCheckIsBisectedOutOfAGroup) {
  TempWorkspace ws;
  WriteTrap(ws, 9, /*trap=*/true, /*pads=*/3);
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 300);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<TreeNode> nodes = LoadTree(ws);
  ExpectTreeInvariants(nodes);
  int probes = 0;
  const TreeNode* kept = nullptr;
  for (const TreeNode& n : nodes) {
    if (!HasFlag(n, "move:fix")) continue;
    EXPECT_EQ(n.action, "fast-x") << DescribeTree(nodes);
    if (HasFlag(n, "probe")) {
      ++probes;
      EXPECT_EQ(n.outcome, "reverted");
      EXPECT_TRUE(n.metric.is_null()) << "a probe is not measured";
      EXPECT_NE(n.diagnosis.find("probe: check passed"), std::string::npos) << n.diagnosis;
    }
    if (n.outcome == "kept") kept = &n;
  }
  EXPECT_GE(probes, 1) << DescribeTree(nodes);
  ASSERT_NE(kept, nullptr) << DescribeTree(nodes);
  EXPECT_EQ(kept->with, "fix-f");
  EXPECT_NE(kept->opened.find("a fix search for fast-x"), std::string::npos) << kept->opened;
  ProcResult env = ws.Git({"show", "arbor/branch:arbor-best.env"});
  ASSERT_EQ(env.exit_code, 0) << env.Describe();
  EXPECT_NE(env.out.find("X='1'"), std::string::npos) << env.out;
  EXPECT_NE(env.out.find("F='1'"), std::string::npos) << env.out;
  for (const char* pad : {"P=", "Q=", "R="}) EXPECT_EQ(env.out.find(pad), std::string::npos);
  ProcResult status = ws.Arbor({"status", "--json"});
  ASSERT_EQ(status.exit_code, 0) << status.Describe();
  EXPECT_GE(nlohmann::json::parse(status.out)["moves"].value("fix", 0), 2) << status.out;
}

}  // namespace
}  // namespace arbor::integration
