#include "specialists/llm_specialist.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "specialists/llm_testing.h"

namespace arbor {
namespace {

using namespace llm_testing;  // NOLINT(google-build-using-namespace): this test's helpers

TEST_F(LlmSpecialistTest, GoodDiffIsAppliedAndValidated) {
  const std::string answer = "Done.\n" + DiffBlock(EditA("BETA")) +
                             "```json\n{\"summary\": \"uppercased beta\", \"confidence\": 0.8, "
                             "\"findings\": [\"caps are faster\"], \"env\": {\"X\": \"1\"}}\n```\n";
  chat_.replies.push_back(Answer(answer));
  SpecialistResult r = Implement(&target_);
  ASSERT_EQ(r.status, Verdict::kApplied) << r.diagnosis;
  EXPECT_EQ(A(), "alpha\nBETA\ngamma\n");
  EXPECT_EQ(r.backend, SpecialistBackend::kLlm);
  EXPECT_EQ(r.summary, "uppercased beta");
  EXPECT_DOUBLE_EQ(r.confidence, 0.8);
  EXPECT_EQ(r.findings, std::vector<std::string>{"caps are faster"});
  EXPECT_EQ(r.overlay, (EnvOverlay{{"P", "parent"}, {"X", "1"}}));
  ASSERT_EQ(target_.contexts.size(), 1u);  // no check command: build only
  EXPECT_EQ(target_.contexts[0].label, "validate-1-build");
  EXPECT_EQ(target_.contexts[0].node, 7);
  EXPECT_EQ(target_.contexts[0].env, (EnvOverlay{{"B", "base"}, {"P", "parent"}, {"X", "1"}}));
  EXPECT_EQ(r.usage.rounds, 1);
  EXPECT_EQ(r.usage.prompt_tokens, 100);
  EXPECT_EQ(r.usage.completion_tokens, 50);
  ASSERT_EQ(chat_.calls.size(), 1u);
  ASSERT_EQ(chat_.calls[0].size(), 2u);
  EXPECT_EQ(chat_.calls[0][0].role, "system");
  EXPECT_EQ(chat_.calls[0][1].role, "user");
  EXPECT_NE(chat_.calls[0][1].content.find("```file:"),
            std::string::npos);  // answer format
  EXPECT_EQ(r.prompt.rfind("# system\n", 0), 0u);
  EXPECT_NE(r.prompt.find("\n# user\n"), std::string::npos);
  EXPECT_NE(
      r.prompt.find("\n# assistant (round 1): " + std::to_string(answer.size()) + " characters\n"),
      std::string::npos);
  EXPECT_EQ(r.prompt.find("+BETA"),
            std::string::npos);  // the answers are not in the prompt
}

TEST_F(LlmSpecialistTest, WithoutATargetTheChangeIsReturnedOnceItApplies) {
  chat_.replies.push_back(Answer(DiffBlock(EditA("BROKEN"))));
  SpecialistResult r = Implement(nullptr);
  ASSERT_EQ(r.status, Verdict::kApplied) << r.diagnosis;
  EXPECT_EQ(A(), "alpha\nBROKEN\ngamma\n");
  EXPECT_EQ(r.summary, "llm test-model: Uppercase beta");
}

TEST_F(LlmSpecialistTest, BuildErrorIsFedBackAndTheNextRoundStartsFromTheOriginal) {
  chat_.replies.push_back(Answer(DiffBlock(EditA("BROKEN")), 100, 40));
  chat_.replies.push_back(Answer(DiffBlock(EditA("BETA")), 300, 60));
  SpecialistResult r = Implement(&target_);
  ASSERT_EQ(r.status, Verdict::kApplied) << r.diagnosis;
  EXPECT_EQ(A(),
            "alpha\nBETA\ngamma\n");  // round 2's diff is against the original a.txt
  ASSERT_EQ(chat_.calls.size(), 2u);
  ASSERT_EQ(chat_.calls[1].size(), 4u);
  EXPECT_EQ(chat_.calls[1][2].role, "assistant");
  EXPECT_EQ(chat_.calls[1][2].content, DiffBlock(EditA("BROKEN")));
  EXPECT_EQ(chat_.calls[1][3].role, "user");
  EXPECT_EQ(LastSent(1).rfind("Round 1: the build failed: exit code 2\ncompiling a.txt\n"
                              "a.txt:2: error: BROKEN is not a word",
                              0),
            0u)
      << LastSent(1);
  EXPECT_EQ(target_.contexts.size(), 2u);
  EXPECT_EQ(target_.contexts[1].label, "validate-2-build");
  EXPECT_EQ(r.usage.rounds, 2);
  EXPECT_EQ(r.usage.prompt_tokens, 400);
  EXPECT_EQ(r.usage.completion_tokens, 100);
  EXPECT_NE(r.prompt.find("# user (round 2)\nRound 1: the build failed"), std::string::npos);
  EXPECT_NE(r.prompt.find("# assistant (round 2): "), std::string::npos);
}

TEST_F(LlmSpecialistTest, CheckFailureIsFedBack) {
  spec_.target.check = "./check.sh";
  chat_.replies.push_back(Answer(DiffBlock(EditA("WRONG"))));
  chat_.replies.push_back(Answer(DiffBlock(EditA("BETA"))));
  SpecialistResult r = Implement(&target_);
  ASSERT_EQ(r.status, Verdict::kApplied) << r.diagnosis;
  ASSERT_EQ(target_.contexts.size(), 4u);
  EXPECT_EQ(target_.contexts[1].label, "validate-1-check");
  EXPECT_EQ(target_.contexts[3].label, "validate-2-check");
  EXPECT_EQ(LastSent(1).rfind("Round 1: the check failed: exit code 1\nexpected beta", 0), 0u);
}

TEST_F(LlmSpecialistTest, WholeFilesAreWritten) {
  chat_.replies.push_back(
      Answer("```file:a.txt\nalpha\nBETA\ngamma\n```\n```"
             "file:sub/dir/c.txt\nnew\n```\n"));
  SpecialistResult r = Implement(&target_);
  ASSERT_EQ(r.status, Verdict::kApplied) << r.diagnosis;
  EXPECT_EQ(A(), "alpha\nBETA\ngamma\n");
  EXPECT_EQ(Slurp(repo_ / "sub/dir/c.txt"), "new\n");
}

TEST_F(LlmSpecialistTest, UnusableAnswersAreRoundsWithTheProblemFedBack) {
  chat_.replies.push_back(Answer("I would uppercase beta."));
  chat_.replies.push_back(Failure(ChatError::Kind::kEmpty, "empty answer"));
  chat_.replies.push_back(Answer(DiffBlock(EditA("BETA"))));
  SpecialistResult r = Implement(&target_);
  ASSERT_EQ(r.status, Verdict::kApplied) << r.diagnosis;
  ASSERT_EQ(chat_.calls.size(), 3u);
  EXPECT_EQ(LastSent(1).rfind(
                "Round 1: your answer could not be used: " + std::string(kNoChangeMessage), 0),
            0u)
      << LastSent(1);
  EXPECT_EQ(LastSent(2).rfind("Round 2: your answer was empty: empty answer", 0), 0u)
      << LastSent(2);
  EXPECT_EQ(r.usage.rounds, 3);
  EXPECT_NE(r.prompt.find("# assistant (round 2): no answer (empty answer)"), std::string::npos);
}

TEST_F(LlmSpecialistTest, MalformedReplyThenGood) {
  chat_.replies.push_back(Failure(ChatError::Kind::kMalformed, "response is not JSON at byte 3"));
  chat_.replies.push_back(Answer(DiffBlock(EditA("BETA"))));
  SpecialistResult r = Implement(&target_);
  ASSERT_EQ(r.status, Verdict::kApplied) << r.diagnosis;
  EXPECT_EQ(LastSent(1).rfind("Round 1: your answer was malformed: response is not JSON", 0), 0u);
}

TEST_F(LlmSpecialistTest, DiffThatDoesNotApplyIsFedBack) {
  chat_.replies.push_back(
      Answer(DiffBlock("--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n nope\n-two\n+TWO\n")));
  chat_.replies.push_back(Answer(DiffBlock(EditA("BETA"))));
  SpecialistResult r = Implement(&target_);
  ASSERT_EQ(r.status, Verdict::kApplied) << r.diagnosis;
  EXPECT_EQ(LastSent(1).rfind("Round 1: the diff did not apply: error: patch failed: b.txt:1", 0),
            0u)
      << LastSent(1);
}

TEST_F(LlmSpecialistTest, GivesUpAfterMaxRounds) {
  for (int i = 0; i < 4; ++i) chat_.replies.push_back(Answer(DiffBlock(EditA("BROKEN"))));
  SpecialistResult r = Implement(&target_);
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.diagnosis, "llm: no valid change after 3 rounds: the build failed: exit code 2");
  EXPECT_EQ(chat_.calls.size(), 3u);
  EXPECT_EQ(r.usage.rounds, 3);
  EXPECT_EQ(r.usage.prompt_tokens, 300);
  EXPECT_EQ(r.prompt.find("# user (round 4)"), std::string::npos);  // never sent
  EXPECT_NE(r.prompt.find("# user (round 3)"), std::string::npos);
}

TEST_F(LlmSpecialistTest, TransportErrorFailsAtOnce) {
  chat_.replies.push_back(
      Failure(ChatError::Kind::kHttp, "HTTP 401 from http://x/v1/chat/completions: bad key"));
  chat_.replies.push_back(Answer(DiffBlock(EditA("BETA"))));
  SpecialistResult r = Implement(&target_);
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.diagnosis, "llm: HTTP 401 from http://x/v1/chat/completions: bad key");
  EXPECT_EQ(chat_.calls.size(), 1u);
  EXPECT_EQ(r.usage.rounds, 1);
  EXPECT_EQ(A(), "alpha\nbeta\ngamma\n");
}

