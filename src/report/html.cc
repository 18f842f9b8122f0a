// ReportHtml (declared in report/html.h): the page, section by section.
#include "report/html.h"

#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "report/format.h"
#include "report/panels.h"
#include "report/tree_index.h"
#include "util/duration.h"
#include "util/escape.h"
#include "util/strings.h"

namespace arbor {
namespace {

constexpr const char* kStyle = R"css(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:0;
  color:#1d2329;background:#f6f7f9}
header,main,footer{max-width:1200px;margin:0 auto;padding:12px 20px}
header{background:#fff;border-bottom:1px solid #dde1e6;max-width:none}
h1{font-size:20px;margin:4px 0}h2{font-size:16px;margin:0 0 8px}h4{margin:10px 0 4px}
section{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:12px 16px;
  margin:14px 0}
.facts span{margin-right:18px}.muted{color:#6a737d}
table{border-collapse:collapse;font-size:13px}td,th{padding:3px 8px;text-align:left;
  border-bottom:1px solid #eef0f2;vertical-align:top}th{font-weight:600}
.num{text-align:right;font-variant-numeric:tabular-nums}
.tree-svg{overflow:auto;max-height:720px;border:1px solid #eef0f2}
.tree-svg svg{height:auto;max-width:none}.tree-svg.fit svg{max-width:100%}
.curves{display:flex;flex-wrap:wrap;gap:16px}.curves svg{width:540px;max-width:100%}
svg.curve .grid{stroke:#eef0f2}svg.curve .axis{stroke:#888}
svg.curve .tick,svg.curve .label{font-size:11px;fill:#555}
svg.curve .best{fill:none;stroke:#1a7f37;stroke-width:2}
svg.curve .keep{fill:#1a7f37;stroke:#fff}svg.curve .ci{stroke:#1a7f37;stroke-width:6;
  stroke-opacity:.25;stroke-linecap:round}
svg.curve .pt{fill:#999}svg.curve .pt.o-reverted{fill:#d4a72c}
svg.curve .pt.o-crashed{fill:#cf222e}svg.curve .pt.o-kept{fill:#1a7f37}
.badge{display:inline-block;padding:0 6px;border-radius:8px;font-size:12px;background:#eee}
.o-baseline{background:#c6dbef}.o-kept{background:#b8e6b0}.o-reverted{background:#f9e79f}
.o-crashed{background:#f5a9a9}.o-pruned,.o-skipped{background:#e0e0e0}
.o-running{background:#aee8f0}.o-pending{background:#fff;border:1px solid #ccc}
.bar{display:inline-block;height:10px;background:#5b8def;border-radius:2px}
pre{background:#f6f8fa;padding:8px;overflow:auto;max-height:360px;font-size:12px}
details.node-detail{border-top:1px solid #eef0f2;padding:4px 0}
details.node-detail summary{cursor:pointer}.detail-body{padding:4px 0 8px 18px}
.fallback{padding:12px;background:#fff8c5;border:1px solid #e6d98c}
#live{font-size:12px;color:#6a737d}
)css";

// Polls the API: the status line every 2 s, and the whole page body when the store moved on.
constexpr const char* kLiveScript = R"js(
(function(){
  var q=new URLSearchParams(location.search),tok=q.get('token');
  function u(p){return tok?p+(p.indexOf('?')<0?'?':'&')+'token='+encodeURIComponent(tok):p;}
  var version=document.body.getAttribute('data-version');
  function poll(){
    fetch(u('/api/status')).then(function(r){return r.json();}).then(function(s){
      document.body.setAttribute('data-live','ok');
      document.getElementById('live').textContent='live: '+s.state+', '+s.nodes.total+
        ' nodes, updated '+new Date().toLocaleTimeString();
      if(String(s.version)===version)return;
      return fetch(u('/')).then(function(r){return r.text();}).then(function(h){
        var d=new DOMParser().parseFromString(h,'text/html');
        ['summary','report'].forEach(function(id){
          document.getElementById(id).replaceWith(d.getElementById(id));});
        version=d.body.getAttribute('data-version');
        document.body.setAttribute('data-version',version);
      });
    }).catch(function(){document.body.setAttribute('data-live','error');})
      .finally(function(){setTimeout(poll,2000);});
  }
  poll();
})();
)js";

constexpr size_t kFitTreeNodes = 40;

std::string JsonNum(const nlohmann::json& j, const char* key, int digits = 6) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return "-";
  return FormatDouble(it->get<double>(), digits);
}

std::string Header(const ReportInput& in) {
  const CampaignView& v = in.view;
  nlohmann::json s = StatusJson(v);
  std::string out =
      "<header id=\"summary\"><h1>Arbor campaign “" + HtmlEscape(v.meta.name) + "”</h1>";
  out +=
      "<div class=\"facts\"><span>state <b>" + HtmlEscape(CampaignStateName(v.meta.state)) + "</b>";
  if (v.meta.stop_reason != StopReason::kNone) {
    out += " (" + HtmlEscape(StopReasonName(v.meta.stop_reason)) + ")";
  }
  out += "</span><span>" + HtmlEscape(v.metric_name) + " (" +
         (v.goal == Goal::kMax ? "max" : "min") + ") baseline <b>" +
         JsonNum(s["baseline"], "value") + "</b> → best <b>" + JsonNum(s["best"], "value") + "</b>";
  if (s["best"]["speedup"].is_number()) {
    out += " " + report::FormatSpeedup(s["best"]["speedup"].get<double>());
  }
  out += "</span>";
  if (s["best"].contains("confirmed_speedup")) {
    out += "<span>confirmed ×" + JsonNum(s["best"], "confirmed_speedup", 4) + " (95% CI ×" +
           JsonNum(s["best"], "ci_low", 4) + "–×" + JsonNum(s["best"], "ci_high", 4) + ")</span>";
  }
  const nlohmann::json& c = s["nodes"];
  out += "<span>nodes <b class=\"node-total\">" + std::to_string(c.value("total", 0)) +
         "</b>: " + std::to_string(c.value("kept", 0)) + " kept, " +
         std::to_string(c.value("reverted", 0)) + " reverted, " +
         std::to_string(c.value("crashed", 0)) + " crashed, " +
         std::to_string(c.value("pruned", 0)) + " pruned</span>";
  out += "<span>elapsed " + FormatDuration(v.meta.elapsed_s);
  if (v.max_time_s > 0) out += " of " + FormatDuration(v.max_time_s);
  out += "</span></div></header>";
  return out;
}

std::string TreeSection(const ReportInput& in) {
  std::string out = "<section id=\"tree\"><h2>Tree</h2><p class=\"muted\">";
  for (const char* o :
       {"baseline", "kept", "reverted", "crashed", "pruned", "skipped", "running", "pending"}) {
    out += "<span class=\"badge o-" + std::string(o) + "\">" + o + "</span> ";
  }
  out +=
      " — bold border: the kept path; dashed: never run (pruned or skipped). Click a box "
      "for its details.</p>";
  if (!in.tree_svg.empty()) {
    // A small tree is scaled to the page; a larger one keeps its size (readable labels) and
    // scrolls.
    const bool fit = in.view.nodes.size() <= kFitTreeNodes;
    out +=
        std::string("<div class=\"tree-svg") + (fit ? " fit" : "") + "\">" + in.tree_svg + "</div>";
  } else {
    out += "<p class=\"fallback\">No tree layout: " + HtmlEscape(in.tree_note) +
           " The tables below list every node.</p>";
  }
  std::string constraints;
  for (const Node& n : in.view.nodes) {
    for (const Constraint& c : n.critic.constraints) {
      constraints += "<li><a href=\"#node-" + std::to_string(n.id) + "\">#" + std::to_string(n.id) +
                     "</a> " + HtmlEscape(DescribeConstraint(c)) + "</li>";
    }
  }
  if (!constraints.empty()) {
    out += "<h4>Constraints published</h4><ul class=\"constraints\">" + constraints + "</ul>";
  }
  return out + "</section>";
}

std::string CurveSection(const ReportInput& in) {
  nlohmann::json curve = CurveJson(in.view, in.max_curve_points);
  std::string out = "<section id=\"curve\"><h2>Anytime curve</h2><p class=\"muted\">Best " +
                    HtmlEscape(in.view.metric_name) +
                    " so far (green step line) against nodes evaluated and against campaign "
                    "time; each keep is a green dot with its 95% interval, the other dots are "
                    "evaluated nodes coloured by outcome.</p><div class=\"curves\">";
  out += CurveSvg(curve, CurveAxis::kNodes) + CurveSvg(curve, CurveAxis::kTime);
  return out + "</div></section>";
}

std::string FunnelSection(const ReportInput& in) {
  std::string out = "<section id=\"funnel\"><h2>Funnel</h2><div class=\"curves\"><table>";
  out += "<tr><th>stage</th><th class=\"num\">count</th><th></th></tr>";
  int64_t most = 1;
  const nlohmann::json stages = in.funnel.value("stages", nlohmann::json::array());
  for (const auto& s : stages) most = std::max<int64_t>(most, s.value("count", int64_t{0}));
  for (const auto& s : stages) {
    int64_t n = s.value("count", int64_t{0});
    out += "<tr><td>" + HtmlEscape(s.value("stage", "")) + "</td><td class=\"num\">" +
           std::to_string(n) +
           "</td><td><span class=\"bar\" style=\"width:" + std::to_string(160 * n / most) +
           "px\"></span></td></tr>";
  }
  out += "</table><table><tr><th>where time went</th><th class=\"num\">seconds</th></tr>";
  for (const auto& t : in.funnel.value("time_s", nlohmann::json::array())) {
    out += "<tr><td>" + HtmlEscape(t.value("stage", "")) + "</td><td class=\"num\">" +
           FormatDouble(t.value("seconds", 0.0), 4) + "</td></tr>";
  }
  return out + "</table></div></section>";
}

std::string KeptSection(const ReportInput& in) {
  nlohmann::json kept = KeptPathJson(in.view.nodes);
  std::string out = "<section id=\"kept\"><h2>Kept path</h2>";
  if (kept["nodes"].empty()) {
    out += "<p class=\"muted\">Nothing kept yet: the best is the baseline.</p>";
  } else {
    out += "<table><tr><th>node</th><th>action</th><th>layer</th><th class=\"num\">" +
           HtmlEscape(in.view.metric_name) +
           "</th><th class=\"num\">gain</th><th>95% CI (speedup)</th><th>confirmed</th>"
           "<th class=\"num\">cost (s)</th></tr>";
    for (const auto& k : kept["nodes"]) {
      std::string action = k.value("action", "");
      if (k["values"].is_string()) action += "[" + k["values"].get<std::string>() + "]";
      out += "<tr class=\"kept-row\"><td><a href=\"#node-" + std::to_string(k.value("node", 0)) +
             "\">#" + std::to_string(k.value("node", 0)) + "</a></td><td>" + HtmlEscape(action) +
             "</td><td>" + HtmlEscape(k.value("layer", "")) + "</td><td class=\"num\">" +
             JsonNum(k, "metric") + "</td><td class=\"num\">" +
             (k["gain"].is_number() ? report::FormatPercent(k["gain"].get<double>()) : "-") +
             "</td><td>×" + JsonNum(k, "ci_low", 4) + " – ×" + JsonNum(k, "ci_high", 4) +
             "</td><td>" + (k.value("confirmed", false) ? "yes" : "no") +
             "</td><td class=\"num\">" + JsonNum(k, "cost_s", 4) + "</td></tr>";
    }
    out += "</table>";
  }
  out += "<h4>Final diff (baseline → arbor/" + HtmlEscape(in.view.meta.name) + ")</h4>";
  out += in.diff.empty() ? "<p class=\"muted\">no code change</p>"
                         : "<pre class=\"diff\">" + HtmlEscape(in.diff) + "</pre>";
  out += "<h4>arbor-best.env</h4>";
  out += in.best_env.empty() ? "<p class=\"muted\">none</p>"
                             : "<pre class=\"env\">" + HtmlEscape(in.best_env) + "</pre>";
  return out + "</section>";
}

std::string AnomaliesSection(const ReportInput& in) {
  nlohmann::json anomalies = AnomaliesJson(in.view.nodes);
  std::string out = "<section id=\"anomalies\"><h2>Anomalies</h2>";
  if (anomalies.empty()) {
    return out + "<p class=\"muted\">None: every gain was within its plausibility bound.</p>" +
           "</section>";
  }
  out +=
      "<p class=\"muted\">Gains beyond what the profile, the prior and the knowledge base "
      "explain, and incumbents un-kept when re-measured an order of magnitude off "
      "(docs/critic.md).</p><table><tr><th>node</th><th>action</th><th>outcome</th>"
      "<th>diagnosis</th></tr>";
  for (const auto& a : anomalies) {
    std::string id = std::to_string(a["node"].get<int64_t>());
    std::string outcome = a["outcome"].get<std::string>();
    out += "<tr class=\"anomaly-row\" data-node=\"" + id + "\"><td><a href=\"#node-" + id + "\">#" +
           id + "</a></td><td>" + HtmlEscape(a["action"].get<std::string>()) +
           "</td><td><span class=\"badge o-" + outcome + "\">" + outcome +
           (a["unkept"].get<bool>() ? " (un-kept)" : "") + "</span></td><td>" +
           HtmlEscape(a["diagnosis"].get<std::string>()) + "</td></tr>";
  }
  return out + "</table></section>";
}

std::string NoiseSection(const ReportInput& in) {
  nlohmann::json noise = NoiseJson(in.view.meta, in.min_effect);
  std::string out = "<section id=\"noise\"><h2>Noise</h2>";
  if (noise["repetitions"].is_null()) {
    return out + "<p class=\"muted\">The A/A pre-flight has not run.</p></section>";
  }
  auto pct = [](double f) { return FormatDouble(f * 100, 3) + "%"; };
  out += "<table><tr><th>A/A coefficient of variation</th><td class=\"num\">" +
         pct(noise["cv"].get<double>()) + "</td></tr>";
  out += "<tr><th>minimum detectable effect</th><td class=\"num\">" +
         pct(noise["mde"].get<double>()) + "</td></tr>";
  out += "<tr><th>repetitions per arm</th><td class=\"num\">" +
         std::to_string(noise["repetitions"].get<int64_t>()) + "</td></tr>";
  out += "<tr><th>minimum effect kept</th><td class=\"num\">" + pct(in.min_effect) +
         "</td></tr></table>";
  return out + "</section>";
}

// Which nodes get a row and details: all of them, or the kept path plus the newest ones.
std::vector<const Node*> ListedNodes(const ReportInput& in) {
  report::TreeIndex index(in.view.nodes);
  std::vector<const Node*> all;
  for (size_t pos : index.ById()) all.push_back(&index.at(pos));
  if (all.size() <= in.max_node_rows) return all;
  std::unordered_set<NodeId> keep;
  for (size_t pos : index.IncumbentPath()) keep.insert(index.at(pos).id);
  std::vector<const Node*> out;
  size_t newest_from = all.size() - std::min(all.size(), in.max_node_rows);
  for (size_t i = 0; i < all.size(); ++i) {
    if (i >= newest_from || keep.contains(all[i]->id)) out.push_back(all[i]);
  }
  return out;
}

std::string NodesSection(const ReportInput& in) {
  std::vector<const Node*> listed = ListedNodes(in);
  std::string out = "<section id=\"nodes\"><h2>Nodes</h2>";
  if (listed.size() < in.view.nodes.size()) {
    out += "<p class=\"fallback\">Showing " + std::to_string(listed.size()) + " of " +
           std::to_string(in.view.nodes.size()) +
           " nodes (the kept path and the newest); every node: `arbor tree --format json`, "
           "or /api/tree on `arbor serve`.</p>";
  }
  out +=
      "<table><tr><th>node</th><th>parent</th><th>action</th><th>outcome</th>"
      "<th class=\"num\">metric</th><th class=\"num\">gain</th><th class=\"num\">h</th>"
      "<th>diagnosis</th></tr>";
  for (const Node* n : listed) {
    std::string id = std::to_string(n->id);
    std::string outcome(OutcomeName(n->outcome));
    out += "<tr class=\"node-row\" data-node=\"" + id + "\" data-outcome=\"" + outcome +
           "\"><td><a href=\"#node-" + id + "\">#" + id + "</a></td><td>" +
           (n->parent == kNoNode ? "" : "#" + std::to_string(n->parent)) + "</td><td>" +
           HtmlEscape(n->CandidateKey()) + "</td><td><span class=\"badge o-" + outcome + "\">" +
           outcome + "</span></td><td class=\"num\">" + report::FormatMetric(n->metric) +
           "</td><td class=\"num\">" + (n->gain ? report::FormatPercent(*n->gain) : "") +
           "</td><td class=\"num\">" + (report::HasScore(*n) ? FormatDouble(n->score.h, 3) : "") +
           "</td><td>" + HtmlEscape(report::Shorten(n->diagnosis, 90)) + "</td></tr>";
  }
  out += "</table><h4>Details</h4>";
  static const std::vector<LogExcerpt> kNoLogs;
  static const std::vector<JobPlace> kNoPlaces;
  for (const Node* n : listed) {
    auto it = in.logs.find(n->id);
    auto placed = in.places.find(n->id);
    auto failed = in.failed_runs.find(n->id);
    out += NodeDetailHtml(*n, it == in.logs.end() ? kNoLogs : it->second,
                          placed == in.places.end() ? kNoPlaces : placed->second,
                          failed == in.failed_runs.end() ? nullptr : &failed->second);
  }
  return out + "</section>";
}

}  // namespace

std::string ReportHtml(const ReportInput& in) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  out += "<title>Arbor — " + HtmlEscape(in.view.meta.name) + "</title><style>" + kStyle +
         "</style></head>\n";
  out += "<body data-campaign=\"" + HtmlEscape(in.view.meta.name) + "\" data-nodes=\"" +
         std::to_string(in.view.nodes.size()) + "\" data-version=\"" + std::to_string(in.version) +
         "\">\n";
  if (in.live) out += "<div id=\"live\" style=\"padding:4px 20px\">live: connecting…</div>";
  out += Header(in) + "\n<main id=\"report\">\n";
  out += TreeSection(in) + "\n" + CurveSection(in) + "\n" + FunnelSection(in) + "\n";
  out += KeptSection(in) + "\n" + AnomaliesSection(in) + "\n" + NoiseSection(in) + "\n";
  out += NodesSection(in) + "\n";
  out += "</main>\n<footer class=\"muted\">" + HtmlEscape(in.generated) + "</footer>\n";
  if (in.live) out += std::string("<script>") + kLiveScript + "</script>\n";
  out += "</body></html>\n";
  return out;
}

}  // namespace arbor
