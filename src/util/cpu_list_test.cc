#include "util/cpu_list.h"

#include <gtest/gtest.h>

namespace arbor {
namespace {

TEST(CpuListTest, ParsesSinglesRangesAndLists) {
  EXPECT_EQ(*ParseCpuList("0"), std::vector<int>({0}));
  EXPECT_EQ(*ParseCpuList("2-3"), std::vector<int>({2, 3}));
  EXPECT_EQ(*ParseCpuList("4-5,0"), std::vector<int>({0, 4, 5}));
}

TEST(CpuListTest, RejectsMalformedLists) {
  for (const char* bad : {"", "a", "1-", "-1", "3-2", "1,,2", "1,1", "0-2,2", " 1", "99999999"}) {
    EXPECT_FALSE(ParseCpuList(bad).ok()) << bad;
  }
}

TEST(CpuListTest, FormatsCanonically) {
  EXPECT_EQ(FormatCpuList({0}), "0");
  EXPECT_EQ(FormatCpuList({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
}

}  // namespace
}  // namespace arbor
