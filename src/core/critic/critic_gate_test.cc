#include "core/critic/critic_gate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/critic/statistics.h"
#include "core/model/rng.h"

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

class CriticGateTest : public ::testing::Test {
 protected:
  GateInput Input(const std::vector<double>& base, const std::vector<double>& cand) {
    GateInput in;
    in.metric = &metric_;
    in.critic = &critic_;
    in.parent = Samples(base, "base");
    in.candidate = Samples(cand);
    in.seed = 9;
    return in;
  }
  MetricSpec metric_;  // repetitions 5, goal max
  CriticSpec critic_;  // alpha 0.05, min_effect 0.01, max_cv 0.05
  CriticGate gate_;
};

// The confirmation replicates a significant A/B: at its last look it keeps a gain of at least
// min_effect within replication_alpha (0.20), which alone would not be significant; a plain A/B
// with the same samples is not kept, and neither is a replication below min_effect.
TEST_F(CriticGateTest, AReplicationKeepsTheSameDirectionAndSizeAtItsLastLook) {
  std::vector<double> base;
  for (int i = 0; i < 20; ++i) base.push_back(100 + (i % 10) - 4.5);  // 4 looks of 5
  auto shifted = [&](double by) {
    std::vector<double> c = base;
    for (double& x : c) x += by;
    return c;
  };
  GateInput in = Input(base, shifted(2.5));
  const Verdict plain = gate_.Judge(in);
  ASSERT_EQ(plain.round, plain.max_rounds);
  ASSERT_FALSE(plain.keep) << plain.reason;
  ASSERT_GT(plain.p_value, NominalAlpha(critic_.alpha, 4, 4)) << plain.reason;
  ASSERT_LE(plain.p_value, gate_.options().replication_alpha) << plain.reason;
  in.replication = true;
  const Verdict replicated = gate_.Judge(in);
  EXPECT_TRUE(replicated.keep) << replicated.reason;
  EXPECT_NE(replicated.reason.find("replicates"), std::string::npos) << replicated.reason;

  GateInput small = Input(base, shifted(0.5));  // +0.5%: the same direction, not the size
  small.replication = true;
  EXPECT_FALSE(gate_.Judge(small).keep);
  GateInput early = Input({base.begin(), base.begin() + 5}, shifted(2.5));
  early.candidate.resize(5);
  early.replication = true;
  EXPECT_EQ(gate_.Judge(early).decision, Decision::kMore) << "only the last look relaxes the level";
}

TEST(NominalAlphaTest, PocockSpendingSumsToAlpha) {
  double sum = 0;
  for (int k = 1; k <= 4; ++k) sum += NominalAlpha(0.05, k, 4);
  EXPECT_NEAR(sum, 0.05, 1e-15);
  // α·ln(1 + (e − 1)/4) = 0.05 · 0.357374.
  EXPECT_NEAR(NominalAlpha(0.05, 1, 4), 0.0178687, 1e-6);
  EXPECT_GT(NominalAlpha(0.05, 1, 4), NominalAlpha(0.05, 4, 4));  // front-loaded
  EXPECT_DOUBLE_EQ(NominalAlpha(0.05, 1, 1), 0.05);
  EXPECT_EQ(NominalAlpha(0.05, 5, 4), 0);
}

TEST(SpentAlphaTest, LooksAnywhereSpendAtMostAlphaInAll) {
  // Looks at 3, 6, 12 and 20 of 20 runs: the levels sum to α exactly, whatever the fractions.
  const double fractions[] = {0, 3.0 / 20, 6.0 / 20, 12.0 / 20, 1};
  double sum = 0;
  for (int k = 1; k < 5; ++k)
    sum += SpentAlpha(0.05, fractions[k]) - SpentAlpha(0.05, fractions[k - 1]);
  EXPECT_NEAR(sum, 0.05, 1e-15);
  // The same function as the rounds: a quarter of the runs spends what round 1 of 4 does.
  EXPECT_NEAR(SpentAlpha(0.05, 0.25), NominalAlpha(0.05, 1, 4), 1e-15);
  EXPECT_DOUBLE_EQ(SpentAlpha(0.05, 2), 0.05);  // clamped
}

