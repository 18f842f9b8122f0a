// The Orchestrator's loop (Run): load or resume the tree, make sure of the baseline, then
// choose (selection.cc), evaluate (node_steps.cc, node_outcome.cc; parallel.cc for batches)
// and save until a stop condition; the store writes and events every step goes through.
#include "core/orchestrator/orchestrator.h"

#include <algorithm>
#include <cstring>  // sigabbrev_np

#include "arbor/exit_codes.h"
#include "core/model/config_diff.h"
#include "util/duration.h"
#include "util/hash.h"
#include "util/strings.h"

namespace arbor {
namespace {

std::string LastLine(const std::string& text) {
  auto lines = Split(text, '\n');
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    std::string t = Trim(*it);
    if (!t.empty()) return t.size() > 200 ? t.substr(0, 200) + "…" : t;
  }
  return "";
}

}  // namespace

std::string DescribeStep(const StepResult& r) {
  std::string what;
  switch (r.kind) {
    case ExitKind::kOk:
      what = "ok";
      break;
    case ExitKind::kFailed:
      what = "exit code " + std::to_string(r.exit_code);
      break;
    case ExitKind::kSignaled: {
      const char* name = sigabbrev_np(r.signal);
      what = "killed by signal " + std::to_string(r.signal) +
             (name ? std::string(" (SIG") + name + ")" : "");
      break;
    }
    case ExitKind::kTimedOut:
      what = "timed out after " + FormatDuration(r.duration_s);
      break;
    case ExitKind::kSpawnError:
      what = "could not start";
      break;
    case ExitKind::kBadOutput:
      what = "bad output";
      break;
  }
  if (!r.detail.empty() && r.kind != ExitKind::kOk) what += ": " + r.detail;
  std::string last = LastLine(r.tail);
  if (!last.empty() && r.kind != ExitKind::kOk && r.kind != ExitKind::kBadOutput) {
    what += " — " + last;
  }
  return what;
}

Orchestrator::Orchestrator(const CampaignSpec& spec, Ports ports)
    : spec_(spec),
      ports_(ports),
      protocol_(spec, ports.gate),
      actions_(spec.actions),
      catalog_(actions_) {
  if (ports_.target != nullptr) {
    // Builds and checks never share the machine with a measurement that needs it (lanes.h).
    lane_target_ = std::make_unique<LaneTarget>(ports_.target, spec.search.lanes);
    // Every run that names an executor's job is recorded on its node with the next Save.
    job_target_ = std::make_unique<JobRecordingTarget>(
        lane_target_.get(), [this](const RunContext& ctx, const StepResult& r) {
          Event e = JobEvent(ctx.node, ctx.label, r);
          e.t = CampaignTime();
          job_events_.push_back(std::move(e));
        });
    ports_.target = job_target_.get();
  }
}

double Orchestrator::CampaignTime() {
  return meta_elapsed_at_start_ + (ports_.clock->Now() - run_start_);
}

Event Orchestrator::MakeEvent(NodeId node, std::string kind, std::string message) {
  Event e;
  e.node = node;
  e.kind = std::move(kind);
  e.message = std::move(message);
  e.t = CampaignTime();
  return e;
}

bool SameExceptElapsed(const CampaignMeta& a, const CampaignMeta& b) {
  return a.name == b.name && a.seed == b.seed && a.spec_hash == b.spec_hash &&
         a.config == b.config && a.state == b.state && a.stop_reason == b.stop_reason &&
         a.explore_boost == b.explore_boost && a.next_seq == b.next_seq &&
         a.noise_cv == b.noise_cv && a.noise_mde == b.noise_mde && a.repetitions == b.repetitions &&
         a.no_critic == b.no_critic && a.final_node == b.final_node &&
         a.final_speedup == b.final_speedup && a.final_ci_low == b.final_ci_low &&
         a.final_ci_high == b.final_ci_high && a.uid == b.uid && a.kb_snapshot == b.kb_snapshot &&
         a.kb_time == b.kb_time && a.budget_nodes == b.budget_nodes &&
         a.budget_time_s == b.budget_time_s;
}

Status Orchestrator::Save(const Node& node, std::vector<Event> events, std::vector<Sample> samples,
                          std::optional<Profile> profile) {
  return SaveMany(node, {}, std::move(events), std::move(samples), std::move(profile));
}

