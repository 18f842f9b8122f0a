// The search benchmark over many landscapes (arbor_search_bench --generate): one line per
// policy and budget across every landscape, instead of one table per landscape
// (docs/search-bench.md, "Generated landscapes").
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bench/search/metrics.h"

namespace arbor::search {

// Runs within this fraction of the optimum's gain of greedy's count as "at least as good".
inline constexpr double kGreedyTolerance = 0.005;

struct Aggregate {
  std::string policy;
  int budget = 0;
  int runs = 0;  // scored runs (one per landscape and seed)
  double gain_median = 0, gain_p25 = 0, gain_p75 = 0;
  int compared = 0;         // runs with a greedy run on the same landscape, seed and budget
  int at_least_greedy = 0;  // of which the true value was ≥ greedy's (within the tolerance)
  int broken = 0;           // final states that crash or fail accuracy
  int inflated = 0;         // final states with an inflation knob on
  double used_median = 0;   // evaluations
  double bench_runs_median = 0;
  double crashes_mean = 0;
  int errors = 0;
};

// One Aggregate per (policy, budget) over `rows`, in first-seen order.
std::vector<Aggregate> AggregateRuns(const std::vector<RunMetrics>& rows);

// The table of one budget: gain quartiles, share ≥ greedy, bad final states, evaluations.
std::string AggregateTable(const std::vector<Aggregate>& aggregates, int budget);

// Median gain per policy on the landscapes with each feature (name → its landscapes' names),
// one column per feature, at one budget: where each mechanism matters, what each policy does.
std::string FeatureTable(const std::vector<RunMetrics>& rows,
                         const std::map<std::string, std::vector<std::string>>& features,
                         const std::vector<std::string>& feature_names, int budget);

// Why the policies that say so stopped, counted, at one budget: "arbor: exhausted 120, ...".
std::string StopReasons(const std::vector<RunMetrics>& rows, int budget);

// The acceptance lines for policy `arbor` against `greedy` (empty if either is missing):
// ≥ greedy on ≥ 90% at every budget, median gain ≥ 95% of the optimum's at the largest budget,
// no broken or inflated final state.
std::string Criteria(const std::vector<Aggregate>& aggregates, const std::string& policy);

}  // namespace arbor::search