TEST_F(CriticGateTest, ALookByInformationSpendsItsShareAndTheLastOneDecides) {
  // Three candidate runs above all eight base runs: p = 1/165.
  GateInput in = Input({100, 101, 99, 100, 102, 98, 100.5, 99.5}, {110, 111, 109});
  in.info = 3.0 / 20;
  in.max_samples = 20;
  Verdict v = gate_.Judge(in);
  EXPECT_EQ(v.decision, Decision::kKeep) << v.reason;  // 1/165 ≤ α(0.15) = 0.0115
  EXPECT_NE(v.reason.find("at 15% of the runs"), std::string::npos) << v.reason;
  // The same look among 160 runs spends α(3/160) = 0.0016: not enough yet.
  in.info = 3.0 / 160;
  in.max_samples = 160;
  v = gate_.Judge(in);
  EXPECT_EQ(v.decision, Decision::kMore) << v.reason;
  // The last look always decides.
  in.info = 1;
  in.info_before = 0.5;
  in.candidate = Samples({100, 101, 99});
  v = gate_.Judge(in);
  EXPECT_NE(v.decision, Decision::kMore) << v.reason;
}

TEST_F(CriticGateTest, ACandidateThatCannotReachMinEffectIsStoppedEarly) {
  // A clear loser at the first look of 20 runs: futile, not "measure on".
  GateInput in = Input({100, 101, 99, 100, 102, 98, 100.5, 99.5}, {96, 97, 95.5});
  in.info = 3.0 / 20;
  in.max_samples = 20;
  Verdict v = gate_.Judge(in);
  EXPECT_NE(v.decision, Decision::kMore) << v.reason;
  EXPECT_FALSE(v.keep);
  // A candidate at +1.5% with 1% noise has a fair chance by the last look: measured on.
  in.candidate = Samples({101.5, 102.5, 100.5});
  v = gate_.Judge(in);
  EXPECT_EQ(v.decision, Decision::kMore) << v.reason;
  // At +0.2% among 3% noise, with few runs left, it cannot get there: futile, and more runs
  // could still tell (an estimate above zero), so it stays open for a re-measure.
  in = Input({100, 97, 103, 99, 101, 104, 96, 100, 98, 102, 100, 101},
             {100.2, 103, 97.4, 100.3, 99.9, 101.2});
  in.info = 6.0 / 8;
  in.info_before = 3.0 / 8;
  in.max_samples = 8;
  v = gate_.Judge(in);
  EXPECT_EQ(v.decision, Decision::kFutile) << v.reason;
  EXPECT_TRUE(v.inconclusive);
  EXPECT_NE(v.reason.find("cannot reach"), std::string::npos) << v.reason;
}

TEST(ConditionalPowerTest, FallsWithTheEstimateAndRisesWithTheRunsLeft) {
  const std::vector<double> base = {100, 103, 97, 101, 99, 102, 98, 100};
  auto cand = [](double level) {
    return std::vector<double>{level * 1.01, level * 0.99, level * 1.02, level * 0.98};
  };
  const double win = ConditionalPower(base, cand(105), Goal::kMax, 0.01, 0.01, 20);
  const double null = ConditionalPower(base, cand(100), Goal::kMax, 0.01, 0.01, 20);
  const double loss = ConditionalPower(base, cand(95), Goal::kMax, 0.01, 0.01, 20);
  EXPECT_GT(win, 0.9);
  EXPECT_GT(win, null);
  EXPECT_GT(null, loss);
  EXPECT_LT(loss, 0.01);
  EXPECT_GT(ConditionalPower(base, cand(100.5), Goal::kMax, 0.01, 0.01, 200),
            ConditionalPower(base, cand(100.5), Goal::kMax, 0.01, 0.01, 8));
  // Goal-aware: the loser for a rate is a winner for a time.
  EXPECT_GT(ConditionalPower(base, cand(95), Goal::kMin, 0.01, 0.01, 20), 0.9);
  // A noise-free comparison: certain either way.
  EXPECT_EQ(ConditionalPower({100, 100}, {102, 102}, Goal::kMax, 0.01, 0.01, 20), 1);
  EXPECT_EQ(ConditionalPower({100, 100}, {100.5, 100.5}, Goal::kMax, 0.01, 0.01, 20), 0);
}

