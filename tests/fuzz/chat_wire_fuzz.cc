// Fuzzes how Arbor reads an OpenAI-compatible server's HTTP body (llm/chat_wire.h): the answer
// (DecodeChatAnswer), its usage block and a server's error message. A malformed body must be
// a kMalformed/kEmpty error with a one-line message; the server's message is one line and cut.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "llm/chat_wire.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace arbor;
  std::string_view body(reinterpret_cast<const char*>(data), size);
  llm::DecodedAnswer answer = llm::DecodeChatAnswer(body);
  if (!answer.ok) {
    fuzz::CheckOneLine(answer.error.message, "DecodeChatAnswer");
    fuzz::Require(answer.error.kind == llm::ChatError::Kind::kMalformed ||
                      answer.error.kind == llm::ChatError::Kind::kEmpty,
                  "DecodeChatAnswer", "an error that is neither malformed nor empty");
  }
  (void)llm::DecodeUsage(body);
  std::string server = llm::ServerErrorMessage(body);
  fuzz::Require(server.find('\n') == std::string::npos, "ServerErrorMessage",
                "a multi-line message");
  fuzz::Require(server.size() <= llm::kMaxServerMessageChars, "ServerErrorMessage",
                "a message longer than kMaxServerMessageChars: " + std::to_string(server.size()));
  return 0;
}
