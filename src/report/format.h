// Formatting helpers shared by the report views. Internal to report/.
#pragma once

#include <array>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/model/model.h"
#include "core/model/spec.h"

namespace arbor::report {

// A metric value with up to 6 significant digits, or "-" when absent.
std::string FormatMetric(std::optional<double> v);
// A fraction as a signed percentage with one decimal: 0.123 -> "+12.3%".
std::string FormatPercent(double fraction);
// "×1.84 (+84.0%)".
std::string FormatSpeedup(double speedup);
// "layer/category", or whichever of the two is set, or "".
std::string LayerCategory(const Node& node);
// Whitespace runs (newlines included) collapsed to one space, then cut to at most
// `max_chars` code points with a trailing "…". Never splits a UTF-8 sequence.
std::string Shorten(std::string_view text, size_t max_chars);

// best/baseline for kMax, baseline/best for kMin; nullopt when either is missing or the
// divisor is not positive.
std::optional<double> Speedup(Goal goal, std::optional<double> baseline,
                              std::optional<double> best);

nlohmann::json OptionalNumber(std::optional<double> v);
nlohmann::json OptionalString(const std::string& s);  // null when empty

// The terms of h(a), in the order they are shown, with what each one means.
struct ScoreTermInfo {
  const char* name;
  const char* meaning;
  double ScoreTerms::*member;
};
inline constexpr std::array<ScoreTermInfo, 9> kScoreTerms = {{
    {"g", "expected gain (Amdahl)", &ScoreTerms::g},
    {"c", "expected cost, s", &ScoreTerms::c},
    {"c_norm", "cost / reference cost", &ScoreTerms::c_norm},
    {"r_acc", "accuracy risk", &ScoreTerms::r_acc},
    {"r_crash", "crash risk", &ScoreTerms::r_crash},
    {"m_gap", "gap to target", &ScoreTerms::m_gap},
    {"bonus", "exploration bonus", &ScoreTerms::bonus},
    {"exploit", "exploitation term", &ScoreTerms::exploit},
    {"h", "score", &ScoreTerms::h},
}};
nlohmann::json ScoreJson(const ScoreTerms& score);
// Null for the root and for nodes never dispatched: they were not chosen by h(a).
bool HasScore(const Node& node);

// The constraints a node published, each with its one-line description.
nlohmann::json ConstraintsJson(const std::vector<Constraint>& constraints);
// What the Critic concluded about a node: p-value, interval, RCA, flags, re-queue link.
nlohmann::json CriticJson(const CriticNote& note);
// What a specialist reported for a node: backend, domain, confidence, rounds, tokens, cost,
// findings, questions and the ids of the actions it proposed (every field, zeros included).
nlohmann::json AgentJson(const AgentNote& note);

// One node as `arbor tree --format json` shows it, written into the object `j`.
void FillTreeNodeJson(const Node& node, nlohmann::json& j);

}  // namespace arbor::report
