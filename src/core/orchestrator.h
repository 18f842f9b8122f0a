// Orchestrator: the campaign loop of ARBOR.md ("The loop"), depth-first, one node in flight.
//
//   profile the incumbent → score every applicable candidate with h(a) → dispatch the best to
//   the specialist → gate (check, then benchmark) → keep (new incumbent, re-profile) / revert /
//   crash → re-score → … until a stop condition.
//
// Every state change goes through Store::Apply together with the events that describe it, so
// the store alone is the record: Run() on a fresh Orchestrator over the same store continues
// exactly where a killed process stopped. A node's progress is its `step`; steps are replayed
// idempotently (a half-applied worktree is recreated, completed samples are kept, a keep
// recorded but not yet promoted in git is promoted on start).
//
// The Orchestrator decides what to try; it never implements anything itself (that is the
// Specialist's job) and never decides alone what is kept (that is the Gate's).
#pragma once

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/candidates.h"
#include "core/gate.h"
#include "core/ports.h"
#include "core/stats.h"
#include "core/tree.h"

namespace arbor {

struct Ports {
  Store* store = nullptr;
  Workspace* workspace = nullptr;
  Target* target = nullptr;
  Specialist* specialist = nullptr;
  Gate* gate = nullptr;
  Clock* clock = nullptr;
  EventSink* sink = nullptr;  // optional
};

struct RunSummary {
  std::string state;        // finished | stopped
  std::string stop_reason;  // max_nodes, max_time, plateau, exhausted, target, interrupted
  int evaluated = 0;        // nodes evaluated in total (this run and earlier ones)
  NodeId best = kNoNode;
};

// A scored candidate, as the Orchestrator saw it when choosing.
struct ScoredCandidate {
  Candidate candidate;
  ScoreTerms terms;
};

class Orchestrator {
 public:
  Orchestrator(const CampaignSpec& spec, Ports ports);

  // Starts the campaign or continues it from the store. Errors only when the campaign cannot
  // go on at all (store failure, the baseline itself fails); candidates' failures are data.
  Result<RunSummary> Run();
  // Asks Run() to stop after the current step (async-signal-safe).
  void RequestStop() { stop_requested_.store(true); }

  // The candidates applicable at the incumbent, scored and ordered best first (exposed for
  // `arbor show`, tests and benchmarks).
  std::vector<ScoredCandidate> ScoreCandidates();
  const Tree& tree() const { return tree_; }

 private:
  Status Load();
  Status Reconcile();
  Status EnsureBaseline();
  // Runs `id` from its recorded step to a finished outcome.
  Status Evaluate(NodeId id);
  Status StepApply(Node* node);
  Status StepBuild(Node* node);
  Status StepCheck(Node* node);
  Status StepBench(Node* node);
  Status StepDecide(Node* node);
  Status StepProfile(Node* node);
  // Finishes `node` with `outcome` and a diagnosis, releasing its worktree.
  Status Finish(Node* node, Outcome outcome, const std::string& diagnosis,
                const std::string& event_kind);
  Status Save(const Node& node, std::vector<Event> events, std::vector<Sample> samples = {},
              std::optional<Profile> profile = std::nullopt);
  std::optional<std::string> StopReason();
  Status Dispatch(const ScoredCandidate& chosen);
  Status Stop(const std::string& state, const std::string& reason);

  double CampaignTime();
  Event MakeEvent(NodeId node, std::string kind, std::string message);
  RunContext Context(const Node& node, const std::string& label) const;
  std::optional<Profile> ProfileAt(NodeId id);
  Result<std::vector<Sample>> SamplesOf(NodeId id);
  void Report(const Node& node);

  const CampaignSpec& spec_;
  Ports ports_;
  Catalog catalog_;
  Tree tree_;
  CategoryStats stats_;
  CampaignMeta meta_;
  // Ensures the node's worktree exists and is built in this process (after a resume the
  // build is replayed: builds are idempotent, and a fresh process cannot trust old outputs).
  Status EnsureBuilt(Node* node, bool* failed);
  std::string worktree_;            // of the node in flight
  NodeId prepared_node_ = kNoNode;  // whose worktree worktree_ is
  NodeId built_node_ = kNoNode;     // built in this process
  double run_start_ = 0;
  double meta_elapsed_at_start_ = 0;
  double step_started_ = 0;
  std::map<NodeId, Profile> profiles_;  // cache of profiles on the incumbent path
  std::atomic<bool> stop_requested_{false};
};

// Summary helpers shared with views and tests.
std::string DescribeStep(const StepResult& r);

}  // namespace arbor
