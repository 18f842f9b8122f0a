#include "core/model/event_kind.h"

#include "util/name_table.h"

namespace arbor {
namespace {

// Stored and printed words: they never change once released.
constexpr NameTable<EventKind, 27> kEventKindNames = {{
    {EventKind::kProposed, "proposed"},
    {EventKind::kDispatched, "dispatched"},
    {EventKind::kVetoed, "vetoed"},
    {EventKind::kSkipped, "skipped"},
    {EventKind::kBuilt, "built"},
    {EventKind::kChecked, "checked"},
    {EventKind::kMeasured, "measured"},
    {EventKind::kKept, "kept"},
    {EventKind::kReverted, "reverted"},
    {EventKind::kCrashed, "crashed"},
    {EventKind::kReprofiled, "reprofiled"},
    {EventKind::kRca, "rca"},
    {EventKind::kConstraint, "constraint"},
    {EventKind::kNoise, "noise"},
    {EventKind::kAnomaly, "anomaly"},
    {EventKind::kRebaselined, "rebaselined"},
    {EventKind::kUnkept, "unkept"},
    {EventKind::kRequeued, "requeued"},
    {EventKind::kConfigChanged, "config_changed"},
    {EventKind::kStopped, "stopped"},
    {EventKind::kKb, "kb"},
    {EventKind::kJob, "job"},
    {EventKind::kProposal, "proposal"},
    {EventKind::kProposalFailed, "proposal_failed"},
    {EventKind::kProposalRejected, "proposal_rejected"},
    {EventKind::kLlmBudget, "llm_budget"},
    {EventKind::kUnknown, "unknown"},
}};

constexpr NameTable<SampleArm, 9> kSampleArmNames = {{
    {SampleArm::kSelf, "self"},
    {SampleArm::kBase, "base"},
    {SampleArm::kCand, "cand"},
    {SampleArm::kConfirmBase, "confirm-base"},
    {SampleArm::kConfirmCand, "confirm-cand"},
    {SampleArm::kFinalBase, "final-base"},
    {SampleArm::kFinalCand, "final-cand"},
    {SampleArm::kCheck, "check"},
    {SampleArm::kUnknown, "unknown"},
}};

}  // namespace

std::string_view EventKindName(EventKind k) { return NameIn(kEventKindNames, k); }
EventKind ParseEventKind(std::string_view s) {
  return ParseIn(kEventKindNames, s).value_or(EventKind::kUnknown);
}

std::string_view SampleArmName(SampleArm a) { return NameIn(kSampleArmNames, a); }
SampleArm ParseSampleArm(std::string_view s) {
  return ParseIn(kSampleArmNames, s).value_or(SampleArm::kUnknown);
}

}  // namespace arbor
