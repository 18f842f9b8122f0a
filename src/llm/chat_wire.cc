// The chat-completions wire format (declared in llm/chat_wire.h). nlohmann-json exceptions stop
// here.
#include "llm/chat_wire.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace arbor::llm {
namespace {

using nlohmann::json;

std::optional<json> ParseQuietly(std::string_view body) {
  json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return std::nullopt;
  return doc;
}

std::optional<ChatUsage> UsageOf(const json& doc) {
  if (!doc.is_object()) return std::nullopt;
  auto it = doc.find("usage");
  if (it == doc.end() || !it->is_object()) return std::nullopt;
  ChatUsage usage;
  auto field = [&](const char* name, int64_t* out) {
    auto f = it->find(name);
    if (f != it->end() && f->is_number_integer()) *out = f->get<int64_t>();
  };
  field("prompt_tokens", &usage.prompt_tokens);
  field("completion_tokens", &usage.completion_tokens);
  return usage;
}

// The value at choices[0].message.content, or null when any step of the path is missing.
const json* ContentOf(const json& doc) {
  if (!doc.is_object()) return nullptr;
  auto choices = doc.find("choices");
  if (choices == doc.end() || !choices->is_array() || choices->empty()) return nullptr;
  const json& first = (*choices)[0];
  if (!first.is_object()) return nullptr;
  auto message = first.find("message");
  if (message == first.end() || !message->is_object()) return nullptr;
  auto content = message->find("content");
  return content == message->end() ? nullptr : &*content;
}

ChatError Malformed(std::string message) {
  return ChatError{ChatError::Kind::kMalformed, 0, std::move(message)};
}

}  // namespace

std::string EncodeChatRequest(const ChatOptions& options,
                              const std::vector<ChatMessage>& messages) {
  json list = json::array();
  for (const ChatMessage& m : messages) list.push_back({{"role", m.role}, {"content", m.content}});
  json request = {{"model", options.model},
                  {"messages", std::move(list)},
                  {"temperature", options.temperature}};
  if (options.max_tokens > 0) request["max_tokens"] = options.max_tokens;
  // Invalid UTF-8 in a message (a binary log tail, say) is replaced rather than thrown on.
  return request.dump(-1, ' ', false, json::error_handler_t::replace);
}

DecodedAnswer DecodeChatAnswer(std::string_view body) {
  DecodedAnswer answer;
  json doc;
  try {
    doc = json::parse(body);
  } catch (const json::parse_error& e) {
    answer.error = Malformed("response is not JSON at byte " + std::to_string(e.byte));
    return answer;
  } catch (const json::exception&) {
    // A number too large for a double ("1e400") is out_of_range.406, not a parse_error.
    answer.error = Malformed("response is not JSON: a number is out of range");
    return answer;
  }
  answer.usage = UsageOf(doc);
  const json* content = ContentOf(doc);
  if (content == nullptr || !(content->is_string() || content->is_null())) {
    answer.error = Malformed("response has no choices[0].message.content");
    return answer;
  }
  if (content->is_null() || content->get_ref<const std::string&>().empty()) {
    answer.error = ChatError{ChatError::Kind::kEmpty, 0, "empty answer"};
    return answer;
  }
  answer.ok = true;
  answer.content = content->get<std::string>();
  return answer;
}

std::optional<ChatUsage> DecodeUsage(std::string_view body) {
  std::optional<json> doc = ParseQuietly(body);
  return doc ? UsageOf(*doc) : std::nullopt;
}

std::string ServerErrorMessage(std::string_view body) {
  std::optional<json> doc = ParseQuietly(body);
  if (!doc || !doc->is_object()) return "";
  auto error = doc->find("error");
  if (error == doc->end()) return "";
  std::string message;
  if (error->is_string()) {
    message = error->get<std::string>();
  } else if (error->is_object()) {
    auto m = error->find("message");
    if (m != error->end() && m->is_string()) message = m->get<std::string>();
  }
  message = Sanitize(std::move(message), "");
  if (message.size() > kMaxServerMessageChars) {
    size_t cut = kMaxServerMessageChars - 3;
    // Never split a UTF-8 sequence: step back over continuation bytes.
    while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;
    message.resize(cut);
    message += "...";
  }
  return message;
}

double RetryDelay(const ChatOptions& options, int retry, double retry_after_s,
                  std::mt19937_64* rng) {
  double cap = std::max(0.0, options.max_backoff_s);
  if (retry_after_s >= 0) return std::min(retry_after_s, cap);
  double base = std::min(std::max(0.0, options.backoff_s) * std::ldexp(1.0, retry), cap);
  // The top 53 bits as a double in [0, 1): the same on every standard library, unlike
  // std::uniform_real_distribution.
  double unit = static_cast<double>((*rng)() >> 11) * 0x1.0p-53;
  return base * (0.5 + 0.5 * unit);
}

std::string DisplayUrl(std::string_view url) {
  size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  size_t host = scheme + 3;
  size_t end = url.find_first_of("/?#", host);
  size_t at = url.substr(0, end).rfind('@');
  if (at == std::string_view::npos || at < host) return std::string(url);
  return std::string(url.substr(0, host)) + std::string(url.substr(at + 1));
}

std::string Sanitize(std::string text, std::string_view secret) {
  if (!secret.empty()) {
    constexpr std::string_view kRedacted = "[redacted]";
    for (size_t at = text.find(secret); at != std::string::npos;
         at = text.find(secret, at + kRedacted.size())) {
      text.replace(at, secret.size(), kRedacted);
    }
  }
  std::replace_if(
      text.begin(), text.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return text;
}

}  // namespace arbor::llm
