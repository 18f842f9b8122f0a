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
  return out;
}

bool HasScore(const Node& node) {
  return node.id != kRootId && node.outcome != Outcome::kBaseline && node.seq != 0;
}

}  // namespace arbor::report
