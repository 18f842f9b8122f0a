#include "util/escape.h"

#include <gtest/gtest.h>

namespace arbor {
namespace {

using Lines = std::vector<std::string>;

TEST(VisibleTail, KeepsTheLastLinesAndDropsTheFinalNewline) {
  EXPECT_EQ(VisibleTail("a\nb\nc\nd\n", 2, 100), (Lines{"c", "d"}));
  EXPECT_EQ(VisibleTail("a\nb", 10, 100), (Lines{"a", "b"}));
  EXPECT_EQ(VisibleTail("", 10, 100), Lines{});
  EXPECT_EQ(VisibleTail("\n", 10, 100), (Lines{""}));
  EXPECT_EQ(VisibleTail("a\n\nb\n", 10, 100), (Lines{"a", "", "b"}));
}

TEST(VisibleTail, ShowsCarriageReturnsAndControlBytes) {
  EXPECT_EQ(VisibleTail("10%\r50%\rdone\n", 10, 100), (Lines{"10%\\r50%\\rdone"}));
  EXPECT_EQ(VisibleTail(std::string("\x1b[2Kx\x01\t\x7f", 8), 10, 100),
            (Lines{"\\x1b[2Kx\\x01\\t\\x7f"}));
}

TEST(VisibleTail, BoundsTheBytesAndMarksACutLine) {
  EXPECT_EQ(VisibleTail("0123456789\nab\n", 6, 6), (Lines{"...89", "ab"}));
  EXPECT_EQ(VisibleTail("0123456789", 6, 4), (Lines{"...6789"}));
  // Escaping happens after the cut: the bound is on the command's bytes.
  EXPECT_EQ(VisibleTail("x\r\r\r", 10, 2), (Lines{"...\\r\\r"}));
}

}  // namespace
}  // namespace arbor
