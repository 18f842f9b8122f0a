// Parallel specialists (search.parallel = K): implementations overlap, measurements do not.
//
// A batch opens one node per chosen candidate under the incumbent and starts every
// implementation at once, each in its own worktree, on a thread of its own (a specialist is
// safe to call for different worktrees at once: ports.h). The nodes are then evaluated one at
// a time in dispatch order, so the end-to-end benchmark never shares the machine with another
// benchmark, and the outcome does not depend on which thread finished first. Implementations
// that finish while another node is measured are recorded at once (so a kill -9 keeps them);
// a node whose base moved (a keep before its turn) is re-dispatched on the new incumbent.
// A recorded node's build and check start at once in a lane of their own (build_lane.cc).
#include <algorithm>
#include <future>
#include <utility>
#include <vector>

#include "core/orchestrator/orchestrator.h"
#include "core/search/moves.h"
#include "util/check.h"

namespace arbor {

Status Orchestrator::Launch(NodeId id) {
  const Node* node = tree_.Find(id);
  const ActionSpec* action = catalog_.FindAction(node->action_id);
  if (action == nullptr) return {};  // StepApply finishes it as pruned
  ARBOR_TRY(ports_.workspace->Release(id));
  ARBOR_TRY_ASSIGN(auto wt, ports_.workspace->Prepare(id, tree_.Find(node->parent)->commit));
  auto flight = std::make_unique<InFlight>();
  flight->action = *action;
  flight->task = MakeTask(*node, &flight->action, wt);
  Companion companion = CompanionTasks(*node, wt, &flight->companions);
  if (!companion.missing.empty()) return {};  // StepApply finishes it as pruned
  flight->companion_tasks = std::move(companion.tasks);
  flight->after_tasks = std::move(companion.after);
  const bool drop = DroppedKey(*node) && !CompanionKey(*node);
  if (drop && flight->after_tasks.empty()) {  // nothing to implement: its overlay is known
    flight->ready = Drop(*node);
    in_flight_[id] = std::move(flight);
    return {};
  }
  Specialist* specialist = ports_.specialist;
  const Task* task = &flight->task;
  const std::vector<Task>* first = &flight->companion_tasks;
  const std::vector<Task>* after = &flight->after_tasks;
  std::optional<SpecialistResult> dropped_state;  // a drop's overlay, known now
  if (drop) dropped_state = Drop(*node);
  const std::optional<std::string> dropped = DroppedKey(*node);  // a swap
  flight->result = std::async(std::launch::async, [specialist, task, first, after, dropped,
                                                   state = std::move(dropped_state)]() mutable {
    if (state) return RunAfter(specialist, std::move(*state), *after);
    if (dropped && !first->empty()) {
      return RunAfter(specialist, ImplementSwap(specialist, first->front(), *dropped), *after);
    }
    return RunAfter(specialist, ImplementPair(specialist, *first, *task), *after);
  });
  in_flight_[id] = std::move(flight);
  return {};
}

SpecialistResult Orchestrator::TakeResult(NodeId id) {
  auto it = in_flight_.find(id);
  ARBOR_CHECK(it != in_flight_.end(), "no implementation in flight for the node");
  SpecialistResult r = it->second->ready ? std::move(*it->second->ready) : it->second->result.get();
  in_flight_.erase(it);
  return r;
}

Status Orchestrator::Redispatch(NodeId id, const std::string& why) {
  Node n = *tree_.Find(id);
  if (in_flight_.count(id) != 0) {
    // Its result is for the old state. What it spent and proposed is kept, exactly as when
    // RecordReady recorded it before the keep: the record must not depend on thread timing.
    SpecialistResult stale = TakeResult(id);
    AddUsage(stale.usage);
    n.cost_s += stale.duration_s;
    TakeProposals(&n, std::move(stale.proposals));
  }
  // A branch node's state was its branch's, on the old incumbent: re-dispatched on the new one
  // as the pair it was (its branch one idea), or as its own candidate alone.
  if (tree_.IsBranch(n)) {
    const std::optional<std::string> with = PairedWith(tree_, n);
    auto& flags = n.critic.flags;
    flags.erase(std::remove(flags.begin(), flags.end(), std::string(kBranchFlag)), flags.end());
    if (with) AddFlag(&n, CompanionFlag(*with));
  }
  n.parent = tree_.Incumbent();
  ClearRerunFlags(&n);     // what it ran again on the old state; its apply there names its own
  DiscardLane(id);         // a build of the old state
  DiscardMeasureLane(id);  // and its measurement
  // The keep that came first may be a declared alternative of it, or its branch held what it
  // requires: then it never runs there (the swap of step 3 measures an alternative in the kept
  // change's place, docs/search.md).
  if (const std::string conflict = ConflictOnPath(tree_, catalog_, n, n.parent);
      !conflict.empty()) {
    n.outcome = Outcome::kPruned;
    n.step = Step::kDone;
    n.diagnosis = "superseded: " + why + ", and there " + conflict + " (declared)";
    ARBOR_TRY(ports_.workspace->Release(id));
    cursor_.Forget(id);
    return Save(n, {MakeEvent(id, "vetoed", n.CandidateKey() + ": " + n.diagnosis)});
  }
  n.step = Step::kApply;
  n.commit.clear();
  n.overlay = tree_.Find(n.parent)->overlay;
  n.summary.clear();
  std::vector<std::string> proposed = std::move(n.agent.proposed);
  n.agent = AgentNote{};
  n.agent.proposed = std::move(proposed);  // its follow-ups stay its own
  ARBOR_TRY(ports_.workspace->Release(id));
  cursor_.Forget(id);
  return Save(
      n, {MakeEvent(id, "requeued", why + "; re-dispatched on node " + std::to_string(n.parent))});
}

Status Orchestrator::RecordReady(NodeId except) {
  // What is recorded early must not depend on which thread finished first: results are taken
  // in dispatch order (the first to record a follow-up id gets it), and only applied ones (a
  // failure finishes its node, and whether that happens on the old or the new incumbent must
  // not depend on timing either: it waits for its turn, where a moved base re-dispatches it).
  std::vector<std::pair<int64_t, NodeId>> order;
  for (const auto& [id, flight] : in_flight_) order.emplace_back(tree_.Find(id)->seq, id);
  std::sort(order.begin(), order.end());
  for (const auto& [seq, id] : order) {
    InFlight& flight = *in_flight_.at(id);
    const Node* n = tree_.Find(id);
    if (id == except || tree_.BaseOf(id) != tree_.Incumbent() || n->step != Step::kApply) break;
    if (!flight.ready) {
      if (flight.result.wait_for(std::chrono::seconds(0)) != std::future_status::ready) break;
      flight.ready = flight.result.get();
    }
    if (flight.ready->status != SpecialistResult::Status::kApplied) break;
    Node copy = *n;
    // Recording another node must not disturb the one being measured: its worktree does not
    // become the current one (cursor_), and an applied result's record touches no worktree.
    const std::string worktree = flight.task.worktree;
    SpecialistResult r = TakeResult(id);
    ARBOR_TRY(RecordApply(&copy, std::move(r)));
    // Its build (and check) start right away, in its worktree (build_lane.cc).
    if (copy.step == Step::kBuild) StartLane(copy, worktree);
  }
  return {};
}

Status Orchestrator::DispatchBatch(const std::vector<const ScoredCandidate*>& batch) {
  std::vector<NodeId> ids;
  for (const ScoredCandidate* c : batch) {
    ARBOR_TRY_ASSIGN(auto id, Open(*c));
    ids.push_back(id);
  }
  if (ids.size() > 1) {
    for (NodeId id : ids) ARBOR_TRY(Launch(id));
  }
  Status status;
  // Measure lanes (measure_lane.cc): their base worktrees build beside the batch's builds.
  if (ids.size() > 1 && spec_.search.lanes > 1 && critic_) {
    batch_ = ids;
    for (int lane = 1; lane < spec_.search.lanes && status.ok(); ++lane) {
      status = PrepareLaneBase(lane);
    }
  }
  for (NodeId id : ids) {
    if (stop_requested_.load() || !status.ok()) break;
    const Node* n = tree_.Find(id);
    if (n->step == Step::kDone) continue;
    if (tree_.BaseOf(id) != tree_.Incumbent()) {
      status = Redispatch(id, "the best state moved (node " + std::to_string(tree_.Incumbent()) +
                                  " kept) before its turn");
      if (!status.ok()) break;
      if (tree_.Find(id)->step == Step::kDone) continue;  // ruled out there
      if (ids.size() > 1) {
        status = Launch(id);
        if (!status.ok()) break;
      }
    }
    status = Evaluate(id);
    if (!status.ok()) break;
  }
  // Nothing outlives the batch: a stop or an error leaves unfinished nodes at their recorded
  // step for the next run, and their threads are joined here.
  for (auto& [id, flight] : in_flight_) {
    if (flight->ready) AddUsage(flight->ready->usage);
    if (flight->result.valid()) AddUsage(flight->result.get().usage);
  }
  in_flight_.clear();
  while (!measure_lanes_.empty()) DiscardMeasureLane(measure_lanes_.begin()->first);
  for (auto& [lane, base] : lane_bases_) {
    if (base.build.valid()) base.built = base.build.get().ok();
  }
  batch_.clear();
  while (!lanes_.empty()) DiscardLane(lanes_.begin()->first);
  return status;
}

}  // namespace arbor
