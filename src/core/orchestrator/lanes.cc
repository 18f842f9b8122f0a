#include "core/orchestrator/lanes.h"

#include <mutex>

namespace arbor {

bool LaneTarget::MustLock() const {
  return owner_.load() != std::this_thread::get_id() && inner_->MeasurementsNeedTheMachine();
}

void LaneTarget::LockExclusive() {
  if (owner_.load() == std::this_thread::get_id()) {
    ++held_;
    return;
  }
  if (!inner_->MeasurementsNeedTheMachine()) return;
  lane_.lock();
  owner_.store(std::this_thread::get_id());
  held_ = 1;
}

void LaneTarget::UnlockExclusive() {
  if (owner_.load() != std::this_thread::get_id()) return;
  if (--held_ > 0) return;
  owner_.store(std::thread::id());
  lane_.unlock();
}

StepResult LaneTarget::Build(const RunContext& ctx) {
  if (!MustLock()) return inner_->Build(ctx);
  std::shared_lock<std::shared_mutex> lock(lane_);
  return inner_->Build(ctx);
}

Measurement LaneTarget::Check(const RunContext& ctx) {
  if (!MustLock()) return inner_->Check(ctx);
  std::shared_lock<std::shared_mutex> lock(lane_);
  return inner_->Check(ctx);
}

Measurement LaneTarget::Bench(const RunContext& ctx) {
  LockExclusive();
  Measurement m = inner_->Bench(ctx);
  UnlockExclusive();
  return m;
}

ProfileResult LaneTarget::Profile(const RunContext& ctx) {
  LockExclusive();
  ProfileResult p = inner_->Profile(ctx);
  UnlockExclusive();
  return p;
}

void LaneTarget::BeginMeasurement(NodeId node) {
  LockExclusive();
  inner_->BeginMeasurement(node);
}

void LaneTarget::EndMeasurement(NodeId node) {
  inner_->EndMeasurement(node);
  UnlockExclusive();
}

}  // namespace arbor
