// The campaign's data model: nodes of the tree, measurement samples, profiles, events.
//
// These are plain values shared by core, the store and the views. A node's state is
// (git commit, environment overlay); a child is always evaluated on its parent's state plus
// its own action. Outcomes of candidates (a failed build, a crash, a regression) are data here.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace arbor {

using NodeId = int64_t;
inline constexpr NodeId kNoNode = 0;
inline constexpr NodeId kRootId = 1;

enum class Outcome {
  kPending,   // created, not yet dispatched
  kRunning,   // in flight; `step` says where
  kBaseline,  // the root: the profiled baseline
  kKept,      // improved and passed every gate: the new incumbent
  kReverted,  // ran, but regressed or failed a gate
  kCrashed,   // build, run or benchmark died
  kPruned,    // never run: excluded by a rule (reason in diagnosis)
  kSkipped,   // never run: nobody could implement it (e.g. no specialist backend)
};
std::string_view OutcomeName(Outcome o);
std::optional<Outcome> ParseOutcome(std::string_view s);
bool IsFinished(Outcome o);  // not pending, not running

// Where a running node is. Steps only move forward; resume continues from the recorded step.
enum class Step { kNone, kApply, kBuild, kCheck, kBench, kProfile, kDecide, kDone };
std::string_view StepName(Step s);
std::optional<Step> ParseStep(std::string_view s);

// Who implements a node's action ([specialists.<domain>] backend): the engine itself for a
// declarative action, a coding-agent command, or an LLM. SpecialistBackendName is the word in
// the campaign file, the store and the views; ParseSpecialistBackend its only inverse.
enum class SpecialistBackend { kBuiltin, kCommand, kLlm };
std::string_view SpecialistBackendName(SpecialistBackend b);  // "builtin", "command", "llm"
std::optional<SpecialistBackend> ParseSpecialistBackend(std::string_view s);

// Why a campaign's run ended (kNone while it runs). StopReasonName is the stored and printed
// word ("" for kNone); a stored word this build does not know (a reason an older build had)
// reads as kUnknown.
enum class StopReason {
  kNone,
  kTarget,       // the incumbent meets metric.target
  kMaxNodes,     // [search] max_nodes evaluated
  kMaxTime,      // [search] max_time spent
  kPlateau,      // [search] plateau_stop non-kept nodes in a row
  kExhausted,    // no candidate left to run
  kInterrupted,  // the user stopped the run
  kDiskLow,      // too little free disk for worktrees and logs
  kUnknown,
};
std::string_view StopReasonName(StopReason r);
std::optional<StopReason> ParseStopReason(std::string_view s);

// Where a campaign is: a run is in progress (or died), the user stopped it (resumable), or it
// ended by itself. A stored word this build does not know reads as kUnknown.
enum class CampaignState { kRunning, kStopped, kFinished, kUnknown };
std::string_view CampaignStateName(CampaignState s);
std::optional<CampaignState> ParseCampaignState(std::string_view s);

// Environment overlay: final values of the variables a node sets on top of the baseline env.
using EnvOverlay = std::map<std::string, std::string>;

// The terms of h(a) at the moment a candidate was chosen, kept for explanation.
// A knowledge-base entry that shaped a node's score (core/knowledge/kb.h), recorded with the score.
struct KbRef {
  std::string uid;  // global identity of the entry
  int64_t id = 0;   // its id in the knowledge-base file it came from (`arbor kb show ID`)
  double weight = 0;
  std::string summary;  // "kept +31% (×1.25–1.38) · same hardware · same workload"
};

struct ScoreTerms {
  double g = 0;       // expected relative gain (Amdahl), fraction of end-to-end time
  double c = 0;       // expected cost, seconds
  double c_norm = 1;  // cost relative to the campaign's reference cost
  double r_acc = 0;
  double r_crash = 0;
  double m_gap = 1;
  double bonus = 0;    // UCB exploration term
  double exploit = 0;  // the first term of h(a), before normalisation
  double h = 0;        // final score
  double speedup = 0;  // speedup on the targets that g assumed (the knowledge base may move it)
  // A re-try of ideas that lost clearly alone before: the product of the speedups they measured
  // (below 1; 1 for any other candidate). g stays the prior's (the Critic's plausibility bound
  // and the knowledge base read it so); the exploitation term, h and the min_gain floor count
  // GainNow (scoring.h): the promise times this.
  double measured = 1;
  std::vector<KbRef> kb;  // knowledge-base entries that shaped this score, strongest first
};

