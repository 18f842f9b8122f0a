#include "core/search/scoring.h"

#include <gtest/gtest.h>

#include <cmath>

namespace arbor {
namespace {

Profile SampleProfile() {
  Profile p;
  p.total_s = 10;
  p.components = {{"matmul.qkv", "kernel", 0.4},
                  {"matmul.out", "kernel", 0.2},
                  {"attention", "kernel", 0.3},
                  {"other", "framework", 0.1}};
  return p;
}

TEST(ExpectedGainTest, AmdahlOverMatchingComponentsCountedOnce) {
  // matmul.qkv matches both globs but counts once: (0.4 + 0.2) · (1 − 1/2) = 0.3.
  EXPECT_DOUBLE_EQ(ExpectedGain(SampleProfile(), {"matmul*", "*.qkv"}, 2.0), 0.3);
  EXPECT_DOUBLE_EQ(ExpectedGain(SampleProfile(), {"attention"}, 4.0), 0.3 * 0.75);
  EXPECT_DOUBLE_EQ(ExpectedGain(SampleProfile(), {"softmax*"}, 2.0), 0);
}

TEST(ExpectedGainTest, EmptyTargetsMeanTheWholeProgram) {
  EXPECT_DOUBLE_EQ(ExpectedGain(SampleProfile(), {}, 1.25), 0.2);
  EXPECT_DOUBLE_EQ(ExpectedGain(Profile{}, {}, 2.0), 0.5);
}

TEST(ExpectedGainTest, SlowdownIsNegativeAndNonPositiveSpeedupIsZero) {
  // 0.3 · (1 − 1/0.8) = −0.075.
  EXPECT_DOUBLE_EQ(ExpectedGain(SampleProfile(), {"attention"}, 0.8), -0.075);
  EXPECT_DOUBLE_EQ(ExpectedGain(SampleProfile(), {"attention"}, 1.0), 0);
  EXPECT_DOUBLE_EQ(ExpectedGain(SampleProfile(), {"attention"}, 0.0), 0);
  EXPECT_DOUBLE_EQ(ExpectedGain(SampleProfile(), {}, -2.0), 0);
}

TEST(GapMultiplierTest, GrowsLinearlyWithTheRemainingGap) {
  EXPECT_DOUBLE_EQ(GapMultiplier(std::nullopt, 100.0, Goal::kMax), 1);
  EXPECT_DOUBLE_EQ(GapMultiplier(80.0, std::nullopt, Goal::kMax), 1);
  EXPECT_DOUBLE_EQ(GapMultiplier(80.0, 100.0, Goal::kMax), 1.2);
  EXPECT_DOUBLE_EQ(GapMultiplier(100.0, 100.0, Goal::kMax), 1);
  EXPECT_DOUBLE_EQ(GapMultiplier(120.0, 100.0, Goal::kMax), 1);
  EXPECT_DOUBLE_EQ(GapMultiplier(0.0, 100.0, Goal::kMax), 2);
  EXPECT_DOUBLE_EQ(GapMultiplier(-100.0, 100.0, Goal::kMax), 2);  // capped
  EXPECT_DOUBLE_EQ(GapMultiplier(15.0, 10.0, Goal::kMin), 1.5);
  EXPECT_DOUBLE_EQ(GapMultiplier(8.0, 10.0, Goal::kMin), 1);
  EXPECT_DOUBLE_EQ(GapMultiplier(50.0, 10.0, Goal::kMin), 2);
}

ScoreInput SampleInput(const ActionSpec* a) {
  ScoreInput in;
  in.action = a;
  in.g = 0.3;
  in.r_acc = 0.2;
  in.r_crash = 0.375;
  in.cost_s = 120;
  in.reference_cost_s = 60;
  in.m_gap = 1.2;
  in.total_tries = 10;
  in.category_tries = 4;
  return in;
}

TEST(ScoreOneTest, PaperFormulaTerms) {
  ActionSpec a;
  ScoreTerms t = ScoreOne(SampleInput(&a), Formula::kPaper, 0.6);
  EXPECT_DOUBLE_EQ(t.g, 0.3);
  EXPECT_DOUBLE_EQ(t.c, 120);
  EXPECT_DOUBLE_EQ(t.c_norm, 2);
  EXPECT_DOUBLE_EQ(t.r_acc, 0.2);
  EXPECT_DOUBLE_EQ(t.r_crash, 0.375);
  EXPECT_DOUBLE_EQ(t.m_gap, 1.2);
  // 0.3 / 2 · 0.8 · 0.625 · 1.2 = 0.09.
  EXPECT_NEAR(t.exploit, 0.09, 1e-12);
  // 0.6 · sqrt(ln 10 / 5) = 0.6 · sqrt(0.4605170186) = 0.4071684254.
  EXPECT_NEAR(t.bonus, 0.4071684254, 1e-9);
  EXPECT_NEAR(t.h, 0.4971684254, 1e-9);
}

TEST(ScoreOneTest, SeedLiteralFormulaTerms) {
  ActionSpec a;
  ScoreTerms t = ScoreOne(SampleInput(&a), Formula::kSeedLiteral, 0.6);
  EXPECT_DOUBLE_EQ(t.c_norm, 2);
  // 0.3 / (2 · 0.8 · 0.625 · 1.2) = 0.3 / 1.2 = 0.25: risk raises the score when read literally.
  EXPECT_NEAR(t.exploit, 0.25, 1e-12);
  // 0.6 · ln 10 / 5 = 0.2763102112 (no square root).
  EXPECT_NEAR(t.bonus, 0.2763102112, 1e-9);
  EXPECT_NEAR(t.h, 0.5263102112, 1e-9);
}

TEST(ScoreOneTest, SeedLiteralStaysFiniteForCertainFailure) {
  ActionSpec a;
  ScoreInput in = SampleInput(&a);
  in.r_acc = 1.0;
  in.r_crash = 0.0;
  in.m_gap = 1;
  ScoreTerms t = ScoreOne(in, Formula::kSeedLiteral, 0.6);
  // 0.3 / (2 · 1e-3 · 1 · 1) = 150.
  EXPECT_NEAR(t.exploit, 150, 1e-9);
  EXPECT_DOUBLE_EQ(ScoreOne(in, Formula::kPaper, 0.6).exploit, 0);
}

TEST(ScoreOneTest, CostNormIsFlooredAndBonusVanishesBeforeAnyTry) {
  ActionSpec a;
  ScoreInput in = SampleInput(&a);
  in.cost_s = 1;
  in.reference_cost_s = 100;
  in.total_tries = 0;
  ScoreTerms t = ScoreOne(in, Formula::kPaper, 0.6);
  EXPECT_DOUBLE_EQ(t.c_norm, 0.05);
  // 0.3 / 0.05 · 0.8 · 0.625 · 1.2 = 3.6.
  EXPECT_NEAR(t.exploit, 3.6, 1e-12);
  EXPECT_DOUBLE_EQ(t.bonus, 0);  // ln max(0, 1) = 0
  EXPECT_NEAR(t.h, 3.6, 1e-12);
  in.total_tries = 1;
  EXPECT_DOUBLE_EQ(ScoreOne(in, Formula::kSeedLiteral, 0.6).bonus, 0);
}

TEST(ScoreOneTest, UntriedCategoryGetsTheLargerBonus) {
  ActionSpec a;
  ScoreInput in = SampleInput(&a);
  in.category_tries = 0;
  EXPECT_NEAR(ScoreOne(in, Formula::kPaper, 2.0).bonus, 2.0 * std::sqrt(std::log(10.0)), 1e-12);
  EXPECT_NEAR(ScoreOne(in, Formula::kSeedLiteral, 2.0).bonus, 2.0 * std::log(10.0), 1e-12);
}

TEST(NormalizeScoresTest, DividesExploitationByItsMaximum) {
  std::vector<ScoreTerms> terms(3);
  terms[0].exploit = 0.09;
  terms[0].bonus = 0.1;
  terms[1].exploit = 0.045;
  terms[1].bonus = 0.3;
  terms[2].exploit = -0.009;
  terms[2].bonus = 0;
  NormalizeScores(&terms);
  EXPECT_NEAR(terms[0].h, 1.1, 1e-12);
  EXPECT_NEAR(terms[1].h, 0.8, 1e-12);
  EXPECT_NEAR(terms[2].h, -0.1, 1e-12);
  EXPECT_DOUBLE_EQ(terms[0].exploit, 0.09);  // the raw term is kept for explanation
  EXPECT_DOUBLE_EQ(terms[2].exploit, -0.009);
}

TEST(NormalizeScoresTest, NoPositiveExploitationLeavesTheRawSum) {
  std::vector<ScoreTerms> terms(2);
  terms[0].exploit = -0.1;
  terms[0].bonus = 0.5;
  terms[1].exploit = 0;
  terms[1].bonus = 0.2;
  NormalizeScores(&terms);
  EXPECT_DOUBLE_EQ(terms[0].h, 0.4);
  EXPECT_DOUBLE_EQ(terms[1].h, 0.2);
  std::vector<ScoreTerms> none;
  NormalizeScores(&none);
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace arbor
