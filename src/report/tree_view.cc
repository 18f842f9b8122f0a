// TreeJson, TreeAscii and TreeDot (declared in report/views.h).
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "report/format.h"
#include "report/tree_index.h"
#include "report/views.h"

namespace arbor {
namespace {

using report::TreeIndex;

// Beyond this depth the ASCII tree stops indenting further, so a 100k-deep chain costs
// O(n) characters rather than O(n^2).
constexpr size_t kMaxIndent = 32;
constexpr size_t kDiagnosisChars = 60;

const char* AnsiColor(Outcome o) {
  switch (o) {
    case Outcome::kKept:
      return "\x1b[32m";
    case Outcome::kReverted:
      return "\x1b[33m";
    case Outcome::kCrashed:
      return "\x1b[31m";
    case Outcome::kPruned:
    case Outcome::kSkipped:
    case Outcome::kPending:
      return "\x1b[2m";
    case Outcome::kRunning:
      return "\x1b[36m";
    case Outcome::kBaseline:
      break;
  }
  return "";
}

const char* DotFill(Outcome o) {
  switch (o) {
    case Outcome::kBaseline:
      return "#c6dbef";
    case Outcome::kKept:
      return "#b8e6b0";
    case Outcome::kReverted:
      return "#f9e79f";
    case Outcome::kCrashed:
      return "#f5a9a9";
    case Outcome::kPruned:
    case Outcome::kSkipped:
      return "#e0e0e0";
    case Outcome::kRunning:
      return "#aee8f0";
    case Outcome::kPending:
      break;
  }
  return "#ffffff";
}

bool ShowsDiagnosis(const Node& n) {
  return n.outcome != Outcome::kKept && n.outcome != Outcome::kBaseline && !n.diagnosis.empty();
}

// "#5 kernel.tiled[32]  kept  2500.1 (+12.3%)  [kernel/gemm]  — why", without tree prefix.
void AppendAsciiLine(const Node& n, bool on_incumbent_path, const AsciiOptions& options,
                     std::string& out) {
  if (on_incumbent_path) out += '*';
  out += '#';
  out += std::to_string(n.id);
  out += ' ';
  // A pair, a stack or a swap is measured and kept as one change: all of it is named.
  for (const std::string& with : CompanionKeys(n)) out += with + " + ";
  out += n.CandidateKey();
  out += "  ";
  const char* color = options.color ? AnsiColor(n.outcome) : "";
  out += color;
  out += OutcomeName(n.outcome);
  if (*color != '\0') out += "\x1b[0m";
  if (n.outcome == Outcome::kRunning && n.step != Step::kNone) {
    out += " (";
    out += StepName(n.step);
    out += ')';
  }
  if (n.metric) {
    out += "  ";
    out += report::FormatMetric(n.metric);
    if (n.gain) out += " (" + report::FormatPercent(*n.gain) + ")";
  }
  std::string where = report::LayerCategory(n);
  if (!where.empty()) out += "  [" + where + "]";
  // A branch from a node off the main line says so, and why it was opened.
  if (HasFlag(n, kBranchFlag)) {
    out += "  branch of #" + std::to_string(n.parent);
    if (!n.critic.opened.empty()) out += ": " + report::Shorten(n.critic.opened, kDiagnosisChars);
  }
  if (HasFlag(n, "carried")) out += "  (carried onto the main line by a branch)";
  // A refresh runs a change already on its path again (moves.h, Move::kRefresh).
  if (HasFlag(n, "move:refresh")) {
    out += "  refresh of #" + std::to_string(n.critic.requeued_from) + " on a newer state";
  }
  // What it ran again on top of its change (model.h RerunKeys: refresh = true).
  for (const std::string& key : RerunKeys(n)) out += "  + " + key + " again";
  if (ShowsDiagnosis(n)) out += "  — " + report::Shorten(n.diagnosis, kDiagnosisChars);
  out += '\n';
}

// Escapes text for a double-quoted DOT string. Newlines become the \n line break.
std::string DotEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string DotLabel(const Node& n) {
  std::string label = DotEscape("#" + std::to_string(n.id) + " " + n.CandidateKey());
  label += "\\n";
  label += OutcomeName(n.outcome);
  if (n.metric) {
    label += "\\n" + DotEscape(report::FormatMetric(n.metric));
    if (n.gain) label += " (" + report::FormatPercent(*n.gain) + ")";
  }
  return label;
}

}  // namespace

namespace report {

void FillTreeNodeJson(const Node& n, nlohmann::json& j) {
  // Assigned key by key: an initializer list would deep-copy every value, which shows at
  // 100k nodes.
  j["id"] = n.id;
  j["parent"] = n.parent == kNoNode ? nlohmann::json(nullptr) : nlohmann::json(n.parent);
  j["action"] = n.action_id;
  j["category"] = n.category;
  j["layer"] = n.layer;
  j["values"] = report::OptionalString(n.value);
  j["outcome"] = OutcomeName(n.outcome);
  j["metric"] = report::OptionalNumber(n.metric);
  j["gain"] = report::OptionalNumber(n.gain);
  j["diagnosis"] = n.diagnosis;
  // A branch node hangs under a node that is not on the main line (docs/search.md); `opened`
  // says why a re-queued node was opened, a branch's reason included.
  j["branch"] = HasFlag(n, kBranchFlag);
  j["opened"] = report::OptionalString(n.critic.opened);
  j["constraints"] = report::ConstraintsJson(n.critic.constraints);
  if (!n.critic.empty()) j["critic"] = report::CriticJson(n.critic);
  if (!n.agent.empty()) j["agent"] = report::AgentJson(n.agent);
  j["score"] = report::HasScore(n) ? report::ScoreJson(n.score) : nlohmann::json(nullptr);
  j["step"] = StepName(n.step);
  j["seq"] = n.seq;
  j["commit"] = n.commit;
  j["cost_s"] = n.cost_s;
  j["summary"] = n.summary;
}

}  // namespace report

nlohmann::json TreeJson(const std::vector<Node>& nodes) {
  TreeIndex index(nodes);
  nlohmann::json list = nlohmann::json::array();
  list.get_ref<nlohmann::json::array_t&>().reserve(index.ById().size());
  for (size_t pos : index.ById()) {
    const Node& n = index.at(pos);
    report::FillTreeNodeJson(n, list.emplace_back(nlohmann::json::object()));
  }
  nlohmann::json out = nlohmann::json::object();
  out["nodes"] = std::move(list);
  return out;
}

std::string TreeAscii(const std::vector<Node>& nodes, const AsciiOptions& options) {
  TreeIndex index(nodes);
  std::unordered_set<size_t> incumbent_path;
  for (size_t pos : index.IncumbentPath()) incumbent_path.insert(pos);

  struct Item {
    size_t pos;
    size_t depth;
    bool last;  // last among its siblings
  };
  std::vector<Item> stack;
  const auto& roots = index.Roots();
  for (size_t i = roots.size(); i-- > 0;) stack.push_back({roots[i], 0, true});
  // last_at[d]: whether the node on the current path at depth d is its parent's last child.
  std::vector<bool> last_at;
  std::string out;
  while (!stack.empty()) {
    Item item = stack.back();
    stack.pop_back();
    last_at.resize(item.depth + 1);
    last_at[item.depth] = item.last;
    if (item.depth > 0) {
      size_t first = 1;
      if (item.depth - 1 > kMaxIndent) {
        first = item.depth - kMaxIndent;
        out += "··· ";
      }
      for (size_t d = first; d < item.depth; ++d) out += last_at[d] ? "    " : "│   ";
      out += item.last ? "└── " : "├── ";
    }
    AppendAsciiLine(index.at(item.pos), incumbent_path.contains(item.pos), options, out);
    const auto& kids = index.Children(item.pos);
    for (size_t i = kids.size(); i-- > 0;) {
      stack.push_back({kids[i], item.depth + 1, i + 1 == kids.size()});
    }
  }
  return out;
}

std::string TreeDot(const std::vector<Node>& nodes, const DotOptions& options) {
  TreeIndex index(nodes);
  std::unordered_set<size_t> incumbent_path;
  for (size_t pos : index.IncumbentPath()) incumbent_path.insert(pos);

  std::string out =
      "digraph arbor {\n"
      "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n";
  if (options.for_report) {
    out += "  rankdir=LR;\n  ranksep=0.3;\n  nodesep=0.1;\n";
    out += "  node [fontsize=10, margin=\"0.08,0.03\"];\n  edge [arrowsize=0.6];\n";
  }
  for (size_t pos : index.ById()) {
    const Node& n = index.at(pos);
    out += "  n" + std::to_string(n.id) + " [label=\"" + DotLabel(n) + "\", fillcolor=\"" +
           DotFill(n.outcome) + "\"";
    if (!n.diagnosis.empty()) out += ", tooltip=\"" + DotEscape(n.diagnosis) + "\"";
    if (incumbent_path.contains(pos)) out += ", penwidth=2";
    if (options.for_report) {
      out += ", URL=\"#node-" + std::to_string(n.id) + "\", target=\"_self\"";
      if (n.outcome == Outcome::kPruned || n.outcome == Outcome::kSkipped) {
        out += ", style=\"rounded,filled,dashed\"";
      }
    }
    out += "];\n";
  }
  for (size_t pos : index.ById()) {
    const Node& n = index.at(pos);
    if (n.parent == n.id || !index.Find(n.parent)) continue;
    out += "  n" + std::to_string(n.parent) + " -> n" + std::to_string(n.id) + ";\n";
  }
  out += "}\n";
  return out;
}

}  // namespace arbor
