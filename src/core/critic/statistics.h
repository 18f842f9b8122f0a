// Statistics for the Critic: descriptive statistics, the Mann–Whitney U test, a percentile
// bootstrap of the median ratio, and normal-approximation power calculations.
//
// Pure functions of their inputs. The only random one (the bootstrap) draws from the Rng it is
// given, so the same seed gives the same interval. Empty or too-short inputs return neutral
// values (0, p = 1, an empty interval) rather than aborting: a gate must be able to judge a
// run that produced fewer samples than asked for.
#pragma once

#include <cstdint>
#include <vector>

#include "core/critic/gate.h"  // Median
#include "core/model/rng.h"

namespace arbor {

double Mean(const std::vector<double>& v);
// Sample standard deviation (n − 1 in the denominator); 0 with fewer than two values.
double SampleStdDev(const std::vector<double>& v);
// SampleStdDev / |Mean|; 0 when the mean is 0 or fewer than two values.
double CoefficientOfVariation(const std::vector<double>& v);
// The noise estimate the Critic gates with: 1.4826·MAD / |median| (a standard deviation under
// normality, relative to the median), so one outlier among ten readings moves it little where
// it would double the plain CV. When the MAD is 0 (over half the values equal) the mean
// absolute deviation from the median ×1.2533 stands in; with fewer than three values, the plain
// CV. 0 when the median is 0.
double RobustCV(const std::vector<double>& v);

// Standard normal cumulative distribution and its inverse (|error| < 1e-9 on (0, 1)).
double NormalCdf(double z);
double NormalQuantile(double p);
// One draw of N(0, 1) (Box–Muller on rng.Uniform()).
double StandardNormal(Rng& rng);

// Mann–Whitney U test of x against y. `u` is U of x: the number of pairs (x_i, y_j) with
// x_i > y_j, ties counting one half. p_greater is the one-sided p-value for "x tends to be
// larger than y", p_less for "smaller", p_two_sided = min(1, 2·min(p_greater, p_less)).
// Exact (the null distribution of U by the q-binomial recurrence) when there are no ties and
// |x|·|y| ≤ kExactMannWhitneyLimit; otherwise the normal approximation with continuity
// correction and the tie correction of the variance (scipy's `method="asymptotic"`).
inline constexpr int kExactMannWhitneyLimit = 400;
struct MannWhitneyResult {
  double u = 0;
  double p_greater = 1;
  double p_less = 1;
  double p_two_sided = 1;
  bool exact = false;
};
MannWhitneyResult MannWhitneyU(const std::vector<double>& x, const std::vector<double>& y);

// Number of arrangements of m x's and n y's with U = u, for u = 0 .. m·n (the coefficients of
// the Gaussian binomial [m+n choose m]_q). Exposed for tests. Requires m·n ≤ 10000.
std::vector<double> MannWhitneyCounts(int m, int n);

// Percentile bootstrap of median(cand) / median(base): each resample redraws both arms with
// replacement. {0, 0} when an arm is empty or a resampled base median is 0.
struct Interval {
  double low = 0;
  double high = 0;
};
Interval BootstrapMedianRatioCI(const std::vector<double>& base, const std::vector<double>& cand,
                                double confidence, int resamples, Rng& rng);

// Smallest relative effect a one-sided test at level `alpha` detects with probability `power`
// when each arm has `n_per_arm` samples of coefficient of variation `cv` (normal
// approximation: (z_{1−α} + z_power) · cv · sqrt(2 / n)).
double MinimumDetectableEffect(double cv, int n_per_arm, double alpha, double power);
// Samples per arm needed for `effect` under the same approximation (at least 2).
int RequiredRepetitions(double cv, double effect, double alpha, double power);

// Flags values further than `mads` scaled MADs (1.4826·MAD, a standard deviation under
// normality) from the median. When the MAD is 0 (over half the values equal) the mean absolute
// deviation from the median ×1.2533 stands in. Flagged values are reported, never dropped.
std::vector<bool> OutlierFlags(const std::vector<double>& v, double mads = 3.0);
int CountOutliers(const std::vector<double>& v, double mads = 3.0);

}  // namespace arbor
