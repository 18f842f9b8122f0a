// The engine itself as a policy of the search benchmark: the real Orchestrator, Critic and
// scoring, in process, with in-memory ports (tests/fakes) and a Target that reads the landscape
// through the run's measurement stream. Only the variants' switches differ (the ablations of
// docs/search-bench.md); nothing here knows any landscape.
#pragma once

#include <string>
#include <vector>

#include "bench/search/policy.h"
#include "core/model/spec.h"

namespace arbor::search {

struct ArborVariant {
  std::string name = "arbor";
  bool critic = true;       // false: plain median comparison (MedianGate), as --no-critic
  bool reprofile = true;    // false: only the baseline is profiled
  bool constraints = true;  // false: published constraints never prune
  bool ucb = true;          // false: exploration constant C = 0
  bool revisit = true;      // false: stop as soon as every candidate was tried once
  bool pairs = true;        // false: no pairs of candidates when the single moves are spent
  bool branches = true;     // false: every node a child of the incumbent (arbor-hillclimb)
  bool recheck = true;      // false: a failed check is always the candidate's fault
  Formula formula = Formula::kPaper;
  bool warm_kb = false;  // a knowledge base filled by one earlier campaign on the same landscape
  bool trace = false;    // print every node (outcome, diagnosis) to stderr: for investigation
};

// Arbor with default settings and each ablation of the issue, in report order.
std::vector<ArborVariant> ArborVariants();

class ArborPolicy : public Policy {
 public:
  explicit ArborPolicy(ArborVariant variant) : v_(std::move(variant)) {}
  std::string name() const override { return v_.name; }
  RunResult Run(const Landscape& l, uint64_t seed, int budget) override;

 private:
  ArborVariant v_;
};

}  // namespace arbor::search