Status Orchestrator::SaveMany(const Node& node, const std::vector<Node>& others,
                              std::vector<Event> events, std::vector<Sample> samples,
                              std::optional<Profile> profile) {
  Mutation m;
  m.nodes.push_back(node);
  for (const Node& o : others) m.nodes.push_back(o);
  std::vector<Node> retries = std::move(pending_nodes_);
  pending_nodes_.clear();
  for (const Node& r : retries) m.nodes.push_back(r);
  m.samples = std::move(samples);
  if (profile) m.profiles.emplace_back(node.id, *profile);
  m.events = std::move(events);
  // A specialist's prompt, proposals and their events ride with the node's next state change.
  std::vector<ActionSpec> added;
  if (pending_prompt_ && pending_prompt_->node == node.id) m.prompts.push_back(*pending_prompt_);
  m.events.insert(m.events.begin(), job_events_.begin(), job_events_.end());
  if (!pending_events_.empty() || !pending_actions_.empty()) {
    m.events.insert(m.events.begin(), pending_events_.begin(), pending_events_.end());
    m.actions = pending_actions_;
    added = pending_actions_;
  }
  meta_.elapsed_s = CampaignTime();
  // The meta rows are rewritten only when something besides the clock changed, when a node
  // finishes, or every few seconds: a kill loses at most that much of the elapsed-time count,
  // and the per-step transactions stay small (engine overhead, docs/benchmarks.md).
  bool write_meta = !SameExceptElapsed(meta_, saved_meta_) || node.step == Step::kDone ||
                    meta_.elapsed_s - saved_meta_.elapsed_s > 5;
  if (write_meta) m.meta = meta_;
  ARBOR_TRY(ports_.store->Apply(m));
  if (write_meta) saved_meta_ = meta_;
  pending_prompt_.reset();
  pending_events_.clear();
  pending_actions_.clear();
  job_events_.clear();
  AddActions(added);
  tree_.Upsert(node);
  for (const Node& o : others) tree_.Upsert(o);
  for (const Node& r : retries) tree_.Upsert(r);
  NoteCheckFailure(node);
  for (const Node& o : others) NoteCheckFailure(o);
  if (profile) profiles_[node.id] = *profile;
  if (ports_.sink) {
    for (const auto& e : m.events) ports_.sink->OnEvent(e);
  }
  if (ports_.kb) {
    std::vector<const Node*> finished;
    for (const Node& n : m.nodes) {
      if (n.step == Step::kDone) finished.push_back(tree_.Find(n.id));
    }
    if (!finished.empty()) RecordKnowledge(finished);
  }
  Report(node);
  return {};
}

void Orchestrator::Report(const Node& node) {
  if (!ports_.sink) return;
  Progress p;
  p.node = node.id;
  p.action = node.CandidateKey();
  p.step = node.step;
  const Node* inc = tree_.Find(tree_.Incumbent());
  if (inc) p.best = inc->metric;
  if (const Node* root = tree_.Find(kRootId)) p.baseline = root->metric;
  p.elapsed_s = CampaignTime();
  p.nodes_done = tree_.FinishedCount();
  p.max_nodes = spec_.search.max_nodes;
  p.max_time_s = spec_.search.max_time_s;
  ports_.sink->OnProgress(p);
}

