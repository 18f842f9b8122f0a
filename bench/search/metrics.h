// The search benchmark's metrics (docs/search-bench.md), computed on the landscape's noise-free
// truth from the states a policy chose, never from its noisy readings.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/search/policy.h"

namespace arbor::search {

struct Truth {
  double baseline = 0;  // TrueValue({})
  double optimum = 0;   // FindOptimum's value
  bool exact = false;   // the optimum was enumerated (else the best known)
};

struct RunMetrics {
  std::string landscape;
  std::string policy;
  uint64_t seed = 0;
  int budget = 0;
  double true_value = 0;  // of the state after `budget` evaluations (broken: the baseline's)
  bool final_broken = false;
  // The final state has an inflation knob on: its readings are not its value. Scored at its
  // true value (which the knob never raises); "bad" to ship like a broken state.
  bool final_inflated = false;
  int evals_used = 0;
  int evals_to_90 = -1;  // evaluations until 90% of the optimum's gain; -1: not within budget
  int keeps = 0;         // changes of the shipped state
  int false_keeps = 0;   // of which the true value did not rise (or the new state is broken)
  int crashes = 0;
  int accuracy_failures = 0;
  uint64_t runs = 0;  // benchmark runs spent
  std::string stop;   // the policy's stop reason, if it gives one
  double score = 0;   // normalized: 0 = random search's median, 1 = the optimum (Normalize)
  double gain = 0;    // fraction of the optimum's gain over the baseline: 0 = baseline, 1 = optimum
  std::string error;
};

// The metrics of a run with `budget` evaluations (states beyond `budget` are ignored).
RunMetrics Measure(const Landscape& l, const Truth& truth, const RunResult& r, int budget);

// Fills `score` for every row: per (landscape, budget), 0 = the median true value of the
// "random" rows, 1 = the optimum; rows of a landscape without random rows are left at NaN.
void Normalize(const std::vector<Truth>& truths, const std::vector<std::string>& names,
               std::vector<RunMetrics>* rows);

struct Summary {
  std::string landscape;
  std::string policy;
  int budget = 0;
  int seeds = 0;
  double score_median = 0, score_p25 = 0, score_p75 = 0;
  double gain_median = 0, gain_p25 = 0, gain_p75 = 0;
  double evals_to_90_median = -1;  // over the seeds that reached it
  int reached_90 = 0;              // seeds that reached 90% within the budget
  double false_keeps_mean = 0;
  double crashes_mean = 0;
  int broken_finals = 0;
  int inflated_finals = 0;
  double runs_median = 0;
  double evals_used_median = 0;
  int errors = 0;
};

// One summary per (landscape, policy, budget), in first-seen order.
std::vector<Summary> Summarize(const std::vector<RunMetrics>& rows);

// Quantile q in [0, 1] with linear interpolation; NaN for an empty input.
double Quantile(std::vector<double> v, double q);

}  // namespace arbor::search
