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
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/ports.h"
#include "core/model/spec.h"
#include "specialists/builtin.h"

namespace arbor {

struct RouterOptions {
  std::string log_root;      // the campaign's runs folder
  Target* target = nullptr;  // local validation (build + check) of LLM answers; optional
  // Sleeps between LLM retries; null sleeps for real (tests pass a recorder).
  std::function<void(double)> sleeper;
  // The LLM backend ([specialists.<domain>] backend = "llm"), given the task, its domain's
  // config and the loaded skills (protocol, domain skill: "" when the domain has none). The
  // composition root wires these to an LlmSpecialist; unset, llm domains are skipped with a
  // diagnosis and do not propose.
  std::function<SpecialistResult(const Task&, const SpecialistSpec&, std::string_view protocol,
                                 std::string_view skill)>
      llm_implement;
  std::function<Proposal(const ProposeRequest&, const SpecialistSpec&, std::string_view protocol,
                         std::string_view skill)>
      llm_propose;
};

class SpecialistRouter : public Specialist {
 public:
  SpecialistRouter(const CampaignSpec* spec, RouterOptions options);
  ~SpecialistRouter() override;

  SpecialistResult Implement(const Task& task) override;
  std::vector<std::string> ProposingDomains() const override;
  Proposal Propose(const ProposeRequest& request) override;

 private:
  SpecialistResult Agent(const Task& task);
  // A fresh folder <log_root>/propose/<domain>-<n> for one command proposal round.
  Result<std::string> ScratchDir(const std::string& domain);

  const CampaignSpec* spec_;
  RouterOptions options_;
  BuiltinSpecialist builtin_;
  std::mutex scratch_mu_;
  int scratch_count_ = 0;
};

}  // namespace arbor
