#include "core/critic/plausibility.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace arbor {
namespace {

PlausibilityInput Whole(double observed, double prior) {
  PlausibilityInput in;
  in.observed_speedup = observed;
  in.prior_speedup = prior;
  in.expected_gain_g = 1 - 1 / prior;
  in.whole_program = true;
  return in;
}

TEST(PlausibilityTest, WholeProgramPriorTimesTheMargin) {
  // Prior ×1.1 on the whole program: expected +10%, ×10 margin: ×2.0.
  Plausibility p = CheckPlausibility(Whole(1.2, 1.1));
  EXPECT_FALSE(p.anomaly) << p.message;
  EXPECT_NEAR(p.bound, 2.0, 1e-9);
  EXPECT_TRUE(std::isinf(p.amdahl));
  EXPECT_TRUE(CheckPlausibility(Whole(2.1, 1.1)).anomaly);
  p = CheckPlausibility(Whole(9.9e305, 1.1));
  EXPECT_TRUE(p.anomaly);
  EXPECT_NE(p.message.find("anomaly: speedup"), std::string::npos) << p.message;
  EXPECT_TRUE(CheckPlausibility(Whole(std::numeric_limits<double>::quiet_NaN(), 1.1)).anomaly);
}

TEST(PlausibilityTest, ASmallPriorStillAllowsFiftyPercent) {
  EXPECT_NEAR(CheckPlausibility(Whole(1.4, 1.01)).bound, kMinPlausibleSpeedup, 1e-12);
  EXPECT_FALSE(CheckPlausibility(Whole(1.4, 1.01)).anomaly);
  PlausibilityInput none = Whole(1.6, 1.0);
  none.expected_gain_g = 0;
  EXPECT_TRUE(CheckPlausibility(none).anomaly);
}

TEST(PlausibilityTest, AmdahlBoundsATargetedAction) {
  // Prior ×2 on a 20% share: g = 0.1. Amdahl with 10 points of slack: 1/(1 − 0.3) = 1.43;
  // the prior's expected gain 1/0.9 − 1 = 11.1%, ×10: ×2.11. The tighter wins.
  PlausibilityInput in;
  in.prior_speedup = 2;
  in.expected_gain_g = 0.1;
  in.whole_program = false;
  in.observed_speedup = 1.4;
  Plausibility p = CheckPlausibility(in);
  EXPECT_NEAR(p.amdahl, 1 / 0.7, 1e-9);
  EXPECT_NEAR(p.explained, 1 + 10 * (1 / 0.9 - 1), 1e-9);
  EXPECT_NEAR(p.bound, 1 / 0.7, 1e-9);
  EXPECT_FALSE(p.anomaly) << p.message;
  in.observed_speedup = 1.5;
  p = CheckPlausibility(in);
  EXPECT_TRUE(p.anomaly);
  EXPECT_NE(p.basis.find("Amdahl"), std::string::npos) << p.basis;
  // A share near the whole program has no Amdahl bound (slack reaches 100%).
  in.prior_speedup = 30;
  in.expected_gain_g = 0.97 * (1 - 1.0 / 30);
  in.observed_speedup = 25;
  EXPECT_FALSE(CheckPlausibility(in).anomaly);
}

TEST(PlausibilityTest, TheKnowledgeBaseAndTheUserWidenTheBound) {
  PlausibilityInput in = Whole(5, 1.1);
  EXPECT_TRUE(CheckPlausibility(in).anomaly);
  in.kb_max_speedup = 1.5;  // +50% seen kept in the category: ×6
  Plausibility p = CheckPlausibility(in);
  EXPECT_NEAR(p.bound, 6, 1e-9);
  EXPECT_FALSE(p.anomaly);
  EXPECT_NE(p.basis.find("knowledge base"), std::string::npos);
  in = Whole(40, 1.1);
  in.user_max_speedup = 50;  // replaces the computed bound, either way
  EXPECT_FALSE(CheckPlausibility(in).anomaly);
  in.user_max_speedup = 1.1;
  in.observed_speedup = 1.2;
  EXPECT_TRUE(CheckPlausibility(in).anomaly);
}

TEST(PlausibilityTest, AnAnomalyIsKeptOnlyWithEvidence) {
  Plausibility p = CheckPlausibility(Whole(1e9, 1.1));
  AnomalyEvidence e;
  AnomalyVerdict v = JudgeAnomaly(1e9, p, e);
  EXPECT_FALSE(v.keep);
  EXPECT_NE(v.reason.find("no [metric] work declared"), std::string::npos) << v.reason;
  e.first_speedup = 1e9;  // reproduced, but orders of magnitude beyond the bound
  v = JudgeAnomaly(1e9, p, e);
  EXPECT_FALSE(v.keep);
  EXPECT_NE(v.reason.find("reproduced, but more than"), std::string::npos) << v.reason;
  e.first_speedup.reset();
  e.work_ratio = 0.5;  // the benchmark did half the work
  v = JudgeAnomaly(1e9, p, e);
  EXPECT_FALSE(v.keep);
  EXPECT_NE(v.reason.find("work metric fell"), std::string::npos) << v.reason;
  e.work_ratio = 1.0;  // the work held
  EXPECT_TRUE(JudgeAnomaly(1e9, p, e).keep);
  e.wall_ratio = 1.01;  // ... but a fixed-work command took as long: the metric is broken
  v = JudgeAnomaly(1e9, p, e);
  EXPECT_FALSE(v.keep);
  EXPECT_NE(v.reason.find("metric is broken"), std::string::npos) << v.reason;
  e.fixed = BenchFixed::kDuration;  // fixed-duration runs: the wall time says nothing
  EXPECT_TRUE(JudgeAnomaly(1e9, p, e).keep);
  e = AnomalyEvidence{};
  e.trust_large_gains = true;
  e.wall_ratio = 1.0;
  v = JudgeAnomaly(1e9, p, e);
  EXPECT_TRUE(v.keep);
  EXPECT_NE(v.reason.find("trust_large_gains"), std::string::npos);
}

TEST(PlausibilityTest, AReproducedSurpriseWithinAnOrderOfMagnitudeIsKept) {
  // A flag whose prior said ×1.1 really gives ×3: beyond the bound (×2), reproduced by the
  // fresh run (×2.9 after ×3.1), well within 10× the bound: kept, and the reason says why.
  Plausibility p = CheckPlausibility(Whole(3.0, 1.1));
  ASSERT_TRUE(p.anomaly);
  AnomalyEvidence e;
  e.first_speedup = 3.1;
  AnomalyVerdict v = JudgeAnomaly(2.9, p, e);
  EXPECT_TRUE(v.keep) << v.reason;
  EXPECT_NE(v.reason.find("reproduced"), std::string::npos) << v.reason;
  e.first_speedup = 6.0;  // the two runs disagree: not reproduced
  EXPECT_FALSE(JudgeAnomaly(2.9, p, e).keep);
  e.first_speedup = 3.1;
  e.work_ratio = 0.5;  // a declared work metric that fell outranks the reproduction
  EXPECT_FALSE(JudgeAnomaly(2.9, p, e).keep);
}

TEST(PlausibilityTest, RerunKeepsAPlausibleFreshRunUnlessTheRunsDisagree) {
  CampaignSpec spec;
  std::vector<Sample> none;
  Plausibility within = CheckPlausibility(Whole(1.3, 1.1));
  EXPECT_TRUE(JudgeRerun(within, 2.5, 1.3, none, none, spec).keep);
  EXPECT_FALSE(JudgeRerun(within, 1e6, 1.3, none, none, spec).keep);
  Plausibility beyond = CheckPlausibility(Whole(1e6, 1.1));
  std::vector<Sample> base{{1, "confirm-base", 0, 100, {{"work", 1000}}}};
  std::vector<Sample> cand{{1, "confirm-cand", 0, 1e8, {{"work", 1000}}}};
  spec.metric.work = MetricSource{};
  EXPECT_TRUE(JudgeRerun(beyond, 1e6, 1e6, base, cand, spec).keep);
  cand[0].extra["work"] = 10;
  EXPECT_FALSE(JudgeRerun(beyond, 1e6, 1e6, base, cand, spec).keep);
  // The wall-time witness: a fixed-work command of 2 s that still takes 2 s is a broken
  // metric, even with the work held; one of 2 ms is too short to tell.
  cand[0].extra["work"] = 1000;
  base[0].extra["wall_s"] = cand[0].extra["wall_s"] = 2.0;
  AnomalyVerdict v = JudgeRerun(beyond, 1e6, 1e6, base, cand, spec);
  EXPECT_FALSE(v.keep);
  EXPECT_NE(v.reason.find("metric is broken"), std::string::npos) << v.reason;
  base[0].extra["wall_s"] = cand[0].extra["wall_s"] = 0.002;
  EXPECT_TRUE(JudgeRerun(beyond, 1e6, 1e6, base, cand, spec).keep);
}

TEST(PlausibilityTest, OrdersOfMagnitude) {
  EXPECT_TRUE(DisagreesByOrders(100, 1e308));
  EXPECT_TRUE(DisagreesByOrders(1e11, 100));
  EXPECT_TRUE(DisagreesByOrders(100, 10));
  EXPECT_FALSE(DisagreesByOrders(100, 11));
  EXPECT_FALSE(DisagreesByOrders(100, 900));
  EXPECT_FALSE(DisagreesByOrders(0, 100));
  EXPECT_FALSE(DisagreesByOrders(100, -5));
}

TEST(PlausibilityTest, LargestKeptSpeedupSkipsWhatNoLongerStands) {
  auto entry = [](std::string uid, std::string outcome, double gain) {
    KbEntry e;
    e.uid = std::move(uid);
    e.category = "simd";
    e.outcome = std::move(outcome);
    e.gain = gain;
    e.controlled = true;
    return e;
  };
  std::vector<KbEntry> entries{entry("a/2", "kept", 0.3), entry("a/3", "reverted", 5),
                               entry("a/4", "kept", 9), entry("a/4/unkept", "reverted", 9),
                               entry("a/5", "kept", 7)};
  entries[4].superseded_by = 12;
  entries.push_back(entry("b/2", "kept", 0.6));
  entries.back().category = "other";
  EXPECT_NEAR(*LargestKeptSpeedup(entries, "simd", Goal::kMax), 1.3, 1e-12);
  EXPECT_NEAR(*LargestKeptSpeedup(entries, "other", Goal::kMin), 2.5, 1e-12);
  EXPECT_FALSE(LargestKeptSpeedup(entries, "none", Goal::kMax));
}

}  // namespace
}  // namespace arbor
