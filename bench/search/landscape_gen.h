// Procedurally generated landscapes for the search benchmark (docs/search-bench.md,
// "Generated landscapes").
//
// Nine hand-written landscapes are too few to say "Arbor is at least as good as greedy on 90% of
// problems", and a search engine tuned on them could overfit them. Generate draws a landscape
// from a seed: 3–8 components, 10–60 actions, and every kind of trouble the model has, each
// present with a randomised probability and count, so the landscapes differ in which troubles
// they mix and how much they weigh:
//
//   plain wins (multiplicative, on one or two components, sometimes a side cost), global
//   wins ("*"), duds and slowdowns, parameters with a sweet spot, crash regions (values above a
//   threshold crash), hidden pairs (B pays only with A), antagonistic pairs (each wins, both
//   together lose), crashing pairs (mutually exclusive), accuracy traps (with or without a fix),
//   flaky crashes, prerequisite-gated actions and values (SIGILL unless an enabler is on),
//   inflation knobs (readings up, work down, truth unchanged or worse), noise 1–8% with
//   occasional outliers and drift, and misleading priors (wrong speedups, missing requires).
//
// Deterministic in the seed (core/model/rng.h; never the clock): the same seed is the same
// landscape on every machine. Every generated landscape parses back from its ToJson and never has a
// declared requires/conflict its optimum violates.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/search/landscape.h"

namespace arbor::search {

struct GenOptions {
  int min_components = 3;
  int max_components = 8;
  int min_actions = 10;
  int max_actions = 60;
  double min_cv = 0.01;  // per-run noise, drawn uniformly in [min_cv, max_cv]
  double max_cv = 0.08;
  int repetitions = 5;
  // "rivals" troubles added to every landscape on top of the drawn ones (0: none, and the
  // landscape of a seed is the same as before the option existed): two declared alternatives,
  // the stronger alone winning more, the weaker one beating it with a complement of its own
  // (arbor_search_bench --gen-rivals; docs/search-bench.md).
  int rivals = 0;
};

// The landscape of `seed`, named "gen-<seed>".
Landscape Generate(uint64_t seed, const GenOptions& options = {});

// The troubles a landscape has, read from its structure (not from how it was made), so the
// benchmark can show each ablation where its mechanism matters: "inflation", "gated",
// "crash-pair", "crash-region", "flaky-crash", "accuracy-trap", "hidden-pair", "antagonistic",
// "rivals", "drift", "outliers", "noisy" (cv ≥ 4%), "small" (≤ 20 actions), "large" (≥ 40 actions).
std::vector<std::string> Features(const Landscape& l);
// Every name Features may return, in a fixed order (the table's columns).
const std::vector<std::string>& FeatureNames();

}  // namespace arbor::search
