// CurveSvg and NodeDetailHtml (declared in report/html.h).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "report/format.h"
#include "report/html.h"
#include "util/escape.h"
#include "util/strings.h"

namespace arbor {
namespace {

constexpr double kWidth = 640;
constexpr double kHeight = 250;
constexpr double kLeft = 84;
constexpr double kRight = 24;
constexpr double kTop = 12;
constexpr double kBottom = 40;

std::string Num(double v) { return FormatDouble(v, 6); }
std::string Px(double v) { return FormatDouble(std::round(v * 10) / 10, 8); }

std::optional<double> Get(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

struct Scale {
  double lo = 0;
  double hi = 1;
  double from = 0;  // pixels
  double to = 1;
  double operator()(double v) const { return from + (v - lo) / (hi - lo) * (to - from); }
};

void AppendTicks(const Scale& s, bool vertical, std::string& out) {
  constexpr int kTicks = 4;
  for (int i = 0; i <= kTicks; ++i) {
    double v = s.lo + (s.hi - s.lo) * i / kTicks;
    double p = s(v);
    if (vertical) {
      out += "<line class=\"grid\" x1=\"" + Px(kLeft) + "\" x2=\"" + Px(kWidth - kRight) +
             "\" y1=\"" + Px(p) + "\" y2=\"" + Px(p) + "\"/>";
      out += "<text class=\"tick\" x=\"" + Px(kLeft - 6) + "\" y=\"" + Px(p + 4) +
             "\" text-anchor=\"end\">" + FormatDouble(v, 4) + "</text>";
    } else {
      out += "<text class=\"tick\" x=\"" + Px(p) + "\" y=\"" + Px(kHeight - kBottom + 16) +
             "\" text-anchor=\"middle\">" + FormatDouble(v, 4) + "</text>";
    }
  }
}

std::string Row(const std::string& name, const std::string& value) {
  return "<tr><th>" + HtmlEscape(name) + "</th><td>" + HtmlEscape(value) + "</td></tr>";
}

std::string Opt(std::optional<double> v) { return v ? FormatDouble(*v, 4) : "-"; }

}  // namespace

std::string CurveSvg(const nlohmann::json& curve, CurveAxis axis) {
  const bool by_nodes = axis == CurveAxis::kNodes;
  const char* x_key = by_nodes ? "n" : "t";
  const nlohmann::json& keeps = curve.at("keeps");
  const nlohmann::json& points = curve.at("points");
  std::optional<double> baseline = Get(curve, "baseline");

  double x_max = by_nodes ? curve.value("evaluated", 0.0) : curve.value("elapsed_s", 0.0);
  std::vector<double> ys;
  if (baseline) ys.push_back(*baseline);
  for (const auto* list : {&keeps, &points}) {
    for (const auto& p : *list) {
      x_max = std::max(x_max, Get(p, x_key).value_or(0));
      for (const char* key : {"metric", "metric_low", "metric_high"}) {
        if (auto v = Get(p, key)) ys.push_back(*v);
      }
    }
  }
  const std::string head = std::string("<svg class=\"curve\" data-axis=\"") +
                           (by_nodes ? "nodes" : "time") + "\" data-points=\"" +
                           std::to_string(points.size()) + "\" data-keeps=\"" +
                           std::to_string(keeps.size()) + "\" viewBox=\"0 0 " + Px(kWidth) + " " +
                           Px(kHeight) + "\" role=\"img\">";
  if (ys.empty()) {
    return head + "<text x=\"20\" y=\"40\">no measurement yet</text></svg>";
  }
  auto [y_lo_it, y_hi_it] = std::minmax_element(ys.begin(), ys.end());
  double pad = std::max((*y_hi_it - *y_lo_it) * 0.08, std::fabs(*y_hi_it) * 0.01 + 1e-9);
  Scale x{0, std::max(x_max, 1e-9), kLeft, kWidth - kRight};
  double y_lo = *y_lo_it - pad;
  if (*y_lo_it >= 0 && y_lo < 0) y_lo = 0;  // a throughput axis need not go negative
  Scale y{y_lo, *y_hi_it + pad, kHeight - kBottom, kTop};

  std::string out = head;
  AppendTicks(y, true, out);
  AppendTicks(x, false, out);
  out += "<line class=\"axis\" x1=\"" + Px(kLeft) + "\" y1=\"" + Px(kHeight - kBottom) +
         "\" x2=\"" + Px(kWidth - kRight) + "\" y2=\"" + Px(kHeight - kBottom) + "\"/>";
  out += "<text class=\"label\" x=\"" + Px((kLeft + kWidth) / 2) + "\" y=\"" + Px(kHeight - 6) +
         "\" text-anchor=\"middle\">" + (by_nodes ? "nodes evaluated" : "campaign time (s)") +
         "</text>";
  out += "<text class=\"label\" transform=\"rotate(-90)\" x=\"" +
         Px(-(kTop + kHeight - kBottom) / 2) + "\" y=\"12\" text-anchor=\"middle\">" +
         HtmlEscape(curve.value("metric", "")) + "</text>";

  for (const auto& p : points) {
    auto v = Get(p, "metric");
    if (!v) continue;
    out += "<circle class=\"pt o-" + HtmlEscape(p.value("outcome", "")) + "\" cx=\"" +
           Px(x(Get(p, x_key).value_or(0))) + "\" cy=\"" + Px(y(*v)) + "\" r=\"2.5\"><title>#" +
           std::to_string(p.value("node", 0)) + ": " + Num(*v) + "</title></circle>";
  }

  // The best so far: a step line from the baseline through every keep.
  std::optional<double> best = baseline;
  std::string path;
  if (best) path = "M" + Px(x(0)) + " " + Px(y(*best));
  std::string marks;
  for (const auto& k : keeps) {
    auto v = Get(k, "metric");
    if (!v) continue;
    double px = x(Get(k, x_key).value_or(0));
    if (best) path += " H" + Px(px) + " V" + Px(y(*v));
    if (!best) path = "M" + Px(px) + " " + Px(y(*v));
    best = v;
    auto lo = Get(k, "metric_low");
    auto hi = Get(k, "metric_high");
    if (lo && hi) {
      marks += "<line class=\"ci\" x1=\"" + Px(px) + "\" x2=\"" + Px(px) + "\" y1=\"" + Px(y(*lo)) +
               "\" y2=\"" + Px(y(*hi)) + "\"/>";
    }
    std::string tip = "#" + std::to_string(k.value("node", 0)) + " " + k.value("action", "") +
                      " kept: " + Num(*v);
    if (auto s = Get(k, "speedup")) tip += " " + report::FormatSpeedup(*s);
    auto cl = Get(k, "ci_low");
    auto ch = Get(k, "ci_high");
    if (cl && ch) tip += ", 95% CI ×" + FormatDouble(*cl, 4) + "–×" + FormatDouble(*ch, 4);
    if (k.value("confirmed", false)) tip += ", confirmed";
    marks += "<circle class=\"keep\" cx=\"" + Px(px) + "\" cy=\"" + Px(y(*v)) +
             "\" r=\"4.5\"><title>" + HtmlEscape(tip) + "</title></circle>";
  }
  if (best && !path.empty()) path += " H" + Px(x(x.hi));
  if (!path.empty()) out += "<path class=\"best\" d=\"" + path + "\"/>";
  out += marks;
  out += "</svg>";
  return out;
}

std::string NodeDetailHtml(const Node& n, const std::vector<LogExcerpt>& logs,
                           const std::vector<JobPlace>& places, const FailedRun* failed) {
  std::string out = "<details class=\"node-detail\" id=\"node-" + std::to_string(n.id) + "\">";
  out += "<summary><span class=\"badge o-" + std::string(OutcomeName(n.outcome)) + "\">" +
         std::string(OutcomeName(n.outcome)) + "</span> #" + std::to_string(n.id) + " " +
         HtmlEscape(n.CandidateKey());
  if (n.metric) out += " — " + report::FormatMetric(n.metric);
  if (n.gain) out += " (" + report::FormatPercent(*n.gain) + ")";
  out += "</summary><div class=\"detail-body\">";

  out += "<table class=\"kv\">";
  out += Row("parent", n.parent == kNoNode ? "-" : "#" + std::to_string(n.parent));
  out += Row("layer/category", report::LayerCategory(n));
  out += Row("step", std::string(StepName(n.step)));
  out += Row("cost", FormatDouble(n.cost_s, 4) + " s");
  if (!n.commit.empty()) out += Row("commit", n.commit);
  if (!n.diagnosis.empty()) out += Row("diagnosis", n.diagnosis);
  if (!n.summary.empty()) out += Row("specialist", n.summary);
  for (const std::string& line : PlacesByHost(places)) out += Row("ran on", line);
  out += "</table>";

  if (report::HasScore(n)) {
    out += "<h4>Score at dispatch</h4><table class=\"score\"><tr>";
    for (const auto& term : report::kScoreTerms) {
      out += "<th title=\"" + std::string(term.meaning) + "\">" + term.name + "</th>";
    }
    out += "</tr><tr>";
    for (const auto& term : report::kScoreTerms) {
      out += "<td>" + FormatDouble(n.score.*term.member, 4) + "</td>";
    }
    out += "</tr></table>";
  }

  const CriticNote& c = n.critic;
  if (!c.empty()) {
    out += "<h4>Critic</h4><table class=\"kv\">";
    if (c.p_value) out += Row("p-value", Opt(c.p_value));
    if (c.ci_low || c.ci_high) {
      out += Row("95% CI (speedup)", "×" + Opt(c.ci_low) + " – ×" + Opt(c.ci_high));
    }
    out += Row("confirmed", c.confirmed ? "yes" : "no");
    if (c.rca != RcaClass::kNone) out += Row("root cause", std::string(RcaClassName(c.rca)));
    if (!c.evidence.empty()) out += Row("evidence", c.evidence);
    if (!c.suggestion.empty()) out += Row("suggestion", c.suggestion);
    if (c.requeued_from != kNoNode) out += Row("retries", "#" + std::to_string(c.requeued_from));
    if (!c.opened.empty()) {
      out += Row(HasFlag(n, kBranchFlag) ? "branch opened" : "opened", c.opened);
    }
    if (!c.flags.empty()) out += Row("flags", Join(c.flags, ", "));
    out += "</table>";
    if (!c.constraints.empty()) {
      out += "<h4>Constraints published</h4><ul class=\"constraints\">";
      for (const Constraint& k : c.constraints) {
        out += "<li>" + HtmlEscape(DescribeConstraint(k)) + "</li>";
      }
      out += "</ul>";
    }
  }

  if (failed != nullptr) {
    const FailedRun& f = *failed;
    out += "<h4>Failed run " + HtmlEscape(f.label) +
           (f.exit.empty() ? "" : " (" + HtmlEscape(f.exit) + ")") +
           "</h4><div class=\"failed-run\" data-run=\"" + HtmlEscape(f.label) +
           "\"><div class=\"log-name\">full logs: " + HtmlEscape(f.dir) + "/stdout, " +
           HtmlEscape(f.dir) + "/stderr</div>";
    for (const auto& [stream, lines] : {std::pair{"stdout", &f.out}, std::pair{"stderr", &f.err}}) {
      out += "<div class=\"log\"><div class=\"log-name\">" + std::string(stream);
      out += lines->empty() ? ": (empty)</div>"
                            : " (last " + std::to_string(lines->size()) + " lines)</div><pre>" +
                                  HtmlEscape(Join(*lines, "\n")) + "</pre>";
      out += "</div>";
    }
    out += "</div>";
  }
  if (!logs.empty()) {
    out += "<h4>Logs (tails)</h4>";
    for (const LogExcerpt& log : logs) {
      out += "<div class=\"log\"><div class=\"log-name\">" + HtmlEscape(log.label) + "/" +
             HtmlEscape(log.stream) + "</div><pre>" + HtmlEscape(log.text) + "</pre></div>";
    }
  }
  out += "</div></details>";
  return out;
}

}  // namespace arbor
