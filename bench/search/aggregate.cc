#include "bench/search/aggregate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

namespace arbor::search {
namespace {

using RunKey = std::tuple<std::string, uint64_t, int>;  // landscape, seed, budget

std::string Fixed(double v, int digits) {
  if (std::isnan(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string Percent(int part, int whole) {
  return whole == 0 ? "-" : Fixed(100.0 * part / whole, 1) + "%";
}

// `m` is at least as good as greedy's run `g`: within the tolerance of the optimum's gain, or
// (no gain to share: the baseline is the optimum) of greedy's true value.
bool AtLeast(const RunMetrics& m, const RunMetrics& g) {
  if (!std::isnan(m.gain) && !std::isnan(g.gain)) return m.gain >= g.gain - kGreedyTolerance;
  return m.true_value >= g.true_value * (1 - 1e-9);
}

}  // namespace

std::vector<Aggregate> AggregateRuns(const std::vector<RunMetrics>& rows) {
  std::map<RunKey, const RunMetrics*> greedy;
  for (const RunMetrics& m : rows) {
    if (m.policy == "greedy" && m.error.empty()) greedy[{m.landscape, m.seed, m.budget}] = &m;
  }
  std::vector<Aggregate> out;
  std::map<std::pair<std::string, int>, std::vector<const RunMetrics*>> groups;
  for (const RunMetrics& m : rows) {
    auto key = std::make_pair(m.policy, m.budget);
    if (groups.find(key) == groups.end()) out.push_back({m.policy, m.budget});
    groups[key].push_back(&m);
  }
  for (Aggregate& a : out) {
    std::vector<double> gains, used, runs;
    for (const RunMetrics* m : groups[{a.policy, a.budget}]) {
      if (!m->error.empty()) {
        ++a.errors;
        continue;
      }
      ++a.runs;
      if (!std::isnan(m->gain)) gains.push_back(m->gain);
      used.push_back(m->evals_used);
      runs.push_back(static_cast<double>(m->runs));
      a.crashes_mean += m->crashes;
      a.broken += m->final_broken;
      a.inflated += m->final_inflated;
      auto g = greedy.find({m->landscape, m->seed, m->budget});
      if (g != greedy.end()) {
        ++a.compared;
        a.at_least_greedy += AtLeast(*m, *g->second);
      }
    }
    if (a.runs > 0) a.crashes_mean /= a.runs;
    a.gain_median = Quantile(gains, 0.5);
    a.gain_p25 = Quantile(gains, 0.25);
    a.gain_p75 = Quantile(gains, 0.75);
    a.used_median = Quantile(used, 0.5);
    a.bench_runs_median = Quantile(runs, 0.5);
  }
  return out;
}

std::string AggregateTable(const std::vector<Aggregate>& aggregates, int budget) {
  char line[256];
  std::string out;
  std::snprintf(line, sizeof line, "%-22s %6s %5s %-20s %8s %6s %8s %7s %5s %7s\n", "policy",
                "budget", "runs", "gain med [p25,p75]", ">=greedy", "broken", "inflated", "crashes",
                "used", "b.runs");
  out += line;
  for (const Aggregate& a : aggregates) {
    if (a.budget != budget) continue;
    std::string gain =
        Fixed(a.gain_median, 3) + " [" + Fixed(a.gain_p25, 2) + "," + Fixed(a.gain_p75, 2) + "]";
    std::snprintf(line, sizeof line, "%-22s %6d %5d %-20s %8s %6d %8d %7.2f %5.0f %7.0f%s\n",
                  a.policy.c_str(), a.budget, a.runs, gain.c_str(),
                  Percent(a.at_least_greedy, a.compared).c_str(), a.broken, a.inflated,
                  a.crashes_mean, a.used_median, a.bench_runs_median,
                  a.errors ? (" ERRORS: " + std::to_string(a.errors)).c_str() : "");
    out += line;
  }
  return out;
}

std::string FeatureTable(const std::vector<RunMetrics>& rows,
                         const std::map<std::string, std::vector<std::string>>& features,
                         const std::vector<std::string>& feature_names, int budget) {
  // landscape → its features, policy order as first seen.
  std::map<std::string, std::vector<std::string>> of;
  for (const auto& [feature, landscapes] : features) {
    for (const std::string& l : landscapes) of[l].push_back(feature);
  }
  std::vector<std::string> policies;
  std::map<std::pair<std::string, std::string>, std::vector<double>> gains;  // policy, feature
  for (const RunMetrics& m : rows) {
    if (m.budget != budget || !m.error.empty()) continue;
    if (std::find(policies.begin(), policies.end(), m.policy) == policies.end()) {
      policies.push_back(m.policy);
    }
    if (std::isnan(m.gain)) continue;
    for (const std::string& f : of[m.landscape]) gains[{m.policy, f}].push_back(m.gain);
  }
  std::string out = "policy                ";
  std::string counts = "(landscapes)          ";
  char cell[64];
  for (const std::string& f : feature_names) {
    auto it = features.find(f);
    std::snprintf(cell, sizeof cell, " %*s", std::max<int>(5, f.size()), f.c_str());
    out += cell;
    std::snprintf(cell, sizeof cell, " %*zu", std::max<int>(5, f.size()),
                  it == features.end() ? size_t{0} : it->second.size());
    counts += cell;
  }
  out += "\n" + counts + "\n";
  for (const std::string& p : policies) {
    std::snprintf(cell, sizeof cell, "%-22s", p.c_str());
    out += cell;
    for (const std::string& f : feature_names) {
      std::snprintf(cell, sizeof cell, " %*s", std::max<int>(5, f.size()),
                    Fixed(Quantile(gains[{p, f}], 0.5), 3).c_str());
      out += cell;
    }
    out += "\n";
  }
  return out;
}

std::string StopReasons(const std::vector<RunMetrics>& rows, int budget) {
  std::vector<std::string> policies;
  std::map<std::string, std::map<std::string, int>> count;
  for (const RunMetrics& m : rows) {
    if (m.budget != budget || m.stop.empty()) continue;
    if (count.find(m.policy) == count.end()) policies.push_back(m.policy);
    ++count[m.policy][m.stop];
  }
  std::string out;
  for (const std::string& p : policies) {
    out += "  " + p + ":";
    for (const auto& [reason, n] : count[p]) out += " " + reason + " " + std::to_string(n);
    out += "\n";
  }
  return out;
}

std::string Criteria(const std::vector<Aggregate>& aggregates, const std::string& policy) {
  std::vector<const Aggregate*> mine;
  bool has_greedy = false;
  for (const Aggregate& a : aggregates) {
    if (a.policy == policy) mine.push_back(&a);
    has_greedy |= a.policy == "greedy";
  }
  if (mine.empty() || !has_greedy) return "";
  std::string out;
  const Aggregate* largest = mine.front();
  int bad = 0;
  std::string per_budget;
  for (const Aggregate* a : mine) {
    const bool ok = a->compared > 0 && a->at_least_greedy >= 0.9 * a->compared;
    out += "  " + policy + " >= greedy at budget " + std::to_string(a->budget) + ": " +
           Percent(a->at_least_greedy, a->compared) +
           " of landscapes (need >= 90%): " + (ok ? "PASS" : "FAIL") + "\n";
    if (a->budget > largest->budget) largest = a;
    bad += a->broken + a->inflated;
    per_budget += (per_budget.empty() ? "" : ", ") + std::to_string(a->broken + a->inflated) +
                  " at budget " + std::to_string(a->budget);
  }
  out += "  " + policy + " median gain at budget " + std::to_string(largest->budget) + ": " +
         Fixed(largest->gain_median, 3) +
         " of the optimum's (need >= 0.95): " + (largest->gain_median >= 0.95 ? "PASS" : "FAIL") +
         "\n";
  out += "  " + policy + " broken or inflated final states: " + per_budget +
         " (need 0): " + (bad == 0 ? "PASS" : "FAIL") + "\n";
  return out;
}

}  // namespace arbor::search
