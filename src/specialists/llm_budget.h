// LlmBudgetGuard: the campaign's [llm] budget as a hard cap on what is sent (docs/llm.md).
//
// Before a chat request goes out, the guard takes its worst case from what is left:
//   * its prompt: at most one token per byte of the messages (a byte-level BPE or SentencePiece
//     tokenizer, which every OpenAI-compatible model uses, never makes a token of less than a
//     byte) plus a chat template's own tokens (kTemplateTokens, and kTokensPerMessage for each
//     message);
//   * its answer: at most the `max_tokens` sent with it: the specialist's max_answer_tokens
//     (kBudgetedAnswerTokens when that is 0: under a budget an answer is never unbounded),
//     lowered to what is left after the prompt.
// A request whose prompt alone does not fit, or whose answer would be capped below
// kMinAnswerTokens (or below max_answer_tokens when that is smaller), is not sent. When the
// answer comes, the reservation is replaced by the usage the server reported. Requests in
// flight at once each hold their reservation, so parallel specialists cannot overshoot
// together. `max_cost` works the same way through the specialist's prices.
//
// What it cannot see: tokens a server bills without reporting them (a request that timed out
// on Arbor's side), and spend of a run killed mid-request (the next run starts from what the
// store recorded). Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/model/spec.h"
#include "llm/chat_client.h"

namespace arbor {

class LlmBudgetGuard {
 public:
  static constexpr int64_t kTemplateTokens = 64;
  static constexpr int64_t kTokensPerMessage = 8;
  static constexpr int kMinAnswerTokens = 256;
  static constexpr int kBudgetedAnswerTokens = 4096;

  // `spent_*`: what earlier runs of the campaign spent (the store's meta).
  LlmBudgetGuard(LlmBudget budget, int64_t spent_tokens, double spent_cost);

  // One request's permission: `sent` false means do not send it (`refusal` says why); else
  // `max_answer_tokens` is the answer cap to send (0 without a budget: the specialist's own
  // max_answer_tokens applies, 0 leaving it to the server).
  struct Grant {
    bool sent = true;
    int max_answer_tokens = 0;
    int64_t reserved_tokens = 0;
    double reserved_cost = 0;
    std::string refusal;
  };
  Grant Reserve(const std::vector<llm::ChatMessage>& messages, const SpecialistSpec& config);
  // After the request (answered or not): frees the grant's reservation and counts `used`.
  void Settle(const Grant& grant, const llm::ChatUsage& used, const SpecialistSpec& config);

  // The prompt's worst case in tokens.
  static int64_t PromptBound(const std::vector<llm::ChatMessage>& messages);

  int64_t spent_tokens() const;
  double spent_cost() const;

 private:
  const LlmBudget budget_;
  mutable std::mutex mu_;
  int64_t spent_tokens_;
  double spent_cost_;
  int64_t reserved_tokens_ = 0;
  double reserved_cost_ = 0;
};

}  // namespace arbor
