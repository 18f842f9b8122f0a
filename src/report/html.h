// The HTML report (`arbor report`) and the live dashboard's page (`arbor serve`).
//
// One self-contained document: inline CSS, inline SVG (the tree as laid out by Graphviz, the
// anytime curves drawn here), and for the live page a small inline script that polls the JSON
// API. No external URL appears anywhere, so the file opens offline. Every text that comes from
// the store or the workspace (action ids, diagnoses, summaries, logs, the diff) is
// HTML-escaped; the SVG is the caller's (Graphviz escapes its own labels).
//
// Pure: the caller (app/) loads the store, runs `dot` and git, reads the logs, and passes
// the results in. Work is linear in the nodes; tables beyond `max_node_rows` show the kept
// path and the most recent nodes, and say how many were left out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "report/views.h"

namespace arbor {

// The tail of one captured output of one run of a node (runs/n<node>/<label>/<stream>).
struct LogExcerpt {
  std::string label;   // the run: "build", "check", "bench-3", ...
  std::string stream;  // "stdout" | "stderr"
  std::string text;
};

struct ReportInput {
  CampaignView view;
  double min_effect = 0;  // [critic] min_effect, for the noise panel
  nlohmann::json funnel;  // FunnelBuilder::Json
  std::string tree_svg;   // Graphviz SVG of TreeDot(for_report); empty: tree_note is shown
  std::string tree_note;  // why there is no layout (dot missing, failed, tree too large)
  std::string diff;       // the final diff: baseline commit .. arbor/<campaign>
  std::string best_env;   // arbor-best.env on arbor/<campaign>
  std::map<NodeId, std::vector<LogExcerpt>> logs;
  // The run whose failure ended each node's step, for the nodes that have one.
  std::map<NodeId, FailedRun> failed_runs;
  std::map<NodeId, std::vector<JobPlace>> places;  // cluster executors: where runs went
  size_t max_node_rows = 2000;
  size_t max_curve_points = 2000;
  bool live = false;      // the dashboard's page: adds the polling script
  int64_t version = 0;    // id of the newest event the page reflects (live page)
  std::string generated;  // when and by what the report was made, shown in the footer
};

std::string ReportHtml(const ReportInput& input);

enum class CurveAxis { kNodes, kTime };
// The anytime curve (CurveJson) as an inline <svg class="curve">: evaluated nodes as dots
// coloured by outcome, the best-so-far as a step line, each keep as a marked point with its
// interval as a whisker. Carries data-points and data-keeps for tests and scripts.
std::string CurveSvg(const nlohmann::json& curve, CurveAxis axis);

// The details of one node: score terms at dispatch, the Critic's verdict, constraints it
// published, the specialist's summary, where its runs went (a cluster executor's hosts and
// jobs), the output of its failed run (`failed`, when there is one) and its log excerpts.
// A <details id="node-ID">.
std::string NodeDetailHtml(const Node& node, const std::vector<LogExcerpt>& logs,
                           const std::vector<JobPlace>& places = {},
                           const FailedRun* failed = nullptr);

}  // namespace arbor
