#include "bench/search/policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace arbor::search {
namespace {

LandscapeAction Action(const std::string& id, double factor) {
  LandscapeAction a;
  a.id = id;
  a.layer = "code";
  a.effects = {{"kernel", factor}};
  return a;
}

// One component; actions a..e with declared requirements and conflicts, `boom` always crashes,
// `wrong` always fails its check. No noise, so a reading is the true value.
Landscape Small() {
  Landscape l;
  l.name = "small";
  l.repetitions = 5;
  l.noise.cv = 0;
  l.components = {{"kernel", "code", 1.0}};
  LandscapeAction a = Action("a", 2);
  LandscapeAction b = Action("b", 1.5);
  b.prior.requires_ = {"a"};
  LandscapeAction c = Action("c", 1.2);
  c.prior.requires_ = {"b"};
  LandscapeAction d = Action("d", 1.1);
  d.prior.conflicts = {"a"};
  LandscapeAction e = Action("e", 1.1);
  LandscapeAction boom = Action("boom", 3);
  boom.crash_rate = 1;
  LandscapeAction wrong = Action("wrong", 3);
  wrong.accuracy_fail = 1;
  l.actions = {a, b, c, d, e, boom, wrong};
  return l;
}

TEST(RepairTest, KeepsAConsistentConfig) {
  Landscape l = Small();
  Config c = {{"a", "on"}, {"b", "on"}, {"c", "on"}, {"e", "on"}};
  EXPECT_EQ(Repair(l, c), c);
  EXPECT_EQ(Repair(l, {}), Config{});
}

TEST(RepairTest, DropsActionsWhoseRequirementsAreOffTransitively) {
  Landscape l = Small();
  // c requires b, b requires a: without a, both go.
  EXPECT_EQ(Repair(l, {{"b", "on"}, {"c", "on"}, {"e", "on"}}), (Config{{"e", "on"}}));
  EXPECT_EQ(Repair(l, {{"a", "on"}, {"c", "on"}}), (Config{{"a", "on"}}));
}

TEST(RepairTest, DropsTheLaterOfTwoConflictsInFileOrder) {
  Landscape l = Small();
  // d declares the conflict and comes later: d goes.
  EXPECT_EQ(Repair(l, {{"a", "on"}, {"d", "on"}}), (Config{{"a", "on"}}));
  // Declared on the earlier side only: still the later one goes.
  l.actions[3].prior.conflicts.clear();
  l.actions[0].prior.conflicts = {"d"};
  EXPECT_EQ(Repair(l, {{"a", "on"}, {"d", "on"}}), (Config{{"a", "on"}}));
}

TEST(RepairTest, AConflictDroppedForItsRequirementNoLongerConflicts) {
  Landscape l = Small();
  l.actions[3].prior.conflicts = {"b"};  // d conflicts with b, which requires a
  EXPECT_EQ(Repair(l, {{"b", "on"}, {"d", "on"}}), (Config{{"d", "on"}}));
}

TEST(RepairTest, DropsIdsThatAreNotActions) {
  EXPECT_EQ(Repair(Small(), {{"nope", "on"}, {"e", "on"}}), (Config{{"e", "on"}}));
}

TEST(EvaluatorTest, MeasuresRepetitionsRunsThenChecks) {
  Landscape l = Small();
  Evaluator ev(l, 7);
  Evaluation e = ev.Evaluate({{"a", "on"}});
  EXPECT_FALSE(e.crashed);
  EXPECT_FALSE(e.accuracy_failed);
  ASSERT_TRUE(e.value.has_value());
  EXPECT_EQ(e.readings.size(), 5u);
  EXPECT_NEAR(*e.value, l.TrueValue({{"a", "on"}}), 1e-9);
  EXPECT_EQ(ev.evaluations(), 1);
  EXPECT_EQ(ev.runs(), 5u);
}

TEST(EvaluatorTest, ValueIsTheMedianOfTheReadings) {
  Landscape l = Small();
  l.noise.cv = 0.2;
  Evaluator ev(l, 3);
  Evaluation e = ev.Evaluate({{"e", "on"}});
  ASSERT_TRUE(e.value.has_value());
  std::vector<double> sorted = e.readings;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(*e.value, sorted[2]);
}

TEST(EvaluatorTest, StopsAtTheFirstCrash) {
  Landscape l = Small();
  Evaluator ev(l, 7);
  Evaluation e = ev.Evaluate({{"boom", "on"}});
  EXPECT_TRUE(e.crashed);
  EXPECT_FALSE(e.accuracy_failed);
  EXPECT_FALSE(e.value.has_value());
  EXPECT_TRUE(e.readings.empty());
  EXPECT_EQ(ev.runs(), 1u);
  EXPECT_EQ(ev.evaluations(), 1);
}

TEST(EvaluatorTest, AFailedCheckKeepsTheReadingsButNoValue) {
  Landscape l = Small();
  Evaluator ev(l, 7);
  Evaluation e = ev.Evaluate({{"wrong", "on"}});
  EXPECT_FALSE(e.crashed);
  EXPECT_TRUE(e.accuracy_failed);
  EXPECT_FALSE(e.value.has_value());
  EXPECT_EQ(e.readings.size(), 5u);
}

TEST(EvaluatorTest, IsDeterministicInTheSeed) {
  Landscape l = Small();
  l.noise.cv = 0.1;
  Evaluator x(l, 11);
  Evaluator y(l, 11);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(x.Evaluate({{"a", "on"}}).value, y.Evaluate({{"a", "on"}}).value);
}

}  // namespace
}  // namespace arbor::search
