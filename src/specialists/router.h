// SpecialistRouter: the Specialist the Orchestrator talks to. It assembles a specialist per
// task (ARBOR.md "dynamic construction"): declarative actions go to the BuiltinSpecialist;
// an `agent` action goes to the backend its domain configures in [specialists.<domain>]
// (command: a coding-agent CLI, llm: an OpenAI-compatible model), with the prompt composed
// for that task from skills/ and the task's context; a domain with no specialist configured
// is skipped with a diagnosis saying what to configure. Proposal rounds go to every domain
// configured with propose = true. Safe to call from several threads for different worktrees.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/ports.h"
#include "core/spec.h"
#include "specialists/builtin.h"

namespace arbor {

struct RouterOptions {
  std::string log_root;      // the campaign's runs folder
  Target* target = nullptr;  // local validation (build + check) of LLM answers; optional
  // Sleeps between LLM retries; null sleeps for real (tests pass a recorder).
  std::function<void(double)> sleeper;
};

class SpecialistRouter : public Specialist {
 public:
  SpecialistRouter(const CampaignSpec* spec, RouterOptions options);
  ~SpecialistRouter() override;

  SpecialistResult Implement(const Task& task) override;
  std::vector<std::string> ProposingDomains() const override;
  Proposal Propose(const ProposeRequest& request) override;

 private:
  const CampaignSpec* spec_;
  RouterOptions options_;
  BuiltinSpecialist builtin_;
};

}  // namespace arbor
