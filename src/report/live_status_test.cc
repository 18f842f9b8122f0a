#include "report/live_status.h"

#include <gtest/gtest.h>

#include <string>

namespace arbor {
namespace {

// Code points, as a terminal shows them.
size_t Columns(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

LiveStatus Sample() {
  LiveStatus s;
  s.progress.node = 7;
  s.progress.action = "compiler.O3";
  s.progress.step = Step::kBench;
  s.progress.best = 1064;
  s.progress.baseline = 1000;
  s.progress.nodes_done = 6;
  s.progress.max_nodes = 20;
  s.progress.max_time_s = 7200;
  s.step_elapsed_s = 12.7;
  s.elapsed_s = 600;
  s.metric_name = "melem_s";
  return s;
}

TEST(TimeLeft, TheSmallerOfTheTimeBudgetAndTheMeanPerEvaluation) {
  // 6 of 20 in 600 s: 100 s each, 14 left: 1400 s; the time budget leaves 6600 s.
  EXPECT_DOUBLE_EQ(*TimeLeft(6, 20, 600, 7200), 1400);
  // The time budget is nearer.
  EXPECT_DOUBLE_EQ(*TimeLeft(6, 20, 600, 900), 300);
  // Nothing evaluated yet: only the time budget can tell.
  EXPECT_DOUBLE_EQ(*TimeLeft(0, 20, 600, 900), 300);
  EXPECT_FALSE(TimeLeft(0, 20, 600, 0).has_value());
  // No time budget: the node budget alone.
  EXPECT_DOUBLE_EQ(*TimeLeft(5, 10, 50, 0), 50);
  // Over either budget: nothing left, never negative.
  EXPECT_DOUBLE_EQ(*TimeLeft(20, 20, 600, 0), 0);
  EXPECT_DOUBLE_EQ(*TimeLeft(3, 20, 1000, 900), 0);
  EXPECT_FALSE(TimeLeft(3, 0, 100, 0).has_value());
}

TEST(LiveStatusLine, ShowsNodeStepBudgetBestAndTimeLeft) {
  std::string line = LiveStatusLine(Sample(), 200);
  EXPECT_EQ(line,
            "#7 compiler.O3 [bench 12s] | 6/20 evaluated | best ×1.06 (+6.4%) melem_s 1064 | "
            "10m of 2h, ~23m left");
}

TEST(LiveStatusLine, BeforeTheBaselineAndWithoutBudgets) {
  LiveStatus s;
  s.metric_name = "ops";
  EXPECT_EQ(LiveStatusLine(s, 200), "starting | 0 evaluated | best - | 0s");
  // The baseline being measured: its metric is not known yet.
  s.progress.node = 1;
  s.progress.action = "baseline";
  s.progress.step = Step::kBuild;
  s.step_elapsed_s = 0.4;
  s.elapsed_s = 75;
  EXPECT_EQ(LiveStatusLine(s, 200), "#1 baseline [build 0s] | 0 evaluated | best - | 1m15s");
  // Measured: the best is the baseline itself, ×1.
  s.progress.step = Step::kDone;
  s.progress.best = s.progress.baseline = 250;
  EXPECT_EQ(LiveStatusLine(s, 200),
            "#1 baseline [done] | 0 evaluated | best ×1.00 (+0.0%) ops 250 | 1m15s");
}

TEST(LiveStatusLine, SpeedupFollowsTheGoal) {
  LiveStatus s = Sample();
  s.goal = Goal::kMin;
  s.progress.best = 800;  // lower is better: 1000 / 800
  EXPECT_NE(LiveStatusLine(s, 200).find("best ×1.25 (+25.0%) melem_s 800"), std::string::npos);
  s.progress.baseline.reset();  // a store from before baselines were reported
  EXPECT_NE(LiveStatusLine(s, 200).find("| best melem_s 800 |"), std::string::npos);
}

TEST(LiveStatusLine, FitsTheWidthShorteningTheActionFirst) {
  LiveStatus s = Sample();
  s.progress.action = "kernel.a-very-long-action-name-that-goes-on[value=1234567890]";
  std::string full = LiveStatusLine(s, 1000);
  ASSERT_GT(Columns(full), 100u);
  std::string fitted = LiveStatusLine(s, 100);
  EXPECT_EQ(Columns(fitted), 100u) << fitted;
  EXPECT_EQ(fitted.rfind("#7 kernel.a-v… [bench", 0), 0u) << fitted;
  // Everything after the action is kept whole.
  EXPECT_NE(fitted.find("[bench 12s] | 6/20 evaluated | best ×1.06 (+6.4%) melem_s 1064 | "
                        "10m of 2h, ~23m left"),
            std::string::npos)
      << fitted;
  // Narrower than the fixed parts: the end is cut.
  std::string narrow = LiveStatusLine(s, 40);
  EXPECT_LE(Columns(narrow), 40u) << narrow;
  EXPECT_EQ(narrow.rfind("#7 kernel.", 0), 0u) << narrow;
}

TEST(LiveStatusLine, ControlCharactersCannotMoveTheCursor) {
  LiveStatus s = Sample();
  s.progress.action = "evil\r\033[2J";
  s.metric_name = "m\n";
  std::string line = LiveStatusLine(s, 200);
  for (char c : line) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << line;
  EXPECT_NE(line.find("evil\\r\\x1b[2J"), std::string::npos) << line;
}

}  // namespace
}  // namespace arbor
