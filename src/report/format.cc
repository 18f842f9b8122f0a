#include "report/format.h"

#include <array>
#include <cmath>
#include <cstdio>

#include "util/strings.h"

namespace arbor::report {

std::string FormatMetric(std::optional<double> v) { return v ? FormatDouble(*v, 6) : "-"; }

std::string FormatPercent(double fraction) {
  double pct = fraction * 100;
  if (std::fabs(pct) < 0.05) pct = 0;  // no "-0.0%"
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), "%+.1f%%", pct);
  return buf.data();
}

std::string FormatSpeedup(double speedup) {
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), "×%.2f", speedup);
  return std::string(buf.data()) + " (" + FormatPercent(speedup - 1) + ")";
}

std::string LayerCategory(const Node& node) {
  if (node.layer.empty()) return node.category;
  if (node.category.empty()) return node.layer;
  return node.layer + "/" + node.category;
}

std::string Shorten(std::string_view text, size_t max_chars) {
  std::string flat;
  flat.reserve(text.size());
  for (char ch : text) {
    bool space = ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t';
    if (!space) {
      flat += ch;
    } else if (!flat.empty() && flat.back() != ' ') {
      flat += ' ';
    }
  }
  while (!flat.empty() && flat.back() == ' ') flat.pop_back();
  if (max_chars == 0) return "";
  // Count code points: every byte that is not a UTF-8 continuation byte starts one.
  size_t points = 0;
  size_t cut = std::string::npos;
  for (size_t i = 0; i < flat.size(); ++i) {
    if ((static_cast<unsigned char>(flat[i]) & 0xC0) == 0x80) continue;
    if (points == max_chars - 1) cut = i;
    if (++points > max_chars) {
      flat.resize(cut);
      while (!flat.empty() && flat.back() == ' ') flat.pop_back();
      return flat + "…";
    }
  }
  return flat;
}

std::optional<double> Speedup(Goal goal, std::optional<double> baseline,
                              std::optional<double> best) {
  if (!baseline || !best) return std::nullopt;
  double num = goal == Goal::kMax ? *best : *baseline;
  double den = goal == Goal::kMax ? *baseline : *best;
  if (!(den > 0)) return std::nullopt;
  return num / den;
}

nlohmann::json OptionalNumber(std::optional<double> v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json OptionalString(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

nlohmann::json ScoreJson(const ScoreTerms& score) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& term : kScoreTerms) out[term.name] = score.*term.member;
  out["speedup"] = score.speedup;
  nlohmann::json kb = nlohmann::json::array();
  for (const KbRef& r : score.kb) {
    kb.push_back({{"uid", r.uid}, {"id", r.id}, {"weight", r.weight}, {"summary", r.summary}});
  }
  out["kb"] = std::move(kb);
  return out;
}

bool HasScore(const Node& node) {
  return node.id != kRootId && node.outcome != Outcome::kBaseline && node.seq != 0;
}

nlohmann::json ConstraintsJson(const std::vector<Constraint>& constraints) {
  nlohmann::json list = nlohmann::json::array();
  for (const Constraint& c : constraints) {
    nlohmann::json j = {{"kind", std::string(ConstraintKindName(c.kind))},
                        {"scope", c.scope == ConstraintScope::kCampaign ? "campaign" : "subtree"},
                        {"reason", c.reason},
                        {"source", c.source},
                        {"until_keep", c.until_keep},
                        {"text", DescribeConstraint(c)}};
    if (c.scope == ConstraintScope::kSubtree) j["scope_node"] = c.scope_node;
    if (!c.action.empty()) j["action"] = c.action;
    if (!c.category.empty()) j["category"] = c.category;
    if (c.min) j["min"] = *c.min;
    if (c.max) j["max"] = *c.max;
    list.push_back(std::move(j));
  }
  return list;
}

nlohmann::json CriticJson(const CriticNote& n) {
  nlohmann::json j = nlohmann::json::object();
  j["p_value"] = OptionalNumber(n.p_value);
  j["ci_low"] = OptionalNumber(n.ci_low);
  j["ci_high"] = OptionalNumber(n.ci_high);
  j["confirmed"] = n.confirmed;
  j["rca"] = RcaClassName(n.rca);
  j["evidence"] = n.evidence;
  j["suggestion"] = n.suggestion;
  j["requeued_from"] =
      n.requeued_from == kNoNode ? nlohmann::json(nullptr) : nlohmann::json(n.requeued_from);
  j["opened"] = OptionalString(n.opened);
  j["flags"] = n.flags;
  return j;
}

nlohmann::json AgentJson(const AgentNote& n) {
  nlohmann::json j = nlohmann::json::object();
  // "" for the builtin specialist: the word the views have always shown for it.
  j["backend"] = n.backend == SpecialistBackend::kBuiltin
                     ? std::string()
                     : std::string(SpecialistBackendName(n.backend));
  j["domain"] = n.domain;
  j["confidence"] = n.confidence;
  j["rounds"] = n.rounds;
  j["prompt_tokens"] = n.prompt_tokens;
  j["completion_tokens"] = n.completion_tokens;
  j["cost"] = n.cost;
  j["findings"] = n.findings;
  j["questions"] = n.questions;
  j["proposed"] = n.proposed;
  return j;
}

}  // namespace arbor::report
