#include "specialists/router.h"

#include <chrono>
#include <filesystem>
#include <utility>

#include "core/search/candidates.h"
#include "specialists/command_specialist.h"
#include "specialists/prompt.h"
#include "util/check.h"

namespace arbor {

namespace {

using Verdict = SpecialistResult::Status;

// The coordination protocol (required: an agent without it does not know the contract) and
// the domain's expertise (optional: a domain without a skill file still gets the protocol).
struct Skills {
  std::string protocol;
  std::string skill;
};

Result<Skills> LoadSkills(const CampaignSpec& spec, const std::string& domain) {
  std::vector<std::string> dirs = SkillDirs(spec);
  ARBOR_TRY_ASSIGN(std::string protocol, LoadSkill(dirs, "protocol"));
  Result<std::string> skill = LoadSkill(dirs, domain);
  return Skills{std::move(protocol), skill ? std::move(*skill) : std::string()};
}

SpecialistResult Unhandled(Verdict status, const Task& task, std::string summary,
                           std::string diagnosis) {
  SpecialistResult r;
  r.status = status;
  r.overlay = task.parent_overlay;
  r.summary = std::move(summary);
  r.diagnosis = std::move(diagnosis);
  return r;
}

}  // namespace

SpecialistRouter::SpecialistRouter(const CampaignSpec* spec, RouterOptions options)
    : spec_(spec), options_(std::move(options)), builtin_(spec, options_.log_root, PatchPolicy{}) {
  ARBOR_CHECK(spec_ != nullptr, "SpecialistRouter needs a campaign spec");
}

SpecialistRouter::~SpecialistRouter() = default;

SpecialistResult SpecialistRouter::Implement(const Task& task) {
  ARBOR_CHECK(task.action != nullptr, "Task without an action");
  auto start = std::chrono::steady_clock::now();
  SpecialistResult result;
  if (task.action->apply.kind == ApplySpec::Kind::kAgent) {
    result = Agent(task);
  } else {
    result = builtin_.Implement(task);
    result.backend = SpecialistBackend::kBuiltin;
  }
  result.duration_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

SpecialistResult SpecialistRouter::Agent(const Task& task) {
  std::string domain = SubstituteValue(task.action->apply, task.value).agent;
  auto it = spec_->specialists.find(domain);
  if (it == spec_->specialists.end() || it->second.backend == SpecialistBackend::kBuiltin) {
    SpecialistResult r = builtin_.Implement(task);  // skipped, saying what to configure
    r.backend = SpecialistBackend::kBuiltin;
    return r;
  }
  const SpecialistSpec& config = it->second;
  std::string summary = "agent " + domain;
  if (config.backend == SpecialistBackend::kLlm && !options_.llm_implement) {
    SpecialistResult r = Unhandled(Verdict::kSkipped, task, "skipped " + summary,
                                   "no LLM backend built in for domain '" + domain + "'");
    r.backend = SpecialistBackend::kLlm;
    return r;
  }
  Result<Skills> skills = LoadSkills(*spec_, domain);
  if (!skills) {
    SpecialistResult r =
        Unhandled(Verdict::kFailed, task, summary, "skills: " + skills.error().message);
    r.backend = config.backend;
    return r;
  }
  if (config.backend == SpecialistBackend::kLlm) {
    SpecialistResult r = options_.llm_implement(task, config, skills->protocol, skills->skill);
    if (r.backend == SpecialistBackend::kBuiltin) r.backend = SpecialistBackend::kLlm;
    return r;
  }
  return CommandSpecialist(spec_, &config, options_.log_root)
      .Implement(task, skills->protocol, skills->skill);
}

std::vector<std::string> SpecialistRouter::ProposingDomains() const {
  std::vector<std::string> domains;  // the map is ordered: sorted by domain
  for (const auto& [domain, config] : spec_->specialists) {
    if (!config.propose) continue;
    if (config.backend == SpecialistBackend::kCommand ||
        (config.backend == SpecialistBackend::kLlm && options_.llm_propose)) {
      domains.push_back(domain);
    }
  }
  return domains;
}

Result<std::string> SpecialistRouter::ScratchDir(const std::string& domain) {
  namespace fs = std::filesystem;
  std::lock_guard<std::mutex> lock(scratch_mu_);
  fs::path base = fs::path(options_.log_root) / "propose";
  std::error_code ec;
  fs::create_directories(base, ec);
  if (ec) return MakeError("cannot create " + base.string() + ": " + ec.message());
  // A resumed campaign finds the folders of earlier rounds: never reuse one.
  for (;;) {
    fs::path dir = base / (domain + "-" + std::to_string(++scratch_count_));
    if (fs::create_directory(dir, ec)) return dir.string();
    if (ec) return MakeError("cannot create " + dir.string() + ": " + ec.message());
  }
}

Proposal SpecialistRouter::Propose(const ProposeRequest& request) {
  Proposal proposal;
  auto it = spec_->specialists.find(request.domain);
  bool can = it != spec_->specialists.end() && it->second.propose &&
             (it->second.backend == SpecialistBackend::kCommand ||
              (it->second.backend == SpecialistBackend::kLlm && options_.llm_propose));
  if (!can) return Specialist::Propose(request);
  const SpecialistSpec& config = it->second;
  Result<Skills> skills = LoadSkills(*spec_, request.domain);
  if (!skills) {
    proposal.diagnosis = "skills: " + skills.error().message;
    return proposal;
  }
  if (config.backend == SpecialistBackend::kLlm) {
    return options_.llm_propose(request, config, skills->protocol, skills->skill);
  }
  Result<std::string> scratch = ScratchDir(request.domain);
  if (!scratch) {
    proposal.diagnosis = scratch.error().message;
    return proposal;
  }
  return CommandSpecialist(spec_, &config, options_.log_root)
      .Propose(request, skills->protocol, skills->skill, *scratch);
}

}  // namespace arbor
