#include "report/format.h"

#include <gtest/gtest.h>

namespace arbor::report {
namespace {

TEST(FormatTest, PercentAndSpeedup) {
  EXPECT_EQ(FormatPercent(0.123), "+12.3%");
  EXPECT_EQ(FormatPercent(-0.01), "-1.0%");
  EXPECT_EQ(FormatPercent(-0.0001), "+0.0%");
  EXPECT_EQ(FormatSpeedup(1.84), "×1.84 (+84.0%)");
  EXPECT_EQ(FormatSpeedup(0.5), "×0.50 (-50.0%)");
}

TEST(FormatTest, Speedup) {
  EXPECT_DOUBLE_EQ(*Speedup(Goal::kMax, 100, 150), 1.5);
  EXPECT_DOUBLE_EQ(*Speedup(Goal::kMin, 100, 50), 2.0);
  EXPECT_FALSE(Speedup(Goal::kMax, std::nullopt, 1));
  EXPECT_FALSE(Speedup(Goal::kMin, 1, std::nullopt));
  EXPECT_FALSE(Speedup(Goal::kMax, 0, 1));
  EXPECT_FALSE(Speedup(Goal::kMin, 1, 0));
}

TEST(FormatTest, Shorten) {
  EXPECT_EQ(Shorten("a\n  b\tc  ", 10), "a b c");
  EXPECT_EQ(Shorten("abcdef", 6), "abcdef");
  EXPECT_EQ(Shorten("abcdefg", 6), "abcde…");
  EXPECT_EQ(Shorten("ab cdefg", 4), "ab…");
  EXPECT_EQ(Shorten("ééééé", 3), "éé…");  // counts code points, keeps sequences whole
  EXPECT_EQ(Shorten("abc", 0), "");
}

TEST(FormatTest, LayerCategory) {
  Node n;
  EXPECT_EQ(LayerCategory(n), "");
  n.layer = "kernel";
  EXPECT_EQ(LayerCategory(n), "kernel");
  n.category = "gemm";
  EXPECT_EQ(LayerCategory(n), "kernel/gemm");
  n.layer = "";
  EXPECT_EQ(LayerCategory(n), "gemm");
}

}  // namespace
}  // namespace arbor::report
