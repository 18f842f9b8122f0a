// The search benchmark's own policies and metrics on small hand-built landscapes: each test
// asserts a behaviour that the comparison relies on (what is kept, what is counted).
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "bench/search/arbor_policy.h"
#include "bench/search/baselines.h"
#include "bench/search/metrics.h"

namespace arbor::search {
namespace {

LandscapeAction Action(std::string id, std::string category, Effects effects, double prior) {
  LandscapeAction a;
  a.id = std::move(id);
  a.layer = "application";
  a.category = std::move(category);
  a.effects = std::move(effects);
  a.prior.speedup = prior;
  return a;
}

// compute is 80% of the time, io 20%. fast.compute: compute ×4 (the real win); slow.io: io ×0.5
// (a regression that claims a big prior); crash.always crashes; io.cache: io ×2.
Landscape Small(double cv) {
  Landscape l;
  l.name = "small";
  l.base_value = 100;
  l.repetitions = 5;
  l.noise.cv = cv;
  l.components = {{"compute", "kernel", 0.8}, {"io", "system", 0.2}};
  l.actions.push_back(Action("slow.io", "io", {{"io", 0.5}}, 3.0));
  l.actions.push_back(Action("fast.compute", "compute", {{"compute", 4}}, 2.0));
  LandscapeAction crash = Action("crash.always", "mem", {{"compute", 1.5}}, 1.5);
  crash.crash_rate = 1;
  l.actions.push_back(crash);
  l.actions.push_back(Action("io.cache", "io", {{"io", 2}}, 1.2));
  for (auto& a : l.actions) a.prior.targets = {a.effects.begin()->first};
  return l;
}

Truth TruthOf(const Landscape& l) {
  Optimum o = FindOptimum(l);
  return Truth{l.TrueValue({}), o.value, o.exact};
}

TEST(SearchMetrics, FalseKeepsBrokenFinalsAndEvalsTo90AreOnTheTruth) {
  Landscape l = Small(0);
  Truth t = TruthOf(l);
  ASSERT_TRUE(t.exact);
  EXPECT_EQ(t.optimum, l.TrueValue({{"fast.compute", "on"}, {"io.cache", "on"}}));
  RunResult r;
  r.states = {{{"slow.io", "on"}},                                // a false keep
              {{"slow.io", "on"}, {"fast.compute", "on"}},        // a real one
              {{"fast.compute", "on"}, {"io.cache", "on"}},       // the optimum: 90% reached
              {{"fast.compute", "on"}, {"crash.always", "on"}}};  // broken: a false keep
  r.crashes = 1;
  RunMetrics m = Measure(l, t, r, 10);
  EXPECT_EQ(m.evals_used, 4);
  EXPECT_EQ(m.keeps, 4);
  EXPECT_EQ(m.false_keeps, 2);
  EXPECT_EQ(m.evals_to_90, 3);
  EXPECT_TRUE(m.final_broken);
  EXPECT_EQ(m.true_value, t.baseline);   // a broken state ships nothing better than the baseline
  RunMetrics at2 = Measure(l, t, r, 2);  // the budget cuts the run
  EXPECT_EQ(at2.evals_to_90, -1);
  EXPECT_FALSE(at2.final_broken);
  EXPECT_DOUBLE_EQ(at2.true_value, l.TrueValue({{"slow.io", "on"}, {"fast.compute", "on"}}));
}

TEST(SearchMetrics, ScoresAreZeroAtRandomsMedianAndOneAtTheOptimum) {
  Landscape l = Small(0);
  Truth t = TruthOf(l);
  std::vector<RunMetrics> rows(4);
  double values[] = {100, 120, 140};  // random's median: 120
  for (int i = 0; i < 3; ++i) {
    rows[i].landscape = "small";
    rows[i].policy = "random";
    rows[i].budget = 30;
    rows[i].true_value = values[i];
  }
  rows[3] = rows[0];
  rows[3].policy = "arbor";
  rows[3].true_value = t.optimum;
  Normalize({t}, {"small"}, &rows);
  EXPECT_DOUBLE_EQ(rows[1].score, 0);
  EXPECT_DOUBLE_EQ(rows[3].score, 1);
  EXPECT_LT(rows[0].score, 0);
  auto summary = Summarize(rows);
  ASSERT_EQ(summary.size(), 2u);
  EXPECT_EQ(summary[0].seeds, 3);
  EXPECT_DOUBLE_EQ(summary[0].score_median, 0);
}

TEST(SearchPolicies, GreedyFollowsThePriorsAndKeepsWhatMeasuredBetterOnce) {
  Landscape l = Small(0);
  RunResult r = GreedyPolicy().Run(l, 1, 10);
  // slow.io first (prior ×3): reverted; then fast.compute: kept; crash.always: crashed;
  // io.cache: kept. Nothing is left after four evaluations.
  ASSERT_EQ(r.states.size(), 4u);
  EXPECT_TRUE(r.states[0].empty());
  EXPECT_EQ(r.states[1], (Config{{"fast.compute", "on"}}));
  EXPECT_EQ(r.states[3], (Config{{"fast.compute", "on"}, {"io.cache", "on"}}));
  EXPECT_EQ(r.crashes, 1);
  EXPECT_EQ(r.runs, 5u + 5 + 5 + 1 + 5);  // baseline, three full evaluations, one crashed run
}

TEST(SearchPolicies, GreedyKeepsNoiseThatMeasuredBetterOnce) {
  Landscape l = Small(0.05);
  // Promised ×2.5, truly neutral: whether it measures better once is a coin toss.
  l.actions.push_back(Action("neutral.x", "misc", {{"io", 1.0}}, 2.5));
  int false_keeps = 0;
  Truth t = TruthOf(l);
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    false_keeps += Measure(l, t, GreedyPolicy().Run(l, seed, 10), 10).false_keeps;
  }
  EXPECT_GT(false_keeps, 0);
}

TEST(SearchPolicies, RandomAndBanditAreDeterministicPerSeedAndStayInBudget) {
  Landscape l = Small(0.05);
  for (Policy* p : std::initializer_list<Policy*>{new RandomPolicy, new BanditPolicy}) {
    RunResult a = p->Run(l, 7, 6);
    RunResult b = p->Run(l, 7, 6);
    RunResult c = p->Run(l, 8, 6);
    EXPECT_LE(a.states.size(), 6u) << p->name();
    EXPECT_EQ(a.states, b.states) << p->name();
    EXPECT_EQ(a.runs, b.runs) << p->name();
    EXPECT_TRUE(a.states != c.states || a.runs != c.runs || a.crashes != c.crashes) << p->name();
    delete p;
  }
}

TEST(SearchPolicies, TheEngineFindsTheWinsKeepsNoLoserAndRecordsItsCrash) {
  Landscape l = Small(0.02);
  Truth t = TruthOf(l);
  ArborPolicy arbor(ArborVariants()[0]);
  RunResult r = arbor.Run(l, 3, 10);
  ASSERT_TRUE(r.error.empty()) << r.error;
  ASSERT_FALSE(r.states.empty());
  EXPECT_LE(r.states.size(), 10u);
  EXPECT_EQ(r.states.back(), (Config{{"fast.compute", "on"}, {"io.cache", "on"}}));
  RunMetrics m = Measure(l, t, r, 10);
  EXPECT_EQ(m.false_keeps, 0);
  EXPECT_FALSE(m.final_broken);
  EXPECT_EQ(r.crashes, 1);
  EXPECT_GT(r.runs, 5u * r.states.size());  // the Critic re-measures the incumbent
  RunResult again = ArborPolicy(ArborVariants()[0]).Run(l, 3, 10);
  EXPECT_EQ(again.states, r.states);  // the same seed, the same campaign
  EXPECT_EQ(again.runs, r.runs);
}

TEST(SearchPolicies, WithoutConstraintsTheEngineRunsEveryCrashingValue) {
  Landscape l = Small(0.02);
  LandscapeAction tile = Action("kernel.tile", "tile", {{"compute", 1.0}}, 1.5);
  tile.prior.targets = {"compute"};
  for (std::string v : {"8", "16", "32", "64"}) {
    ActionValue value{v, {{"compute", 0.9}}, v == "8" ? 0.0 : 1.0, 0};
    tile.values.push_back(value);
  }
  l.actions.push_back(tile);
  auto variants = ArborVariants();
  auto named = [&](const std::string& name) {
    for (const auto& v : variants) {
      if (v.name == name) return v;
    }
    return variants[0];
  };
  RunResult with = ArborPolicy(named("arbor")).Run(l, 1, 12);
  RunResult without = ArborPolicy(named("arbor-no-constraints")).Run(l, 1, 12);
  EXPECT_LT(with.crashes, without.crashes);
}

TEST(SearchPolicies, EveryVariantHasItsOwnName) {
  std::set<std::string> names;
  for (const auto& v : ArborVariants()) names.insert(v.name);
  EXPECT_EQ(names.size(), 11u);
  EXPECT_TRUE(names.count("arbor-warm-kb"));
  EXPECT_TRUE(names.count("arbor-no-pairs"));
  EXPECT_TRUE(names.count("arbor-hillclimb"));
}

}  // namespace
}  // namespace arbor::search
