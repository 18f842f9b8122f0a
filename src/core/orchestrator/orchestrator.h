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
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/critic/gate.h"
#include "core/critic/protocol.h"
#include "core/critic/rca.h"
#include "core/knowledge/kb.h"
#include "core/model/event_kind.h"
#include "core/model/ports.h"
#include "core/orchestrator/job_log.h"
#include "core/orchestrator/lanes.h"
#include "core/orchestrator/measure_lane.h"
#include "core/orchestrator/worktree_cursor.h"
#include "core/search/candidates.h"
#include "core/search/category_stats.h"
#include "core/search/constraints.h"
#include "core/search/moves.h"
#include "core/search/selector.h"
#include "core/tree/tree.h"

namespace arbor {

struct Ports {
  Store* store = nullptr;
  Workspace* workspace = nullptr;
  Target* target = nullptr;
  Specialist* specialist = nullptr;
  Gate* gate = nullptr;
  Clock* clock = nullptr;
  EventSink* sink = nullptr;    // optional
  KnowledgeBase* kb = nullptr;  // optional: priors from earlier campaigns, lessons recorded
  // Where this campaign runs, for the knowledge base. campaign_uid is used for a new campaign
  // only; a resumed one keeps the uid in its meta.
  KbContext kb_context;
};

struct RunSummary {
  CampaignState state = CampaignState::kRunning;  // kFinished or kStopped once Run returns
  StopReason stop_reason = StopReason::kNone;
  int evaluated = 0;  // nodes evaluated in total (this run and earlier ones)
  NodeId best = kNoNode;
};

class Orchestrator {
 public:
  Orchestrator(const CampaignSpec& spec, Ports ports);

  // Starts the campaign or continues it from the store. Errors only when the campaign cannot
  // go on at all (store failure, the baseline itself fails); candidates' failures are data.
  Result<RunSummary> Run();
  // Asks Run() to stop after the current step (async-signal-safe).
  void RequestStop() { stop_requested_.store(true); }

