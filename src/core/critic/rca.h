// Root-cause analysis of a failed step: a pure function from what the step left behind (exit
// status, signal, timeout, output tail, which step) to a class (RcaClass, model.h), the evidence
// lines, a suggested fix and the effect the class has on the search.
//
// The classes separate an implementation bug (worth one constrained retry) from an unproductive
// direction (prune), and a dependency or environment problem (record it, block only what needs
// it) from an algorithmic flaw. Each class has exactly one effect (EffectOf). Classify is
// deterministic and never fails: what it cannot explain is kUnknown with the last output lines.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/model/ports.h"

namespace arbor {

enum class RcaEffect {
  kRetryOnce,          // implementation bug: one constrained retry with the diagnosis attached
  kPruneDirection,     // unproductive direction: publish a constraint
  kBlockDependency,    // record the dependency; block only what needs it
  kAwaitPrerequisite,  // block the candidate until the path changes (a keep), then retry it
  kRerun,              // flaky: run the step once more
  kRequeue,            // infrastructure: run the node once more, not counted against the action
  kNone,               // record only
};

std::string_view RcaEffectName(RcaEffect e);  // "retry_once", "prune_direction", ...
std::optional<RcaEffect> ParseRcaEffect(std::string_view s);
RcaEffect EffectOf(RcaClass c);  // kNone for the Critic's verdicts

// Where a failure happened: a node's step, or the gate's guard, the accuracy bound, or the
// infrastructure under the A/B base arm. FailedStageName is its only printer.
enum class FailedStage {
  kApply,
  kBuild,
  kCheck,
  kBench,
  kProfile,
  kGate,
  kAccuracy,
  kInfrastructure
};
std::string_view FailedStageName(FailedStage s);  // "apply", "build", ..., "infrastructure"

struct RcaInput {
  FailedStage step = FailedStage::kBench;
  StepResult result;             // exit kind, code, signal, detail
  std::string output_tail;       // stderr + stdout tail; result.tail when empty
  bool memory_limited = false;   // the step ran under target.memory_limit_mb
  bool passed_on_rerun = false;  // the same step passed when run again
  bool guard_violation = false;  // the gate reverted on a guard
};

struct Diagnosis {
  RcaClass cls = RcaClass::kUnknown;
  std::string evidence;    // the 1–3 most telling output lines, '\n'-separated
  std::string suggestion;  // one line: what would fix it
  RcaEffect effect = RcaEffect::kNone;
  std::string subject;  // kDependency: what is missing ("libfoo.so.1", "numpy", "GLIBC_2.38")
};

Diagnosis Classify(const RcaInput& in);

// "runtime_crash: Segmentation fault (core dumped) → retry_once" — one line for events.
std::string DescribeDiagnosis(const Diagnosis& d);

}  // namespace arbor
