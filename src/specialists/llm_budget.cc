#include "specialists/llm_budget.h"

#include <algorithm>
#include <cmath>

#include "util/strings.h"

namespace arbor {

LlmBudgetGuard::LlmBudgetGuard(LlmBudget budget, int64_t spent_tokens, double spent_cost)
    : budget_(budget), spent_tokens_(spent_tokens), spent_cost_(spent_cost) {}

int64_t LlmBudgetGuard::PromptBound(const std::vector<llm::ChatMessage>& messages) {
  int64_t bound = kTemplateTokens;
  for (const llm::ChatMessage& m : messages) {
    bound += kTokensPerMessage + static_cast<int64_t>(m.role.size() + m.content.size());
  }
  return bound;
}

LlmBudgetGuard::Grant LlmBudgetGuard::Reserve(const std::vector<llm::ChatMessage>& messages,
                                              const SpecialistSpec& config) {
  Grant grant;
  grant.max_answer_tokens = config.max_answer_tokens;
  const bool tokens = budget_.max_tokens > 0;
  const bool cost = budget_.max_cost > 0;
  if (!tokens && !cost) return grant;
  const int64_t prompt = PromptBound(messages);
  const double per_prompt = config.cost_per_1k_prompt / 1000;
  const double per_answer = config.cost_per_1k_completion / 1000;
  const int64_t wanted =
      config.max_answer_tokens > 0 ? config.max_answer_tokens : int64_t{kBudgetedAnswerTokens};
  const int64_t least = std::min<int64_t>(wanted, kMinAnswerTokens);

  std::lock_guard<std::mutex> lock(mu_);
  int64_t cap = wanted;
  std::string left;
  if (tokens) {
    const int64_t room = budget_.max_tokens - spent_tokens_ - reserved_tokens_;
    cap = std::min(cap, room - prompt);
    left = std::to_string(std::max<int64_t>(room, 0)) + " of max_tokens " +
           std::to_string(budget_.max_tokens) + " left";
  }
  if (cost) {
    const double room = budget_.max_cost - spent_cost_ - reserved_cost_;
    const double after_prompt = room - static_cast<double>(prompt) * per_prompt;
    if (per_answer > 0) {
      cap = std::min(cap,
                     static_cast<int64_t>(std::floor(std::max(after_prompt, -1.0) / per_answer)));
    } else if (after_prompt < 0) {
      cap = -1;
    }
    left += (left.empty() ? "" : ", ") + FormatDouble(std::max(room, 0.0), 6) + " of max_cost " +
            FormatDouble(budget_.max_cost, 6) + " left";
  }
  if (cap < least) {
    grant.sent = false;
    grant.refusal = "[llm] budget: " + left + "; a request of up to " + std::to_string(prompt) +
                    " prompt tokens with an answer of at least " + std::to_string(least) +
                    " could exceed it: not sent";
    return grant;
  }
  grant.max_answer_tokens = static_cast<int>(cap);
  grant.reserved_tokens = prompt + cap;
  grant.reserved_cost =
      static_cast<double>(prompt) * per_prompt + static_cast<double>(cap) * per_answer;
  reserved_tokens_ += grant.reserved_tokens;
  reserved_cost_ += grant.reserved_cost;
  return grant;
}

void LlmBudgetGuard::Settle(const Grant& grant, const llm::ChatUsage& used,
                            const SpecialistSpec& config) {
  std::lock_guard<std::mutex> lock(mu_);
  reserved_tokens_ -= grant.reserved_tokens;
  reserved_cost_ -= grant.reserved_cost;
  spent_tokens_ += used.prompt_tokens + used.completion_tokens;
  spent_cost_ += static_cast<double>(used.prompt_tokens) / 1000 * config.cost_per_1k_prompt +
                 static_cast<double>(used.completion_tokens) / 1000 * config.cost_per_1k_completion;
}

int64_t LlmBudgetGuard::spent_tokens() const {
  std::lock_guard<std::mutex> lock(mu_);
  return spent_tokens_;
}

double LlmBudgetGuard::spent_cost() const {
  std::lock_guard<std::mutex> lock(mu_);
  return spent_cost_;
}

}  // namespace arbor
