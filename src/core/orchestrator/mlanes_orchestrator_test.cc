// Measurement lanes (search.lanes = N; core/orchestrator/lanes.h, docs/lanes.md): up to N
// measurements hold a lane each, every benchmark run of a measurement carries its lane, builds
// and checks never overlap a measurement on a target that needs the machine, and a profile
// excludes everything.
//
// Overlap is shown without timing: measurements wait for each other at a latch with a generous
// bound, so a test fails only if they cannot be in flight together.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/orchestrator/lanes.h"
#include "core/testing/latch_testing.h"

namespace arbor {
namespace {

using latch_testing::kBound;
using latch_testing::Latch;

// Counts what runs at once and records each benchmark run's (node, lane).
class CountingTarget : public Target {
 public:
  bool machine = true;
  Latch* bench_latch = nullptr;  // every benchmark run arrives here first

  StepResult Build(const RunContext&) override {
    Enter(&building_);
    Leave(&building_);
    return {};
  }
  Measurement Check(const RunContext&) override {
    Enter(&building_);
    Leave(&building_);
    return {};
  }
  Measurement Bench(const RunContext& ctx) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      runs_.emplace_back(ctx.node, ctx.lane);
    }
    Enter(&benching_);
    if (bench_latch != nullptr) bench_latch->Arrive();
    Leave(&benching_);
    return {};
  }
  ProfileResult Profile(const RunContext&) override {
    Enter(&profiling_);
    Leave(&profiling_);
    return {};
  }
  bool MeasurementsNeedTheMachine() const override { return machine; }

  int max_benching() {
    std::lock_guard<std::mutex> lock(mu_);
    return max_benching_;
  }
  int overlaps() {
    std::lock_guard<std::mutex> lock(mu_);
    return overlaps_;
  }
  std::vector<std::pair<NodeId, int>> runs() {
    std::lock_guard<std::mutex> lock(mu_);
    return runs_;
  }

 private:
  void Enter(int* counter) {
    std::lock_guard<std::mutex> lock(mu_);
    ++*counter;
    // A build or check beside a benchmark, or a profile beside anything, breaks the lock.
    if ((building_ > 0 && benching_ > 0) || (profiling_ > 0 && building_ + benching_ > 0) ||
        profiling_ > 1) {
      ++overlaps_;
    }
    max_benching_ = std::max(max_benching_, benching_);
  }
  void Leave(int* counter) {
    std::lock_guard<std::mutex> lock(mu_);
    --*counter;
  }

  std::mutex mu_;
  int building_ = 0;
  int benching_ = 0;
  int profiling_ = 0;
  int max_benching_ = 0;
  int overlaps_ = 0;
  std::vector<std::pair<NodeId, int>> runs_;
};

// One measurement of `node`: a baseline run and a candidate run, in one scope.
void Measure(LaneTarget* lanes, NodeId node) {
  MeasurementScope scope(lanes, node);
  for (int rep = 0; rep < 2; ++rep) {
    RunContext ctx;
    ctx.node = node;
    ctx.repetition = rep;
    lanes->Bench(ctx);
  }
}

TEST(MeasurementLanesTest, TwoMeasurementsAreInFlightAtOnceWithTwoLanes) {
  CountingTarget inner;
  Latch latch(2);
  inner.bench_latch = &latch;
  LaneTarget lanes(&inner, 2);
  std::thread a([&] { Measure(&lanes, 2); });
  std::thread b([&] { Measure(&lanes, 3); });
  a.join();
  b.join();
  EXPECT_TRUE(latch.met());
  EXPECT_EQ(inner.max_benching(), 2);
}

TEST(MeasurementLanesTest, NeverMoreMeasurementsThanLanesEachOnItsOwnLane) {
  CountingTarget inner;
  Latch latch(2);  // the first two runs wait for each other; later ones pass
  inner.bench_latch = &latch;
  LaneTarget lanes(&inner, 2);
  std::vector<std::thread> threads;
  for (NodeId node = 2; node < 8; ++node)
    threads.emplace_back([&, node] { Measure(&lanes, node); });
  for (auto& t : threads) t.join();
  EXPECT_TRUE(latch.met());
  EXPECT_EQ(inner.max_benching(), 2);
  // Every run of a measurement (its baseline's and its candidate's) is on one lane, 0 or 1.
  std::map<NodeId, std::set<int>> lanes_of;
  for (const auto& [node, lane] : inner.runs()) lanes_of[node].insert(lane);
  ASSERT_EQ(lanes_of.size(), 6u);
  for (const auto& [node, used] : lanes_of) {
    ASSERT_EQ(used.size(), 1u) << "node " << node;
    EXPECT_TRUE(*used.begin() == 0 || *used.begin() == 1) << "node " << node;
  }
}

TEST(MeasurementLanesTest, NoBuildCheckOrProfileOverlapsAMeasurementOnALocalTarget) {
  CountingTarget inner;
  LaneTarget lanes(&inner, 2);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < 50; ++k) {
        RunContext ctx;
        ctx.node = 10 + i;
        if (i % 2 == 0) {
          Measure(&lanes, ctx.node);
        } else {
          lanes.Build(ctx);
          lanes.Check(ctx);
          if (k % 10 == 0) lanes.Profile(ctx);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(inner.overlaps(), 0);
}

// Deterministic for a broken lock: a build that may start beside an open measurement starts at
// once, and the measurement gives it ample time to do so before it ends.
TEST(MeasurementLanesTest, ABuildWaitsForAnOpenMeasurementOnALocalTarget) {
  CountingTarget inner;
  LaneTarget lanes(&inner, 2);
  std::atomic<bool> built{false};
  std::thread build;
  {
    MeasurementScope scope(&lanes, 2);
    build = std::thread([&] {
      lanes.Build(RunContext{});
      built = true;
    });
    for (int i = 0; i < 50 && !built; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(built) << "a build ran while a measurement held a lane";
  }
  build.join();
  EXPECT_TRUE(built);
}

TEST(MeasurementLanesTest, WithOneLaneRunsCarryNoLane) {
  CountingTarget inner;
  LaneTarget lanes(&inner, 1);
  Measure(&lanes, 2);
  for (const auto& [node, lane] : inner.runs()) EXPECT_EQ(lane, -1);
}

TEST(MeasurementLanesTest, ALoneBenchmarkRunTakesALaneToo) {
  CountingTarget inner;
  LaneTarget lanes(&inner, 2);
  RunContext ctx;
  ctx.node = 2;
  lanes.Bench(ctx);
  ASSERT_EQ(inner.runs().size(), 1u);
  EXPECT_EQ(inner.runs()[0].second, 0);
}

TEST(MeasurementLanesTest, AClusterTargetsBuildRunsWhileMeasurementsHoldEveryLane) {
  CountingTarget inner;
  inner.machine = false;
  LaneTarget lanes(&inner, 2);
  Latch latch(3);  // two benchmark runs and the build
  inner.bench_latch = &latch;
  std::thread a([&] { Measure(&lanes, 2); });
  std::thread b([&] { Measure(&lanes, 3); });
  std::thread c([&] {
    // Arrives while the two runs wait at the latch: nothing holds the build back.
    latch.Arrive();
    lanes.Build(RunContext{});
  });
  a.join();
  b.join();
  c.join();
  EXPECT_TRUE(latch.met());
}

}  // namespace
}  // namespace arbor
