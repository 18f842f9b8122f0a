// OptunaPolicy: Optuna's TPE sampler as a search-benchmark baseline (docs/search-bench.md).
//
// Optuna runs in a Python child (bench/search/optuna_bridge.py) that proposes configurations
// by ask/tell; each action is one categorical parameter whose choices are "off" and the
// action's choices ("on", or its values). Every proposal is repaired against the declared
// requires/conflicts (Repair), evaluated here through the same Evaluator as every other policy,
// and its value told back (a crash or failed check is told as a failure, which the bridge
// scores 0). The state after each evaluation is the best measured configuration so far that
// neither crashed nor failed its check, compared with the baseline's own measurement (the
// median of `repetitions` free runs of {} taken before the first trial).
//
// Promises: the configurations are deterministic in (landscape, seed); when the bridge cannot
// be run or breaks the protocol (cannot start, exits non-zero, closes early, says nothing for
// the line timeout, sends an unknown action or value), Run returns a RunResult whose `error`
// is one line with the child's last stderr line, and no child process is left running.
#pragma once

#include <string>

#include "bench/search/policy.h"

namespace arbor::search {

class OptunaPolicy : public Policy {
 public:
  static constexpr const char* kDefaultPython = "/usr/bin/python3";

  // `python` runs `script` (the bridge); `line_timeout_s` bounds the wait for each line.
  explicit OptunaPolicy(std::string python = kDefaultPython, std::string script = DefaultScript(),
                        double line_timeout_s = 60);

  std::string name() const override { return "optuna-tpe"; }
  RunResult Run(const Landscape& l, uint64_t seed, int budget) override;

  // True when `python -c "import optuna"` exits 0, so a harness can say "optuna not installed"
  // instead of reporting a failed run.
  static bool Available(const std::string& python = kDefaultPython);
  // The bridge in the source tree this was built from.
  static std::string DefaultScript();

 private:
  std::string python_;
  std::string script_;
  double line_timeout_s_;
};

}  // namespace arbor::search
