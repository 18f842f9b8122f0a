#include "util/duration.h"

#include <gtest/gtest.h>

namespace arbor {
namespace {

TEST(DurationTest, ParsesUnitsAndCompounds) {
  EXPECT_DOUBLE_EQ(ParseDuration("90s").value(), 90);
  EXPECT_DOUBLE_EQ(ParseDuration("10m").value(), 600);
  EXPECT_DOUBLE_EQ(ParseDuration("2h").value(), 7200);
  EXPECT_DOUBLE_EQ(ParseDuration("1h30m").value(), 5400);
  EXPECT_DOUBLE_EQ(ParseDuration("250ms").value(), 0.25);
  EXPECT_DOUBLE_EQ(ParseDuration("1.5h").value(), 5400);
  EXPECT_DOUBLE_EQ(ParseDuration("42").value(), 42);
}

TEST(DurationTest, RejectsMalformedWithReason) {
  auto r = ParseDuration("10x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("unknown unit \"x\""), std::string::npos);
  EXPECT_FALSE(ParseDuration("").ok());
  EXPECT_FALSE(ParseDuration("m").ok());
  EXPECT_FALSE(ParseDuration("1..2s").ok());
}

TEST(DurationTest, FormatsCompactly) {
  EXPECT_EQ(FormatDuration(0.25), "250ms");
  EXPECT_EQ(FormatDuration(90), "1m30s");
  EXPECT_EQ(FormatDuration(7200), "2h");
}

}  // namespace
}  // namespace arbor