  // The candidates applicable at the incumbent, scored and ordered best first (Selector::Score
  // against the incumbent's profile; exposed for `arbor show`, tests and benchmarks).
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
  // The Critic's measurement protocol: interleaved A/B against the incumbent, then a fresh
  // confirmation run before a keep (src/core/orchestrator/measure.cc).
  Status BenchInterleaved(Node* node);
  Status Confirm(Node* node);
  // The node's own runs (arm "self"): the baseline's A/A pre-flight, or --no-critic.
  Status BenchSelf(Node* node);
  // Measures `node` against its base in comparison `which`, the runs the protocol asks for,
  // until the gate decides; `verdict` receives its last word. Returns false when the node was
  // finished (crashed) on the way. `replication`: GateInput::replication (the confirmation).
  Result<bool> MeasureUntilDecided(Node* node, Comparison which, int reps_per_look,
                                   bool replication, Verdict* verdict);
  // What the protocol judges `node`'s comparisons with besides their samples.
  JudgeContext JudgeContextOf(const Node& node) const;
  // Applies the protocol's decision on `node`: its figures, flags and events, then what the
  // verdict says (un-keep the base, finish as reverted, move on to the confirmation, keep).
  Status ApplyDecision(Node* node, const NodeDecision& d);
  static void ApplyFigures(Node* node, const NodeDecision& d);
  // The A/B base's worktree, built: true, or false when its build failed (`node`, when given,
  // is then finished as crashed for infrastructure).
  Result<bool> EnsureBaseBuilt(const Node& parent, Node* node);
  // When a campaign finishes: the best node against the baseline, interleaved, so the
  // reported end-to-end speedup has a measured interval (not a product of per-step ones).
  Status ConfirmFinal();
  // Finishes `node` after step `step` failed: root-cause analysis, diagnosis, constraints.
  Status FailStep(Node* node, FailedStage step, const StepResult& result, Outcome outcome);
  // Publishes what a finished failure teaches (constraints, circuit breaker) onto the node.
  void PublishConstraints(Node* node, const PublishInput& what);
  // On the first node of a plateau: re-profile the incumbent once (ARBOR.md "long-horizon
  // health": re-explore, then re-profile).
  Status ReprofileOnPlateau();
  // Prunes candidates that violate an active constraint (recorded once per incumbent).
  Status PruneViolations(const std::vector<ScoredCandidate>& scored,
                         std::vector<ScoredCandidate>* allowed);
  // After a keep and its re-profile: re-queue reverted ideas whose reason no longer holds.
  std::vector<Node> IntrospectAfterKeep(const Node& kept, const Profile& profile);
  // What failed on the path: `node`'s check (kCheck: the incumbent's check is re-run once to
  // see whether the failure is the path's), or the incumbent's own benchmark run as `node`'s
  // base arm (kBench: the path's, by construction).
  enum class Recheck { kCheck, kBench };
  // Consecutive passes that make an ancestor state "clean". A change that fails a third of its
  // runs passes 2 in a row almost half of the time, and then an innocent keep below it was
  // un-kept in its place while it stayed; 14 lets a change failing a fifth of its runs through
  // 4% of the time (one failing a third, 0.3%). 8 let the fifth through 17% of the time, and
  // on an unseen generated landscape such a change, paired with a no-op, passed 8 in a row
  // before its keep and 8 more in the final validation: the user was handed a broken state.
  // Probes run only after a failure showed the path to be flaky, and as the final validation of
  // what the user is handed (its check kCleanRuns times, ConfirmFinal).
  static constexpr int kCleanRuns = 14;
  // Whether a finished node that applied one of `node`'s candidates failed its check for
  // accuracy (StepCheck then runs the check kCleanRuns times). O(1): the candidate keys of such
  // nodes are noted as they are saved or loaded (NoteCheckFailure), never scanned for.
  bool FailedCheckBefore(const Node& node) const;
  void NoteCheckFailure(const Node& node);
  // The candidate keys (and action ids) `node`'s state holds over its base: AppliedKeys, and for
  // a branch node those of every node of its branch ({id, key, id, key, …}).
  std::vector<std::string> KeysOverBase(const Node& node) const;
  // When the failure is the path's: un-keeps the kept path below the nearest state that passes
  // the same probe repeatedly and finishes `node` without blaming it
  // (src/core/orchestrator/recheck.cc). True when `node` was finished.
  Result<bool> RecheckIncumbent(Node* node, const StepResult& failure, Recheck probe);
  // What ProbePasses saw: the state passed every run, failed one (or, with no `node`, no longer
  // builds), or no longer builds and `node` was finished by the failed build.
  enum class ProbeOutcome { kPassed, kFailed, kNodeFinished };
  // Runs `probe` on `state` `times` times in the base worktree, stopping at the first failure.
  // kNodeFinished only with a `node`.
  Result<ProbeOutcome> ProbePasses(const Node& state, Recheck probe, int times, Node* node);
  // `incumbent` failed `probe` (`failure`): un-keeps the kept path below the nearest state that
  // passes it kCleanRuns times in a row; finishes `node` (the candidate whose run showed it, or
  // nullptr for the final validation) without blaming it, and moves the branch back. True when
  // the failure was dealt with: the path un-kept, or `node` finished by a state that no longer
  // builds; false when nothing was un-kept (not even the baseline passes as often).
  Result<bool> UnkeepFlakyPath(NodeId incumbent, Recheck probe, const StepResult& failure,
                               Node* node);
  // The incumbent re-measured at `now`, an order of magnitude from the value it was kept at:
  // un-keeps it, moves the branch back to its parent and re-queues there what was measured
  // on top of it, `node` (the candidate being measured, or nullptr) included (unkeep.cc).
  Status UnkeepAnomalousIncumbent(NodeId incumbent, double now, Node* node);
  // After un-keeping (recorded first): releases the A/B base's worktree and the judged node's
  // (or, with none, the prepared one's) and promotes `commit` as the campaign branch.
  Status MoveBranchBack(const std::string& commit, const Node* judged);
  // When nothing is left to try and budget is: re-queues ideas the path changed under since
  // they were reverted ([search] revisit; src/core/orchestrator/requeue.cc). True when any was
  // re-queued.
  Result<bool> RevisitWhenExhausted();
  // The speedup each action's prior promises at `node`, against the profile there (Pairs).
  Promise PromiseAt(NodeId node);
  // At a keep: the pending siblings it supersedes and the candidates that lacked a
  // prerequisite, as pending children of `kept` (moves.h: CarryOver, PrerequisiteRetries).
  std::vector<Node> MovesAtKeep(const Node& kept);
  // At the keep of a branch node (branches.cc): the nodes of its branch above it, kept with it
  // (flag "carried") and upserted, top down; empty for any other node.
  std::vector<Node> CarryBranch(const Node& kept);
  // Category statistics from the tree, as Load derives them (outcomes changed after the fact).
  void RebuildStats();
  // The pending children of `parent` (but `except`) closed as pruned with `diagnosis`: ideas
  // re-queued under a state the search has moved away from.
  std::vector<Node> SupersedePending(NodeId parent, NodeId except, const std::string& diagnosis);
  // Pending children of `parent` retrying each re-queued node.
  std::vector<Node> RequeueUnder(const Node& parent, const std::vector<Requeue>& requeues);
  // Finishes `node` with `outcome` and a diagnosis, releasing its worktree.
  Status Finish(Node* node, Outcome outcome, const std::string& diagnosis,
                const std::string& event_kind);
  Status Save(const Node& node, std::vector<Event> events, std::vector<Sample> samples = {},
              std::optional<Profile> profile = std::nullopt);
  // Save() of `node` plus other nodes written in the same transaction.
  Status SaveMany(const Node& node, const std::vector<Node>& others, std::vector<Event> events,
                  std::vector<Sample> samples = {}, std::optional<Profile> profile = std::nullopt);
  // Why the campaign should end now (a target met, a budget spent), if it should.
  std::optional<StopReason> DueStopReason();
  // Records a new running node for `chosen` under the incumbent; returns its id.
  Result<NodeId> Open(const ScoredCandidate& chosen);
  // Parallel specialists (src/core/orchestrator/parallel.cc): opens a node per candidate, starts
  // every implementation at once (each in its own worktree), then evaluates the nodes one at a time
  // in order. A node whose base moved (a keep before its turn) is re-dispatched on the new
  // incumbent. Results that finish while another node is measured are recorded at once.
  Status DispatchBatch(const std::vector<const ScoredCandidate*>& batch);
  struct InFlight {
    ActionSpec action;  // a copy: proposals may grow the campaign's actions meanwhile
    Task task;
    // A pair's companion (moves.h, Move::kPair), or a bundle's, applied first: copies of
    // their actions (a deque: the tasks point at them) and their tasks.
    std::deque<ActionSpec> companions;
    std::vector<Task> companion_tasks;
    std::vector<Task> after_tasks;  // Companion::after
    std::future<SpecialistResult> result;
    std::optional<SpecialistResult> ready;  // taken from `result` by RecordReady
  };
  Status Launch(NodeId id);
  // Waits for `id`'s running implementation and returns its result (the worktree it ran in is
  // its InFlight's task.worktree: the caller decides whether it becomes the current one).
  SpecialistResult TakeResult(NodeId id);
  // Records finished implementations of other in-flight nodes whose base is still current:
  // applied ones only, in dispatch order, up to the first that cannot be recorded yet.
  Status RecordReady(NodeId except);
  // Moves a running node whose parent is no longer the incumbent onto the incumbent, back to
  // the apply step (its implementation was for the old state).
  Status Redispatch(NodeId id, const std::string& why);
  Task MakeTask(const Node& node, const ActionSpec* action, const std::string& worktree);
  // A pair node's companion tasks (same node, worktree and parent; each companion's action and
  // value; for a swap, on the parent's overlay without the dropped change): one for a pair or a
  // swap, several for a bundle, none for a plain node. The tasks point at the companions'
  // actions copied into `*copies`, which the caller keeps alive as long as them. `after`: the
  // refreshes the node runs again on top of its change (moves.h RefreshesToRun), in path order.
  struct Companion {
    std::vector<Task> tasks;
    std::vector<Task> after;
    std::string missing;  // a companion that left the catalog ("" when none did)
  };
  Companion CompanionTasks(const Node& node, const std::string& worktree,
                           std::deque<ActionSpec>* copies);
  // A drop node's implementation (moves.h, Move::kDrop): no specialist, the parent's overlay
  // with the dropped change's variables back at their values before it was kept.
  SpecialistResult Drop(const Node& node);
  std::map<NodeId, std::unique_ptr<InFlight>> in_flight_;
  // Build lanes (src/core/orchestrator/build_lane.cc): a node's build, then its check, run on a
  // thread of their own as soon as its implementation is recorded (search.parallel > 1); the node's
  // build and check steps record their results in dispatch order, as if they had run then.
  struct LaneRun {
    std::string commit;    // what was built: a node re-dispatched since has a new one
    RunContext build_ctx;  // its worktree is the lane's
    RunContext check_ctx;
    std::future<void> done;
    StepResult build;                  // set by the lane's thread before `done`
    std::optional<Measurement> check;  // after a good build
  };
  void StartLane(const Node& node, const std::string& worktree);
  // Waits for the node's lane, recording other implementations as they finish meanwhile.
  Status AwaitLane(NodeId id);
  // The build step of a batch's node through its lane (started now when it has none, or a
  // stale one); `failed` as for EnsureBuilt.
  Result<bool> BuildInLane(Node* node);
  // The check the node's lane ran, if any (and then its lane is done).
  std::optional<Measurement> TakeLaneCheck(const Node& node);
  void DiscardLane(NodeId id);                        // waits for its thread and drops what it did
  std::unique_ptr<LaneTarget> lane_target_;           // the lane lock, around the Target port
  std::map<NodeId, std::unique_ptr<LaneRun>> lanes_;  // after lane_target_: joined first
  // Measure lanes (src/core/orchestrator/measure_lane.cc; search.lanes = N > 1): while this
  // thread measures one node of a batch (lane 0), the first look of the A/B comparison of the
  // batch's next nodes runs on lanes 1 .. N-1, on threads that only compute. A node's bench
  // step saves its lane's samples first, as if measured then, when its base and build are still
  // the ones measured; otherwise they are dropped, never recorded.
  // Before `evaluating`'s step `next`: drops lanes whose base moved; before its measurement,
  // starts lanes for the batch's next nodes (after waiting for their builds and checks).
  Status TendMeasureLanes(NodeId evaluating, Step next);
  // Starts lanes for the nodes after `evaluating` whose build and check passed, on free lanes.
  Status StartMeasureLanes(NodeId evaluating);
  // Lane i's base worktree for the incumbent: prepared here, built on a thread of its own.
  Status PrepareLaneBase(int lane);
  // The first look the lane measured for `node`, saved as the bench step would have (or
  // dropped); then lanes start for the nodes after it (src/core/orchestrator/measure_lane.cc).
  Status AdoptMeasureLane(Node* node);
  void DiscardMeasureLane(NodeId id);  // stops its thread at its next run, waits, drops it all
  std::vector<NodeId> batch_;          // the batch being dispatched, in order
  std::map<int, LaneBase> lane_bases_;
  std::map<NodeId, std::unique_ptr<MeasureLane>> measure_lanes_;  // joined before lane_target_
  Status Stop(CampaignState state, StopReason reason);

