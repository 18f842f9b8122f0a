// The knowledge base's logic: what one campaign learns, the next one starts with (ARBOR.md
// "The knowledge base"; docs/knowledge-base.md).
//
// An entry is one finished node of some campaign (kept: a lesson; reverted or crashed: a
// pitfall) with the context it ran in: workload and hardware signatures, the operating point
// (the kept path it was tried on), whether it was measured under the Critic's controlled
// protocol. Priors for a new campaign are posterior estimates over matching entries, each
// weighted by
//
//   w = match level (same candidate 1, same action other value/content 0.3, same category 0.15)
//       × workload similarity × hardware similarity × confidence (controlled 1, not 0.5)
//       × age decay (half-life kKbHalfLifeDays) × (0 if superseded, 0.5 if in conflict)
//
// and the campaign's own observations then update them (core/search/category_stats.h). Everything
// here is pure: the SQLite adapter (store/kb_store.h) loads and saves entries, app/ detects
// hardware.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/model/spec.h"

namespace arbor {

inline constexpr double kKbHalfLifeDays = 180;
// One exact-match entry counts as this many observations against an action's own prior
// (which has kPriorStrength pseudo-observations): history of the very same change in the very
// same context is as strong as the campaign author's guess.
inline constexpr double kKbObservationWeight = 4.0;
// A deterministic failure (IsDeterministicFailure) of the identical change repeats when tried
// again, unlike a noisy measurement: it counts this many times over in the risk estimates.
inline constexpr double kKbDeterministicFactor = 4.0;
inline constexpr int kKbMaxRefs = 5;                  // entries named on a node's score
inline constexpr double kKbLevelSameAction = 0.3;     // same action, other value or content
inline constexpr double kKbLevelSameCategory = 0.15;  // another action of the category

struct HardwareSignature {
  std::string cpu_model;         // /proc/cpuinfo "model name"
  int cores = 0;                 // online CPUs
  std::vector<std::string> isa;  // sorted subset of ISA flags that matter (avx2, avx512f, ...)
  double mem_gib = 0;            // rounded
  std::string gpu;               // "" when none reported
  // A stable one-line form ("cpu=...;cores=8;isa=avx2,fma;mem=32;gpu=") and its parser, used
  // for storage, ARBOR_HARDWARE overrides and export.
  std::string Encode() const;
  static std::optional<HardwareSignature> Decode(const std::string& text);
  bool operator==(const HardwareSignature&) const = default;
};
// 1 for identical signatures; lower as CPU model, ISA, core count, memory and GPU differ;
// never below 0.1 (other hardware still teaches something: transfer).
double HardwareSimilarity(const HardwareSignature& a, const HardwareSignature& b);

// A workload signature is a sorted set of tags ("campaign=tinyserve", "bench=3fa2…",
// "model=7b"). Similarity: 0.1 + 0.9·Jaccard, so unrelated workloads still count a little.
using WorkloadSignature = std::vector<std::string>;
WorkloadSignature ParseWorkload(const std::string& text);  // split on spaces/commas, sorted
std::string EncodeWorkload(const WorkloadSignature& w);    // space-joined
double WorkloadSimilarity(const WorkloadSignature& a, const WorkloadSignature& b);

struct KbEntry {
  int64_t id = 0;            // row id in one knowledge-base file (reassigned on import)
  std::string uid;           // global identity "<campaign_uid>/<node>": dedups imports
  std::string campaign;      // campaign name
  std::string campaign_uid;  // one run of one campaign file (CampaignMeta::uid)
  NodeId node = kNoNode;
  std::string action_id;
  std::string value;
  std::string category;
  std::string layer;
  std::string content_hash;  // of the action's apply spec and patch (ActionSpec::content_hash)
  WorkloadSignature workload;
  HardwareSignature hardware;
  std::string path_hash;  // operating point: the kept actions on the path it was tried on
  // OutcomeName of the node's (kept | reverted | crashed), kept verbatim: an imported entry's
  // word may be one this build does not know, so the rules read it through ParsedOutcome.
  std::string outcome;
  bool accuracy_failure = false;
  std::optional<double> gain;    // relative end-to-end gain over its parent (+ = better)
  std::optional<double> ci_low;  // 95% interval of the speedup ratio, when the Critic gave one
  std::optional<double> ci_high;
  double prior_speedup = 1;  // speedup on its targets the score assumed at dispatch
  double target_share = 0;   // share of the profile its targets had at dispatch (0: unknown)
  // Speedup on its targets implied by the measured gain and the share at dispatch (Amdahl
  // inverted, clamped to [0.25, 100]); nullopt without a gain or a share.
  std::optional<double> implied_speedup;
  double cost_s = 0;
  // Root-cause class of a failure: RcaClassName of the node's, or an imported entry's own word
  // (an entry file is written by hand too), so the rules read it through ParseRcaClass.
  std::string rca;
  std::string lesson;         // one paragraph: what happened and what it teaches
  bool controlled = false;    // measured interleaved under the Critic (not --no-critic)
  double recorded_at = 0;     // unix seconds
  int64_t superseded_by = 0;  // id of the controlled entry that replaced this one
  std::string conflict;       // why it disagrees with another entry of the same context
  // Transient, never stored: entries loaded together with the same nonzero value have the same
  // workload and hardware signatures (set by the adapter that loaded them; 0 = not known), so
  // priors compare signatures once per distinct pair instead of once per entry.
  int signature = 0;

