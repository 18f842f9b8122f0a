// The live status line of `arbor run` on a terminal: what the campaign is doing now, how far
// through its budget it is, the best so far and the time left, in one line of a given width.
//
// Pure: the caller (app/sinks.h) keeps the latest Progress, measures the step's and the
// campaign's time on its own clock, and redraws the line about once a second.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "core/model/ports.h"
#include "core/model/spec.h"

namespace arbor {

struct LiveStatus {
  Progress progress;          // the latest the Orchestrator reported
  double step_elapsed_s = 0;  // since the node entered its current step
  double elapsed_s = 0;       // campaign time now (the progress's, plus the time since)
  std::string metric_name;
  Goal goal = Goal::kMax;
};

// The time the campaign has left: the smaller of what its time budget leaves (when it has
// one) and the mean time per evaluation so far times the evaluations its node budget leaves
// (once one is done). nullopt when neither is known.
std::optional<double> TimeLeft(int evaluated, int max_nodes, double elapsed_s, double max_time_s);

// "#7 compiler.O3 [bench 12s] | 6/20 evaluated | best x1.064 (melem_s 917.9) | 3m10s of 2h,
// ~8m left", at most `width` columns: the action is shortened first, then the end is cut.
// Text from the campaign file (action, metric name) has its control characters escaped.
std::string LiveStatusLine(const LiveStatus& status, size_t width);

}  // namespace arbor