  double CampaignTime();
  Event MakeEvent(NodeId node, std::string kind, std::string message);
  Event MakeEvent(NodeId node, const ProtocolEvent& e) {
    return MakeEvent(node, std::string(EventKindName(e.kind)), e.message);
  }
  RunContext Context(const Node& node, const std::string& label) const;
  RunContext ContextAt(const Node& node, const std::string& worktree,
                       const std::string& label) const;
  int Repetitions() const;
  // Repetitions per look for `node`: more for a re-measured close call (moves.h).
  int RepetitionsFor(const Node& node) const;
  std::optional<Profile> ProfileAt(NodeId id);
  Result<std::vector<Sample>> SamplesOf(NodeId id);
  void Report(const Node& node);

  // Domain Specialists (src/core/orchestrator/delegation.cc): the context a task is built with,
  // proposal rounds and follow-up proposals, and the LLM budget.
  TaskContext BuildContext(NodeId at, const ActionSpec* action, const std::string& value,
                           const std::string& domain);
  bool LlmBudgetSpent() const;
  void AddUsage(const AgentUsage& usage);
  std::vector<std::string> KnownActions() const;
  // Gives new ids a place in the campaign (events describe each, or why it was left out);
  // returns the accepted ids. AddActions() then makes them candidates.
  std::vector<std::string> AcceptProposals(std::vector<ActionSpec> proposed, const std::string& by,
                                           NodeId node, std::vector<Event>* events,
                                           std::vector<ActionSpec>* accepted);
  void AddActions(const std::vector<ActionSpec>& actions);
  // Accepts a specialist's follow-up proposals for `node` (listed in node->agent.proposed);
  // their events and actions ride with the node's next Save.
  void TakeProposals(Node* node, std::vector<ActionSpec> proposals);
  // Records a specialist's result on the node in flight and moves it on (or finishes it).
  Status RecordApply(Node* node, SpecialistResult r);
  std::optional<Mutation::Prompt> pending_prompt_;
  std::vector<Event> pending_events_;
  std::vector<ActionSpec> pending_actions_;
  std::vector<Node> pending_nodes_;  // retries queued by FailStep, saved with the failed node
  // "job" events of the runs since the last Save (a cluster executor's job ids), saved with it.
  std::vector<Event> job_events_;
  std::unique_ptr<JobRecordingTarget> job_target_;  // wraps the Target port
  // Asks every proposing specialist for new actions once per incumbent.
  Status ProposeRound();
  // Records once per process that the LLM budget is spent.
  Status ReportLlmBudget();
  // Makes the actions proposed earlier in this campaign (the store's) candidates again.
  Status LoadProposedActions();
  // What to try next (selector.h) over the campaign's state as it is now: borrowed, so made
  // afresh for each choice.
  Selector Selection() const { return Selector(spec_, tree_, catalog_, stats_, kb_priors_); }

