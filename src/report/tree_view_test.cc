#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "report/sample_tree_testing.h"
#include "report/views.h"

namespace arbor {
namespace {

using report_testing::MakeNode;
using report_testing::SampleTree;

TEST(TreeAsciiTest, SampleTree) {
  std::string expected =
      "*#1 baseline  baseline  1000\n"
      "├── *#2 compiler.O2  kept  1500 (+50.0%)  [compiler/flags]\n"
      "│   ├── *#4 kernel.tiled[32]  kept  1800 (+20.0%)  [kernel/gemm]\n"
      "│   └── #6 kernel.fuse  running (bench)  [kernel/gemm]\n"
      "├── #5 kernel.unroll  reverted  990 (-1.0%)  [kernel/loops]  — regressed by 1.0% "
      "(p=0.03): the unrolled loop spills regist…\n"
      "├── #3 kernel.simd  crashed  [kernel/vector]  — build failed: error: \"v4sf\" undeclared "
      "in C:\\src\\simd.h see…\n"
      "└── #7 app.batch  pending  [application/batching]\n";
  EXPECT_EQ(TreeAscii(SampleTree()), expected);
}

TEST(TreeAsciiTest, InputOrderDoesNotMatter) {
  std::vector<Node> nodes = SampleTree();
  std::reverse(nodes.begin(), nodes.end());
  EXPECT_EQ(TreeAscii(nodes), TreeAscii(SampleTree()));
}

TEST(TreeAsciiTest, ColorsOutcomeWords) {
  std::string out = TreeAscii(SampleTree(), {.color = true});
  EXPECT_NE(out.find("\x1b[32mkept\x1b[0m"), std::string::npos);
  EXPECT_NE(out.find("\x1b[33mreverted\x1b[0m"), std::string::npos);
  EXPECT_NE(out.find("\x1b[31mcrashed\x1b[0m"), std::string::npos);
  EXPECT_NE(out.find("\x1b[36mrunning\x1b[0m"), std::string::npos);
  EXPECT_NE(out.find("\x1b[2mpending\x1b[0m"), std::string::npos);
  EXPECT_EQ(TreeAscii(SampleTree()).find('\x1b'), std::string::npos);
}

TEST(TreeAsciiTest, OrphanBecomesExtraRoot) {
  std::vector<Node> nodes = {MakeNode(1, kNoNode, "baseline", Outcome::kBaseline, 0),
                             MakeNode(9, 8, "lost", Outcome::kReverted, 3)};
  EXPECT_EQ(TreeAscii(nodes), "*#1 baseline  baseline\n#9 lost  reverted\n");
}

// A refresh names the node whose change it runs again, so the path does not read as the same
// change applied twice.
TEST(TreeAsciiTest, ARefreshNamesTheChangeItRunsAgain) {
  std::vector<Node> nodes = {MakeNode(1, kNoNode, "baseline", Outcome::kBaseline, 0),
                             MakeNode(2, 1, "compiler.pgo", Outcome::kKept, 1),
                             MakeNode(3, 2, "compiler.fast-math", Outcome::kKept, 2),
                             MakeNode(4, 3, "compiler.pgo", Outcome::kKept, 3)};
  nodes[3].critic.flags = {"move:refresh"};
  nodes[3].critic.requeued_from = 2;
  const std::string out = TreeAscii(nodes);
  EXPECT_NE(out.find("*#4 compiler.pgo  kept  refresh of #2 on a newer state\n"), std::string::npos)
      << out;
  EXPECT_EQ(out.find("#2 compiler.pgo  kept  refresh"), std::string::npos) << out;
}

// A node on a state with a kept refresh action ran it again on top of its change: the tree
// says so, without reading as a pair.
TEST(TreeAsciiTest, ANodeThatRanARefreshActionAgainSaysSo) {
  std::vector<Node> nodes = {MakeNode(1, kNoNode, "baseline", Outcome::kBaseline, 0),
                             MakeNode(2, 1, "compiler.pgo", Outcome::kKept, 1),
                             MakeNode(3, 2, "compiler.fast-math", Outcome::kKept, 2)};
  nodes[2].critic.flags = {"rerun:compiler.pgo"};
  const std::string out = TreeAscii(nodes);
  EXPECT_NE(out.find("*#3 compiler.fast-math  kept  + compiler.pgo again\n"), std::string::npos)
      << out;
}

// A pair or a stack is one change made of several: the tree names every part, companions first.
TEST(TreeAsciiTest, APairOrAStackNamesEveryChangeItApplies) {
  std::vector<Node> nodes = {MakeNode(1, kNoNode, "baseline", Outcome::kBaseline, 0),
                             MakeNode(2, 1, "hw.hugepages", Outcome::kKept, 1)};
  nodes[1].critic.flags = {"move:stack", "with:compiler.fast-math", "with:kernel.approx-exp"};
  EXPECT_NE(
      TreeAscii(nodes).find("*#2 compiler.fast-math + kernel.approx-exp + hw.hugepages  kept"),
      std::string::npos)
      << TreeAscii(nodes);
}

std::vector<Node> Chain(int n) {
  std::vector<Node> nodes;
  nodes.reserve(n);
  nodes.push_back(MakeNode(1, kNoNode, "baseline", Outcome::kBaseline, 0));
  nodes.back().metric = 1;
  for (int i = 2; i <= n; ++i) {
    nodes.push_back(MakeNode(i, i - 1, "a" + std::to_string(i), Outcome::kKept, i - 1));
    nodes.back().metric = i;
  }
  return nodes;
}

TEST(TreeAsciiTest, DeepChainRendersWithBoundedIndent) {
  const int n = 100000;
  std::vector<Node> nodes = Chain(n);
  std::string out = TreeAscii(nodes);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), n);
  EXPECT_LT(out.size(), static_cast<size_t>(n) * 200);
  std::string last = out.substr(out.rfind('\n', out.size() - 2) + 1);
  EXPECT_EQ(last.rfind("··· ", 0), 0u) << last;
  EXPECT_NE(last.find("└── *#100000 a100000  kept  100000"), std::string::npos) << last;
  // The other views are iterative too.
  EXPECT_EQ(TreeJson(nodes)["nodes"].size(), static_cast<size_t>(n));
  EXPECT_NE(TreeDot(nodes).find("n99999 -> n100000;"), std::string::npos);
}

