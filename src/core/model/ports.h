// Ports: every side effect the Orchestrator needs, as small interfaces.
//
// Core owns these interfaces; adapters (store/, exec/, specialists/, app/) implement them with
// SQLite, processes and git, and tests/fakes implements them in memory. Nothing in core reads
// the wall clock, the disk or the network except through a port.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/knowledge/kb.h"
#include "core/model/model.h"
#include "core/model/spec.h"
#include "util/result.h"

namespace arbor {

// ---- Store: the campaign's durable state. Apply() is atomic: all of it or nothing. ----------
struct Mutation {
  std::vector<Node> nodes;      // upserts of whole rows, keyed by id
  std::vector<Sample> samples;  // inserts; re-inserting (node, arm, rep) replaces
  std::vector<std::pair<NodeId, Profile>> profiles;
  std::vector<Event> events;  // appended; ids assigned by the store
  std::optional<CampaignMeta> meta;
  // Actions proposed by specialists (ActionSpec::proposed_by set): upserts keyed by id.
  std::vector<ActionSpec> actions;
  // What a specialist was given, per node: (node, kind, text); kind is "implement" or
  // "propose:<domain>". Re-inserting (node, kind) replaces.
  struct Prompt {
    NodeId node = kNoNode;
    std::string kind;
    std::string text;
  };
  std::vector<Prompt> prompts;
};

class Store {
 public:
  virtual ~Store() = default;
  virtual Status Apply(const Mutation& m) = 0;
  // The campaign meta, or nullopt for a new store.
  virtual Result<std::optional<CampaignMeta>> LoadMeta() = 0;
  virtual Result<std::vector<Node>> LoadNodes() = 0;                 // ordered by id
  virtual Result<std::vector<Sample>> LoadSamples(NodeId node) = 0;  // ordered by arm, rep
  virtual Result<std::optional<Profile>> LoadProfile(NodeId node) = 0;
  // Events with id > after_id (node == kNoNode: all nodes), oldest first, at most `limit`.
  virtual Result<std::vector<Event>> LoadEvents(NodeId node, int64_t after_id, int limit) = 0;
  // Proposed actions in the order they were first recorded.
  virtual Result<std::vector<ActionSpec>> LoadActions() = 0;
  // The prompts recorded for `node`, ordered by kind.
  virtual Result<std::vector<Mutation::Prompt>> LoadPrompts(NodeId node) = 0;
};

// Forwards every call to another Store (leveldb's EnvWrapper): a decorator overrides only
// what it changes. `inner` must outlive it.
class StoreWrapper : public Store {
 public:
  explicit StoreWrapper(Store* inner) : inner_(inner) {}
  Status Apply(const Mutation& m) override { return inner_->Apply(m); }
  Result<std::optional<CampaignMeta>> LoadMeta() override { return inner_->LoadMeta(); }
  Result<std::vector<Node>> LoadNodes() override { return inner_->LoadNodes(); }
  Result<std::vector<Sample>> LoadSamples(NodeId node) override {
    return inner_->LoadSamples(node);
  }
  Result<std::optional<Profile>> LoadProfile(NodeId node) override {
    return inner_->LoadProfile(node);
  }
  Result<std::vector<Event>> LoadEvents(NodeId node, int64_t after_id, int limit) override {
    return inner_->LoadEvents(node, after_id, limit);
  }
  Result<std::vector<ActionSpec>> LoadActions() override { return inner_->LoadActions(); }
  Result<std::vector<Mutation::Prompt>> LoadPrompts(NodeId node) override {
    return inner_->LoadPrompts(node);
  }

 protected:
  Store* inner() const { return inner_; }

