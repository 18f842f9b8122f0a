// Lanes (docs/lanes.md): with search.parallel = K, builds and checks of up to K nodes run at
// once, each in its node's worktree; with search.lanes = N, up to N measurements hold a
// measurement lane each.
//
// LaneTarget is the lane lock, as a Target decorator. With one lane (the default) a build or a
// check holds the lock shared (any number at once); a measurement (BeginMeasurement ..
// EndMeasurement) and a profile hold it exclusively, so that no build of the campaign shares
// the machine with a benchmark — when the inner Target says its measurements need the machine
// (Target::MeasurementsNeedTheMachine: the local executor). With a cluster executor each
// measurement has an exclusive allocation of its own elsewhere, and nothing waits.
//
// With N > 1 lanes a measurement takes the lowest free lane (0 .. N-1) and every benchmark run
// of it carries that lane in RunContext::lane (the executor pins it to the lane's CPUs), so a
// comparison's baseline and candidate runs share a lane. Up to N measurements run at once;
// builds and checks still never overlap one (when the inner Target needs the machine), and a
// profile still excludes everything.
//
// Calls made by a thread that holds the lane (exclusively, or one measurement lane) pass
// through (a measurement's own benchmarks; a build inside a measurement would break the Target
// contract but must not deadlock).
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include "core/model/ports.h"

namespace arbor {

class LaneTarget : public Target {
 public:
  // `inner` is borrowed; lanes >= 1.
  explicit LaneTarget(Target* inner, int lanes = 1) : inner_(inner), lanes_(lanes) {}
  StepResult Build(const RunContext& ctx) override;
  Measurement Check(const RunContext& ctx) override;
  Measurement Bench(const RunContext& ctx) override;
  ProfileResult Profile(const RunContext& ctx) override;
  void BeginMeasurement(NodeId node) override;
  void EndMeasurement(NodeId node) override;
  // A measurement on lane `lane` (0 .. N-1, N > 1), waiting for that lane to be free; ended by
  // EndMeasurement. A measure lane (measure_lane.cc) takes lanes 1 .. N-1 this way, so that
  // the Orchestrator's own measurements, which take the lowest free lane, get lane 0.
  void BeginMeasurementOn(NodeId node, int lane);
  bool MeasurementsNeedTheMachine() const override { return inner_->MeasurementsNeedTheMachine(); }

 private:
  // One lane (lanes_ == 1): a shared_mutex, exactly as before measurement lanes existed.
  // True when the calling thread must take the lock (it does not hold it exclusively, and the
  // inner target's measurements need the machine).
  bool MustLock() const;
  void LockExclusive();
  void UnlockExclusive();

  // N lanes: the calling thread's lane, or -1.
  int HeldLane();
  // A measurement lane for this thread (nested: counted): `want`, or the lowest free one (-1).
  void AcquireLane(int want = -1);
  void ReleaseLane();
  // A build or check: `run` holding the lock shared (the one-lane lock, or AcquireShared), or
  // as is when it need not lock or the calling thread holds a lane.
  template <typename Run>
  auto Shared(Run run);
  void AcquireShared();  // a build or check: waits for no measurement or profile
  void ReleaseShared();
  void AcquireAll();  // a profile: waits for nothing else running
  void ReleaseAll();

  Target* inner_;
  const int lanes_;
  std::shared_mutex lane_;
  std::atomic<std::thread::id> owner_{};  // the thread holding the lane exclusively
  int held_ = 0;                          // nested exclusive holds of the owner

  struct Hold {
    int lane = -1;
    int depth = 0;
  };
  std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::thread::id, Hold> holds_;  // measurement lanes held, by thread
  int shared_ = 0;                         // builds and checks running
  bool all_ = false;                       // a profile running
};

}  // namespace arbor
