#include "core/critic/gate.h"

#include <gtest/gtest.h>

namespace arbor {
namespace {

std::vector<Sample> Samples(const std::vector<double>& values, const std::string& arm = "self") {
  std::vector<Sample> out;
  for (size_t i = 0; i < values.size(); ++i) {
    Sample s;
    s.arm = arm;
    s.rep = static_cast<int>(i);
    s.value = values[i];
    out.push_back(s);
  }
  return out;
}

std::vector<Sample> WithExtra(std::vector<Sample> samples, const std::string& name,
                              const std::vector<double>& values) {
  for (size_t i = 0; i < samples.size() && i < values.size(); ++i) {
    samples[i].extra[name] = values[i];
  }
  return samples;
}

class MedianGateTest : public ::testing::Test {
 protected:
  GateInput Input(std::vector<Sample> parent, std::vector<Sample> candidate) {
    GateInput in;
    in.metric = &metric_;
    in.critic = &critic_;
    in.parent = std::move(parent);
    in.candidate = std::move(candidate);
    return in;
  }
  MetricSpec metric_;
  CriticSpec critic_;  // min_effect 0.01
  MedianGate gate_;
};

TEST(MedianTest, OddEvenAndEmpty) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(Median({7}), 7);
  EXPECT_DOUBLE_EQ(Median({}), 0);
}

TEST(RelativeGainTest, GoalAwareAndSafeOnZero) {
  EXPECT_DOUBLE_EQ(RelativeGain(100, 110, Goal::kMax), 0.1);
  EXPECT_DOUBLE_EQ(RelativeGain(100, 90, Goal::kMax), -0.1);
  EXPECT_DOUBLE_EQ(RelativeGain(10, 8, Goal::kMin), 0.2);
  EXPECT_DOUBLE_EQ(RelativeGain(10, 12, Goal::kMin), -0.2);
  EXPECT_DOUBLE_EQ(RelativeGain(0, 5, Goal::kMax), 0);
}

TEST_F(MedianGateTest, KeepsAClearImprovementAndIgnoresOtherArms) {
  std::vector<Sample> candidate = Samples({120, 115, 118, 130});
  for (const Sample& s : Samples({1, 1, 1, 1, 1}, "reference")) candidate.push_back(s);
  Verdict v = gate_.Judge(Input(Samples({100, 110, 105}), candidate));
  EXPECT_TRUE(v.keep);
  EXPECT_DOUBLE_EQ(v.parent_median, 105);
  EXPECT_DOUBLE_EQ(v.candidate_median, 119);
  EXPECT_DOUBLE_EQ(v.gain, 14.0 / 105.0);
  EXPECT_EQ(v.reason, "median 119 vs 105 (+13.3%, needs +1.0%)");
}

TEST_F(MedianGateTest, RevertsAGainBelowTheMinimumEffect) {
  Verdict v = gate_.Judge(Input(Samples({100, 100, 100}), Samples({100.5, 100.4, 100.6})));
  EXPECT_FALSE(v.keep);
  EXPECT_NEAR(v.gain, 0.005, 1e-12);
  EXPECT_EQ(v.reason, "median 100.5 vs 100 (+0.5%, needs +1.0%)");

  v = gate_.Judge(Input(Samples({100}), Samples({90})));
  EXPECT_FALSE(v.keep);
  EXPECT_EQ(v.reason, "median 90 vs 100 (-10.0%, needs +1.0%)");
}

TEST_F(MedianGateTest, KeepsAtExactlyTheMinimumEffect) {
  Verdict v = gate_.Judge(Input(Samples({100}), Samples({101})));
  EXPECT_TRUE(v.keep);
}

TEST_F(MedianGateTest, LowerIsBetterForMinGoals) {
  metric_.goal = Goal::kMin;
  Verdict v = gate_.Judge(Input(Samples({10, 10, 10}), Samples({9, 9, 9})));
  EXPECT_TRUE(v.keep);
  EXPECT_NEAR(v.gain, 0.1, 1e-12);
  v = gate_.Judge(Input(Samples({10, 10, 10}), Samples({11, 11, 11})));
  EXPECT_FALSE(v.keep);
  EXPECT_NEAR(v.gain, -0.1, 1e-12);
}

TEST_F(MedianGateTest, GuardsAreJudgedOnTheCandidateMedian) {
  Guard p99;
  p99.name = "p99_ms";
  p99.max = 250;
  metric_.guards.push_back(p99);
  // One outlier above the limit does not fail the guard: the median is 240.
  Verdict v = gate_.Judge(Input(Samples({100, 100, 100}),
                                WithExtra(Samples({120, 120, 120}), "p99_ms", {240, 900, 200})));
  EXPECT_TRUE(v.keep) << v.reason;

  v = gate_.Judge(Input(Samples({100, 100, 100}),
                        WithExtra(Samples({120, 120, 120}), "p99_ms", {300, 200, 310})));
  EXPECT_FALSE(v.keep);
  EXPECT_NEAR(v.gain, 0.2, 1e-12);  // the gain is still reported
  EXPECT_EQ(v.reason, "median 120 vs 100 (+20.0%, needs +1.0%); guard p99_ms 300 > max 250");
}

TEST_F(MedianGateTest, MinGuardAndMissingGuard) {
  Guard acc;
  acc.name = "accuracy";
  acc.min = 0.9;
  metric_.guards.push_back(acc);
  Verdict v = gate_.Judge(Input(Samples({100}), WithExtra(Samples({120}), "accuracy", {0.85})));
  EXPECT_FALSE(v.keep);
  EXPECT_EQ(v.reason, "median 120 vs 100 (+20.0%, needs +1.0%); guard accuracy 0.85 < min 0.9");

  v = gate_.Judge(Input(Samples({100}), Samples({120})));
  EXPECT_FALSE(v.keep);
  EXPECT_EQ(v.reason, "median 120 vs 100 (+20.0%, needs +1.0%); guard accuracy missing");
}

TEST_F(MedianGateTest, NoSamplesIsNeverKept) {
  Verdict v = gate_.Judge(Input({}, Samples({120})));
  EXPECT_FALSE(v.keep);
  EXPECT_EQ(v.reason, "no samples");
  v = gate_.Judge(Input(Samples({100}), Samples({120}, "reference")));
  EXPECT_FALSE(v.keep);
  EXPECT_EQ(v.reason, "no samples");
}

}  // namespace
}  // namespace arbor