TEST(TreeAsciiTest, WideTree) {
  std::vector<Node> nodes = {MakeNode(1, kNoNode, "baseline", Outcome::kBaseline, 0)};
  for (int i = 2; i <= 100000; ++i) nodes.push_back(MakeNode(i, 1, "a", Outcome::kReverted, i));
  std::string out = TreeAscii(nodes);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 100000);
}

TEST(TreeJsonTest, ShapeAndValues) {
  nlohmann::json tree = TreeJson(SampleTree());
  ASSERT_EQ(tree.size(), 1u);
  ASSERT_EQ(tree["nodes"].size(), 7u);
  nlohmann::json root = nlohmann::json::parse(R"({
      "id": 1, "parent": null, "action": "baseline", "category": "", "layer": "",
      "values": null, "outcome": "baseline", "metric": 1000.0, "gain": null, "diagnosis": "",
      "constraints": [], "score": null, "step": "done", "seq": 0, "commit": "c1",
      "cost_s": 0.0, "summary": "", "branch": false, "opened": null})");
  EXPECT_EQ(tree["nodes"][0], root);
  nlohmann::json o2 = nlohmann::json::parse(R"({
      "id": 2, "parent": 1, "action": "compiler.O2", "category": "flags", "layer": "compiler",
      "values": null, "outcome": "kept", "metric": 1500.0, "gain": 0.5, "diagnosis": "",
      "constraints": [],
      "score": {"g": 0.25, "c": 30.0, "c_norm": 0.5, "r_acc": 0.0, "r_crash": 0.01,
                "m_gap": 1.0, "bonus": 0.125, "exploit": 0.5, "h": 0.75,
                "speedup": 0.0, "kb": []},
      "step": "done", "seq": 1, "commit": "c2", "cost_s": 30.0, "summary": "set -O2",
      "branch": false, "opened": null})");
  EXPECT_EQ(tree["nodes"][1], o2);
  const nlohmann::json& tiled = tree["nodes"][3];
  EXPECT_EQ(tiled["id"], 4);
  EXPECT_EQ(tiled["values"], "32");
  EXPECT_EQ(tiled["action"], "kernel.tiled");
  const nlohmann::json& crashed = tree["nodes"][2];
  EXPECT_EQ(crashed["outcome"], "crashed");
  EXPECT_TRUE(crashed["metric"].is_null());
  EXPECT_EQ(crashed["step"], "build");
  EXPECT_TRUE(crashed["score"].is_object());
  EXPECT_TRUE(tree["nodes"][6]["score"].is_null());  // pending: never dispatched
  for (const auto& node : tree["nodes"]) EXPECT_EQ(node.size(), 19u) << node.dump();
}

// A node a specialist implemented carries "agent"; every other node has no such key.
TEST(TreeJsonTest, AgentNoteWhenPresent) {
  std::vector<Node> nodes = SampleTree();
  AgentNote& a = nodes[3].agent;
  a.backend = SpecialistBackend::kLlm;
  a.domain = "kernel";
  a.confidence = 0.7;
  a.rounds = 2;
  a.prompt_tokens = 900;
  a.completion_tokens = 120;
  a.cost = 0.01;
  a.findings = {"memory-bound"};
  a.proposed = {"kernel.prefetch"};
  nlohmann::json tree = TreeJson(nodes);
  EXPECT_EQ(tree["nodes"][3]["agent"], nlohmann::json::parse(R"({
      "backend": "llm", "domain": "kernel", "confidence": 0.7, "rounds": 2,
      "prompt_tokens": 900, "completion_tokens": 120, "cost": 0.01,
      "findings": ["memory-bound"], "questions": [], "proposed": ["kernel.prefetch"]})"));
  EXPECT_FALSE(tree["nodes"][1].contains("agent"));
}

TEST(TreeDotTest, ColorsEdgesAndEscaping) {
  std::vector<Node> nodes = SampleTree();
  nodes[1].action_id = "odd\"id\\x";
  std::string dot = TreeDot(nodes);
  EXPECT_EQ(dot.rfind("digraph arbor {\n", 0), 0u);
  EXPECT_EQ(dot.substr(dot.size() - 2), "}\n");
  EXPECT_NE(dot.find("n2 [label=\"#2 odd\\\"id\\\\x\\nkept\\n1500 (+50.0%)\", "
                     "fillcolor=\"#b8e6b0\", penwidth=2];"),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("tooltip=\"build failed: error: \\\"v4sf\\\" undeclared in "
                     "C:\\\\src\\\\simd.h\\nsee log\""),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("fillcolor=\"#f5a9a9\""), std::string::npos);
  for (const char* edge :
       {"n1 -> n2;", "n1 -> n3;", "n2 -> n4;", "n1 -> n5;", "n2 -> n6;", "n1 -> n7;"}) {
    EXPECT_NE(dot.find(edge), std::string::npos) << edge;
  }
  EXPECT_EQ(std::count(dot.begin(), dot.end(), '>'), 6);
}

}  // namespace
}  // namespace arbor
