// LlmSpecialist: a specialist backed by an OpenAI-compatible chat model (llm/chat_client.h).
//
// implement: the model gets the composed prompt (specialists/prompt.h) and answers with a
// unified diff in a ```diff block, or whole files as ```file:<path> blocks, followed by an
// optional ```json report (specialists/agent_report.h; parsing in specialists/llm_answer.h).
// Before each round the task's worktree is reset to task.base_commit, so every answer is a
// complete change against the original files. Arbor checks the change against the patch
// policy (exec/patch_policy.h: CheckPatch for diffs, CheckPaths for files), applies it, then
// validates it locally — the target's build, then its check when the campaign has one (Target
// port, labels "validate-<round>-build" and "validate-<round>-check", env = [target] env +
// parent overlay + the report's env) — and on failure feeds the error back ("Round N: the
// build failed: …" with the output's last 40 lines) and asks again, up to max_rounds.
// Malformed or empty answers (unparseable blocks, a bad report, a ChatReply of kind kEmpty or
// kMalformed) count as a failed round with the problem fed back. A rejected patch is a
// recorded failure naming the rule ("patch policy: <rule>: …"), never applied and never
// retried; so is a transport, HTTP, timeout or configuration error ("llm: <message>").
// On success: kApplied, overlay = parent overlay + report env, summary/confidence/findings/
// questions/proposals from the report (proposals by "<domain> specialist at node <id>").
// propose: the model gets the profile and history and answers with a JSON array of candidate
// actions, validated against the campaign schema (proposed by "<domain> specialist (llm)");
// an answer that is not a JSON array gets one retry, then Proposal::diagnosis says why.
// With an [llm] budget every request first asks the LlmBudgetGuard (llm_budget.h): one it does
// not allow is never sent, and the task ends kSkipped (propose: a diagnosis) with
// usage.over_budget set, so the Orchestrator dispatches no more LLM work.
// Every result carries usage (tokens summed over rounds, cost from the configured prices,
// rounds) and `prompt`: everything the model was given (# system, # user, # user (round N)
// feedback) with a "# assistant (round N): <n> characters" marker per answer, not the answers.
// Thread-safe if `chat` and `target` are; one worktree per concurrent Implement.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/ports.h"
#include "core/model/spec.h"
#include "llm/chat_client.h"
#include "specialists/llm_budget.h"

namespace arbor {

// One chat completion, with the answer's cap in tokens to send (0: the server's default): the
// router passes a real llm::ChatClient's Complete; unit tests pass scripted replies.
using ChatFn =
    std::function<llm::ChatReply(const std::vector<llm::ChatMessage>&, int max_answer_tokens)>;

class LlmSpecialist {
 public:
  // `spec`, `config`, `target` and `budget` must outlive it; `target` may be null (no local
  // validation: the change is returned after it applies), `budget` too (no [llm] budget).
  LlmSpecialist(const CampaignSpec* spec, const SpecialistSpec* config, Target* target, ChatFn chat,
                LlmBudgetGuard* budget = nullptr);

  SpecialistResult Implement(const Task& task, std::string_view protocol,
                             std::string_view skill) const;
  Proposal Propose(const ProposeRequest& request, std::string_view protocol,
                   std::string_view skill) const;

 private:
  const CampaignSpec* spec_;
  const SpecialistSpec* config_;
  Target* target_;
  ChatFn chat_;
  LlmBudgetGuard* budget_;
};

}  // namespace arbor