  const CampaignSpec& spec_;
  Ports ports_;
  MeasurementProtocol protocol_;     // the Critic's rules: what to measure, what a verdict means
  std::vector<ActionSpec> actions_;  // the campaign file's, then the proposed ones
  Catalog catalog_;
  Tree tree_;
  CategoryStats stats_;
  CampaignMeta meta_;
  CampaignMeta saved_meta_;  // as last written to the store
  // Ensures the node's worktree exists and is built in this process (after a resume the
  // build is replayed: builds are idempotent, and a fresh process cannot trust old outputs).
  Result<bool> EnsureBuilt(Node* node);  // false: the build failed, `node` is finished
  // Makes `node`'s worktree the current one (cursor_), preparing it unless it already is.
  Status PrepareWorktree(const Node& node);
  // Records the result of `node`'s build: its cost, and on failure the crash (`failed`).
  Result<bool> RecordBuild(Node* node, const StepResult& r);  // as EnsureBuilt
  // The worktree of the node in flight and the A/B base arm's, and what this process built.
  WorktreeCursor cursor_;
  std::vector<NodeId> publishers_;      // nodes that published constraints
  std::set<std::string> check_failed_;  // candidate keys that failed a check (NoteCheckFailure)
  int64_t last_keep_seq_ = 0;
  bool critic_ = true;  // the Critic's protocol (false only for --no-critic)
  double run_start_ = 0;
  double meta_elapsed_at_start_ = 0;
  double step_started_ = 0;
  std::map<NodeId, Profile> profiles_;  // cache of profiles on the incumbent path
  // Knowledge base (src/core/orchestrator/knowledge.cc): priors fixed at the campaign's start, and
  // the nodes this process already recorded as entries. The knowledge-base context of this
  // campaign: the port's, with the campaign's own uid, start time and measurement standing.
  KbContext KnowledgeContext() const;
  Status LoadKnowledge();
  void RecordKnowledge(const std::vector<const Node*>& finished);
  void KbWarning(const std::string& what, const Error& error);
  KbPriors kb_priors_;
  std::vector<KbEntry> kb_entries_;  // loaded at the start, for specialists' lessons
  bool llm_budget_reported_ = false;
  bool llm_over_budget_ = false;  // a specialist found what is left too small for a request
  std::set<NodeId> kb_recorded_;
  std::set<NodeId> kb_corrected_;  // un-kept nodes whose correction is recorded
  bool kb_ok_ = false;
  std::atomic<bool> stop_requested_{false};
};

// True when the two differ at most in elapsed_s.
bool SameExceptElapsed(const CampaignMeta& a, const CampaignMeta& b);

// Summary helpers shared with views and tests.
std::string DescribeStep(const StepResult& r);
// A failure that says something about the state that ran: it exited non-zero or was killed.
// A timeout, a spawn error, unreadable output or a run the executor lost can be the machine's.
bool StateFailed(const StepResult& r);

// A pair node's implementation (moves.h, Move::kPair): the companion on the parent's state, then
// the node's own candidate on top of it in the same worktree (a bundle's companions in their
// order, each on the one before). One result: the last one's overlay, every summary, duration,
// usage and proposal; a companion that fails or is skipped is the result, with the companion
// named in its diagnosis.
SpecialistResult ImplementPair(Specialist* specialist, const std::vector<Task>& companions,
                               Task own);
// A swap (a drop with a companion, moves.h Swaps): the companion implemented on the parent's
// state without the change `dropped` (its task's parent overlay).
SpecialistResult ImplementSwap(Specialist* specialist, const Task& companion,
                               const std::string& dropped);
// `done` (applied) with each of `after` (Companion::after) run on top of it in turn.
SpecialistResult RunAfter(Specialist* specialist, SpecialistResult done,
                          const std::vector<Task>& after);

}  // namespace arbor
