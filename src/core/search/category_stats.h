// Per-category statistics: Beta posteriors for the accuracy-failure and crash rates, and the
// learned cost of an action.
//
// A prior rate p from the action's `risk` becomes Beta(p·k, (1−p)·k) with k = kPriorStrength
// pseudo-observations; every finished node of the category adds one Bernoulli observation.
// Cost is a shrinkage estimate: (prior_cost·kCostPriorWeight + Σ observed) / (weight + n).
// Statistics are derived state: rebuilt from the finished nodes, never stored on their own.
#pragma once

#include <map>
#include <string>

#include "core/knowledge/kb.h"
#include "core/model/model.h"
#include "core/model/spec.h"

namespace arbor {

inline constexpr double kPriorStrength = 4.0;
inline constexpr double kCostPriorWeight = 1.0;

struct BetaPosterior {
  double alpha = 1;
  double beta = 1;
  static BetaPosterior FromPrior(double rate, double strength = kPriorStrength);
  void Observe(bool event) { (event ? alpha : beta) += 1; }
  double Mean() const { return alpha / (alpha + beta); }
};

struct CategoryCounts {
  int tries = 0;  // finished dispatched nodes (kept, reverted, crashed)
  int accuracy_failures = 0;
  int crashes = 0;
  double cost_sum_s = 0;
  int cost_n = 0;
};

class CategoryStats {
 public:
  // Records a finished node. Pruned/skipped/pending nodes and the root are ignored.
  // An accuracy failure is a reverted node whose diagnosis starts with "accuracy".
  void Observe(const Node& node);
  const CategoryCounts& Counts(const std::string& category) const;
  int TotalTries() const { return total_tries_; }
  // Posterior means for an action: its own risk is the prior, the knowledge base's matching
  // entries (`kb`, may be null) add weighted pseudo-observations, its category's history in
  // this campaign updates both. The knowledge base's cost estimate replaces the declared one.
  double AccuracyRisk(const ActionSpec& action, const KbPrior* kb = nullptr) const;
  double CrashRisk(const ActionSpec& action, const KbPrior* kb = nullptr) const;
  double ExpectedCost(const ActionSpec& action, const KbPrior* kb = nullptr) const;
  // Mean observed cost over all categories, or the given fallback when nothing was observed.
  double ReferenceCost(double fallback) const;

 private:
  std::map<std::string, CategoryCounts> by_category_;
  int total_tries_ = 0;
  double cost_sum_s_ = 0;
  int cost_n_ = 0;
};

}  // namespace arbor
