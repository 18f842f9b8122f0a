#include "specialists/llm_answer.h"

#include <gtest/gtest.h>

#include <string>

namespace arbor {
namespace {

TEST(ParseLlmAnswerTest, DiffBlocksAreConcatenatedAndProseIgnored) {
  auto answer = ParseLlmAnswer(
      "Here is the change.\n"
      "```diff\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n```\n"
      "and another:\n"
      "```patch\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-c\n+d\n```\n"
      "```python\nprint('ignored')\n```\n");
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(answer->diff,
            "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-c\n+d\n");
  EXPECT_TRUE(answer->files.empty());
  EXPECT_EQ(answer->report_json, "");
}

TEST(ParseLlmAnswerTest, UnlabelledBlockThatLooksLikeADiff) {
  auto answer = ParseLlmAnswer("```\ndiff --git a/x b/x\n--- a/x\n+++ b/x\n```");
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(answer->diff, "diff --git a/x b/x\n--- a/x\n+++ b/x\n");
}

TEST(ParseLlmAnswerTest, FileBlocksAndTheLastJsonReport) {
  auto answer = ParseLlmAnswer(
      "```file:src/a.cc\nint a;\n\nint b;\n```\n"
      "```file: ./docs/readme.md \n# Title\n```\n"
      "```json\n{\"summary\": \"draft\"}\n```\n"
      "```json\n{\"summary\": \"final\"}\n```\n");
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  ASSERT_EQ(answer->files.size(), 2u);
  EXPECT_EQ(answer->files[0].path, "src/a.cc");
  EXPECT_EQ(answer->files[0].content, "int a;\n\nint b;\n");
  EXPECT_EQ(answer->files[1].path, "docs/readme.md");
  EXPECT_EQ(answer->files[1].content, "# Title\n");
  EXPECT_EQ(answer->report_json, "{\"summary\": \"final\"}\n");
}

TEST(ParseLlmAnswerTest, LongerFencesHoldBackticks) {
  auto answer = ParseLlmAnswer("````file:doc.md\n```sh\nls\n```\n````\n");
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  ASSERT_EQ(answer->files.size(), 1u);
  EXPECT_EQ(answer->files[0].content, "```sh\nls\n```\n");
}

TEST(ParseLlmAnswerTest, AReportAloneIsEnoughToParse) {
  auto answer = ParseLlmAnswer("```json\n{\"env\": {\"OMP_NUM_THREADS\": \"4\"}}\n```");
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(answer->report_json, "{\"env\": {\"OMP_NUM_THREADS\": \"4\"}}\n");
}

TEST(ParseLlmAnswerTest, ErrorsSayWhatIsWrong) {
  auto none = ParseLlmAnswer("I think you should unroll the loop.");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, kNoChangeMessage);
  auto cut = ParseLlmAnswer("text\n```diff\n--- a/x\n+++ b/x\n");
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().message,
            "the ```diff block opened at line 2 is not closed (was the answer cut off?)");
  auto twice = ParseLlmAnswer("```file:a\n1\n```\n```file:a\n2\n```\n");
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().message, "the file \"a\" is given twice (line 4)");
  auto nameless = ParseLlmAnswer("```file:\n1\n```\n");
  ASSERT_FALSE(nameless.ok());
  EXPECT_EQ(nameless.error().message, "the ```file: block at line 1 names no path");
}

TEST(ExtractJsonArrayTest, FencedBareOrEmbedded) {
  EXPECT_EQ(ExtractJsonArray("```json\n[{\"id\": \"a\"}]\n```\n"), "[{\"id\": \"a\"}]");
  EXPECT_EQ(ExtractJsonArray("  [1, 2]\n"), "[1, 2]");
  EXPECT_EQ(ExtractJsonArray("Here you go: [1, 2]. Enjoy"), "[1, 2]");
  EXPECT_EQ(ExtractJsonArray("  no array here \n"), "no array here");
}

}  // namespace
}  // namespace arbor
