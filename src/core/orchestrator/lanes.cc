#include "core/orchestrator/lanes.h"

#include <vector>

#include "util/check.h"

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

int LaneTarget::HeldLane() {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = holds_.find(std::this_thread::get_id());
  return it == holds_.end() ? -1 : it->second.lane;
}

void LaneTarget::AcquireLane(int want) {
  std::unique_lock<std::mutex> lock(mu_);
  const std::thread::id me = std::this_thread::get_id();
  if (auto it = holds_.find(me); it != holds_.end()) {
    ++it->second.depth;
    return;
  }
  if (owner_.load() == me) return;  // inside a profile
  const bool machine = inner_->MeasurementsNeedTheMachine();
  auto free_lane = [&] {
    std::vector<bool> used(lanes_, false);
    for (const auto& [thread, hold] : holds_) used[hold.lane] = true;
    if (want >= 0) return used[want] ? -1 : want;
    for (int i = 0; i < lanes_; ++i) {
      if (!used[i]) return i;
    }
    return -1;
  };
  changed_.wait(lock, [&] { return !all_ && (!machine || shared_ == 0) && free_lane() >= 0; });
  const int lane = free_lane();  // before holds_[me] adds an entry free_lane() would read
  holds_[me] = Hold{lane, 1};
}

void LaneTarget::ReleaseLane() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = holds_.find(std::this_thread::get_id());
    if (it == holds_.end() || --it->second.depth > 0) return;
    holds_.erase(it);
  }
  changed_.notify_all();
}

void LaneTarget::AcquireShared() {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [&] { return !all_ && holds_.empty(); });
  ++shared_;
}

void LaneTarget::ReleaseShared() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --shared_;
  }
  changed_.notify_all();
}

void LaneTarget::AcquireAll() {
  const std::thread::id me = std::this_thread::get_id();
  if (owner_.load() == me) {
    ++held_;
    return;
  }
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [&] { return !all_ && holds_.empty() && shared_ == 0; });
  all_ = true;
  owner_.store(me);
  held_ = 1;
}

void LaneTarget::ReleaseAll() {
  if (owner_.load() != std::this_thread::get_id() || --held_ > 0) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    owner_.store(std::thread::id());
    all_ = false;
  }
  changed_.notify_all();
}

template <typename Run>
auto LaneTarget::Shared(Run run) {
  if (!MustLock()) return run();
  if (lanes_ > 1) {
    if (HeldLane() >= 0) return run();
    AcquireShared();
    auto r = run();
    ReleaseShared();
    return r;
  }
  std::shared_lock<std::shared_mutex> lock(lane_);
  return run();
}

StepResult LaneTarget::Build(const RunContext& ctx) {
  return Shared([&] { return inner_->Build(ctx); });
}

Measurement LaneTarget::Check(const RunContext& ctx) {
  return Shared([&] { return inner_->Check(ctx); });
}

Measurement LaneTarget::Bench(const RunContext& ctx) {
  if (lanes_ > 1) {
    AcquireLane();
    RunContext on_lane = ctx;
    on_lane.lane = HeldLane();  // -1 inside a profile
    Measurement m = inner_->Bench(on_lane);
    ReleaseLane();
    return m;
  }
  LockExclusive();
  Measurement m = inner_->Bench(ctx);
  UnlockExclusive();
  return m;
}

ProfileResult LaneTarget::Profile(const RunContext& ctx) {
  if (lanes_ > 1) {
    // On a cluster, or inside a measurement: as with one lane, nothing to wait for.
    if (!inner_->MeasurementsNeedTheMachine() || HeldLane() >= 0) return inner_->Profile(ctx);
    AcquireAll();
    ProfileResult p = inner_->Profile(ctx);
    ReleaseAll();
    return p;
  }
  LockExclusive();
  ProfileResult p = inner_->Profile(ctx);
  UnlockExclusive();
  return p;
}

void LaneTarget::BeginMeasurement(NodeId node) {
  if (lanes_ > 1) {
    AcquireLane();
  } else {
    LockExclusive();
  }
  inner_->BeginMeasurement(node);
}

void LaneTarget::BeginMeasurementOn(NodeId node, int lane) {
  ARBOR_CHECK(lanes_ > 1 && lane >= 0 && lane < lanes_, "no such measurement lane");
  AcquireLane(lane);
  inner_->BeginMeasurement(node);
}

void LaneTarget::EndMeasurement(NodeId node) {
  inner_->EndMeasurement(node);
  if (lanes_ > 1) {
    ReleaseLane();
  } else {
    UnlockExclusive();
  }
}

}  // namespace arbor
