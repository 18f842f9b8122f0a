#include "bench/search/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace arbor::search {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// What a state is worth to the user: its true value, or the baseline's when it is broken (a
// crashing or wrong configuration cannot be shipped; the user is back at the baseline).
double Worth(const Landscape& l, const Truth& t, const Config& c) {
  return l.Broken(c) ? t.baseline : l.TrueValue(c);
}

}  // namespace

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

RunMetrics Measure(const Landscape& l, const Truth& truth, const RunResult& r, int budget) {
  RunMetrics m;
  m.budget = budget;
  m.error = r.error;
  m.crashes = r.crashes;
  m.accuracy_failures = r.accuracy_failures;
  m.runs = r.runs;
  m.stop = r.stop;
  const int n = std::min(budget, static_cast<int>(r.states.size()));
  m.evals_used = n;
  const double goal = truth.baseline + 0.9 * (truth.optimum - truth.baseline);
  Config previous;
  double previous_value = truth.baseline;
  for (int k = 0; k < n; ++k) {
    const Config& s = r.states[k];
    double worth = Worth(l, truth, s);
    if (s != previous) {
      ++m.keeps;
      if (l.Broken(s) || l.TrueValue(s) <= previous_value) ++m.false_keeps;
      previous = s;
      previous_value = l.TrueValue(s);
    }
    if (m.evals_to_90 < 0 && worth >= goal && truth.optimum > truth.baseline) m.evals_to_90 = k + 1;
  }
  m.final_broken = l.Broken(previous);
  m.final_inflated = l.Inflated(previous);
  m.true_value = Worth(l, truth, previous);
  m.score = kNaN;
  m.gain = truth.optimum > truth.baseline
               ? (m.true_value - truth.baseline) / (truth.optimum - truth.baseline)
               : kNaN;
  return m;
}

void Normalize(const std::vector<Truth>& truths, const std::vector<std::string>& names,
               std::vector<RunMetrics>* rows) {
  std::map<std::pair<std::string, int>, std::vector<double>> random;
  for (const RunMetrics& m : *rows) {
    if (m.policy == "random" && m.error.empty())
      random[{m.landscape, m.budget}].push_back(m.true_value);
  }
  for (RunMetrics& m : *rows) {
    auto it = random.find({m.landscape, m.budget});
    auto name = std::find(names.begin(), names.end(), m.landscape);
    if (it == random.end() || name == names.end()) continue;
    double zero = Quantile(it->second, 0.5);
    double one = truths[name - names.begin()].optimum;
    m.score = one - zero > 1e-9 * std::max(1.0, one) ? (m.true_value - zero) / (one - zero) : kNaN;
  }
}

std::vector<Summary> Summarize(const std::vector<RunMetrics>& rows) {
  std::vector<Summary> out;
  std::map<std::tuple<std::string, std::string, int>, std::vector<const RunMetrics*>> groups;
  std::vector<std::tuple<std::string, std::string, int>> order;
  for (const RunMetrics& m : rows) {
    auto key = std::make_tuple(m.landscape, m.policy, m.budget);
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(&m);
  }
  for (const auto& key : order) {
    const auto& g = groups[key];
    Summary s;
    std::tie(s.landscape, s.policy, s.budget) = key;
    std::vector<double> scores, gains, to90, runs, used;
    for (const RunMetrics* m : g) {
      if (!m->error.empty()) {
        ++s.errors;
        continue;
      }
      ++s.seeds;
      if (!std::isnan(m->score)) scores.push_back(m->score);
      if (!std::isnan(m->gain)) gains.push_back(m->gain);
      if (m->evals_to_90 > 0) to90.push_back(m->evals_to_90);
      s.false_keeps_mean += m->false_keeps;
      s.crashes_mean += m->crashes;
      s.broken_finals += m->final_broken;
      s.inflated_finals += m->final_inflated;
      runs.push_back(static_cast<double>(m->runs));
      used.push_back(m->evals_used);
    }
    if (s.seeds > 0) {
      s.false_keeps_mean /= s.seeds;
      s.crashes_mean /= s.seeds;
    }
    s.score_median = Quantile(scores, 0.5);
    s.score_p25 = Quantile(scores, 0.25);
    s.score_p75 = Quantile(scores, 0.75);
    s.gain_median = Quantile(gains, 0.5);
    s.gain_p25 = Quantile(gains, 0.25);
    s.gain_p75 = Quantile(gains, 0.75);
    s.reached_90 = static_cast<int>(to90.size());
    s.evals_to_90_median = to90.empty() ? -1 : Quantile(to90, 0.5);
    s.runs_median = Quantile(runs, 0.5);
    s.evals_used_median = Quantile(used, 0.5);
    out.push_back(s);
  }
  return out;
}

}  // namespace arbor::search
