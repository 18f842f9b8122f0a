// What the HTML report needs besides the store's rows: the tree laid out by Graphviz, the
// final diff and arbor-best.env from git, and the tails of each node's run logs and its failed
// run (app/run_logs.h). Internal to app/ (report.cc); everything here only reads.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "app/reading.h"
#include "report/html.h"

namespace arbor {

// Trees larger than this are not laid out (dot takes minutes on tens of thousands of nodes);
// the report then says so and lists the nodes in tables.
inline constexpr size_t kMaxLayoutNodes = 1500;

// `dot -Tsvg` of the report's DOT, as an inline <svg> element. On failure `note` says why
// (dot missing, failed, timed out, tree too large) and the result is "".
std::string LayoutTree(const std::vector<Node>& nodes, std::string* note);

// The diff from the root's commit to the incumbent's, without arbor-best.env, and that file
// at the incumbent's commit (both "" when unavailable). At most 512 KiB of diff.
struct FinalChange {
  std::string diff;
  std::string best_env;
};
FinalChange ReadFinalChange(const std::string& repo, const std::vector<Node>& nodes);

// Everything ReportHtml needs for `view`, gathered from the campaign: the log tails and failed
// runs of the nodes it lists come from app/run_logs.h, scrubbed with the campaign's [secrets].
ReportInput GatherReport(const OpenedCampaign& campaign, CampaignView view,
                         const nlohmann::json& funnel);

}  // namespace arbor
