#include "util/strings.h"

#include <gtest/gtest.h>

namespace arbor {
namespace {

TEST(GlobTest, MatchesStarsQuestionAndClasses) {
  EXPECT_TRUE(GlobMatch("matmul*", "matmul.qkv"));
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_TRUE(GlobMatch("a?c", "abc"));
  EXPECT_FALSE(GlobMatch("a?c", "ac"));
  EXPECT_TRUE(GlobMatch("*gemm*", "rocblas_gemm_f16"));
  EXPECT_FALSE(GlobMatch("matmul*", "attention"));
  EXPECT_TRUE(GlobMatch("k[0-9]", "k7"));
  EXPECT_FALSE(GlobMatch("k[!0-9]", "k7"));
  EXPECT_TRUE(GlobMatch("a*b*c", "aXXbYYc"));
  EXPECT_FALSE(GlobMatch("a*b*c", "aXXbYY"));
}

TEST(StringsTest, SplitTrimJoinReplace) {
  EXPECT_EQ(Split("a.b..c", '.'), (std::vector<std::string>{"a", "b", "", "c"}));
  EXPECT_EQ(Trim("  x y \n"), "x y");
  EXPECT_EQ(Join({"a", "b"}, ", "), "a, b");
  EXPECT_EQ(ReplaceAll("{value}-{value}", "{value}", "16"), "16-16");
}

TEST(StringsTest, ClosestMatchSuggestsNearbyWordsOnly) {
  EXPECT_EQ(ClosestMatch("repetitons", {"repetitions", "name", "goal"}), "repetitions");
  EXPECT_EQ(ClosestMatch("zzzzzz", {"repetitions", "name"}), "");
}

}  // namespace
}  // namespace arbor
