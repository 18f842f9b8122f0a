#include "core/critic/statistics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace arbor {
namespace {

TEST(StatisticsTest, DescriptiveValues) {
  EXPECT_DOUBLE_EQ(Mean({1, 2, 3, 4}), 2.5);
  EXPECT_DOUBLE_EQ(Mean({}), 0);
  // Σ(x − 5)² = 32 over 2,4,4,4,5,5,7,9; / (8 − 1).
  EXPECT_NEAR(SampleStdDev({2, 4, 4, 4, 5, 5, 7, 9}), std::sqrt(32.0 / 7), 1e-12);
  EXPECT_DOUBLE_EQ(SampleStdDev({3}), 0);
  EXPECT_NEAR(CoefficientOfVariation({90, 100, 110}), 10.0 / 100, 1e-12);
  EXPECT_DOUBLE_EQ(CoefficientOfVariation({0, 0}), 0);
  EXPECT_DOUBLE_EQ(Median({5, 1, 3}), 3);
}

TEST(StatisticsTest, NormalDistribution) {
  EXPECT_NEAR(NormalCdf(0), 0.5, 1e-15);
  EXPECT_NEAR(NormalCdf(1.959963984540054), 0.975, 1e-12);
  EXPECT_NEAR(NormalQuantile(0.975), 1.959963984540054, 1e-9);
  EXPECT_NEAR(NormalQuantile(0.95), 1.6448536269514722, 1e-9);
  EXPECT_NEAR(NormalQuantile(0.8), 0.8416212335729143, 1e-9);
  EXPECT_NEAR(NormalQuantile(1e-6), -4.753424308822899, 1e-7);
  for (double p : {0.001, 0.02, 0.3, 0.5, 0.77, 0.99}) {
    EXPECT_NEAR(NormalCdf(NormalQuantile(p)), p, 1e-12) << p;
  }
}

TEST(StatisticsTest, StandardNormalDrawsAreDeterministicAndStandard) {
  Rng a(7);
  Rng b(7);
  std::vector<double> draws;
  for (int i = 0; i < 20000; ++i) {
    const double x = StandardNormal(a);
    ASSERT_EQ(x, StandardNormal(b));
    draws.push_back(x);
  }
  EXPECT_NEAR(Mean(draws), 0, 0.03);
  EXPECT_NEAR(SampleStdDev(draws), 1, 0.03);
}

// The null distribution of U by brute force: every way of choosing which of the m + n ranks
// belong to x.
std::vector<double> EnumeratedCounts(int m, int n) {
  std::vector<double> counts(m * n + 1, 0);
  std::vector<bool> is_x(m + n, false);
  std::fill(is_x.end() - m, is_x.end(), true);
  do {
    int u = 0;
    int ys_below = 0;
    for (bool x : is_x) {
      if (x) {
        u += ys_below;
      } else {
        ++ys_below;
      }
    }
    counts[u] += 1;
  } while (std::next_permutation(is_x.begin(), is_x.end()));
  return counts;
}

TEST(StatisticsTest, ExactCountsMatchEnumeration) {
  for (auto [m, n] : {std::pair{1, 1}, {2, 3}, {4, 6}, {5, 5}, {7, 3}, {6, 8}}) {
    EXPECT_EQ(MannWhitneyCounts(m, n), EnumeratedCounts(m, n)) << m << "x" << n;
  }
  const std::vector<double> c = MannWhitneyCounts(5, 5);
  ASSERT_EQ(c.size(), 26u);
  EXPECT_EQ(c[0] + c[1] + c[2] + c[3] + c[4] + c[5], 1 + 1 + 2 + 3 + 5 + 7);
  double total = 0;
  for (double x : MannWhitneyCounts(20, 20)) total += x;
  EXPECT_DOUBLE_EQ(total, 137846528820.0);  // C(40, 20)
}

TEST(StatisticsTest, MannWhitneyExactSmallSamples) {
  // Complete separation, 3 vs 3: U = 0 is 1 arrangement of C(6,3) = 20.
  MannWhitneyResult r = MannWhitneyU({1, 2, 3}, {4, 5, 6});
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 0);
  EXPECT_DOUBLE_EQ(r.p_less, 1.0 / 20);
  EXPECT_DOUBLE_EQ(r.p_greater, 1.0);
  EXPECT_DOUBLE_EQ(r.p_two_sided, 2.0 / 20);
  // 5 vs 5 separated: 1 / C(10,5) = 1/252.
  r = MannWhitneyU({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5});
  EXPECT_DOUBLE_EQ(r.u, 25);
  EXPECT_DOUBLE_EQ(r.p_greater, 1.0 / 252);
  // scipy's documentation example: males vs females, U = 17, exact two-sided p = 1/9
  // (P(U ≥ 17) = P(U ≤ 3) = (1 + 1 + 2 + 3) / C(9,4)).
  r = MannWhitneyU({19, 22, 16, 29, 24}, {20, 11, 17, 12});
  EXPECT_DOUBLE_EQ(r.u, 17);
  EXPECT_NEAR(r.p_greater, 7.0 / 126, 1e-15);
  EXPECT_NEAR(r.p_two_sided, 1.0 / 9, 1e-15);
}

