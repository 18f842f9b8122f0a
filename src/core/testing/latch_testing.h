// A bounded latch for the lanes' tests (lanes_orchestrator_test.cc, mlanes_orchestrator_test.cc,
// measure_lane_orchestrator_test.cc): threads that must run at once meet at it, and a test
// fails (met() is false) instead of hanging when they never do. No timing is asserted.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace arbor::latch_testing {

inline constexpr std::chrono::seconds kBound{20};

// The first `count` arrivals wait until all of them arrived (at most kBound).
class Latch {
 public:
  explicit Latch(int count) : count_(count) {}
  void Arrive() {
    std::unique_lock<std::mutex> lock(mu_);
    if (arrived_++ >= count_) return;
    cv_.notify_all();
    if (!cv_.wait_for(lock, kBound, [&] { return arrived_ >= count_; })) timed_out_ = true;
  }
  bool met() {
    std::lock_guard<std::mutex> lock(mu_);
    return arrived_ >= count_ && !timed_out_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int count_;
  int arrived_ = 0;
  bool timed_out_ = false;
};

}  // namespace arbor::latch_testing