Status Orchestrator::Load() {
  ARBOR_TRY_ASSIGN(auto meta, ports_.store->LoadMeta());
  const Config config = ConfigOf(spec_);
  std::string applied;  // the changes since the last run a continuing campaign takes
  if (meta.has_value()) {
    meta_ = *meta;
    if (meta_.name != spec_.name) {
      return MakeError("the store belongs to campaign '" + meta_.name + "', not '" + spec_.name +
                       "'");
    }
    bool no_critic = !spec_.critic.enabled;
    if (meta_.no_critic != (no_critic ? 1 : 0)) {
      return MakeError(std::string("campaign '") + spec_.name + "' was started " +
                       (meta_.no_critic ? "with" : "without") +
                       " --no-critic; a campaign keeps one measurement protocol throughout");
    }
    // A store from before the settings were recorded has nothing to compare with.
    if (auto before = DecodeConfig(meta_.config); before && !meta_.config.empty()) {
      ConfigDiff diff = DiffConfig(*before, config);
      if (diff.refused()) return MakeError(RefusalMessage(spec_.name, diff), kExitConfigChanged);
      applied = DescribeChanges(diff, ChangeVerdict::kApplied);
    }
  } else {
    meta_ = CampaignMeta{};
    meta_.name = spec_.name;
    meta_.seed = spec_.seed;
    meta_.no_critic = spec_.critic.enabled ? 0 : 1;
    meta_.uid = ports_.kb_context.campaign_uid;
    meta_.kb_time = ports_.kb_context.now;
    if (ports_.kb) {
      auto max_id = ports_.kb->MaxId();
      if (max_id.ok()) meta_.kb_snapshot = *max_id;
    }
  }
  if (meta_.uid.empty()) meta_.uid = ports_.kb_context.campaign_uid;  // a store from before
  critic_ = meta_.no_critic == 0;
  meta_elapsed_at_start_ = meta_.elapsed_s;
  ARBOR_TRY_ASSIGN(auto nodes, ports_.store->LoadNodes());
  tree_.Reserve(tree_.size() + nodes.size());
  for (Node& n : nodes) {
    if (!n.critic.constraints.empty()) publishers_.push_back(n.id);
    if (n.outcome == Outcome::kKept) last_keep_seq_ = std::max(last_keep_seq_, n.seq);
    if (n.step == Step::kDone) stats_.Observe(n);
    // A kept node is observed when the keep is decided, before its re-profile finishes.
    if (n.step == Step::kProfile && n.outcome == Outcome::kKept) stats_.Observe(n);
    NoteCheckFailure(n);
    tree_.Upsert(std::move(n));
  }
  ARBOR_TRY(LoadProposedActions());
  ARBOR_TRY(LoadKnowledge());
  meta_.budget_nodes = spec_.search.max_nodes;
  meta_.budget_time_s = spec_.search.max_time_s;
  meta_.config = EncodeConfig(config);
  meta_.spec_hash = HashHex(meta_.config);
  // A finished campaign runs again: a raised budget, new actions or a looser threshold give it
  // more to do, and DueStopReason says at once when they do not.
  meta_.state = CampaignState::kRunning;
  meta_.stop_reason = StopReason::kNone;
  Mutation m;
  m.meta = meta_;
  if (!applied.empty()) {
    m.events.push_back(MakeEvent(kNoNode, "config_changed",
                                 "settings changed since the last run, applied: " + applied));
  }
  ARBOR_TRY(ports_.store->Apply(m));
  saved_meta_ = meta_;
  if (ports_.sink) {
    for (const Event& e : m.events) ports_.sink->OnEvent(e);
  }
  return {};
}

Status Orchestrator::Reconcile() {
  // The store is the truth: the branch must point at the incumbent, whatever moment a
  // previous process died at (a keep is recorded before the branch moves).
  const Node* inc = tree_.Find(tree_.Incumbent());
  if (inc && !inc->commit.empty()) ARBOR_TRY(ports_.workspace->Promote(inc->commit));
  return {};
}

Status Orchestrator::EnsureBaseline() {
  ARBOR_TRY_ASSIGN(auto base, ports_.workspace->Open());
  Node* root = tree_.FindMutable(kRootId);
  if (root == nullptr) {
    Node n;
    n.id = kRootId;
    n.action_id = "baseline";
    n.outcome = Outcome::kRunning;
    n.step = Step::kBuild;
    n.commit = base;
    n.created_s = CampaignTime();
    ARBOR_TRY(Save(n, {MakeEvent(n.id, "dispatched", "measuring and profiling the baseline")}));
  } else if (root->step == Step::kDone && root->outcome != Outcome::kBaseline) {
    // A failed baseline stops the campaign; the next run retries it (the environment may
    // have been fixed meanwhile).
    Node n = *root;
    n.outcome = Outcome::kRunning;
    n.step = Step::kBuild;
    n.diagnosis.clear();
    ARBOR_TRY(Save(n, {MakeEvent(n.id, "dispatched", "retrying the baseline")}));
  }
  ARBOR_TRY(Evaluate(kRootId));
  root = tree_.FindMutable(kRootId);
  if (root->step == Step::kDone && root->outcome != Outcome::kBaseline) {
    return MakeError("the baseline failed, so there is nothing to optimize: " + root->diagnosis,
                     kExitBaseline);
  }
  return {};
}

