// Gate: decides whether a measured candidate is kept. The seam where the Critic plugs in.
//
// MedianGate is the minimal gate of the foundations: keep when the candidate's median beats
// the parent's median by at least min_effect (goal-aware) and every guard holds.
#pragma once

#include <string>
#include <vector>

#include "core/model.h"
#include "core/spec.h"

namespace arbor {

struct GateInput {
  const MetricSpec* metric = nullptr;
  const CriticSpec* critic = nullptr;
  std::vector<Sample> parent;
  std::vector<Sample> candidate;
};

struct Verdict {
  bool keep = false;
  double gain = 0;        // relative improvement of the median, goal-aware (+ = better)
  double parent_median = 0;
  double candidate_median = 0;
  std::string reason;     // one line: "median 123.4 vs 110.0 (+12.2% ≥ 1.0%)"
};

class Gate {
 public:
  virtual ~Gate() = default;
  virtual Verdict Judge(const GateInput& in) = 0;
};

class MedianGate : public Gate {
 public:
  Verdict Judge(const GateInput& in) override;
};

double Median(std::vector<double> v);
// (candidate − parent)/parent for kMax, (parent − candidate)/parent for kMin.
double RelativeGain(double parent, double candidate, Goal goal);

}  // namespace arbor
