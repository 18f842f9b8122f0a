// ChatClient: an OpenAI-compatible chat-completions client (POST {base_url}/chat/completions).
//
// The contract the LLM specialist relies on:
//   - One Complete() call sends the whole conversation and returns the first choice's message
//     content plus the token usage the server reported (0 when it reported none).
//   - The API key is read from the environment variable `api_key_env` at call time (never
//     cached, never logged, never part of an error message); an empty name sends no
//     Authorization header.
//   - Transport errors, timeouts (`timeout_s` for the whole request), HTTP 429 and 5xx are
//     retried up to `retries` times with exponential backoff (`backoff_s` × 2^attempt, capped
//     at `max_backoff_s`, jitter drawn from `seed`), honouring a Retry-After header in seconds
//     (capped likewise). Other 4xx fail at once.
//   - Every failure is a ChatError with a kind and a one-line message naming what was wrong
//     ("HTTP 401 from http://…/chat/completions: invalid key", "response is not JSON at byte
//     12", "response has no choices[0].message.content", "empty answer").
//   - Safe to use from several threads at once (one curl easy handle per call).
// Streaming is not used. Sleeping between retries goes through the injectable Sleeper, so
// tests never wait on the wall clock.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace arbor::llm {

struct ChatMessage {
  std::string role;  // system | user | assistant
  std::string content;
};

struct ChatOptions {
  std::string base_url;  // "http://127.0.0.1:8000/v1" (no trailing /chat/completions)
  std::string model;
  std::string api_key_env;  // name of the variable holding the key; "" = no key
  double timeout_s = 120;
  int retries = 3;
  double backoff_s = 1;
  double max_backoff_s = 30;
  double temperature = 0;
  int max_tokens = 0;  // per answer; 0 = server default (not sent)
  uint64_t seed = 1;   // jitter of the backoff
};

struct ChatUsage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
};

struct ChatError {
  enum class Kind { kTransport, kTimeout, kHttp, kMalformed, kEmpty, kConfig };
  Kind kind = Kind::kTransport;
  int http_status = 0;
  std::string message;  // one line, no secrets
};

struct ChatReply {
  bool ok = false;
  std::string content;  // ok: the first choice's message content
  ChatUsage usage;      // summed over every attempt that returned a usage block
  int attempts = 0;
  ChatError error;  // !ok: the last failure
};

// Sleeps `seconds`; the default sleeps for real. Tests pass one that records and returns.
using Sleeper = std::function<void(double seconds)>;

class ChatClient {
 public:
  explicit ChatClient(ChatOptions options, Sleeper sleeper = nullptr);
  ChatReply Complete(const std::vector<ChatMessage>& messages) const;
  const ChatOptions& options() const { return options_; }

 private:
  ChatOptions options_;
  Sleeper sleeper_;
};

std::string_view ChatErrorKindName(ChatError::Kind k);

}  // namespace arbor::llm
