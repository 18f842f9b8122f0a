#include "core/search/category_stats.h"

#include <gtest/gtest.h>

namespace arbor {
namespace {

Node Finished(NodeId id, const std::string& category, Outcome outcome, double cost_s,
              const std::string& diagnosis = "") {
  Node n;
  n.id = id;
  n.parent = kRootId;
  n.category = category;
  n.outcome = outcome;
  n.cost_s = cost_s;
  n.diagnosis = diagnosis;
  return n;
}

ActionSpec Action(const std::string& category, double risk_acc, double risk_crash, double cost_s) {
  ActionSpec a;
  a.id = category + ".x";
  a.category = category;
  a.risk_accuracy = risk_acc;
  a.risk_crash = risk_crash;
  a.cost_s = cost_s;
  return a;
}

TEST(BetaPosteriorTest, PriorCarriesRateWithStrengthPseudoCounts) {
  BetaPosterior p = BetaPosterior::FromPrior(0.15);
  EXPECT_DOUBLE_EQ(p.alpha, 0.6);
  EXPECT_DOUBLE_EQ(p.beta, 3.4);
  EXPECT_DOUBLE_EQ(p.Mean(), 0.15);
  p.Observe(true);
  p.Observe(false);
  EXPECT_DOUBLE_EQ(p.alpha, 1.6);
  EXPECT_DOUBLE_EQ(p.beta, 4.4);
  EXPECT_DOUBLE_EQ(p.Mean(), 1.6 / 6.0);

  BetaPosterior q = BetaPosterior::FromPrior(0.5, 10);
  EXPECT_DOUBLE_EQ(q.alpha, 5);
  EXPECT_DOUBLE_EQ(q.beta, 5);
}

TEST(BetaPosteriorTest, ZeroPriorStaysNearZeroUntilFailuresAreSeen) {
  BetaPosterior p = BetaPosterior::FromPrior(0.0);
  EXPECT_DOUBLE_EQ(p.alpha, 1e-3);
  EXPECT_DOUBLE_EQ(p.beta, 4.0);
  EXPECT_LT(p.Mean(), 1e-3);
  p.Observe(true);
  EXPECT_DOUBLE_EQ(p.Mean(), 1.001 / 5.001);
  // A certain prior still leaves room for evidence against it.
  BetaPosterior one = BetaPosterior::FromPrior(1.0);
  EXPECT_DOUBLE_EQ(one.beta, 1e-3);
  EXPECT_GT(one.Mean(), 0.999);
}

class CategoryStatsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    stats_.Observe(Finished(2, "kernel", Outcome::kKept, 100));
    stats_.Observe(Finished(3, "kernel", Outcome::kReverted, 200, "accuracy 0.71 < 0.74"));
    stats_.Observe(Finished(4, "kernel", Outcome::kCrashed, 0));  // cost not measured
    stats_.Observe(Finished(5, "kernel", Outcome::kReverted, 300, "median regressed"));
    stats_.Observe(Finished(6, "server", Outcome::kKept, 50));
    // Ignored: never ran, in flight, or the root.
    stats_.Observe(Finished(7, "kernel", Outcome::kPruned, 10, "accuracy"));
    stats_.Observe(Finished(8, "kernel", Outcome::kSkipped, 10));
    stats_.Observe(Finished(9, "kernel", Outcome::kPending, 10));
    stats_.Observe(Finished(10, "kernel", Outcome::kRunning, 10));
    Node root = Finished(kRootId, "baseline", Outcome::kBaseline, 10);
    root.parent = kNoNode;
    stats_.Observe(root);
  }
  CategoryStats stats_;
};

TEST_F(CategoryStatsTest, CountsOnlyDispatchedFinishedNodes) {
  const CategoryCounts& k = stats_.Counts("kernel");
  EXPECT_EQ(k.tries, 4);
  EXPECT_EQ(k.accuracy_failures, 1);  // "median regressed" is not an accuracy failure
  EXPECT_EQ(k.crashes, 1);
  EXPECT_DOUBLE_EQ(k.cost_sum_s, 600);
  EXPECT_EQ(k.cost_n, 3);
  EXPECT_EQ(stats_.Counts("server").tries, 1);
  EXPECT_EQ(stats_.Counts("nothing").tries, 0);
  EXPECT_EQ(stats_.Counts("baseline").tries, 0);
  EXPECT_EQ(stats_.TotalTries(), 5);
}

TEST_F(CategoryStatsTest, RisksArePosteriorMeansOfTheCategory) {
  // Accuracy: Beta(0.6, 3.4) + 1 failure in 4 tries = Beta(1.6, 6.4) -> 0.2.
  // Crash: Beta(2, 2) + 1 crash in 4 tries = Beta(3, 5) -> 0.375.
  ActionSpec a = Action("kernel", 0.15, 0.5, 60);
  EXPECT_DOUBLE_EQ(stats_.AccuracyRisk(a), 0.2);
  EXPECT_DOUBLE_EQ(stats_.CrashRisk(a), 0.375);
  // Server: 1 clean try on a zero prior: Beta(0.001, 5).
  ActionSpec s = Action("server", 0.0, 0.0, 30);
  EXPECT_DOUBLE_EQ(stats_.AccuracyRisk(s), 0.001 / 5.001);
  // An unseen category is its prior.
  EXPECT_DOUBLE_EQ(stats_.AccuracyRisk(Action("compiler", 0.1, 0, 1)), 0.1);
}

TEST_F(CategoryStatsTest, CostShrinksThePriorTowardsObservations) {
  // (60·1 + 600) / (1 + 3) = 165.
  EXPECT_DOUBLE_EQ(stats_.ExpectedCost(Action("kernel", 0, 0, 60)), 165);
  // (30 + 50) / 2 = 40.
  EXPECT_DOUBLE_EQ(stats_.ExpectedCost(Action("server", 0, 0, 30)), 40);
  // Nothing observed: the prior.
  EXPECT_DOUBLE_EQ(stats_.ExpectedCost(Action("compiler", 0, 0, 90)), 90);
  // Mean of 100, 200, 300, 50.
  EXPECT_DOUBLE_EQ(stats_.ReferenceCost(7), 162.5);
  EXPECT_DOUBLE_EQ(CategoryStats().ReferenceCost(7), 7);
}

}  // namespace
}  // namespace arbor
