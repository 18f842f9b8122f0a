// Scoring h(a): which candidate the Orchestrator dispatches next.
//
// Paper form (default):
//   h(a) = g/c_norm · (1 − r_acc) · (1 − r_crash) · m_gap / E_max + C · sqrt(ln N / (1 + n_cat))
// Seed-literal form (formula = "seed-literal"):
//   h(a) = g / (c_norm · (1 − r_acc) · (1 − r_crash) · m_gap) / E_max + C · ln N / (1 + n_cat)
// g is the Amdahl gain Σ share·(1 − 1/s) over the profile components the action targets;
// c_norm is the expected cost over the campaign's reference cost, so the exploitation term is
// unit-free; E_max is the largest exploitation term among the candidates scored together, so
// exploitation lies in [0, 1] like the exploration bonus (docs/scoring.md says why).
// N = nodes evaluated so far (at least 1), n_cat = tries of the candidate's category.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/model/spec.h"
#include "core/search/category_stats.h"

namespace arbor {

// Σ over components matching any target glob of share·(1 − 1/speedup). Empty targets = the
// whole program (share 1). Each component counts once. Speedup ≤ 0 counts as no gain.
double ExpectedGain(const Profile& profile, const std::vector<std::string>& targets,
                    double speedup);

// Urgency multiplier in [1, 2]: 1 without a target or when it is met; grows linearly with the
// remaining relative gap, reaching 2 when the gap is ≥ 100% of the target.
double GapMultiplier(std::optional<double> current, std::optional<double> target, Goal goal);

struct ScoreInput {
  const ActionSpec* action = nullptr;
  double g = 0;
  double r_acc = 0;
  double r_crash = 0;
  double cost_s = 0;
  double reference_cost_s = 1;
  double m_gap = 1;
  int total_tries = 0;        // N
  double category_tries = 0;  // n_cat (knowledge-base experience counts as weighted tries)
};

// The expected gain selection counts: g, or for a re-try of ideas measured clearly slower alone
// (ScoreTerms::measured < 1) the whole program's promise 1/(1 − g) times what they measured.
inline double GainNow(double g, double measured) {
  return measured < 1 ? 1 - (1 - g) / std::max(measured, 1e-3) : g;
}
inline double GainNow(const ScoreTerms& t) { return GainNow(t.g, t.measured); }

// Fills every term except the normalisation by E_max (h = exploit + bonus, un-normalised).
ScoreTerms ScoreOne(const ScoreInput& in, Formula formula, double explore);
// Normalises exploitation terms by their maximum across `terms` and recomputes h.
void NormalizeScores(std::vector<ScoreTerms>* terms);

}  // namespace arbor
