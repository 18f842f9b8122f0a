// The chat-completions wire format and retry arithmetic, without any I/O: what ChatClient sends,
// how it reads an answer or a server's error, and how long it waits before trying again.
// Pure functions, so every case is tested without a socket (chat_wire_test.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "llm/chat_client.h"

namespace arbor::llm {

inline constexpr size_t kMaxAnswerBytes = size_t{16} << 20;
inline constexpr size_t kMaxServerMessageChars = 200;

// {"model", "messages":[{"role","content"}...], "temperature", ["max_tokens" when > 0]}.
std::string EncodeChatRequest(const ChatOptions& options, const std::vector<ChatMessage>& messages);

struct DecodedAnswer {
  bool ok = false;
  std::string content;
  std::optional<ChatUsage> usage;  // when the body had a usage block
  ChatError error;                 // !ok: kMalformed or kEmpty
};

// Reads a 2xx body: choices[0].message.content and usage.{prompt,completion}_tokens.
DecodedAnswer DecodeChatAnswer(std::string_view body);

// The usage block of any JSON body (some servers report it on errors too); nullopt otherwise.
std::optional<ChatUsage> DecodeUsage(std::string_view body);

// error.message (or a plain string `error`, as Ollama sends) of an error body, on one line and
// cut to kMaxServerMessageChars; "" when the body is not such JSON.
std::string ServerErrorMessage(std::string_view body);

// The wait before retry number `retry` (0 for the first): backoff_s * 2^retry capped at
// max_backoff_s, scaled by a jitter factor in [0.5, 1) drawn from `rng`. A Retry-After
// (retry_after_s >= 0) replaces it, capped likewise, and draws nothing.
double RetryDelay(const ChatOptions& options, int retry, double retry_after_s,
                  std::mt19937_64* rng);

// `url` without any user:password@ part, for messages.
std::string DisplayUrl(std::string_view url);

// `text` on one line with every occurrence of `secret` (when not empty) replaced by "[redacted]".
std::string Sanitize(std::string text, std::string_view secret);

}  // namespace arbor::llm
