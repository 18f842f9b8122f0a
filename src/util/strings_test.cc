#include "util/strings.h"

#include <gtest/gtest.h>

namespace arbor {
namespace {

TEST(PathGlobTest, StarStaysInOneDirectoryAndDoubleStarCrossesThem) {
  EXPECT_TRUE(PathGlobMatch("src/*.cc", "src/a.cc"));
  EXPECT_FALSE(PathGlobMatch("src/*.cc", "src/x/a.cc"));
  EXPECT_TRUE(PathGlobMatch("src/**", "src/x/a.cc"));
  EXPECT_TRUE(PathGlobMatch("src/**", "src/a.cc"));
  EXPECT_FALSE(PathGlobMatch("src/**", "docs/a.md"));
  EXPECT_TRUE(PathGlobMatch("src/**/*.cc", "src/a.cc"));
  EXPECT_TRUE(PathGlobMatch("src/**/*.cc", "src/x/y/a.cc"));
  EXPECT_FALSE(PathGlobMatch("src/**/*.cc", "src/x/y/a.h"));
  EXPECT_TRUE(PathGlobMatch("**/*.h", "a.h"));
  EXPECT_FALSE(PathGlobMatch("a?c", "a/c"));
  EXPECT_FALSE(PathGlobMatch("a[/]c", "a/c"));
  EXPECT_TRUE(PathGlobMatch("k[0-9].txt", "k7.txt"));
  EXPECT_TRUE(PathGlobMatch("a[b", "a[b"));
  EXPECT_FALSE(PathGlobMatch("*", "a/b"));
  EXPECT_TRUE(PathGlobMatch("**/**/**/x", "a/b/c/d/e/f/g/h/x"));
  EXPECT_FALSE(PathGlobMatch("**/**/**/x", std::string(200, 'a') + "/y"));
}

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
