#include "specialists/llm_budget.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "specialists/llm_testing.h"

namespace arbor {
namespace {

using namespace llm_testing;  // NOLINT(google-build-using-namespace): this test's helpers

std::vector<ChatMessage> Messages(size_t bytes) {
  return {{"system", std::string(bytes / 2, 's')}, {"user", std::string(bytes - bytes / 2, 'u')}};
}

TEST(LlmBudgetGuard, ThePromptIsBoundedByItsBytesAndTheTemplate) {
  EXPECT_EQ(LlmBudgetGuard::PromptBound(Messages(1000)),
            LlmBudgetGuard::kTemplateTokens + 2 * LlmBudgetGuard::kTokensPerMessage + 1000 + 10);
}

TEST(LlmBudgetGuard, WithoutABudgetEveryRequestGoesOutWithTheSpecialistsCap) {
  LlmBudgetGuard guard(LlmBudget{}, 0, 0);
  SpecialistSpec config;
  config.max_answer_tokens = 123;
  LlmBudgetGuard::Grant g = guard.Reserve(Messages(1 << 20), config);
  EXPECT_TRUE(g.sent);
  EXPECT_EQ(g.max_answer_tokens, 123);
}

// The answer cap is lowered to what the prompt leaves, reservations of requests in flight
// count, and a request whose worst case cannot fit is refused with the numbers.
TEST(LlmBudgetGuard, ARequestThatCouldExceedWhatIsLeftIsNotSent) {
  SpecialistSpec config;  // max_answer_tokens 0: capped at kBudgetedAnswerTokens
  const std::vector<ChatMessage> messages = Messages(1000);
  const int64_t prompt = LlmBudgetGuard::PromptBound(messages);
  LlmBudgetGuard guard(LlmBudget{.max_tokens = 10000, .max_cost = 0}, 2000, 0);
  LlmBudgetGuard::Grant first = guard.Reserve(messages, config);
  ASSERT_TRUE(first.sent) << first.refusal;
  EXPECT_EQ(first.max_answer_tokens, LlmBudgetGuard::kBudgetedAnswerTokens);
  // 8000 left, minus the first's worst case: the second's answer gets the rest.
  LlmBudgetGuard::Grant second = guard.Reserve(messages, config);
  ASSERT_TRUE(second.sent) << second.refusal;
  EXPECT_EQ(second.max_answer_tokens,
            8000 - (prompt + LlmBudgetGuard::kBudgetedAnswerTokens) - prompt);
  LlmBudgetGuard::Grant third = guard.Reserve(messages, config);
  EXPECT_FALSE(third.sent);
  EXPECT_NE(third.refusal.find("not sent"), std::string::npos) << third.refusal;
  // Answers count what the server reported, and free the rest of the reservation.
  guard.Settle(first, {900, 100}, config);
  guard.Settle(second, {900, 100}, config);
  EXPECT_EQ(guard.spent_tokens(), 4000);
  EXPECT_TRUE(guard.Reserve(messages, config).sent);
}

TEST(LlmBudgetGuard, TheCostCapUsesTheSpecialistsPrices) {
  SpecialistSpec config;
  config.cost_per_1k_prompt = 1.0;      // 0.001 per prompt token
  config.cost_per_1k_completion = 2.0;  // 0.002 per answer token
  const std::vector<ChatMessage> messages = Messages(500);
  const int64_t prompt = LlmBudgetGuard::PromptBound(messages);
  LlmBudgetGuard guard(LlmBudget{.max_tokens = 0, .max_cost = 5.5}, 0, 0.5);
  LlmBudgetGuard::Grant g = guard.Reserve(messages, config);
  ASSERT_TRUE(g.sent) << g.refusal;
  // 5.0 left: the prompt's worst case, then answer tokens at 0.002 each.
  EXPECT_EQ(g.max_answer_tokens, static_cast<int>((5.0 - prompt * 0.001) / 0.002));
  EXPECT_LE(g.reserved_cost, 5.0 + 1e-9);
  EXPECT_FALSE(guard.Reserve(messages, config).sent);
}

// The LLM specialist asks the guard before every request: what does not fit is never sent,
// the task is skipped (not the idea's failure) and its usage says the budget is spent.
TEST_F(LlmSpecialistTest, ARequestOverTheBudgetIsNotSentAndTheTaskIsSkipped) {
  // A run without a budget first, for the size of the first request.
  ScriptedChat sizing;
  sizing.replies.push_back(Answer(DiffBlock(EditA("BETA"))));
  LlmSpecialist(&spec_, &config_, &target_, sizing.Fn()).Implement(MakeTask(), "PROTOCOL", "SKILL");
  ASSERT_EQ(sizing.calls.size(), 1u);
  const int64_t first_prompt = LlmBudgetGuard::PromptBound(sizing.calls[0]);
  Sh("git checkout -q -- a.txt");

  // Room for the first request's worst case with an answer of 1000, not for a second round
  // after what the first spent (its build fails on BROKEN).
  chat_.replies.push_back(Answer(DiffBlock(EditA("BROKEN")), 1000, 200));
  chat_.replies.push_back(Answer(DiffBlock(EditA("BETA")), 1000, 200));
  LlmBudgetGuard tight(LlmBudget{.max_tokens = first_prompt + 1000, .max_cost = 0}, 0, 0);
  LlmSpecialist specialist(&spec_, &config_, &target_, chat_.Fn(), &tight);
  SpecialistResult r = specialist.Implement(MakeTask(), "PROTOCOL", "SKILL");
  EXPECT_EQ(r.status, Verdict::kSkipped) << r.diagnosis;
  EXPECT_TRUE(r.usage.over_budget);
  EXPECT_NE(r.diagnosis.find("[llm] budget"), std::string::npos) << r.diagnosis;
  ASSERT_EQ(chat_.calls.size(), 1u) << "the second round must not be sent";
  EXPECT_EQ(chat_.answer_caps[0], 1000) << "the answer is capped at what the prompt leaves";
  EXPECT_EQ(r.usage.prompt_tokens + r.usage.completion_tokens, 1200);
  EXPECT_LE(tight.spent_tokens(), first_prompt + 1000);
  EXPECT_NE(r.prompt.find("not asked ([llm] budget"), std::string::npos) << r.prompt;
}

}  // namespace
}  // namespace arbor
