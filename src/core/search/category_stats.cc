#include "core/search/category_stats.h"

#include <algorithm>

#include "util/strings.h"

namespace arbor {
namespace {

// A floor instead of zero keeps the Beta proper: a prior of 0 stays near 0 until failures are
// observed, yet one observed failure moves it decisively.
constexpr double kMinPseudoCount = 1e-3;

double PosteriorMean(double prior_rate, double events, double trials) {
  BetaPosterior p = BetaPosterior::FromPrior(prior_rate);
  p.alpha += events;
  p.beta += std::max(0.0, trials - events);
  return p.Mean();
}

}  // namespace

BetaPosterior BetaPosterior::FromPrior(double rate, double strength) {
  rate = std::clamp(rate, 0.0, 1.0);
  BetaPosterior p;
  p.alpha = std::max(rate * strength, kMinPseudoCount);
  p.beta = std::max((1 - rate) * strength, kMinPseudoCount);
  return p;
}

void CategoryStats::Observe(const Node& node) {
  if (node.id == kRootId) return;
  if (node.outcome != Outcome::kKept && node.outcome != Outcome::kReverted &&
      node.outcome != Outcome::kCrashed) {
    return;
  }
  // A run lost by the executor (infrastructure) says nothing about the action: neither a try
  // nor a crash of its category.
  if (node.outcome == Outcome::kCrashed && node.critic.rca == RcaClass::kInfrastructure) return;
  CategoryCounts& c = by_category_[node.category];
  ++c.tries;
  ++total_tries_;
  if (node.outcome == Outcome::kReverted && StartsWith(node.diagnosis, "accuracy")) {
    ++c.accuracy_failures;
  }
  if (node.outcome == Outcome::kCrashed) ++c.crashes;
  // A zero cost means "not measured" (e.g. a node restored from an older store), not "free".
  if (node.cost_s > 0) {
    c.cost_sum_s += node.cost_s;
    ++c.cost_n;
    cost_sum_s_ += node.cost_s;
    ++cost_n_;
  }
}

const CategoryCounts& CategoryStats::Counts(const std::string& category) const {
  static const CategoryCounts kEmpty;
  auto it = by_category_.find(category);
  return it == by_category_.end() ? kEmpty : it->second;
}

double CategoryStats::AccuracyRisk(const ActionSpec& action, const KbPrior* kb) const {
  const CategoryCounts& c = Counts(action.category);
  return PosteriorMean(action.risk_accuracy, c.accuracy_failures + (kb ? kb->acc_events : 0),
                       c.tries + (kb ? kb->acc_trials : 0));
}

double CategoryStats::CrashRisk(const ActionSpec& action, const KbPrior* kb) const {
  const CategoryCounts& c = Counts(action.category);
  return PosteriorMean(action.risk_crash, c.crashes + (kb ? kb->crash_events : 0),
                       c.tries + (kb ? kb->crash_trials : 0));
}

double CategoryStats::ExpectedCost(const ActionSpec& action, const KbPrior* kb) const {
  const CategoryCounts& c = Counts(action.category);
  double prior = kb ? kb->cost_s : action.cost_s;
  return (prior * kCostPriorWeight + c.cost_sum_s) / (kCostPriorWeight + c.cost_n);
}

double CategoryStats::ReferenceCost(double fallback) const {
  return cost_n_ > 0 ? cost_sum_s_ / cost_n_ : fallback;
}

}  // namespace arbor