  std::string CandidateKey() const;  // "id" or "id[value]"
  std::optional<Outcome> ParsedOutcome() const { return ParseOutcome(outcome); }
  bool IsPitfall() const { return ParsedOutcome() != Outcome::kKept; }
};

// Where a campaign runs: what its entries are compared with.
struct KbContext {
  WorkloadSignature workload;
  HardwareSignature hardware;
  double now = 0;            // unix seconds, for the age decay
  std::string campaign_uid;  // entries of this very campaign are ignored (its tree has them)
  bool controlled = true;    // this campaign measures under the Critic (its entries' standing)
};

// The speedup on an action's targets implied by a relative end-to-end gain (goal-aware, as
// Node::gain) when the targets had `share` of the time: the fraction of time saved is
// gain/(1+gain) for a metric to maximise (throughput) and gain for one to minimise (time).
std::optional<double> ImpliedSpeedup(std::optional<double> gain, double share, Goal goal);

// The entry of a finished node (kept, reverted or crashed; not the root, pruned or skipped).
// `path_hash` identifies the kept path of its parent; the context's `now` is the recording time.
KbEntry EntryFromNode(const Node& node, const ActionSpec& action, const KbContext& context,
                      const std::string& path_hash, const std::string& campaign, Goal goal);
// Hash of the kept path ending at `leaf`: candidate keys from the root, order-independent.
std::string PathHash(const std::vector<const Node*>& kept_path);

// How two entries of the same candidate, content and context relate (same workload and
// hardware signature, same operating point). kSupersedes: `a` (controlled) replaces `b`
// (uncontrolled) whose result diverges; kConflict: both of the same standing and they
// diverge; kAgree otherwise. Entries of different operating points never conflict.
enum class KbRelation { kAgree, kSupersedes, kSupersededBy, kConflict };
bool SameContext(const KbEntry& a, const KbEntry& b);
// A correction of an entry has its uid plus this suffix: the node as its campaign later found
// it (a keep un-kept by the re-check of a flaky incumbent). It supersedes the entry it
// corrects whatever the results (Compare), so the corrected entry stops counting.
inline constexpr const char* kKbCorrectionSuffix = "/unkept";
bool Corrects(const KbEntry& a, const KbEntry& b);
KbRelation Compare(const KbEntry& a, const KbEntry& b);
// Whether their results diverge: one kept and the other not, or both measured and their
// intervals (or gains, ±kDivergence without intervals) disjoint.
bool Diverge(const KbEntry& a, const KbEntry& b);

// The knowledge-base prior of one candidate: pseudo-observations to add to the action's own
// prior and the speedup/cost estimates that replace the action's declared ones.
struct KbPrior {
  double speedup = 1;
  double cost_s = 0;
  double acc_events = 0;  // Σ w·[accuracy failure]
  double acc_trials = 0;  // Σ w over entries that reached the check
  double crash_events = 0;
  double crash_trials = 0;
  double category_weight = 0;  // Σ w over the category: experience that lowers the UCB bonus
  std::vector<KbRef> refs;     // strongest first, at most kKbMaxRefs
};

// A deterministic failure of this very change (same content, workload and hardware) at one
// operating point: trying it again at the same point would replay a known result.
struct KbReplay {
  std::string path_hash;
  int64_t id = 0;
  std::string what;  // "accuracy failure" / "crashed (runtime_crash)"
};
// Whether `e` records a failure that repeats when the same change is tried again in the same
// place: a failed accuracy check, or a crash the Critic classified as deterministic (not a
// timeout, out-of-memory, flaky, infrastructure or unclassified failure).
bool IsDeterministicFailure(const KbEntry& e);

class KbPriors {
 public:
  // Priors for every candidate of `actions` (keys with and without values) from `entries`.
  // Linear in entries; entries of unknown actions/categories are skipped.
  static KbPriors Compute(const std::vector<KbEntry>& entries,
                          const std::vector<ActionSpec>& actions, const KbContext& context);
  // nullptr when nothing in the knowledge base matched the candidate.
  const KbPrior* Find(const std::string& candidate_key) const;
  // A known deterministic failure of the candidate at the operating point `path_hash`
  // (PathHash of the incumbent's kept path), or nullptr.
  const KbReplay* Replay(const std::string& candidate_key, const std::string& path_hash) const;
  size_t size() const { return by_key_.size(); }
  bool has_replays() const { return !replays_.empty(); }

 private:
  std::map<std::string, KbPrior> by_key_;
  std::map<std::pair<std::string, std::string>, KbReplay> replays_;  // (key, path_hash)
};

// The part of an entry's weight that depends on neither the candidate nor the signatures:
// confidence (controlled or not), conflict, age at `now`; 0 for a superseded entry.
double EntryStanding(const KbEntry& e, double now);

// The weight of one entry for a candidate (the formula at the top of this file), 0 when it
// does not match at all.
double EntryWeight(const KbEntry& e, const ActionSpec& action, const std::string& value,
                   const KbContext& context);

// The query the specialists' instructions use: the k entries most relevant to a candidate,
// strongest first, lessons and pitfalls alike (EntryWeight ordering; ties by recency).
std::vector<KbEntry> RelevantEntries(const std::vector<KbEntry>& entries, const ActionSpec& action,
                                     const std::string& value, const KbContext& context, int k);

}  // namespace arbor
