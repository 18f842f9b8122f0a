// ChatClient (declared in llm/chat_client.h): the attempt loop. The wire format lives in
// chat_wire.cc, the network in http_post.cc.
#include "llm/chat_client.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <thread>
#include <utility>

#include "llm/chat_wire.h"
#include "llm/http_post.h"

namespace arbor::llm {
namespace {

void RealSleep(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

std::string CompletionsUrl(std::string base) {
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + "/chat/completions";
}

std::string SecondsText(double s) {
  std::array<char, 32> buf{};
  std::snprintf(buf.data(), buf.size(), "%g", s);
  return buf.data();
}

struct AttemptResult {
  bool ok = false;
  bool retryable = false;
  std::string content;
  std::optional<ChatUsage> usage;
  ChatError error;
};

// Turns one HTTP exchange into an answer or a classified failure.
AttemptResult Interpret(const HttpResponse& r, const std::string& shown_url, double timeout_s) {
  using Kind = ChatError::Kind;
  AttemptResult a;
  switch (r.outcome) {
    case HttpResponse::Outcome::kTimeout:
      a.retryable = true;
      a.error = {Kind::kTimeout, 0,
                 "no answer from " + shown_url + " within " + SecondsText(timeout_s) + " s"};
      return a;
    case HttpResponse::Outcome::kTransport:
      a.retryable = true;
      a.error = {Kind::kTransport, 0, "cannot reach " + shown_url + ": " + r.error};
      return a;
    case HttpResponse::Outcome::kBadUrl:  // a typo in the campaign file: retrying cannot help
      a.error = {Kind::kConfig, 0, "base_url " + shown_url + " is not usable: " + r.error};
      return a;
    case HttpResponse::Outcome::kTooLarge:
      a.error = {Kind::kMalformed, 0, "response larger than 16 MB"};
      return a;
    case HttpResponse::Outcome::kOk:
      break;
  }
  int status = static_cast<int>(r.status);
  if (status < 200 || status > 299) {
    a.usage = DecodeUsage(r.body);
    a.retryable = status == 429 || status >= 500;
    std::string message = "HTTP " + std::to_string(status) + " from " + shown_url;
    if (std::string server = ServerErrorMessage(r.body); !server.empty()) {
      message += ": " + server;
    }
    a.error = {Kind::kHttp, status, std::move(message)};
    return a;
  }
  DecodedAnswer answer = DecodeChatAnswer(r.body);
  a.ok = answer.ok;
  a.content = std::move(answer.content);
  a.usage = answer.usage;
  a.error = std::move(answer.error);
  return a;
}

ChatReply ConfigError(std::string message) {
  ChatReply reply;
  reply.error = {ChatError::Kind::kConfig, 0, std::move(message)};
  return reply;
}

}  // namespace

ChatClient::ChatClient(ChatOptions options, Sleeper sleeper)
    : options_(std::move(options)), sleeper_(sleeper ? std::move(sleeper) : Sleeper(RealSleep)) {}

ChatReply ChatClient::Complete(const std::vector<ChatMessage>& messages) const {
  // The key is looked up on every call so a rotated key is picked up, and it lives only in
  // this frame and the request header list.
  std::string key;
  if (!options_.api_key_env.empty()) {
    const char* value = std::getenv(options_.api_key_env.c_str());
    if (value == nullptr) {
      return ConfigError("environment variable " + options_.api_key_env + " is not set");
    }
    if (*value == '\0') {
      return ConfigError("environment variable " + options_.api_key_env + " is empty");
    }
    key = value;
  }
  if (options_.base_url.empty()) return ConfigError("base_url is empty");

  HttpRequest request;
  request.url = CompletionsUrl(options_.base_url);
  request.body = EncodeChatRequest(options_, messages);
  request.timeout_s = options_.timeout_s;
  request.max_body_bytes = kMaxAnswerBytes;
  // "Expect:" stops libcurl from waiting for a 100 Continue on long prompts.
  request.headers = {"Content-Type: application/json", "Accept: application/json", "Expect:"};
  if (!key.empty()) request.headers.push_back("Authorization: Bearer " + key);
  const std::string shown_url = DisplayUrl(request.url);

  ChatReply reply;
  std::mt19937_64 jitter(options_.seed);
  const int attempts = 1 + std::max(0, options_.retries);
  double delay = 0;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    if (attempt > 0) sleeper_(delay);
    reply.attempts = attempt + 1;
    HttpResponse response = PostJson(request);
    AttemptResult result = Interpret(response, shown_url, options_.timeout_s);
    if (result.usage) {
      reply.usage.prompt_tokens += result.usage->prompt_tokens;
      reply.usage.completion_tokens += result.usage->completion_tokens;
    }
    if (result.ok) {
      reply.ok = true;
      reply.content = std::move(result.content);
      reply.error = {};
      return reply;
    }
    reply.error = std::move(result.error);
    reply.error.message = Sanitize(std::move(reply.error.message), key);
    if (!result.retryable) break;
    delay = RetryDelay(options_, attempt, response.retry_after_s, &jitter);
  }
  return reply;
}

std::string_view ChatErrorKindName(ChatError::Kind k) {
  switch (k) {
    case ChatError::Kind::kTransport:
      return "transport";
    case ChatError::Kind::kTimeout:
      return "timeout";
    case ChatError::Kind::kHttp:
      return "http";
    case ChatError::Kind::kMalformed:
      return "malformed";
    case ChatError::Kind::kEmpty:
      return "empty";
    case ChatError::Kind::kConfig:
      return "config";
  }
  return "unknown";
}

}  // namespace arbor::llm
