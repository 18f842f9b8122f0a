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

TEST(QuoteForMessage, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(QuoteForMessage("plain é"), "\"plain é\"");
  EXPECT_EQ(QuoteForMessage("a\"b\\c\nd\te\rf\x01"), "\"a\\\"b\\\\c\\nd\\te\\rf\\x01\"");
  EXPECT_EQ(QuoteForMessage(""), "\"\"");
}

TEST(JsonString, QuotesAndEscapes) {
  EXPECT_EQ(JsonString("plain"), "\"plain\"");
  EXPECT_EQ(JsonString("a \"q\" \\ /"), "\"a \\\"q\\\" \\\\ /\"");
  EXPECT_EQ(JsonString(std::string("\b\f\n\r\t\x01\x1f\x7f", 8)),
            "\"\\b\\f\\n\\r\\t\\u0001\\u001f\x7f\"");
  EXPECT_EQ(JsonString(""), "\"\"");
}

TEST(TomlBasicString, EscapesQuotesBackslashesAndEveryControlCharacter) {
  EXPECT_EQ(TomlBasicString("plain é /"), "\"plain é /\"");
  EXPECT_EQ(TomlBasicString("a \"q\" \\ b"), "\"a \\\"q\\\" \\\\ b\"");
  EXPECT_EQ(TomlBasicString("\b\t\n\f\r"), "\"\\b\\t\\n\\f\\r\"");
  EXPECT_EQ(TomlBasicString(std::string("\0\x01\x1b\x1f\x7f", 5)),
            "\"\\u0000\\u0001\\u001B\\u001F\\u007F\"");
  EXPECT_EQ(TomlBasicString(""), "\"\"");
}

TEST(HtmlEscape, EscapesMarkupAndQuotes) {
  EXPECT_EQ(HtmlEscape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(HtmlEscape("plain é"), "plain é");
  EXPECT_EQ(HtmlEscape("&amp;"), "&amp;amp;");
  EXPECT_EQ(HtmlEscape(""), "");
}

TEST(ShellQuote, QuotesOnlyWhenNeededUnlessAskedToAlways) {
  EXPECT_EQ(ShellQuote("abc-1.2/x@%+=:,"), "abc-1.2/x@%+=:,");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote("abc", ShellQuoting::kAlways), "'abc'");
  EXPECT_EQ(ShellQuote("", ShellQuoting::kAlways), "''");
  EXPECT_EQ(ShellQuote("it's", ShellQuoting::kAlways), "'it'\\''s'");
}

}  // namespace
}  // namespace arbor
