// The measure lanes' state (search.lanes = N > 1; src/core/orchestrator/measure_lane.cc, the
// Orchestrator's fields measure_lanes_ and lane_bases_; docs/lanes.md).
#pragma once

#include <atomic>
#include <future>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/model/ports.h"

namespace arbor {

struct MeasureRun {  // one benchmark run, as MeasurementProtocol::FirstLook lists it
  bool is_base = false;
  int rep = 0;  // -1: the discarded warm-up
  RunContext ctx;
};
struct MeasureLane {
  int lane = 0;           // 1 .. N-1
  std::string commit;     // the candidate's build that was measured
  NodeId base = kNoNode;  // and what against
  std::string base_commit;
  int reps = 0;                  // pairs of the first look
  std::vector<MeasureRun> runs;  // the warm-up, then the pairs, in order
  std::atomic<bool> cancel{false};
  // Set by the lane's thread before `done`.
  std::vector<StepResult> steps;  // of the runs taken
  std::vector<Sample> samples;
  double cost_s = 0;
  bool ok = false;         // every run succeeded
  std::future<void> done;  // last: destroyed (joined) first
};
// Lane i's base worktree (Workspace key -i: never a node's) with the incumbent built in it.
struct LaneBase {
  NodeId state = kNoNode;
  std::string commit;
  std::string worktree;
  std::future<StepResult> build;
  bool built = false;
};

}  // namespace arbor
