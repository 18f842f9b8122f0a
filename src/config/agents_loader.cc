#include "config/agents_loader.h"

#include <algorithm>
#include <limits>

#include "config/values.h"
#include "util/escape.h"
#include "util/strings.h"

namespace arbor::config_internal {
namespace {

constexpr long long kMaxInt = std::numeric_limits<int>::max();

Status ReadSpecialist(const Section& s, SpecialistSpec* specialist) {
  ARBOR_TRY(
      s.CheckKeys({"backend", "command", "model", "base_url", "api_key_env", "timeout", "retries",
                   "max_rounds", "temperature", "max_answer_tokens", "cost_per_1k_prompt",
                   "cost_per_1k_completion", "propose", "max_proposals", "allow"}));
  std::string word(SpecialistBackendName(specialist->backend));
  ARBOR_TRY(s.ReadString("backend", &word));
  std::optional<SpecialistBackend> parsed = ParseSpecialistBackend(word);
  if (!parsed) {
    return s.Invalid(*s.Get("backend"), s.KeyPath("backend"),
                     "; expected \"builtin\", \"command\" or \"llm\"");
  }
  const SpecialistBackend backend = specialist->backend = *parsed;
  if (backend == SpecialistBackend::kCommand) {
    ARBOR_TRY(s.Require("command", "the agent command (backend \"command\" runs it)"));
  }
  if (backend == SpecialistBackend::kLlm) {
    ARBOR_TRY(s.Require("model", "a model name (backend \"llm\" needs it)"));
    ARBOR_TRY(s.Require("base_url", "an OpenAI-compatible URL (backend \"llm\" needs it)"));
  }
  ARBOR_TRY(s.ReadNonEmptyString("command", &specialist->command));
  ARBOR_TRY(s.ReadNonEmptyString("model", &specialist->model));
  ARBOR_TRY(s.ReadNonEmptyString("base_url", &specialist->base_url));
  if (const toml::node* node = s.Get("base_url"); node != nullptr &&
                                                  !StartsWith(specialist->base_url, "http://") &&
                                                  !StartsWith(specialist->base_url, "https://")) {
    return s.Invalid(*node, s.KeyPath("base_url"),
                     "; expected an http:// or https:// URL like \"http://localhost:8000/v1\"");
  }
  ARBOR_TRY(s.ReadString("api_key_env", &specialist->api_key_env));
  if (const toml::node* node = s.Get("api_key_env");
      node != nullptr && !IsValidEnvName(specialist->api_key_env)) {
    return s.Invalid(*node, s.KeyPath("api_key_env"),
                     "; expected an environment variable name like \"OPENAI_API_KEY\"");
  }
  ARBOR_TRY(s.ReadDuration("timeout", Section::Zero::kRejected, &specialist->timeout_s));
  ARBOR_TRY(s.ReadInt("retries", 0, 20, &specialist->retries));
  ARBOR_TRY(s.ReadInt("max_rounds", 1, 20, &specialist->max_rounds));
  ARBOR_TRY(s.ReadNumber("temperature", NumberRule::kNonNegative, &specialist->temperature));
  ARBOR_TRY(s.ReadInt("max_answer_tokens", 0, kMaxInt, &specialist->max_answer_tokens));
  ARBOR_TRY(s.ReadNumber("cost_per_1k_prompt", NumberRule::kNonNegative,
                         &specialist->cost_per_1k_prompt));
  ARBOR_TRY(s.ReadNumber("cost_per_1k_completion", NumberRule::kNonNegative,
                         &specialist->cost_per_1k_completion));
  ARBOR_TRY(s.ReadBool("propose", &specialist->propose));
  if (specialist->propose && backend == SpecialistBackend::kBuiltin) {
    return s.Invalid(*s.Get("propose"), s.KeyPath("propose"),
                     "; the builtin backend cannot propose actions (use \"llm\" or \"command\")");
  }
  ARBOR_TRY(s.ReadInt("max_proposals", 1, 100, &specialist->max_proposals));
  return s.ReadStringArray("allow", &specialist->allow);
}

Status ReadSpecialists(const Section& root, std::map<std::string, SpecialistSpec>* out) {
  const toml::table* table = nullptr;
  ARBOR_TRY(root.GetTable("specialists", &table));
  if (table == nullptr) return {};
  for (auto&& [key, node] : *table) {
    std::string domain(key.str());
    if (!IsValidName(domain)) {
      return ErrorAt(
          root.file(), key.source(),
          "invalid specialist domain '" + domain + "'; expected letters, digits, '.', '_' or '-'");
    }
    std::string path = "specialists." + domain;
    if (!node.is_table()) return root.WrongType(node, path, "a table ([" + path + "])");
    Section s(root.file(), *node.as_table(), path, "in [" + path + "]");
    SpecialistSpec specialist;
    specialist.domain = domain;
    ARBOR_TRY(ReadSpecialist(s, &specialist));
    (*out)[domain] = std::move(specialist);
  }
  return {};
}

Status ReadLlm(const Section& root, LlmBudget* llm) {
  const toml::table* table = nullptr;
  ARBOR_TRY(root.GetTable("llm", &table));
  if (table == nullptr) return {};
  Section s(root.file(), *table, "llm", "in [llm]");
  ARBOR_TRY(s.CheckKeys({"max_tokens", "max_cost"}));
  if (const toml::node* node = s.Get("max_tokens")) {
    if (!node->is_integer() || node->as_integer()->get() < 0) {
      return s.WrongType(*node, "llm.max_tokens", "an integer >= 0 (0: unlimited)");
    }
    llm->max_tokens = node->as_integer()->get();
  }
  return s.ReadNumber("max_cost", NumberRule::kNonNegative, &llm->max_cost);
}

Status ReadSecrets(const Section& root, std::vector<std::string>* secrets) {
  const toml::table* table = nullptr;
  ARBOR_TRY(root.GetTable("secrets", &table));
  if (table == nullptr) return {};
  Section s(root.file(), *table, "secrets", "in [secrets]");
  ARBOR_TRY(s.CheckKeys({"env"}));
  ARBOR_TRY(s.ReadStringArray("env", secrets));
  for (const std::string& name : *secrets) {
    if (!IsValidEnvName(name)) {
      return s.Invalid(*s.Get("env"), "secrets.env",
                       " ('" + name + "'); expected environment variable names");
    }
  }
  return {};
}

// An agent command whose program is a relative path ("./agent.sh", "tools/agent --fast") names
// a file next to the campaign file: the program is made absolute against `base_dir`, since the
// command runs in a node's worktree for a change and in a scratch folder for a proposal round.
// A bare name ("claude") is looked up in PATH as usual, and a command that starts with anything
// but a plain word (a variable assignment, quotes, a subshell) is left as written.
std::string ResolveAgentProgram(const std::string& base_dir, const std::string& command) {
  const size_t start = command.find_first_not_of(" \t");
  if (start == std::string::npos) return command;
  size_t end = command.find_first_of(" \t", start);
  if (end == std::string::npos) end = command.size();
  const std::string program = command.substr(start, end - start);
  if (program.find('/') == std::string::npos || program[0] == '/' || program[0] == '~' ||
      program.find_first_of("=$`'\"\\(){};|&<>*?") != std::string::npos) {
    return command;
  }
  return command.substr(0, start) + ShellQuote(ResolvePath(base_dir, program)) +
         command.substr(end);
}

}  // namespace

Status ReadAgents(const Section& root, const std::string& base_dir, CampaignSpec* spec) {
  ARBOR_TRY(ReadSpecialists(root, &spec->specialists));
  for (auto& [domain, s] : spec->specialists) {
    if (!s.command.empty()) s.command = ResolveAgentProgram(base_dir, s.command);
  }
  ARBOR_TRY(ReadLlm(root, &spec->llm));
  ARBOR_TRY(ReadSecrets(root, &spec->secrets));
  for (const auto& [domain, s] : spec->specialists) {
    if (!s.api_key_env.empty() && std::find(spec->secrets.begin(), spec->secrets.end(),
                                            s.api_key_env) == spec->secrets.end()) {
      spec->secrets.push_back(s.api_key_env);
    }
  }
  return {};
}

}  // namespace arbor::config_internal
