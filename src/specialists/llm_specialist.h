// LlmSpecialist: a specialist backed by an OpenAI-compatible chat model (llm/chat_client.h).
//
// implement: the model gets the composed prompt (specialists/prompt.h) and answers with a
// unified diff in a ```diff block, or whole files as ```file:<path> blocks, followed by an
// optional ```json report (specialists/agent_report.h). Arbor checks the change against the
// patch policy (exec/patch_policy.h), applies it in the task's worktree, then validates it
// locally — the target's build, then its check (Target port, labels "validate-<round>-build"
// and "validate-<round>-check") — and on failure feeds the error back and asks again, up to
// max_rounds. Malformed or empty answers count as a failed round with the parse error fed back.
// A rejected patch is a recorded failure naming the rule, never applied and never retried.
// propose: the model gets the profile and history and answers with a JSON array of candidate
// actions, validated against the campaign schema.
// Usage (tokens, cost from the configured prices, rounds) is returned on every result.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ports.h"
#include "core/spec.h"
#include "llm/chat_client.h"

namespace arbor {

// One chat completion: the router passes a real llm::ChatClient's Complete; unit tests pass
// scripted replies.
using ChatFn = std::function<llm::ChatReply(const std::vector<llm::ChatMessage>&)>;

class LlmSpecialist {
 public:
  // `spec`, `config` and `target` must outlive it; `target` may be null (no local validation:
  // the change is returned after it applies).
  LlmSpecialist(const CampaignSpec* spec, const SpecialistSpec* config, Target* target,
                ChatFn chat);

  SpecialistResult Implement(const Task& task, std::string_view protocol,
                             std::string_view skill) const;
  Proposal Propose(const ProposeRequest& request, std::string_view protocol,
                   std::string_view skill) const;

 private:
  const CampaignSpec* spec_;
  const SpecialistSpec* config_;
  Target* target_;
  ChatFn chat_;
};

}  // namespace arbor