TEST_F(CriticGateTest, KeepsAClearWinWithInterval) {
  const Verdict v = gate_.Judge(Input({100, 101, 99, 98, 102}, {110, 111, 109, 112, 108}));
  EXPECT_TRUE(v.keep) << v.reason;
  EXPECT_EQ(v.decision, Decision::kKeep);
  EXPECT_EQ(v.more_samples, 0);
  EXPECT_DOUBLE_EQ(v.p_value, 1.0 / 252);
  EXPECT_NEAR(v.gain, 0.1, 1e-12);
  EXPECT_NEAR(v.speedup, 1.1, 1e-12);
  EXPECT_LE(v.ci_low, 1.1);
  EXPECT_GE(v.ci_high, 1.1);
  EXPECT_GT(v.ci_low, 1.0);
  EXPECT_EQ(v.round, 1);
  EXPECT_EQ(v.max_rounds, 4);
  EXPECT_NE(v.reason.find("round 1/4"), std::string::npos) << v.reason;
  // Deterministic: the same seed gives the same verdict.
  const Verdict again = gate_.Judge(Input({100, 101, 99, 98, 102}, {110, 111, 109, 112, 108}));
  EXPECT_EQ(again.ci_low, v.ci_low);
  EXPECT_EQ(again.reason, v.reason);
}

TEST_F(CriticGateTest, GoalMinInvertsTheRatio) {
  metric_.goal = Goal::kMin;
  const Verdict v = gate_.Judge(Input({10, 10.1, 9.9, 10, 10.2}, {8, 8.1, 7.9, 8, 8.2}));
  EXPECT_TRUE(v.keep) << v.reason;
  EXPECT_NEAR(v.speedup, 10.0 / 8, 1e-12);
  EXPECT_GT(v.ci_low, 1.0);
  EXPECT_LE(v.ci_low, v.speedup);
  EXPECT_GE(v.ci_high, v.speedup);
  // The same numbers are a regression when more is better.
  metric_.goal = Goal::kMax;
  const Verdict w = gate_.Judge(Input({10, 10.1, 9.9, 10, 10.2}, {8, 8.1, 7.9, 8, 8.2}));
  EXPECT_FALSE(w.keep);
  EXPECT_EQ(w.decision, Decision::kRevert);
  EXPECT_NE(w.reason.find("significantly below"), std::string::npos) << w.reason;
}

TEST_F(CriticGateTest, InconclusiveAsksForMoreThenDecidesAtTheLastLook) {
  const std::vector<double> base = {100, 103, 97, 101, 99};
  const std::vector<double> cand = {102, 98, 104, 100, 101};
  Verdict v = gate_.Judge(Input(base, cand));
  EXPECT_FALSE(v.keep);
  EXPECT_EQ(v.decision, Decision::kMore) << v.reason;
  EXPECT_EQ(v.more_samples, 5);
  EXPECT_EQ(v.ci_high, 0);  // no interval while measuring
  std::vector<double> b4;
  std::vector<double> c4;
  for (int i = 0; i < 4; ++i) {
    b4.insert(b4.end(), base.begin(), base.end());
    c4.insert(c4.end(), cand.begin(), cand.end());
  }
  v = gate_.Judge(Input(b4, c4));
  EXPECT_EQ(v.round, 4);
  EXPECT_EQ(v.more_samples, 0);
  EXPECT_FALSE(v.keep);
  EXPECT_EQ(v.decision, Decision::kRevert) << v.reason;
}

TEST_F(CriticGateTest, RoundsFollowTheRepetitionsOfTheInput) {
  const std::vector<double> base = {100, 103, 97, 101, 99, 100.5, 102, 98, 101.5, 99.5};
  const std::vector<double> cand = {102, 98, 104, 100, 101, 99.2, 103, 100.2, 97.7, 101.7};
  GateInput in = Input(base, cand);
  EXPECT_EQ(gate_.Judge(in).round, 2);  // 10 per arm at metric.repetitions 5
  in.repetitions = 10;                  // raised by the noise pre-flight
  const Verdict v = gate_.Judge(in);
  EXPECT_EQ(v.round, 1);
  EXPECT_EQ(v.decision, Decision::kMore) << v.reason;
  EXPECT_EQ(v.more_samples, 10);
}