// A rule the Critic published that keeps the search out of a region (ARBOR.md "Crashes become
// constraints"). It is stored on the node that caused it; the active set is derived from the
// tree (scope, expiry), so resume needs nothing else.
enum class ConstraintKind { kForbidAction, kForbidCategory, kForbidValues };
enum class ConstraintScope { kSubtree, kCampaign };
struct Constraint {
  ConstraintKind kind = ConstraintKind::kForbidAction;
  ConstraintScope scope = ConstraintScope::kSubtree;
  NodeId scope_node = kNoNode;  // kSubtree: the root of the subtree it applies to
  std::string action;           // kForbidAction, kForbidValues
  std::string category;         // kForbidCategory
  std::optional<double> min;    // kForbidValues: numeric values in [min, max] are forbidden
  std::optional<double> max;
  std::string reason;
  NodeId source = kNoNode;  // the node whose outcome published it
  bool until_keep = false;  // lifted by the next keep (the bottleneck moves)
};
std::string_view ConstraintKindName(ConstraintKind k);
std::optional<ConstraintKind> ParseConstraintKind(std::string_view s);
// One line: "forbid kernel.tile values >= 128 (campaign): runtime_crash at 128 (#7)".
std::string DescribeConstraint(const Constraint& c);

// Why a node did not become a keep: the classes Classify (rca.h) reads from a failed step's
// output and the Critic's own verdicts on a measured candidate, in one vocabulary because both
// land in CriticNote::rca and the moves, constraints and frontier ask the same of either.
// RcaClassName is the stored and printed word; ParseRcaClass its only inverse.
enum class RcaClass {
  kNone,  // "": not judged, or nothing went wrong
  // What Classify (rca.h) concludes from a failed step:
  kBuildError,      // compiler/linker diagnostics
  kDependency,      // missing library, command, module, symbol or version
  kPrerequisite,    // SIGILL / illegal instruction, an unsupported or unrecognized option:
                    // the change needs something the path does not have yet (an ISA flag)
  kRuntimeCrash,    // SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, assertion, uncaught exception
  kOutOfMemory,     // SIGKILL under a memory limit, allocator failures
  kResourceLimit,   // a process or thread could not be created (fork/clone hit a limit)
  kTimeout,         // the step's time limit expired
  kAccuracy,        // the check ran and said no (also: the accuracy metric dropped too far)
  kGuard,           // a guard (SLA) metric was violated
  kFlaky,           // failed, then passed on a rerun
  kBadOutput,       // the command succeeded but its metric/profile could not be read
  kInfrastructure,  // the command could not be started, or the executor lost its run
  kUnknown,         // what Classify cannot explain; also a stored word this build does not know
  // The Critic's verdicts on a candidate that ran (measure.cc, node_steps.cc, recheck.cc,
  // unkeep.cc):
  kNoGain,              // the keep gate found no significant gain
  kNotConfirmed,        // the gain did not survive a fresh interleaved confirmation run
  kInflation,           // the benchmark did less work, so its speed is not comparable
  kAnomaly,             // an implausible gain that its re-runs did not bear out
  kAnomalousIncumbent,  // not judged: its base re-measured orders of magnitude off
  kFlakyIncumbent,      // not its fault: its base's check or benchmark is flaky
};
std::string_view RcaClassName(RcaClass c);  // "", "build_error", "no_gain", ...
// The class a name stands for ("" is kNone); nullopt for a word this build does not know.
std::optional<RcaClass> ParseRcaClass(std::string_view s);

