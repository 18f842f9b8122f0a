// The Domain Specialists a campaign runs with: the router (specialists/router.h) with its LLM
// backend wired to real ChatClients (llm/chat_client.h). Every message sent to a model is
// scrubbed of the campaign's secrets first (app/secrets.h): a log tail fed back to a model
// must not carry a key to a third party. Every request first asks the campaign's
// LlmBudgetGuard (specialists/llm_budget.h) when [llm] sets a budget: what could exceed it is
// never sent.
#pragma once

#include <memory>
#include <string>

#include "core/model/ports.h"
#include "core/model/spec.h"
#include "specialists/llm_budget.h"
#include "specialists/router.h"
#include "util/secrets.h"

namespace arbor {

// `spec`, `target`, `scrubber` and `budget` (null: no budget) must outlive the router.
// ARBOR_LLM_BACKOFF_S (seconds, default 1) sets the first retry's wait, so tests of 429/5xx
// handling do not wait long.
std::unique_ptr<SpecialistRouter> MakeSpecialists(const CampaignSpec* spec, Target* target,
                                                  const std::string& runs_dir,
                                                  const Scrubber* scrubber,
                                                  LlmBudgetGuard* budget = nullptr);

}  // namespace arbor
