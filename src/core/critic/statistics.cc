#include "core/critic/statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <utility>

namespace arbor {
namespace {

// Quantile by linear interpolation between order statistics of a sorted vector.
double SortedQuantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}

// Acklam's rational approximation of the normal quantile (relative error < 1.2e-9).
double AcklamQuantile(double p) {
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549732539343734e+00,
                                 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double kLow = 0.02425;
  if (p < kLow) {
    const double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - kLow) return -AcklamQuantile(1 - p);
  const double q = p - 0.5;
  const double r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

}  // namespace

double Mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

double SampleStdDev(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double mean = Mean(v);
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

double CoefficientOfVariation(const std::vector<double>& v) {
  const double mean = Mean(v);
  if (v.size() < 2 || mean == 0) return 0;
  return SampleStdDev(v) / std::fabs(mean);
}

double RobustCV(const std::vector<double>& v) {
  if (v.size() < 3) return CoefficientOfVariation(v);
  const double median = Median(v);
  if (median == 0) return 0;
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::fabs(x - median));
  double scale = 1.4826 * Median(dev);
  if (scale == 0) scale = 1.2533 * Mean(dev);
  return scale / std::fabs(median);
}

double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::numbers::sqrt2); }

double NormalQuantile(double p) {
  if (p <= 0) return -INFINITY;
  if (p >= 1) return INFINITY;
  double x = AcklamQuantile(p);
  // One Halley step against the exact CDF brings the error to machine precision.
  const double e = NormalCdf(x) - p;
  const double u = e * std::sqrt(2 * std::numbers::pi) * std::exp(x * x / 2);
  x -= u / (1 + x * u / 2);
  return x;
}

double StandardNormal(Rng& rng) {
  double u1 = rng.Uniform();
  while (u1 <= 0) u1 = rng.Uniform();
  const double u2 = rng.Uniform();
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
}

std::vector<double> MannWhitneyCounts(int m, int n) {
  if (m < 0 || n < 0 || static_cast<int64_t>(m) * n > 10000) return {};
  const int max_deg = m * n;
  // [m+n choose m]_q = Π_{i=1..m} (1 − q^{n+i}) / (1 − q^i); every partial product is a
  // polynomial with integer coefficients, so the doubles stay exact while they are < 2^53.
  std::vector<double> c(static_cast<size_t>(max_deg + n + m + 1), 0.0);
  c[0] = 1;
  int deg = 0;
  for (int i = 1; i <= m; ++i) {
    const int up = n + i;
    for (int j = deg + up; j >= up; --j) c[j] -= c[j - up];
    for (int j = i; j <= deg + up; ++j) c[j] += c[j - i];
    deg += n;
  }
  c.resize(static_cast<size_t>(max_deg + 1));
  return c;
}

MannWhitneyResult MannWhitneyU(const std::vector<double>& x, const std::vector<double>& y) {
  MannWhitneyResult r;
  const size_t m = x.size();
  const size_t n = y.size();
  if (m == 0 || n == 0) return r;
  // Mid-ranks of the pooled sample; U of x = R_x − m(m+1)/2.
  std::vector<std::pair<double, int>> pooled;
  pooled.reserve(m + n);
  for (double v : x) pooled.emplace_back(v, 0);
  for (double v : y) pooled.emplace_back(v, 1);
  std::sort(pooled.begin(), pooled.end());
  const double big_n = static_cast<double>(m + n);
  double rank_sum_x = 0;
  double tie_term = 0;
  for (size_t i = 0; i < pooled.size();) {
    size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k) {
      if (pooled[k].second == 0) rank_sum_x += mid_rank;
    }
    tie_term += t * t * t - t;
    i = j;
  }
  const double md = static_cast<double>(m);
  const double nd = static_cast<double>(n);
  r.u = rank_sum_x - md * (md + 1) / 2;
  const double mn = md * nd;
  if (tie_term == 0 && mn <= kExactMannWhitneyLimit) {
    const std::vector<double> counts = MannWhitneyCounts(static_cast<int>(m), static_cast<int>(n));
    const int u = static_cast<int>(std::lround(r.u));
    double total = 0;
    double at_least = 0;
    double at_most = 0;
    for (int k = 0; k < static_cast<int>(counts.size()); ++k) {
      total += counts[k];
      if (k >= u) at_least += counts[k];
      if (k <= u) at_most += counts[k];
    }
    r.p_greater = at_least / total;
    r.p_less = at_most / total;
    r.exact = true;
  } else {
    const double mu = mn / 2;
    const double var = mn / 12 * ((big_n + 1) - tie_term / (big_n * (big_n - 1)));
    if (var <= 0) return r;  // every value equal: no evidence either way
    const double s = std::sqrt(var);
    r.p_greater = 1 - NormalCdf((r.u - mu - 0.5) / s);
    r.p_less = 1 - NormalCdf((mu - r.u - 0.5) / s);
    r.p_greater = std::min(1.0, r.p_greater);
    r.p_less = std::min(1.0, r.p_less);
  }
  r.p_two_sided = std::min(1.0, 2 * std::min(r.p_greater, r.p_less));
  return r;
}

Interval BootstrapMedianRatioCI(const std::vector<double>& base, const std::vector<double>& cand,
                                double confidence, int resamples, Rng& rng) {
  if (base.empty() || cand.empty() || resamples <= 0) return {};
  std::vector<double> ratios;
  ratios.reserve(static_cast<size_t>(resamples));
  std::vector<double> b(base.size());
  std::vector<double> c(cand.size());
  for (int r = 0; r < resamples; ++r) {
    for (double& v : b) v = base[rng.Next() % base.size()];
    for (double& v : c) v = cand[rng.Next() % cand.size()];
    const double mb = Median(b);
    if (mb == 0) return {};
    ratios.push_back(Median(c) / mb);
  }
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1 - confidence) / 2;
  return {SortedQuantile(ratios, tail), SortedQuantile(ratios, 1 - tail)};
}

double MinimumDetectableEffect(double cv, int n_per_arm, double alpha, double power) {
  if (n_per_arm <= 0) return INFINITY;
  const double z = NormalQuantile(1 - alpha) + NormalQuantile(power);
  return z * cv * std::sqrt(2.0 / n_per_arm);
}

int RequiredRepetitions(double cv, double effect, double alpha, double power) {
  if (effect <= 0) return std::numeric_limits<int>::max();
  const double z = NormalQuantile(1 - alpha) + NormalQuantile(power);
  const double n = std::ceil(2 * z * z * cv * cv / (effect * effect) - 1e-9);
  if (n > 1e9) return std::numeric_limits<int>::max();
  return std::max(2, static_cast<int>(n));
}

std::vector<bool> OutlierFlags(const std::vector<double>& v, double mads) {
  std::vector<bool> flags(v.size(), false);
  if (v.size() < 3) return flags;
  const double median = Median(v);
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::fabs(x - median));
  double scale = 1.4826 * Median(dev);
  if (scale == 0) scale = 1.2533 * Mean(dev);
  if (scale == 0) return flags;
  for (size_t i = 0; i < v.size(); ++i) flags[i] = dev[i] > mads * scale;
  return flags;
}

int CountOutliers(const std::vector<double>& v, double mads) {
  const std::vector<bool> flags = OutlierFlags(v, mads);
  return static_cast<int>(std::count(flags.begin(), flags.end(), true));
}

}  // namespace arbor
