#include "app/agents.h"

#include <cstdlib>
#include <utility>
#include <vector>

#include "llm/chat_client.h"
#include "specialists/llm_specialist.h"

namespace arbor {
namespace {

llm::ChatOptions ChatOptionsFor(const CampaignSpec& spec, const SpecialistSpec& config) {
  llm::ChatOptions o;
  o.base_url = config.base_url;
  o.model = config.model;
  o.api_key_env = config.api_key_env;
  o.timeout_s = config.timeout_s;
  o.retries = config.retries;
  o.temperature = config.temperature;
  o.max_tokens = config.max_answer_tokens;
  o.seed = spec.seed;
  if (const char* b = std::getenv("ARBOR_LLM_BACKOFF_S"); b != nullptr && *b != '\0') {
    char* end = nullptr;
    double v = std::strtod(b, &end);
    if (end != b && v >= 0) o.backoff_s = v;
  }
  return o;
}

// One chat completion on a fresh client (cheap: the client holds only its options), with the
// messages scrubbed of secrets and the answer capped as the specialist asks.
ChatFn ChatFor(const CampaignSpec& spec, const SpecialistSpec& config, const Scrubber* scrubber) {
  llm::ChatOptions options = ChatOptionsFor(spec, config);
  return [options, scrubber](const std::vector<llm::ChatMessage>& messages, int max_answer_tokens) {
    std::vector<llm::ChatMessage> clean = messages;
    if (scrubber != nullptr && !scrubber->empty()) {
      for (llm::ChatMessage& m : clean) m.content = scrubber->Scrub(m.content);
    }
    llm::ChatOptions asked = options;
    asked.max_tokens = max_answer_tokens;
    return llm::ChatClient(asked).Complete(clean);
  };
}

}  // namespace

std::unique_ptr<SpecialistRouter> MakeSpecialists(const CampaignSpec* spec, Target* target,
                                                  const std::string& runs_dir,
                                                  const Scrubber* scrubber,
                                                  LlmBudgetGuard* budget) {
  RouterOptions options;
  options.log_root = runs_dir;
  options.target = target;
  options.llm_implement = [spec, target, scrubber, budget](
                              const Task& task, const SpecialistSpec& config,
                              std::string_view protocol, std::string_view skill) {
    LlmSpecialist llm(spec, &config, target, ChatFor(*spec, config, scrubber), budget);
    return llm.Implement(task, protocol, skill);
  };
  options.llm_propose = [spec, target, scrubber, budget](
                            const ProposeRequest& request, const SpecialistSpec& config,
                            std::string_view protocol, std::string_view skill) {
    LlmSpecialist llm(spec, &config, target, ChatFor(*spec, config, scrubber), budget);
    return llm.Propose(request, protocol, skill);
  };
  return std::make_unique<SpecialistRouter>(spec, std::move(options));
}

}  // namespace arbor