TEST_F(LlmSpecialistTest, CostComesFromTheConfiguredPrices) {
  config_.cost_per_1k_prompt = 0.5;
  config_.cost_per_1k_completion = 2;
  chat_.replies.push_back(Answer(DiffBlock(EditA("BROKEN")), 1500, 250));
  chat_.replies.push_back(Answer(DiffBlock(EditA("BETA")), 500, 250));
  SpecialistResult r = Implement(&target_);
  ASSERT_EQ(r.status, Verdict::kApplied) << r.diagnosis;
  EXPECT_DOUBLE_EQ(r.usage.cost, 2000.0 / 1000 * 0.5 + 500.0 / 1000 * 2);
}

TEST_F(LlmSpecialistTest, ReportProposalsAreReturnedWithWhoProposedThem) {
  chat_.replies.push_back(Answer(DiffBlock(EditA("BETA")) +
                                 "```json\n{\"summary\": \"s\", \"proposals\": [{\"id\": "
                                 "\"kernel.unroll\", \"layer\": "
                                 "\"kernel\", \"category\": \"unroll\", \"describe\": \"unroll "
                                 "the loop\", \"apply\": "
                                 "{\"env\": {\"UNROLL\": \"4\"}}}]}\n```\n"));
  SpecialistResult r = Implement(&target_);
  ASSERT_EQ(r.status, Verdict::kApplied) << r.diagnosis;
  ASSERT_EQ(r.proposals.size(), 1u) << r.diagnosis;
  EXPECT_EQ(r.proposals[0].id, "kernel.unroll");
  EXPECT_EQ(r.proposals[0].proposed_by, "kernel specialist at node 7");
}