TEST_F(CriticGateTest, NoisyAtTheLastLook) {
  // The same 20 widely spread values (CV ≈ 9%) in both arms, in another order.
  std::vector<double> base;
  std::vector<double> cand;
  for (int i = 0; i < 20; ++i) {
    base.push_back(100 * (1 + 0.15 * ((i * 7) % 20 - 9.5) / 9.5));
    cand.push_back(100 * (1 + 0.15 * ((i * 3) % 20 - 9.5) / 9.5));
  }
  const Verdict v = gate_.Judge(Input(base, cand));
  EXPECT_EQ(v.decision, Decision::kNoisy) << v.reason;
  EXPECT_GT(v.cv, critic_.max_cv);
  EXPECT_FALSE(v.keep);
}

TEST_F(CriticGateTest, SignificantButTooSmallIsReverted) {
  const Verdict v =
      gate_.Judge(Input({100, 100.1, 99.9, 100.05, 99.95}, {100.5, 100.6, 100.4, 100.55, 100.45}));
  EXPECT_LT(v.p_value, 0.01);
  EXPECT_FALSE(v.keep);
  EXPECT_EQ(v.decision, Decision::kRevert);
  EXPECT_NE(v.reason.find("below min_effect"), std::string::npos) << v.reason;
}

TEST_F(CriticGateTest, GuardsVetoAndOutliersAreFlagged) {
  Guard g;
  g.name = "p99_ms";
  g.max = 50;
  metric_.guards.push_back(g);
  GateInput in = Input({100, 101, 99, 98, 102}, {110, 111, 109, 112, 108});
  for (Sample& s : in.candidate) s.extra["p99_ms"] = 60;
  Verdict v = gate_.Judge(in);
  EXPECT_FALSE(v.keep);
  EXPECT_EQ(v.decision, Decision::kRevert);
  EXPECT_NE(v.reason.find("guard p99_ms 60 > max 50"), std::string::npos) << v.reason;
  for (Sample& s : in.candidate) s.extra["p99_ms"] = 40;
  in.parent = Samples({100, 101, 99, 100, 102, 100, 101, 160});
  in.candidate = Samples({110, 111, 109, 112, 108, 110, 111, 110});
  for (Sample& s : in.candidate) s.extra["p99_ms"] = 40;
  v = gate_.Judge(in);
  EXPECT_TRUE(v.keep) << v.reason;
  EXPECT_EQ(v.outliers, 1);
  EXPECT_NE(v.reason.find("1 outlier(s) flagged"), std::string::npos) << v.reason;
}

TEST_F(CriticGateTest, NoSamplesIsARevert) {
  const Verdict v = gate_.Judge(Input({}, {1, 2}));
  EXPECT_FALSE(v.keep);
  EXPECT_EQ(v.decision, Decision::kRevert);
  EXPECT_EQ(v.reason, "no samples");
}

TEST(AssessNoiseTest, QuietNoisyAndCappedButNeverRefused) {
  CriticSpec critic;         // max_cv 0.05
  critic.min_effect = 0.05;  // the power rule (next test) asks for fewer runs than max_cv here
  NoiseReport r = AssessNoise({100, 102, 98, 101, 99, 100, 101, 99, 100, 100}, critic, 5);
  EXPECT_LT(r.cv, 0.02);
  EXPECT_EQ(r.recommended_repetitions, 5);
  EXPECT_FALSE(r.noisy);
  EXPECT_NEAR(r.mde, MinimumDetectableEffect(r.cv, 5, 0.05, kDesignPower), 1e-15);
  EXPECT_NE(r.message.find("5 repetitions"), std::string::npos) << r.message;
  // Median 100, MAD 5: robust CV 1.4826 · 5 / 100 = 7.4%.
  r = AssessNoise({95, 105, 95, 105, 95, 105, 95, 105, 100}, critic, 5);
  EXPECT_NEAR(r.cv, 1.4826 * 5 / 100, 1e-12);
  EXPECT_TRUE(r.noisy);
  EXPECT_FALSE(r.capped);
  EXPECT_EQ(r.recommended_repetitions, 11);  // ceil(5 · (0.07413 / 0.05)²)
  EXPECT_NE(r.message.find("raised from 5"), std::string::npos) << r.message;
  // CV ~30%: would need 176 > the cap of 8 × 5; capped, widened, still run.
  r = AssessNoise({70, 130, 70, 130, 70, 130, 70, 130, 100}, critic, 5);
  EXPECT_TRUE(r.capped);
  EXPECT_EQ(r.recommended_repetitions, 40);
  EXPECT_GT(r.mde, critic.min_effect);
  EXPECT_NE(r.message.find("widened"), std::string::npos) << r.message;
  r = AssessNoise({100}, critic, 5);
  EXPECT_FALSE(r.noisy);
  EXPECT_NE(r.message.find("at least 2"), std::string::npos);
}

