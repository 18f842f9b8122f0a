// Policies of the search benchmark: who chooses which configuration to evaluate next, with the
// same budget, the same noise stream and the same seeds (docs/search-bench.md).
//
// Every policy sees a landscape only through an Evaluator (what a benchmark run and a check
// would say) and through the priors a campaign file would give; the metrics are computed on the
// landscape's noise-free truth from the states the policy chose (metrics.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/search/landscape.h"

namespace arbor::search {

// One evaluation: `repetitions` benchmark runs, then the check.
struct Evaluation {
  bool crashed = false;          // a benchmark run crashed (no value)
  bool accuracy_failed = false;  // the check failed
  std::optional<double> value;   // median of the runs; set only when neither failed
  std::vector<double> readings;  // the runs before a crash, or all of them
};

// The measurement stream of one policy run: readings k = 0, 1, 2, … of Landscape::Reading with
// the run's seed, checks likewise. Policies that measure by hand (random, greedy, bandit,
// Optuna) go through Evaluate; the in-process engine consumes the same stream run by run.
class Evaluator {
 public:
  Evaluator(const Landscape& l, uint64_t seed) : l_(l), seed_(seed) {}
  // One evaluation of `c` (counts toward the budget).
  Evaluation Evaluate(const Config& c);
  // One benchmark run / one check, without counting an evaluation (the engine's own protocol).
  std::optional<double> Run(const Config& c) { return l_.Reading(c, seed_, runs_++); }
  bool Check(const Config& c) { return l_.CheckPasses(c, seed_, checks_++); }
  int evaluations() const { return evaluations_; }
  uint64_t runs() const { return runs_; }
  const Landscape& landscape() const { return l_; }
  uint64_t seed() const { return seed_; }

 private:
  const Landscape& l_;
  uint64_t seed_;
  uint64_t runs_ = 0;
  uint64_t checks_ = 0;
  int evaluations_ = 0;
};

// What one policy run leaves: the state it would ship after each evaluation.
struct RunResult {
  // states[k] = the configuration the policy holds as its best after k + 1 evaluations (the
  // baseline, {}, before any). Shorter than the budget when the policy stopped early; the
  // metrics then extend the last state.
  std::vector<Config> states;
  int crashes = 0;            // evaluations that crashed
  int accuracy_failures = 0;  // evaluations whose check failed
  uint64_t runs = 0;          // benchmark runs spent (the engine re-measures its incumbent)
  std::string stop;           // why the policy stopped, when it says (the engine's stop reason)
  std::string error;          // non-empty: the run failed (reported, never silently scored)
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  // Runs with at most `budget` evaluations (the baseline's measurement is free for everyone).
  virtual RunResult Run(const Landscape& l, uint64_t seed, int budget) = 0;
};

// A configuration made consistent with the declared priors: actions whose declared
// requirements are off are dropped, and of two declared conflicts the later one in file order
// is dropped. What random search and Optuna evaluate.
Config Repair(const Landscape& l, Config c);

}  // namespace arbor::search
