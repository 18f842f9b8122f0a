// Lanes (docs/lanes.md): with search.parallel = K, builds and checks of up to K nodes run at
// once, each in its node's worktree, while end-to-end measurements stay one at a time.
//
// LaneTarget is the lane lock, as a Target decorator: a build or a check holds the lock shared
// (any number at once); a measurement (BeginMeasurement .. EndMeasurement) and a profile hold
// it exclusively, so that no build of the campaign shares the machine with a benchmark —
// when the inner Target says its measurements need the machine
// (Target::MeasurementsNeedTheMachine: the local executor). With a cluster executor each
// measurement has an exclusive allocation of its own elsewhere, and nothing waits.
//
// Calls made by the thread that holds the lane exclusively pass through (a measurement's own
// benchmarks; a build inside a measurement would break the Target contract but must not
// deadlock).
#pragma once

#include <atomic>
#include <shared_mutex>
#include <thread>

#include "core/model/ports.h"

namespace arbor {

class LaneTarget : public Target {
 public:
  explicit LaneTarget(Target* inner) : inner_(inner) {}  // borrowed
  StepResult Build(const RunContext& ctx) override;
  Measurement Check(const RunContext& ctx) override;
  Measurement Bench(const RunContext& ctx) override;
  ProfileResult Profile(const RunContext& ctx) override;
  void BeginMeasurement(NodeId node) override;
  void EndMeasurement(NodeId node) override;
  bool MeasurementsNeedTheMachine() const override { return inner_->MeasurementsNeedTheMachine(); }

 private:
  // True when the calling thread must take the lock (it does not hold it exclusively, and the
  // inner target's measurements need the machine).
  bool MustLock() const;
  void LockExclusive();
  void UnlockExclusive();

  Target* inner_;
  std::shared_mutex lane_;
  std::atomic<std::thread::id> owner_{};  // the thread holding the lane exclusively
  int held_ = 0;                          // nested exclusive holds of the owner
};

}  // namespace arbor
