// The kinds of event a campaign records (Event::kind) and the series a sample belongs to
// (Sample::arm), as enums with one name table each.
//
// The words are what the store, `arbor status --json`, the event log and the reports carry, so
// Event::kind and Sample::arm stay those words at the edges; code that decides on a kind or an
// arm reads it through KindOf / ArmOf and compares enums. A word this build does not know (one
// an older or newer build wrote) reads as kUnknown rather than failing.
#pragma once

#include <string_view>

#include "core/model/model.h"

namespace arbor {

enum class EventKind {
  kUnknown,
  // a node's steps
  kProposed,    // a candidate chosen and opened
  kDispatched,  // handed to its specialist (or the baseline's first run)
  kVetoed,      // refused before it ran (constraint, policy, unknown action)
  kSkipped,     // its specialist had nothing to do
  kBuilt,
  kChecked,
  kMeasured,
  kKept,
  kReverted,
  kCrashed,
  kReprofiled,  // the incumbent profiled again
  kRca,         // a failure's root cause and suggestion
  kConstraint,  // a constraint a failure published
  // measurement integrity
  kNoise,        // the A/A pre-flight's noise estimate
  kAnomaly,      // an implausible gain re-measured
  kRebaselined,  // the incumbent's value re-measured
  kUnkept,       // a flaky incumbent taken back
  kRequeued,     // a move recorded to run later
  // the campaign
  kConfigChanged,  // the campaign file changed between runs
  kStopped,
  kKb,                // the knowledge base's warnings
  kJob,               // where a command ran (executor, job id, host)
  kProposal,          // a specialist's proposed actions
  kProposalFailed,    // a proposal round that returned nothing usable
  kProposalRejected,  // a proposed action the campaign file's rules refused
  kLlmBudget,         // the LLM budget spent or exhausted
};
std::string_view EventKindName(EventKind k);   // "unknown" for kUnknown
EventKind ParseEventKind(std::string_view s);  // kUnknown for a word not in the table
inline EventKind KindOf(const Event& e) { return ParseEventKind(e.kind); }

// Sample::arm: the node's own runs ("self"), the interleaved A/B arms of a decision ("base",
// "cand"), of its replication ("confirm-base", "confirm-cand") and of the final validation
// ("final-base", "final-cand"), and the accuracy check's value ("check").
enum class SampleArm {
  kUnknown,
  kSelf,
  kBase,
  kCand,
  kConfirmBase,
  kConfirmCand,
  kFinalBase,
  kFinalCand,
  kCheck,
};
std::string_view SampleArmName(SampleArm a);   // "unknown" for kUnknown
SampleArm ParseSampleArm(std::string_view s);  // kUnknown for a word not in the table
inline SampleArm ArmOf(const Sample& s) { return ParseSampleArm(s.arm); }

}  // namespace arbor