TEST_F(LlmSpecialistTest, AnEnvOnlyReportIsAChange) {
  chat_.replies.push_back(Answer("```json\n{\"env\": {\"OMP_NUM_THREADS\": \"4\"}}\n```\n"));
  SpecialistResult r = Implement(&target_);
  ASSERT_EQ(r.status, Verdict::kApplied) << r.diagnosis;
  EXPECT_EQ(r.overlay, (EnvOverlay{{"OMP_NUM_THREADS", "4"}, {"P", "parent"}}));
  EXPECT_EQ(A(), "alpha\nbeta\ngamma\n");
}

TEST_F(LlmSpecialistTest, AReportWithoutEnvOrChangeIsFedBack) {
  chat_.replies.push_back(Answer("```json\n{\"summary\": \"nothing to do\"}\n```\n"));
  chat_.replies.push_back(Answer(DiffBlock(EditA("BETA"))));
  SpecialistResult r = Implement(&target_);
  ASSERT_EQ(r.status, Verdict::kApplied) << r.diagnosis;
  EXPECT_EQ(LastSent(1).rfind("Round 1: " + std::string(kNoChangeMessage), 0), 0u) << LastSent(1);
}

// A file the model writes that the repository ignores is staged (git add -f), so the snapshot
// commits what was validated, and the summary warns about it.
TEST_F(LlmSpecialistTest, AFileTheRepositoryIgnoresIsStagedWithAWarning) {
  Write(repo_ / ".git" / "info" / "exclude", "*.env\n");
  chat_.replies.push_back(Answer("```file:tune.env\nFAST=1\n```\n"));
  SpecialistResult r = Implement(&target_);
  ASSERT_EQ(r.status, Verdict::kApplied) << r.diagnosis;
  EXPECT_NE(r.summary.find("warning: the repository ignores tune.env"), std::string::npos)
      << r.summary;
  EXPECT_EQ(Trim(Sh("git diff --cached --name-only")), "tune.env");
}

}  // namespace
}  // namespace arbor