TEST(AssessNoiseTest, TheLastLookSeesMinEffectAsOftenAsNot) {
  // CV 1.48% is within max_cv, but 5 runs per look leave the last look (20 per arm, at its
  // nominal level 0.0086) blind to a 1% gain: 2 · 2.382² · 0.0148² / 0.01² = 24.9 runs per arm,
  // 7 per look.
  CriticSpec critic;  // min_effect 0.01, alpha 0.05
  const std::vector<double> quiet = {100, 102, 98, 101, 99, 100, 101, 99, 100, 100};
  NoiseReport r = AssessNoise(quiet, critic, 5);
  EXPECT_FALSE(r.noisy);
  EXPECT_FALSE(r.capped);
  EXPECT_EQ(r.recommended_repetitions, 7);
  const double last = NominalAlpha(critic.alpha, 4, 4);
  EXPECT_LE(MinimumDetectableEffect(r.cv, 4 * 7, last, kMinEffectPower), critic.min_effect);
  EXPECT_GT(MinimumDetectableEffect(r.cv, 4 * 6, last, kMinEffectPower), critic.min_effect);
  EXPECT_NE(r.message.find("raised from 5"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("1.0% gain as often as not"), std::string::npos) << r.message;
  // A coarser min_effect needs no more than the campaign's own repetitions.
  critic.min_effect = 0.03;
  EXPECT_EQ(AssessNoise(quiet, critic, 5).recommended_repetitions, 5);
  // The time budget bounds it like any raise: 2 s runs, 48 s per evaluation = 6 at most.
  critic.min_effect = 0.01;
  r = AssessNoise(quiet, critic, 5, NoiseBudget{2.0, 48.0});
  EXPECT_EQ(r.recommended_repetitions, 6);
  EXPECT_TRUE(r.capped);
}

TEST(AssessNoiseTest, OneOutlierDoesNotInflateTheNoiseEstimate) {
  // 1% noise and one reading at 60% of the rest: the plain CV is ~13%, the robust one ~1%.
  CriticSpec critic;
  std::vector<double> v = {100, 101, 99, 100.5, 99.5, 100, 101, 99, 100, 60};
  EXPECT_GT(CoefficientOfVariation(v), 0.10);
  NoiseReport r = AssessNoise(v, critic, 5);
  EXPECT_LT(r.cv, 0.02);
  EXPECT_FALSE(r.noisy);
  EXPECT_EQ(r.recommended_repetitions, 5);
  EXPECT_EQ(r.outliers, 1);
  EXPECT_NE(r.message.find("1 outlier(s) flagged"), std::string::npos) << r.message;
}

TEST(AssessNoiseTest, TheTimeBudgetCapsTheRepetitions) {
  // Each run takes 2 s and each evaluation may take 60 s: 60 / (4 · 2) = 7 repetitions at most.
  CriticSpec critic;
  NoiseReport r =
      AssessNoise({90, 110, 90, 110, 90, 110, 90, 110, 100}, critic, 5, NoiseBudget{2.0, 60.0});
  EXPECT_EQ(r.cap, 7);
  EXPECT_TRUE(r.capped);
  EXPECT_EQ(r.recommended_repetitions, 7);
  // A budget too small for even the campaign's own repetitions never lowers them.
  r = AssessNoise({90, 110, 90, 110, 90, 110, 90, 110, 100}, critic, 5, NoiseBudget{2.0, 8.0});
  EXPECT_EQ(r.recommended_repetitions, 5);
}

// ---- Monte-Carlo proof of the required figures (docs/critic.md) -----------------------------

struct Rates {
  double keep = 0;          // fraction of trials kept
  double mean_per_arm = 0;  // samples measured per arm, averaged over trials
};

// Runs the gate's whole sequential protocol on lognormal samples with coefficient of variation
// `cv`; the candidate is `effect` faster (throughput × (1 + effect)). Every trial has its own
// seed, so any single trial can be replayed.
Rates Simulate(double cv, double effect, int trials, uint64_t seed) {
  MetricSpec metric;  // defaults: repetitions 5, goal max
  CriticSpec critic;  // defaults: alpha 0.05, min_effect 0.01, max_cv 0.05
  CriticOptions options;
  options.bootstrap_resamples = 0;  // the interval never changes a decision
  CriticGate gate(options);
  const double sigma = std::sqrt(std::log(1 + cv * cv));
  Rates rates;
  for (int t = 0; t < trials; ++t) {
    Rng rng(seed * 1000003 + static_cast<uint64_t>(t));
    GateInput in;
    in.metric = &metric;
    in.critic = &critic;
    in.seed = static_cast<uint64_t>(t);
    int batch = metric.repetitions;
    Verdict v;
    while (batch > 0) {
      for (int i = 0; i < batch; ++i) {  // interleaved: base, candidate, base, candidate …
        Sample b;
        b.value = 100 * std::exp(sigma * StandardNormal(rng));
        in.parent.push_back(b);
        Sample c;
        c.value = 100 * (1 + effect) * std::exp(sigma * StandardNormal(rng));
        in.candidate.push_back(c);
      }
      v = gate.Judge(in);
      batch = v.more_samples;
    }
    rates.keep += v.keep ? 1 : 0;
    rates.mean_per_arm += static_cast<double>(in.parent.size());
  }
  rates.keep /= trials;
  rates.mean_per_arm /= trials;
  return rates;
}

constexpr int kTrials = 2000;

TEST(CriticGateMonteCarloTest, RequiredFiguresAtThreePercentCv) {
  const Rates noop = Simulate(0.03, 0.0, kTrials, 1);
  const Rates win = Simulate(0.03, 0.05, kTrials, 2);
  std::printf("3%% CV: no-op kept %.2f%% (%.1f/arm), 5%% speedup kept %.2f%% (%.1f/arm)\n",
              100 * noop.keep, noop.mean_per_arm, 100 * win.keep, win.mean_per_arm);
  EXPECT_LE(noop.keep, 0.05);
  EXPECT_GE(win.keep, 0.95);
}

TEST(CriticGateMonteCarloTest, FalseKeepsStayBelowAlphaAtEveryNoiseLevel) {
  for (double cv : {0.01, 0.05, 0.10}) {
    EXPECT_LE(Simulate(cv, 0.0, kTrials, 3).keep, 0.05) << cv;
  }
}

// The table of docs/critic.md:
//   ./build-critic/core_test --gtest_also_run_disabled_tests
//       --gtest_filter='*DISABLED_OperatingCharacteristics*'   (one line)
TEST(CriticGateMonteCarloTest, DISABLED_OperatingCharacteristics) {
  const double effects[] = {0.0, 0.01, 0.02, 0.05, 0.10};
  std::printf("| CV | effect 0 | 1%% | 2%% | 5%% | 10%% |\n|---|---|---|---|---|---|\n");
  for (double cv : {0.01, 0.03, 0.05}) {
    std::printf("| %.0f%% |", 100 * cv);
    uint64_t seed = 100;
    for (double effect : effects) {
      const Rates r = Simulate(cv, effect, 10000, seed++);
      std::printf(" %.1f%% (%.1f) |", 100 * r.keep, r.mean_per_arm);
    }
    std::printf("\n");
  }
}

}  // namespace
}  // namespace arbor