 private:
  Store* inner_;
};

// ---- Workspace: git state of nodes. --------------------------------------------------------
class Workspace {
 public:
  virtual ~Workspace() = default;
  // The commit the campaign starts from (the user's HEAD at the first run), creating the
  // campaign branch at it when missing. Refuses a dirty workspace.
  virtual Result<std::string> Open() = 0;
  // A worktree for `node` checked out (detached) at `commit`; reuses an existing one at the
  // same commit. Returns its absolute path.
  virtual Result<std::string> Prepare(NodeId node, const std::string& commit) = 0;
  // Writes `overlay` as arbor-best.env in the node's worktree and commits every change there
  // (even if only that file changed). Returns the new commit. Idempotent when nothing changed
  // since the last snapshot (returns HEAD).
  virtual Result<std::string> Snapshot(NodeId node, const std::string& message,
                                       const EnvOverlay& overlay) = 0;
  // Points the campaign branch at `commit` (a descendant of its current tip). Idempotent.
  virtual Status Promote(const std::string& commit) = 0;
  // Removes the node's worktree if it exists. Idempotent.
  virtual Status Release(NodeId node) = 0;
  // Removes every node worktree of the campaign (a finished campaign, or leftovers of a
  // killed process). Idempotent.
  virtual Status ReleaseAll() = 0;
  // Free space where worktrees and logs go, in MB, when the platform can tell.
  virtual std::optional<double> FreeDiskMb() { return std::nullopt; }
};

// ---- Target: the user's build / check / bench / profile commands. --------------------------
struct RunContext {
  NodeId node = kNoNode;
  std::string worktree;
  EnvOverlay env;  // baseline env + the node's overlay (the runner adds ARBOR_* vars)
  int repetition = 0;
  std::string label;  // "build", "check", "bench-3", ... names the run's log folder
  // The measurement lane the run belongs to (docs/lanes.md#measurement-lanes; set by the lane
  // lock for a benchmark or profile when [search] lanes > 1), or -1: none. The local executor
  // pins the run to the lane's CPUs and exports ARBOR_LANE and ARBOR_LANE_CPUS.
  int lane = -1;
};

enum class ExitKind { kOk, kFailed, kSignaled, kTimedOut, kSpawnError, kBadOutput };
std::string_view ExitKindName(ExitKind k);

struct StepResult {
  ExitKind kind = ExitKind::kOk;
  int exit_code = 0;
  int signal = 0;
  double duration_s = 0;
  std::string detail;   // why it failed, one line ("exit code 2", "metric 'x' not found")
  std::string tail;     // last lines of the command's output, for diagnoses
  std::string log_dir;  // where stdout/stderr were captured
  // Set by the executor when the failure came from where the command ran, not from the
  // command (a cluster job cancelled, preempted, lost with its node or over its time limit):
  // root-cause analysis classes it "infrastructure" (run once more, not held against the action).
  bool infrastructure = false;
  // The executor's id of the job that ran the command ("" when it ran locally), and the
  // executor's name ("slurm"); recorded as a "job" event on the node.
  std::string job;
  std::string executor;
  std::string host;  // the machine the job ran on, as the executor names it ("" when unknown)
  // How the result relates to a job a killed run left (docs/slurm.md): "adopted" (it was still
  // running and this run waited for it), "read" (it had finished), "requeued" (it was lost:
  // this result is a new job's, and previous_job names the lost one); "" otherwise.
  std::string reconciled;
  std::string previous_job;
  // The executor's deterministic key of this step ("n7-build-1a2b3c4d"): what a resumed run
  // matches a killed run's job against.
  std::string step_key;
  bool ok() const { return kind == ExitKind::kOk; }
};

struct Measurement {
  StepResult step;
  std::optional<double> value;          // the metric (bench) or accuracy (check), if any
  std::map<std::string, double> extra;  // guard metrics, "work"
};

struct ProfileResult {
  StepResult step;
  std::optional<Profile> profile;
};

class Target {
 public:
  virtual ~Target() = default;
  virtual StepResult Build(const RunContext& ctx) = 0;
  virtual Measurement Check(const RunContext& ctx) = 0;
  virtual Measurement Bench(const RunContext& ctx) = 0;
  virtual ProfileResult Profile(const RunContext& ctx) = 0;
  // The benchmark runs of one measurement of `node` (the baseline's runs, an interleaved A/B
  // of both arms, the final confirmation) happen between these two calls, with no other
  // command in between: an executor may hold one machine for all of them so that both arms are
  // measured on the same hardware. Every BeginMeasurement is followed by one EndMeasurement
  // (also when a run fails or the campaign stops). The defaults do nothing. With [search]
  // lanes > 1 several measurements are open at once, each on a thread of its own that makes
  // all of its calls (docs/lanes.md#measurement-lanes): an executor keeps its state per thread.
  virtual void BeginMeasurement(NodeId /*node*/) {}
  virtual void EndMeasurement(NodeId /*node*/) {}
  // Whether a measurement (and a profile) needs the machine Arbor runs on to itself: true when
  // commands run here, so no build or check of the campaign may run meanwhile (the Orchestrator's
  // lane lock, core/orchestrator/lanes.h); false when each measurement gets its own exclusive
  // machine elsewhere (a Slurm allocation), so builds go on while it runs.
  virtual bool MeasurementsNeedTheMachine() const { return true; }
};

// Calls BeginMeasurement now and EndMeasurement when it goes out of scope.
class MeasurementScope {
 public:
  MeasurementScope(Target* target, NodeId node) : target_(target), node_(node) {
    target_->BeginMeasurement(node_);
  }
  ~MeasurementScope() { target_->EndMeasurement(node_); }
  MeasurementScope(const MeasurementScope&) = delete;
  MeasurementScope& operator=(const MeasurementScope&) = delete;

