#include "core/model/model.h"

#include <algorithm>
#include <array>
#include <utility>

#include "core/model/ports.h"
#include "util/name_table.h"

namespace arbor {
namespace {

// One table per enum keeps names and parsing in lockstep; the names are stored in the
// database and printed in reports, so they must never change once released.
constexpr NameTable<Outcome, 8> kOutcomeNames = {{
    {Outcome::kPending, "pending"},
    {Outcome::kRunning, "running"},
    {Outcome::kBaseline, "baseline"},
    {Outcome::kKept, "kept"},
    {Outcome::kReverted, "reverted"},
    {Outcome::kCrashed, "crashed"},
    {Outcome::kPruned, "pruned"},
    {Outcome::kSkipped, "skipped"},
}};

constexpr NameTable<Step, 8> kStepNames = {{
    {Step::kNone, "none"},
    {Step::kApply, "apply"},
    {Step::kBuild, "build"},
    {Step::kCheck, "check"},
    {Step::kBench, "bench"},
    {Step::kProfile, "profile"},
    {Step::kDecide, "decide"},
    {Step::kDone, "done"},
}};

constexpr NameTable<ExitKind, 6> kExitKindNames = {{
    {ExitKind::kOk, "ok"},
    {ExitKind::kFailed, "failed"},
    {ExitKind::kSignaled, "signaled"},
    {ExitKind::kTimedOut, "timed_out"},
    {ExitKind::kSpawnError, "spawn_error"},
    {ExitKind::kBadOutput, "bad_output"},
}};

constexpr NameTable<ConstraintKind, 3> kConstraintKindNames = {{
    {ConstraintKind::kForbidAction, "forbid_action"},
    {ConstraintKind::kForbidCategory, "forbid_category"},
    {ConstraintKind::kForbidValues, "forbid_values"},
}};

constexpr NameTable<RcaClass, 20> kRcaClassNames = {{
    {RcaClass::kNone, ""},
    {RcaClass::kBuildError, "build_error"},
    {RcaClass::kDependency, "dependency"},
    {RcaClass::kPrerequisite, "prerequisite"},
    {RcaClass::kRuntimeCrash, "runtime_crash"},
    {RcaClass::kOutOfMemory, "out_of_memory"},
    {RcaClass::kResourceLimit, "resource_limit"},
    {RcaClass::kTimeout, "timeout"},
    {RcaClass::kAccuracy, "accuracy"},
    {RcaClass::kGuard, "guard"},
    {RcaClass::kFlaky, "flaky"},
    {RcaClass::kBadOutput, "bad_output"},
    {RcaClass::kInfrastructure, "infrastructure"},
    {RcaClass::kUnknown, "unknown"},
    {RcaClass::kNoGain, "no_gain"},
    {RcaClass::kNotConfirmed, "not_confirmed"},
    {RcaClass::kInflation, "inflation"},
    {RcaClass::kAnomaly, "anomaly"},
    {RcaClass::kAnomalousIncumbent, "anomalous_incumbent"},
    {RcaClass::kFlakyIncumbent, "flaky_incumbent"},
}};

constexpr NameTable<SpecialistBackend, 3> kSpecialistBackendNames = {{
    {SpecialistBackend::kBuiltin, "builtin"},
    {SpecialistBackend::kCommand, "command"},
    {SpecialistBackend::kLlm, "llm"},
}};

constexpr NameTable<StopReason, 9> kStopReasonNames = {{
    {StopReason::kNone, ""},
    {StopReason::kTarget, "target"},
    {StopReason::kMaxNodes, "max_nodes"},
    {StopReason::kMaxTime, "max_time"},
    {StopReason::kPlateau, "plateau"},
    {StopReason::kExhausted, "exhausted"},
    {StopReason::kInterrupted, "interrupted"},
    {StopReason::kDiskLow, "disk_low"},
    {StopReason::kUnknown, "unknown"},
}};

constexpr NameTable<CampaignState, 4> kCampaignStateNames = {{
    {CampaignState::kRunning, "running"},
    {CampaignState::kStopped, "stopped"},
    {CampaignState::kFinished, "finished"},
    {CampaignState::kUnknown, "unknown"},
}};

}  // namespace

std::string_view OutcomeName(Outcome o) { return NameIn(kOutcomeNames, o); }
std::optional<Outcome> ParseOutcome(std::string_view s) { return ParseIn(kOutcomeNames, s); }
bool IsFinished(Outcome o) { return o != Outcome::kPending && o != Outcome::kRunning; }

std::string_view StepName(Step s) { return NameIn(kStepNames, s); }
std::optional<Step> ParseStep(std::string_view s) { return ParseIn(kStepNames, s); }

std::string_view SpecialistBackendName(SpecialistBackend b) {
  return NameIn(kSpecialistBackendNames, b);
}
std::optional<SpecialistBackend> ParseSpecialistBackend(std::string_view s) {
  return ParseIn(kSpecialistBackendNames, s);
}

std::string_view StopReasonName(StopReason r) { return NameIn(kStopReasonNames, r); }
std::optional<StopReason> ParseStopReason(std::string_view s) {
  return ParseIn(kStopReasonNames, s);
}

std::string_view CampaignStateName(CampaignState s) { return NameIn(kCampaignStateNames, s); }
std::optional<CampaignState> ParseCampaignState(std::string_view s) {
  return ParseIn(kCampaignStateNames, s);
}

std::string_view ExitKindName(ExitKind k) { return NameIn(kExitKindNames, k); }

std::string CandidateKey(std::string_view action_id, std::string_view value) {
  std::string key(action_id);
  if (!value.empty()) {
    key += '[';
    key += value;
    key += ']';
  }
  return key;
}

std::string_view RcaClassName(RcaClass c) { return NameIn(kRcaClassNames, c); }
std::optional<RcaClass> ParseRcaClass(std::string_view s) { return ParseIn(kRcaClassNames, s); }

std::string_view ConstraintKindName(ConstraintKind k) { return NameIn(kConstraintKindNames, k); }
std::optional<ConstraintKind> ParseConstraintKind(std::string_view s) {
  return ParseIn(kConstraintKindNames, s);
}

std::string DescribeConstraint(const Constraint& c) {
  std::string what;
  switch (c.kind) {
    case ConstraintKind::kForbidAction:
      what = "forbid " + c.action;
      break;
    case ConstraintKind::kForbidCategory:
      what = "forbid category " + c.category;
      break;
    case ConstraintKind::kForbidValues: {
      what = "forbid " + c.action + " values";
      auto num = [](double v) {
        std::string t = std::to_string(v);
        while (!t.empty() && t.back() == '0') t.pop_back();
        if (!t.empty() && t.back() == '.') t.pop_back();
        return t;
      };
      if (c.min && c.max && *c.min == *c.max) {
        what += " = " + num(*c.min);
      } else {
        if (c.min) what += " >= " + num(*c.min);
        if (c.max) what += std::string(c.min ? " and" : "") + " <= " + num(*c.max);
      }
      break;
    }
  }
  what += c.scope == ConstraintScope::kCampaign ? " (campaign"
                                                : " (below #" + std::to_string(c.scope_node);
  what += c.until_keep ? ", until the next keep)" : ")";
  if (!c.reason.empty()) what += ": " + c.reason;
  if (c.source != kNoNode) what += " (#" + std::to_string(c.source) + ")";
  return what;
}

bool CriticNote::empty() const {
  return !p_value && !ci_low && !ci_high && !confirmed && rca == RcaClass::kNone &&
         evidence.empty() && suggestion.empty() && requeued_from == kNoNode && opened.empty() &&
         flags.empty() && constraints.empty();
}

bool AgentNote::empty() const {
  return backend == SpecialistBackend::kBuiltin && domain.empty() && confidence == 0 &&
         rounds == 0 && prompt_tokens == 0 && completion_tokens == 0 && cost == 0 &&
         findings.empty() && questions.empty() && proposed.empty();
}

namespace {
constexpr std::string_view kWithPrefix = "with:";
constexpr std::string_view kWithoutPrefix = "without:";
constexpr std::string_view kRerunPrefix = "rerun:";

// The first flag "<prefix><value>", without copying it: keys are asked for on hot paths.
const std::string* FlagWithPrefix(const Node& node, std::string_view prefix) {
  for (const std::string& f : node.critic.flags) {
    if (f.size() > prefix.size() && f.compare(0, prefix.size(), prefix) == 0) return &f;
  }
  return nullptr;
}

std::optional<std::string> FlagValue(const Node& node, std::string_view prefix) {
  const std::string* f = FlagWithPrefix(node, prefix);
  return f != nullptr ? std::optional<std::string>(f->substr(prefix.size())) : std::nullopt;
}

bool IsDrop(const Node& node) { return FlagWithPrefix(node, kWithoutPrefix) != nullptr; }

}  // namespace

std::string Node::CandidateKey() const {
  std::string key = arbor::CandidateKey(action_id, value);
  return IsDrop(*this) ? "-" + key : key;
}

std::optional<std::string> CompanionKey(const Node& node) { return FlagValue(node, kWithPrefix); }

namespace {

std::vector<std::string> FlagValues(const Node& node, std::string_view prefix) {
  std::vector<std::string> out;
  for (const std::string& f : node.critic.flags) {
    if (f.size() > prefix.size() && f.compare(0, prefix.size(), prefix) == 0) {
      out.push_back(f.substr(prefix.size()));
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> CompanionKeys(const Node& node) { return FlagValues(node, kWithPrefix); }

std::vector<std::string> RerunKeys(const Node& node) { return FlagValues(node, kRerunPrefix); }

std::string RerunFlag(std::string_view key) { return std::string(kRerunPrefix) + std::string(key); }

void ClearRerunFlags(Node* node) {
  std::erase_if(node->critic.flags, [](const std::string& f) {
    return f.rfind(kRerunPrefix, 0) == 0 || f == kRerunFailedFlag;
  });
}

std::optional<std::string> DroppedKey(const Node& node) { return FlagValue(node, kWithoutPrefix); }

std::string DropFlag(std::string_view key) {
  return std::string(kWithoutPrefix) + std::string(key);
}

std::string CompanionFlag(std::string_view key) {
  return std::string(kWithPrefix) + std::string(key);
}

std::pair<std::string, std::string> SplitCandidateKey(std::string_view key) {
  const size_t open = key.find('[');
  if (open == std::string_view::npos || key.empty() || key.back() != ']') {
    return {std::string(key), ""};
  }
  return {std::string(key.substr(0, open)),
          std::string(key.substr(open + 1, key.size() - open - 2))};
}

std::vector<std::string> AppliedKeys(const Node& node) {
  std::vector<std::string> out;
  if (!IsDrop(node)) out = {node.action_id, node.CandidateKey()};
  for (const std::string& with : CompanionKeys(node)) {  // a swap's is its only one
    out.push_back(SplitCandidateKey(with).first);
    out.push_back(with);
  }
  return out;
}

std::vector<std::string> RemovedKeys(const Node& node) {
  std::optional<std::string> key = DroppedKey(node);
  if (!key) return {};
  return {SplitCandidateKey(*key).first, *key};
}

bool HasFlag(const Node& node, std::string_view flag) {
  const auto& flags = node.critic.flags;
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

void AddFlag(Node* node, std::string_view flag) {
  if (!HasFlag(*node, flag)) node->critic.flags.emplace_back(flag);
}

}  // namespace arbor
