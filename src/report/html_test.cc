#include "report/html.h"

#include <gtest/gtest.h>

#include <string>

#include "report/panels.h"
#include "report/sample_tree_testing.h"

namespace arbor {
namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

ReportInput SampleInput() {
  ReportInput in;
  in.view.meta.name = "sample";
  in.view.metric_name = "ops";
  in.view.nodes = report_testing::SampleTree();
  in.view.meta.repetitions = 5;
  in.view.meta.noise_cv = 0.012;
  in.view.meta.noise_mde = 0.02;
  in.min_effect = 0.01;
  in.funnel = FunnelBuilder().Json(in.view.nodes);
  in.tree_svg = "<svg class=\"graph\"><g class=\"node\"></g></svg>";
  in.diff = "--- a/x.c\n+++ b/x.c\n+if (a < b && c > d) {}\n";
  in.best_env = "export CXXFLAGS='-O2'\n";
  return in;
}

TEST(ReportHtml, HasEverySectionAndARowPerNode) {
  std::string html = ReportHtml(SampleInput());
  for (const char* id : {"summary", "tree", "curve", "funnel", "kept", "noise", "nodes"}) {
    EXPECT_NE(html.find("id=\"" + std::string(id) + "\""), std::string::npos) << id;
  }
  EXPECT_EQ(Count(html, "class=\"node-row\""), 7u);
  EXPECT_EQ(Count(html, "class=\"node-detail\""), 7u);
  EXPECT_EQ(Count(html, "class=\"kept-row\""), 2u);
  EXPECT_EQ(Count(html, "<svg class=\"curve\""), 2u);
  EXPECT_NE(html.find("data-nodes=\"7\""), std::string::npos);
  EXPECT_NE(html.find("<g class=\"node\">"), std::string::npos) << "the SVG is embedded as is";
  EXPECT_NE(html.find("a &lt; b &amp;&amp; c &gt; d"), std::string::npos) << "the diff is escaped";
  EXPECT_NE(html.find("export CXXFLAGS=&#39;-O2&#39;"), std::string::npos);
  EXPECT_NE(html.find(">1.2%<"), std::string::npos) << "the A/A coefficient of variation";
  EXPECT_EQ(html.find("<script"), std::string::npos) << "the static report needs no script";
}

TEST(ReportHtml, NodeDetailsSayWhereTheRunsWent) {
  ReportInput in = SampleInput();
  in.places[2] = {{"base-0", "slurm", "45.0", "cn<7>"}, {"cand-0", "slurm", "45.1", "cn<7>"}};
  std::string html = ReportHtml(in);
  EXPECT_NE(html.find("<tr><th>ran on</th><td>cn&lt;7&gt;: 2 runs in Slurm job(s) 45.0, 45.1"
                      "</td></tr>"),
            std::string::npos);
  EXPECT_EQ(Count(html, "<tr><th>ran on</th>"), 1u) << "only the node with job events";
}

TEST(ReportHtml, NoExternalUrl) {
  std::string html = ReportHtml(SampleInput());
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  ReportInput live = SampleInput();
  live.live = true;
  std::string page = ReportHtml(live);
  EXPECT_EQ(page.find("http://"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_EQ(Count(page, "<script>"), 1u) << "the live page polls the API";
}

TEST(ReportHtml, EscapesEverythingFromTheStore) {
  ReportInput in = SampleInput();
  in.view.nodes[4].diagnosis = "<script>alert('diag')</script>";
  in.view.nodes[4].action_id = "kernel.<b>bold</b>";
  in.view.nodes[4].critic.evidence = "<script>alert('evidence')</script>";
  in.view.nodes[4].critic.constraints.push_back(
      Constraint{.action = "<img onerror=x>", .reason = "<script>alert(1)</script>"});
  in.view.meta.name = "<i>name</i>";
  in.logs[5] = {LogExcerpt{"bench-1", "stderr", "</pre><script>alert('log')</script>"}};
  std::string html = ReportHtml(in);
  EXPECT_EQ(html.find("<script"), std::string::npos) << html;
  EXPECT_EQ(html.find("<b>bold"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<i>name"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&#39;diag&#39;)"), std::string::npos);
  EXPECT_NE(html.find("&lt;/pre&gt;&lt;script&gt;alert(&#39;log&#39;)"), std::string::npos);
}

// A node's failed run: its label and exit, the paths of the full logs and both tails,
// escaped like everything else.
TEST(ReportHtml, ShowsTheFailedRunOfANode) {
  ReportInput in = SampleInput();
  in.failed_runs[5] = FailedRun{"build",
                                "/w/.arbor/c/runs/n5/build",
                                "failed",
                                {"make: *** [all] Error 1"},
                                {"a.c:3: error: <stdin>", "\\rtwo"}};
  std::string html = ReportHtml(in);
  size_t block = html.find("<div class=\"failed-run\" data-run=\"build\">");
  ASSERT_NE(block, std::string::npos) << html;
  EXPECT_LT(html.find("id=\"node-5\""), block);
  EXPECT_NE(html.find("<h4>Failed run build (failed)</h4>"), std::string::npos);
  EXPECT_NE(html.find("full logs: /w/.arbor/c/runs/n5/build/stdout, "
                      "/w/.arbor/c/runs/n5/build/stderr"),
            std::string::npos);
  EXPECT_NE(html.find("<pre>make: *** [all] Error 1</pre>"), std::string::npos);
  EXPECT_NE(html.find("<pre>a.c:3: error: &lt;stdin&gt;\n\\rtwo</pre>"), std::string::npos);
  EXPECT_EQ(Count(html, "class=\"failed-run\""), 1u);
  in.failed_runs[5].out.clear();
  EXPECT_NE(ReportHtml(in).find("<div class=\"log-name\">stdout: (empty)</div>"),
            std::string::npos);
}

TEST(ReportHtml, FallsBackWithoutALayout) {
  ReportInput in = SampleInput();
  in.tree_svg.clear();
  in.tree_note = "Graphviz `dot` is not installed.";
  std::string html = ReportHtml(in);
  EXPECT_NE(html.find("class=\"fallback\""), std::string::npos);
  EXPECT_NE(html.find("Graphviz `dot` is not installed."), std::string::npos);
  EXPECT_EQ(Count(html, "class=\"node-row\""), 7u);
}

TEST(ReportHtml, LargeTreesListTheKeptPathAndTheNewest) {
  ReportInput in = SampleInput();
  in.max_node_rows = 3;
  std::string html = ReportHtml(in);
  // The newest three (#5, #6, #7) plus the kept path (#1, #2, #4).
  EXPECT_EQ(Count(html, "class=\"node-row\""), 6u);
  EXPECT_EQ(html.find("data-node=\"3\""), std::string::npos);
  EXPECT_NE(html.find("Showing 6 of 7 nodes"), std::string::npos);
}

TEST(CurveSvg, OneMarkPerKeepAndPoint) {
  ReportInput in = SampleInput();
  for (Node& n : in.view.nodes) n.finished_s = static_cast<double>(n.seq);
  nlohmann::json curve = CurveJson(in.view, 100);
  std::string svg = CurveSvg(curve, CurveAxis::kNodes);
  EXPECT_EQ(Count(svg, "class=\"keep\""), 2u);
  EXPECT_EQ(Count(svg, "<circle class=\"pt"), 3u);  // the crash has no metric to plot
  EXPECT_NE(svg.find("data-points=\"4\""), std::string::npos);
  EXPECT_NE(svg.find("data-keeps=\"2\""), std::string::npos);
  EXPECT_EQ(Count(svg, "<path class=\"best\""), 1u);
  EXPECT_NE(CurveSvg(curve, CurveAxis::kTime).find("campaign time"), std::string::npos);
}

TEST(CurveSvg, SaysSoWhenNothingWasMeasured) {
  CampaignView empty;
  std::string svg = CurveSvg(CurveJson(empty, 10), CurveAxis::kNodes);
  EXPECT_NE(svg.find("no measurement yet"), std::string::npos);
}

}  // namespace
}  // namespace arbor

namespace arbor {
namespace {

TEST(TreeDotForReport, LinksEveryBoxAndDashesNodesThatNeverRan) {
  std::vector<Node> nodes = report_testing::SampleTree();
  nodes[6].outcome = Outcome::kPruned;  // #7
  DotOptions options;
  options.for_report = true;
  std::string dot = TreeDot(nodes, options);
  EXPECT_NE(dot.find("rankdir=LR"), std::string::npos);
  for (int id = 1; id <= 7; ++id) {
    EXPECT_NE(dot.find("URL=\"#node-" + std::to_string(id) + "\""), std::string::npos) << id;
  }
  EXPECT_EQ(Count(dot, "dashed"), 1u);
  EXPECT_EQ(TreeDot(nodes).find("URL="), std::string::npos) << "plain DOT stays as it was";
}

}  // namespace
}  // namespace arbor
