#include "core/search/scoring.h"

#include <algorithm>
#include <cmath>

#include "util/strings.h"

namespace arbor {
namespace {

// Keeps a nearly free action from dominating every other one through a tiny denominator.
constexpr double kMinCostNorm = 0.05;
// In the seed-literal form the risks divide; this keeps a certain failure finite.
constexpr double kMinSurvival = 1e-3;

}  // namespace

double ExpectedGain(const Profile& profile, const std::vector<std::string>& targets,
                    double speedup) {
  if (speedup <= 0) return 0;
  // Negative for speedup < 1: an expected slowdown must score below doing nothing.
  const double per_share = 1 - 1 / speedup;
  if (targets.empty()) return per_share;
  double share = 0;
  for (const Component& c : profile.components) {
    bool matches = std::any_of(targets.begin(), targets.end(),
                               [&](const std::string& glob) { return GlobMatch(glob, c.name); });
    if (matches) share += c.share;
  }
  return share * per_share;
}

double GapMultiplier(std::optional<double> current, std::optional<double> target, Goal goal) {
  if (!current || !target || *target == 0) return 1;
  const double gap = goal == Goal::kMax ? (*target - *current) / std::abs(*target)
                                        : (*current - *target) / std::abs(*target);
  if (gap <= 0) return 1;
  return 1 + std::min(gap, 1.0);
}

ScoreTerms ScoreOne(const ScoreInput& in, Formula formula, double explore) {
  ScoreTerms t;
  t.g = in.g;
  t.c = in.cost_s;
  t.c_norm = std::max(in.cost_s / std::max(in.reference_cost_s, 1e-9), kMinCostNorm);
  t.r_acc = in.r_acc;
  t.r_crash = in.r_crash;
  t.m_gap = in.m_gap;
  const double log_n = std::log(std::max(in.total_tries, 1));
  const double visits = 1.0 + in.category_tries;
  switch (formula) {
    case Formula::kPaper:
      t.exploit = t.g / t.c_norm * (1 - t.r_acc) * (1 - t.r_crash) * t.m_gap;
      t.bonus = explore * std::sqrt(log_n / visits);
      break;
    case Formula::kSeedLiteral:
      t.exploit = t.g / (t.c_norm * std::max(1 - t.r_acc, kMinSurvival) *
                         std::max(1 - t.r_crash, kMinSurvival) * t.m_gap);
      t.bonus = explore * log_n / visits;
      break;
  }
  t.h = t.exploit + t.bonus;
  return t;
}

void NormalizeScores(std::vector<ScoreTerms>* terms) {
  double e_max = 0;
  for (const ScoreTerms& t : *terms) e_max = std::max(e_max, t.exploit);
  for (ScoreTerms& t : *terms) {
    // With no positive exploitation anywhere there is nothing to scale against; the raw sum
    // still ranks slowdowns below neutral candidates.
    t.h = e_max > 0 ? t.exploit / e_max + t.bonus : t.exploit + t.bonus;
  }
}

}  // namespace arbor