// What the Critic concluded about a node. Empty for nodes it never judged.
struct CriticNote {
  std::optional<double> p_value;  // one-sided test of the keep gate
  std::optional<double> ci_low;   // 95% interval of the speedup ratio (> 1 is better)
  std::optional<double> ci_high;
  bool confirmed = false;          // the keep survived a fresh interleaved confirmation run
  RcaClass rca = RcaClass::kNone;  // why it failed or was reverted
  std::string evidence;            // the output lines that show it
  std::string suggestion;
  NodeId requeued_from = kNoNode;       // introspection: the reverted node this one retries
  std::string opened;                   // why a re-queued node was opened (a move's reason)
  std::vector<std::string> flags;       // "flaky", "drift", "implausible", "outliers", ...
  std::vector<Constraint> constraints;  // published by this node
  bool empty() const;
};

// What a specialist reported for a node (empty for builtin actions): its backend, confidence,
// findings for the knowledge base, residual questions, and the LLM tokens and cost it spent.
struct AgentNote {
  SpecialistBackend backend = SpecialistBackend::kBuiltin;
  std::string domain;
  double confidence = 0;  // 0..1 as reported (0: not reported)
  int rounds = 0;         // llm: implement rounds used
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  double cost = 0;
  std::vector<std::string> findings;
  std::vector<std::string> questions;
  std::vector<std::string> proposed;  // ids of the follow-up actions it proposed
  bool empty() const;
};

struct Node {
  NodeId id = kNoNode;
  NodeId parent = kNoNode;
  std::string action_id;  // "baseline" for the root
  std::string value;      // the expanded value for `values = [...]` actions, else ""
  std::string category;
  std::string layer;
  Outcome outcome = Outcome::kPending;
  Step step = Step::kNone;
  int64_t seq = 0;               // dispatch order (0 = not dispatched)
  std::string commit;            // git commit of this node's state (set once applied)
  EnvOverlay overlay;            // full overlay of this node (parent's + own)
  std::optional<double> metric;  // median of the node's samples
  std::optional<double> gain;    // relative improvement over the parent, goal-aware (+ = better)
  std::string diagnosis;         // why reverted/crashed/pruned/skipped; what the gate said
  ScoreTerms score;
  double created_s = 0;  // campaign clock, seconds
  double finished_s = 0;
  double cost_s = 0;    // wall time spent on the node (apply .. decide)
  std::string summary;  // what the specialist did
  CriticNote critic;
  AgentNote agent;

  // Key of the candidate this node ran: "id" or "id[value]"; "-id…" for a drop node (it ran
  // without that candidate: never the candidate itself, tried again).
  std::string CandidateKey() const;
};

std::string CandidateKey(std::string_view action_id, std::string_view value);

// A branch node (Tree::IsBranch, docs/search.md "Branches") carries this flag.
inline constexpr std::string_view kBranchFlag = "branch";

// The Critic's flags on a node ("unkept", "inconclusive", "move:carry", …).
bool HasFlag(const Node& node, std::string_view flag);
void AddFlag(Node* node, std::string_view flag);  // once: a flag already there is not repeated

// A pair node (moves.h, Move::kPair) applies a companion candidate first and its own on top,
// in one worktree, and is measured and kept as one change; the companion's key is the node's
// flag "with:<key>". Everything that asks what a node applies asks AppliedKeys. A bundle (a
// fix search's node, moves.h Move::kFix) has several companions, one flag each, applied in
// their order; CompanionKey is the first, CompanionKeys all of them.
std::optional<std::string> CompanionKey(const Node& node);
std::vector<std::string> CompanionKeys(const Node& node);
std::string CompanionFlag(std::string_view key);  // "with:<key>"
// A drop node (moves.h, Move::kDrop) takes a change kept on the path back out: its own
// candidate is the change removed, named again by its flag "without:<key>"; it applies
// nothing, unless it has a companion: a swap applies the companion in the change's place.
// Everything that asks what a node removes asks RemovedKeys.
std::optional<std::string> DroppedKey(const Node& node);
std::string DropFlag(std::string_view key);  // "without:<key>"
// A node built on a state that holds a kept `refresh` action (a command deriving files from the
// state it runs on, such as a PGO profile) runs that command again on top of its own change
// (moves.h, RefreshesToRun), so that it is measured as it would be kept; each such action's key
// is the node's flag "rerun:<key>". It applies no new idea: AppliedKeys leaves it out.
std::vector<std::string> RerunKeys(const Node& node);
std::string RerunFlag(std::string_view key);  // "rerun:<key>"
// Takes every "rerun:" flag and kRerunFailedFlag off (a node applied again on another state).
void ClearRerunFlags(Node* node);
// The node failed in a command it ran again, not in its own change: no evidence against it.
inline constexpr std::string_view kRerunFailedFlag = "rerun-failed";
// "id[value]" → {id, value}; "id" → {id, ""}.
std::pair<std::string, std::string> SplitCandidateKey(std::string_view key);
// The action ids and candidate keys a node applies: its own, and its companion's.
// A drop node applies nothing but a swap's companion.
std::vector<std::string> AppliedKeys(const Node& node);
// The action id and candidate key a drop node takes out ({} for any other node).
std::vector<std::string> RemovedKeys(const Node& node);

