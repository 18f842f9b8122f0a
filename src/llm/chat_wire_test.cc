// The wire format and retry arithmetic without a socket.
#include "llm/chat_wire.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace arbor::llm {
namespace {

TEST(ChatWireTest, RequestCarriesModelMessagesAndTemperature) {
  ChatOptions options;
  options.model = "m";
  options.temperature = 0.5;
  auto sent = nlohmann::json::parse(EncodeChatRequest(options, {{"user", "hi \xff"}}));
  EXPECT_EQ(sent["model"], "m");
  EXPECT_EQ(sent["temperature"], 0.5);
  EXPECT_EQ(sent["messages"][0]["role"], "user");
  EXPECT_FALSE(sent.contains("max_tokens"));
}

TEST(ChatWireTest, ContentThatIsNotAStringIsMalformed) {
  DecodedAnswer a = DecodeChatAnswer(R"({"choices":[{"message":{"content":42}}]})");
  EXPECT_FALSE(a.ok);
  EXPECT_EQ(a.error.kind, ChatError::Kind::kMalformed);
  EXPECT_EQ(DecodeChatAnswer(R"({"choices":[]})").error.kind, ChatError::Kind::kMalformed);
  EXPECT_EQ(DecodeChatAnswer("[1]").error.kind, ChatError::Kind::kMalformed);
}

TEST(ChatWireTest, NumberTooLargeForADoubleIsMalformed) {
  // Found by tests/fuzz/chat_wire_fuzz: nlohmann throws out_of_range (not parse_error) for
  // 1e400, which escaped DecodeChatAnswer and terminated Arbor.
  DecodedAnswer a = DecodeChatAnswer(
      R"({"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":1e400}})");
  EXPECT_FALSE(a.ok);
  EXPECT_EQ(a.error.kind, ChatError::Kind::kMalformed);
  EXPECT_EQ(a.error.message, "response is not JSON: a number is out of range");
}

TEST(ChatWireTest, ServerMessagesFromOpenAiAndOllamaShapes) {
  EXPECT_EQ(ServerErrorMessage(R"({"error":{"message":"bad\nkey"}})"), "bad key");
  EXPECT_EQ(ServerErrorMessage(R"({"error":"model not found"})"), "model not found");
  EXPECT_EQ(ServerErrorMessage("<html>502</html>"), "");
  std::string long_text;
  for (int i = 0; i < 150; ++i) long_text += "\xc3\xa9";  // é, two bytes each
  std::string cut = ServerErrorMessage(R"({"error":{"message":")" + long_text + R"("}})");
  EXPECT_LE(cut.size(), kMaxServerMessageChars);
  EXPECT_EQ(cut.substr(cut.size() - 5), "\xc3\xa9...");  // no half character
}

TEST(ChatWireTest, RetryDelayGrowsIsCappedAndHonoursRetryAfter) {
  ChatOptions options;
  options.backoff_s = 2;
  options.max_backoff_s = 10;
  std::mt19937_64 rng(7);
  EXPECT_GE(RetryDelay(options, 0, -1, &rng), 1.0);
  EXPECT_LT(RetryDelay(options, 1, -1, &rng), 4.0);
  double capped = RetryDelay(options, 20, -1, &rng);
  EXPECT_GE(capped, 5.0);
  EXPECT_LT(capped, 10.0);
  EXPECT_EQ(RetryDelay(options, 0, 3, &rng), 3.0);
  EXPECT_EQ(RetryDelay(options, 0, 99, &rng), 10.0);
}

TEST(ChatWireTest, DisplayUrlDropsUserInfo) {
  EXPECT_EQ(DisplayUrl("https://u:p@api.example.com/v1/chat"), "https://api.example.com/v1/chat");
  EXPECT_EQ(DisplayUrl("http://127.0.0.1:8/v1?q=a@b"), "http://127.0.0.1:8/v1?q=a@b");
  EXPECT_EQ(DisplayUrl("no-scheme"), "no-scheme");
}

TEST(ChatWireTest, SanitizeRedactsEveryOccurrenceOnOneLine) {
  EXPECT_EQ(Sanitize("k=abc\r\nagain abcabc", "abc"), "k=[redacted]  again [redacted][redacted]");
  EXPECT_EQ(Sanitize("nothing", ""), "nothing");
}

}  // namespace
}  // namespace arbor::llm
