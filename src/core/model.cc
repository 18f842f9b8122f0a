#include "core/model.h"

#include <array>
#include <utility>

#include "core/ports.h"

namespace arbor {
namespace {

// One table per enum keeps names and parsing in lockstep; the names are stored in the
// database and printed in reports, so they must never change once released.
constexpr std::array<std::pair<Outcome, std::string_view>, 8> kOutcomeNames = {{
    {Outcome::kPending, "pending"},
    {Outcome::kRunning, "running"},
    {Outcome::kBaseline, "baseline"},
    {Outcome::kKept, "kept"},
    {Outcome::kReverted, "reverted"},
    {Outcome::kCrashed, "crashed"},
    {Outcome::kPruned, "pruned"},
    {Outcome::kSkipped, "skipped"},
}};

constexpr std::array<std::pair<Step, std::string_view>, 8> kStepNames = {{
    {Step::kNone, "none"},
    {Step::kApply, "apply"},
    {Step::kBuild, "build"},
    {Step::kCheck, "check"},
    {Step::kBench, "bench"},
    {Step::kProfile, "profile"},
    {Step::kDecide, "decide"},
    {Step::kDone, "done"},
}};

constexpr std::array<std::pair<ExitKind, std::string_view>, 6> kExitKindNames = {{
    {ExitKind::kOk, "ok"},
    {ExitKind::kFailed, "failed"},
    {ExitKind::kSignaled, "signaled"},
    {ExitKind::kTimedOut, "timed_out"},
    {ExitKind::kSpawnError, "spawn_error"},
    {ExitKind::kBadOutput, "bad_output"},
}};

template <typename E, size_t N>
std::string_view NameOf(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
  for (const auto& [value, name] : table) {
    if (value == e) return name;
  }
  return "unknown";
}

template <typename E, size_t N>
std::optional<E> Parse(const std::array<std::pair<E, std::string_view>, N>& table,
                       std::string_view s) {
  for (const auto& [value, name] : table) {
    if (name == s) return value;
  }
  return std::nullopt;
}

}  // namespace

std::string_view OutcomeName(Outcome o) { return NameOf(kOutcomeNames, o); }
std::optional<Outcome> ParseOutcome(std::string_view s) { return Parse(kOutcomeNames, s); }
bool IsFinished(Outcome o) { return o != Outcome::kPending && o != Outcome::kRunning; }

std::string_view StepName(Step s) { return NameOf(kStepNames, s); }
std::optional<Step> ParseStep(std::string_view s) { return Parse(kStepNames, s); }

std::string_view ExitKindName(ExitKind k) { return NameOf(kExitKindNames, k); }

std::string CandidateKey(std::string_view action_id, std::string_view value) {
  std::string key(action_id);
  if (!value.empty()) {
    key += '[';
    key += value;
    key += ']';
  }
  return key;
}

std::string Node::CandidateKey() const { return arbor::CandidateKey(action_id, value); }

}  // namespace arbor