struct Sample {
  NodeId node = kNoNode;
  std::string arm = "self";  // the measurement series' stored word (ArmOf: event_kind.h)
  int rep = 0;
  double value = 0;
  std::map<std::string, double> extra;  // guard metrics, work, accuracy
};

struct Component {
  std::string name;
  std::string layer;
  double share = 0;  // fraction of end-to-end time
};

struct Profile {
  double total_s = 0;
  std::vector<Component> components;
  // The profiler's own top names (symbols, kernels) with their shares, largest first, when the
  // profile was imported from a profiler's output; empty for Arbor-JSON profiles.
  std::vector<std::pair<std::string, double>> raw;
};

// One line of the campaign's history, appended with the state change it describes.
struct Event {
  int64_t id = 0;  // assigned by the store
  NodeId node = kNoNode;
  std::string kind;     // the stored word; KindOf (event_kind.h) gives its EventKind
  std::string message;  // human-readable one-liner
  std::string data;     // optional JSON object text with details
  double t = 0;         // campaign clock, seconds
};

// Campaign-level facts persisted in the store (key/value).
struct CampaignMeta {
  std::string name;
  unsigned long long seed = 0;
  // The settings of the latest run in canonical form (core/model/config_diff.h) and their hash:
  // what the next run's campaign file is compared with. "" in a store from before they were kept:
  // nothing to compare, the next run records them.
  std::string spec_hash;
  std::string config;
  CampaignState state = CampaignState::kRunning;
  StopReason stop_reason = StopReason::kNone;
  double elapsed_s = 0;      // accumulated active time across runs
  double explore_boost = 1;  // multiplier on C after plateaus
  int64_t next_seq = 1;
  // Noise pre-flight (A/A runs of the baseline): coefficient of variation, minimum detectable
  // effect at the repetitions in use, and those repetitions per arm.
  double noise_cv = 0;
  double noise_mde = 0;
  int64_t repetitions = 0;
  int64_t no_critic = 0;  // 1: started with --no-critic (ablation runs only)
  // Final confirmation: the best node measured interleaved against the baseline when the
  // campaign finished; the speedup (> 1 better) and its 95% interval are what is reported.
  // Knowledge base: this campaign's identity in it, and the last entry id it may learn from
  // (fixed at the start, so a resume computes the same priors).
  std::string uid;
  int64_t kb_snapshot = 0;
  double kb_time = 0;  // unix seconds at the start: entries' ages are taken at this moment
  // The budget of the latest run (the campaign file's, or `--max-nodes`/`--max-time`), so
  // views show what the campaign is actually held to.
  int64_t budget_nodes = 0;
  double budget_time_s = 0;
  // LLM specialists: what the campaign spent (all nodes and proposal rounds), and the incumbent
  // whose proposal round last ran (a resume does not ask again).
  int64_t llm_prompt_tokens = 0;
  int64_t llm_completion_tokens = 0;
  double llm_cost = 0;
  int64_t proposed_at = 0;
  int64_t final_node = 0;
  double final_speedup = 0;
  double final_ci_low = 0;
  double final_ci_high = 0;
};

}  // namespace arbor