 private:
  Target* target_;
  NodeId node_;
};

// ---- Specialist: implements one action in a worktree. ---------------------------------------
// What the Orchestrator hands a specialist besides its action, assembled at dispatch time
// (ARBOR.md "The agents"; core/task_context.cc): each list is plain lines, strongest first.
struct TaskContext {
  std::string domain;                    // the agent's domain, else the action's layer
  std::string goal;                      // the agent action's goal, else the action's description
  std::string hardware;                  // the detected hardware signature
  std::optional<Profile> profile;        // the incumbent's latest profile
  std::vector<std::string> targets;      // targeted components with their shares
  std::vector<std::string> kept_path;    // the kept changes so far, root first
  std::vector<std::string> lessons;      // knowledge-base lessons and pitfalls (top-k)
  std::vector<std::string> failures;     // similar actions that failed: do not repeat
  std::vector<std::string> constraints;  // the Critic's active constraints
};

struct Task {
  NodeId node = kNoNode;
  const ActionSpec* action = nullptr;
  std::string value;  // for `values` actions
  std::string worktree;
  std::string base_commit;    // the parent's commit, checked out in `worktree`
  EnvOverlay parent_overlay;  // the parent's full overlay
  EnvOverlay base_env;        // [target] env, for `append` onto a variable the parent never set
  // For agent actions only (a declarative action is applied as declared; both stay empty):
  TaskContext context;
  std::vector<std::string> known_actions;  // ids in the campaign (file and proposed): a
                                           // follow-up proposal must use a new one
};

// Tokens and money an LLM-backed specialist spent on one task or proposal round.
struct AgentUsage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  double cost = 0;
  int rounds = 0;
  bool over_budget = false;  // a request was not sent: it could have exceeded the [llm] budget
};

// The specialist contract (docs/specialists.md): it works only inside the task's worktree and
// returns one result; it never commits, never writes the store, never runs the end-to-end
// benchmark. The Orchestrator snapshots the worktree and the normal gate decides.
struct SpecialistResult {
  enum class Status { kApplied, kFailed, kSkipped };
  Status status = Status::kApplied;
  EnvOverlay overlay;     // the node's full overlay after the action
  std::string summary;    // what was done
  std::string diagnosis;  // why it failed or was skipped
  double duration_s = 0;
  SpecialistBackend backend = SpecialistBackend::kBuiltin;
  double confidence = 0;               // 0..1 (0: not reported)
  std::vector<std::string> findings;   // for the knowledge base
  std::vector<std::string> questions;  // residual questions for the user
  // Follow-up candidate actions, validated against the campaign schema; the Orchestrator
  // scores them like any other and marks them as proposed by this node.
  std::vector<ActionSpec> proposals;
  std::string prompt;  // exactly what the specialist was given ("" for builtin actions)
  AgentUsage usage;
};

// A request for new candidate actions in one domain ("propose" mode).
struct ProposeRequest {
  std::string domain;
  TaskContext context;             // goal empty; profile, path, lessons, failures, constraints
  std::vector<std::string> known;  // ids of the actions the campaign already has
  std::vector<std::string> tried;  // candidate keys already tried, with outcomes
  int max_actions = 5;
};

struct Proposal {
  std::vector<ActionSpec> actions;    // valid ones only
  std::vector<std::string> rejected;  // one line per proposed action that failed validation
  std::string diagnosis;              // why the round failed as a whole ("" when it worked)
  std::string prompt;
  AgentUsage usage;
};

class Specialist {
 public:
  virtual ~Specialist() = default;
  virtual SpecialistResult Implement(const Task& task) = 0;
  // Domains whose specialist can propose new actions (configured with propose = true).
  virtual std::vector<std::string> ProposingDomains() const { return {}; }
  virtual Proposal Propose(const ProposeRequest& request) {
    Proposal p;
    p.diagnosis = "no specialist of domain '" + request.domain + "' can propose actions";
    return p;
  }
};

// ---- KnowledgeBase: what earlier campaigns learned (core/knowledge/kb.h).
// ------------------------------
struct KbQuery {
  std::vector<std::string> action_ids;  // entries of these actions …
  std::vector<std::string> categories;  // … or of these categories (both empty: all)
  int64_t max_id = 0;                   // only entries with id <= max_id (0: all)
  std::string exclude_campaign_uid;     // leave out this campaign's own entries
};

class KnowledgeBase {
 public:
  virtual ~KnowledgeBase() = default;
  // The largest entry id so far (0 for an empty knowledge base): a campaign remembers it at
  // its start so that a resume computes the same priors.
  virtual Result<int64_t> MaxId() = 0;
  virtual Result<std::vector<KbEntry>> Load(const KbQuery& query) = 0;
  // Inserts entries whose uid is new (idempotent: re-recording is a no-op), detecting
  // conflicts with entries of the same context (core/knowledge/kb.h Compare) in the same
  // transaction.
  virtual Status Record(const std::vector<KbEntry>& entries) = 0;
};

// ---- Clock, progress ----------------------------------------------------------------------
class Clock {
 public:
  virtual ~Clock() = default;
  virtual double Now() = 0;  // seconds, monotonic
};

struct Progress {
  NodeId node = kNoNode;
  std::string action;  // candidate key
  Step step = Step::kNone;
  std::optional<double> best;
  std::optional<double> baseline;  // the root's metric: the best's speedup is over it
  double elapsed_s = 0;
  int nodes_done = 0;
  int max_nodes = 0;
  double max_time_s = 0;
};

// Mirrors what happens for a live view (terminal status line, --events JSON lines).
// The store is the record; a sink may drop anything.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void OnEvent(const Event& e) = 0;
  virtual void OnProgress(const Progress& p) = 0;
};

}  // namespace arbor