TEST(StatisticsTest, MannWhitneyNormalApproximationWithTies) {
  // Ranks: 1 | 2,2,2 → 3 | 3,3 → 5.5 | 4 → 7 | 5,5 → 8.5. R_x = 1 + 3 + 3 + 5.5 = 12.5,
  // U = 2.5. Tie term Σ(t³ − t) = 24 + 6 + 6 = 36; var = 20/12·(10 − 36/72) = 15.8333;
  // p_less = sf((10 − 2.5 − 0.5) / 3.97911) = sf(1.75919) = 0.0392729.
  MannWhitneyResult r = MannWhitneyU({1, 2, 2, 3}, {2, 3, 4, 5, 5});
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 2.5);
  EXPECT_NEAR(r.p_less, 0.03927292547559535, 1e-12);
  EXPECT_NEAR(r.p_greater, 0.9778107863272566, 1e-12);
  EXPECT_NEAR(r.p_two_sided, 2 * 0.03927292547559535, 1e-12);
  // Large samples (30·30 > 400) use the approximation without ties: scipy asymptotic p.
  std::vector<double> x;
  std::vector<double> y;
  for (int i = 1; i <= 30; ++i) x.push_back(i);
  for (int i = 5; i <= 34; ++i) y.push_back(i + 0.5);
  r = MannWhitneyU(x, y);
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 325);
  EXPECT_NEAR(r.p_less, 0.0328356288445633, 1e-12);
  // All values equal: no evidence.
  r = MannWhitneyU({3, 3, 3}, {3, 3});
  EXPECT_DOUBLE_EQ(r.p_two_sided, 1);
  EXPECT_DOUBLE_EQ(MannWhitneyU({}, {1}).p_greater, 1);
}

TEST(StatisticsTest, MannWhitneyApproximationAgreesWithExactNearTheTail) {
  // 20 vs 20 exact against the normal approximation: close, as they should be.
  std::vector<double> x;
  std::vector<double> y;
  for (int i = 0; i < 20; ++i) {
    x.push_back(i * 1.0 + 6.3);
    y.push_back(i * 1.0);
  }
  const MannWhitneyResult exact = MannWhitneyU(x, y);
  ASSERT_TRUE(exact.exact);
  const double s = std::sqrt(400.0 / 12 * 41);
  const double approx = 1 - NormalCdf((exact.u - 200 - 0.5) / s);
  EXPECT_NEAR(exact.p_greater, approx, 0.002);
}

TEST(StatisticsTest, BootstrapIsDeterministicAndBracketsTheRatio) {
  const std::vector<double> base = {100, 101, 99, 102, 98, 100, 101, 99};
  const std::vector<double> cand = {110, 111, 109, 112, 108, 110, 111, 109};
  Rng a(42);
  Rng b(42);
  const Interval i1 = BootstrapMedianRatioCI(base, cand, 0.95, 2000, a);
  const Interval i2 = BootstrapMedianRatioCI(base, cand, 0.95, 2000, b);
  EXPECT_EQ(i1.low, i2.low);
  EXPECT_EQ(i1.high, i2.high);
  EXPECT_LT(i1.low, 1.1);
  EXPECT_GT(i1.high, 1.1);
  // Resampled medians lie within the samples' ranges.
  EXPECT_GE(i1.low, 108.0 / 102);
  EXPECT_LE(i1.high, 112.0 / 98);
  Rng c(1);
  const Interval empty = BootstrapMedianRatioCI({}, cand, 0.95, 100, c);
  EXPECT_EQ(empty.low, 0);
  EXPECT_EQ(empty.high, 0);
}

TEST(StatisticsTest, PowerCalculations) {
  // (z_.95 + z_.8) · 0.03 · sqrt(2/5) = 2.486475 · 0.03 · 0.632456.
  EXPECT_NEAR(MinimumDetectableEffect(0.03, 5, 0.05, 0.8), 0.0471771, 1e-6);
  // 2 · 2.486475² · 0.03² / 0.05² = 4.45 → 5.
  EXPECT_EQ(RequiredRepetitions(0.03, 0.05, 0.05, 0.8), 5);
  // 2 · (1.959964 + 1.281552)² · 0.05² / 0.01² = 525.4 → 526.
  EXPECT_EQ(RequiredRepetitions(0.05, 0.01, 0.025, 0.9), 526);
  EXPECT_EQ(RequiredRepetitions(0.001, 0.5, 0.05, 0.8), 2);
  // Round trip: at the required repetitions the MDE is at most the effect.
  const int n = RequiredRepetitions(0.04, 0.02, 0.05, 0.95);
  EXPECT_LE(MinimumDetectableEffect(0.04, n, 0.05, 0.95), 0.02);
  EXPECT_GT(MinimumDetectableEffect(0.04, n - 1, 0.05, 0.95), 0.02);
}

TEST(StatisticsTest, OutliersAreFlaggedNotDropped) {
  std::vector<double> v = {100, 101, 99, 100, 102, 98, 100, 140};
  const std::vector<bool> flags = OutlierFlags(v);
  ASSERT_EQ(flags.size(), v.size());
  EXPECT_EQ(CountOutliers(v), 1);
  EXPECT_TRUE(flags[7]);
  EXPECT_EQ(v.size(), 8u);
  // MAD of 0: the mean absolute deviation stands in, so a lone far value is still flagged…
  EXPECT_EQ(CountOutliers({5, 5, 5, 5, 100}), 1);
  // …but a small discrete step is not.
  EXPECT_EQ(CountOutliers({5, 5, 5, 6, 6}), 0);
  EXPECT_EQ(CountOutliers({1, 1000}), 0);  // too few to tell
}

}  // namespace
}  // namespace arbor