Result<RunSummary> Orchestrator::Run() {
  run_start_ = ports_.clock->Now();
  ARBOR_TRY(Load());
  ARBOR_TRY(Reconcile());
  ARBOR_TRY(EnsureBaseline());
  // Nodes a previous process left in flight are finished before anything new is dispatched.
  // A parallel batch may have left nodes implemented on a state that a keep has since
  // replaced: those are re-dispatched on the incumbent (their implementation is redone).
  for (const Node* n : tree_.All()) {
    if (n->id == kRootId || n->step == Step::kDone || n->step == Step::kNone) continue;
    if (n->outcome == Outcome::kRunning && tree_.BaseOf(n->id) != tree_.Incumbent()) {
      ARBOR_TRY(Redispatch(n->id, "the best state moved while it was in flight"));
    }
    ARBOR_TRY(Evaluate(n->id));
  }
  while (true) {
    if (stop_requested_.load()) {
      ARBOR_TRY(Stop(CampaignState::kStopped, StopReason::kInterrupted));
      break;
    }
    // Health: a full disk would turn every next node into a spurious crash.
    if (auto free_mb = ports_.workspace->FreeDiskMb();
        free_mb && *free_mb < spec_.critic.min_free_disk_mb) {
      ARBOR_TRY(Stop(CampaignState::kStopped, StopReason::kDiskLow));
      break;
    }
    if (auto reason = DueStopReason()) {
      const NodeId before = tree_.Incumbent();
      ARBOR_TRY(ConfirmFinal());
      if (stop_requested_.load()) continue;
      // The final validation moved the branch back: the stop reason (a target met) may no
      // longer hold, and what was un-kept may be tried again if budget is left.
      if (tree_.Incumbent() != before) continue;
      ARBOR_TRY(Stop(CampaignState::kFinished, *reason));
      break;
    }
    std::vector<ScoredCandidate> scored;
    ARBOR_TRY(ReprofileOnPlateau());
    ARBOR_TRY(ProposeRound());
    ARBOR_TRY(PruneViolations(ScoreCandidates(), &scored));
    bool llm_spent = LlmBudgetSpent();
    if (llm_spent) ARBOR_TRY(ReportLlmBudget());
    std::vector<const ScoredCandidate*> batch =
        Selection().ChooseBatch(scored, llm_spent ? LlmBudgetState::kSpent : LlmBudgetState::kLeft);
    if (batch.empty()) {
      ARBOR_TRY_ASSIGN(auto revisited, RevisitWhenExhausted());
      if (revisited) continue;
      const NodeId before = tree_.Incumbent();
      ARBOR_TRY(ConfirmFinal());
      if (stop_requested_.load() || tree_.Incumbent() != before) continue;
      ARBOR_TRY(Stop(CampaignState::kFinished, StopReason::kExhausted));
      break;
    }
    ARBOR_TRY(DispatchBatch(batch));
  }
  RunSummary summary;
  summary.state = meta_.state;
  summary.stop_reason = meta_.stop_reason;
  summary.evaluated = tree_.FinishedCount();
  summary.best = tree_.Incumbent();
  return summary;
}

std::optional<StopReason> Orchestrator::DueStopReason() {
  const Node* inc = tree_.Find(tree_.Incumbent());
  if (spec_.metric.target && inc && inc->metric) {
    bool met = spec_.metric.goal == Goal::kMax ? *inc->metric >= *spec_.metric.target
                                               : *inc->metric <= *spec_.metric.target;
    if (met) return StopReason::kTarget;
  }
  if (tree_.FinishedCount() >= spec_.search.max_nodes) return StopReason::kMaxNodes;
  if (CampaignTime() >= spec_.search.max_time_s) return StopReason::kMaxTime;
  // After `plateau` non-kept nodes the exploration weight doubles (Selector::Score). A plateau
  // ends the campaign only when the user asked for it: a budget the user gave is spent.
  if (spec_.search.plateau_stop > 0 && tree_.TrailingNonKept() >= spec_.search.plateau_stop) {
    return StopReason::kPlateau;
  }
  return std::nullopt;
}

Status Orchestrator::Stop(CampaignState state, StopReason reason) {
  // Worktrees kept for the A/B base arm or the final confirmation, and any a killed process
  // left behind, are disposable now: every state worth keeping is a commit.
  ARBOR_TRY(ports_.workspace->ReleaseAll());
  cursor_.Reset();
  lane_bases_.clear();  // measure lanes' base worktrees (measure_lane.cc), released too
  meta_.state = state;
  meta_.stop_reason = reason;
  Mutation m;
  Event e =
      MakeEvent(kNoNode, "stopped",
                std::string(CampaignStateName(state)) + ": " + std::string(StopReasonName(reason)));
  if (reason == StopReason::kDiskLow) {
    e.message += " (less than " + FormatDouble(spec_.critic.min_free_disk_mb) +
                 " MB free for worktrees and logs; free some space, then `arbor run` resumes)";
  }
  m.events.push_back(e);
  meta_.elapsed_s = CampaignTime();
  m.meta = meta_;
  ARBOR_TRY(ports_.store->Apply(m));
  saved_meta_ = meta_;
  if (ports_.sink) ports_.sink->OnEvent(e);
  return {};
}

}  // namespace arbor
