// The baselines of the search benchmark (docs/search-bench.md): what a user could run instead
// of the engine, on the same landscape, budget, noise stream and seed. Each is written to be a
// fair, recognisable version of its kind, not a straw man; the doc says exactly what each does.
#pragma once

#include <string>

#include "bench/search/policy.h"

namespace arbor::search {

// Random search over valid configurations: each evaluation draws a subset size m uniform in
// 1..n, m distinct actions at random and a random value for each, repaired against the declared
// requires/conflicts; ships the best measured configuration.
class RandomPolicy : public Policy {
 public:
  std::string name() const override { return "random"; }
  RunResult Run(const Landscape& l, uint64_t seed, int budget) override;
};

// A single agent without the harness: always applies the best-looking untried candidate (the
// highest prior speedup; file order breaks ties) to its current state, keeps it if it measured
// better than the state's own measurement once, otherwise undoes that one step. It remembers
// which candidates it tried, but nothing about why they failed, and never re-profiles, re-tests
// an earlier keep or rolls back more than the last step.
class GreedyPolicy : public Policy {
 public:
  std::string name() const override { return "greedy"; }
  RunResult Run(const Landscape& l, uint64_t seed, int budget) override;
};

// A multi-armed bandit over categories (the shape of OpenTuner's AUC bandit meta-technique,
// with UCB1): each step picks a category by UCB1 on its keep rate, applies a random untried
// candidate of that category to the current state, keeps it if it measured better once.
class BanditPolicy : public Policy {
 public:
  std::string name() const override { return "bandit"; }
  RunResult Run(const Landscape& l, uint64_t seed, int budget) override;
};

}  // namespace arbor::search
