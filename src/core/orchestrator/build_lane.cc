// Build lanes (search.parallel = K; docs/lanes.md): a batch's node is built, then checked, on
// a thread of its own as soon as its implementation is recorded, in its own worktree, while
// the other nodes of the batch are implemented, built or (one at a time) measured.
//
// Nothing recorded depends on which lane finished first: a lane only computes; the node's
// build and check steps record its results when the node's turn comes, in dispatch order, with
// the same events as a build and check run then (a run's "job" event is noted at that point).
// A node re-dispatched on a new incumbent has a new commit: its stale lane is dropped. A killed
// process loses its lanes and simply builds again (builds are idempotent). The lane lock
// (core/orchestrator/lanes.h) keeps lanes off the machine while a measurement that needs it runs.
#include <chrono>

#include "core/orchestrator/orchestrator.h"

namespace arbor {

void Orchestrator::StartLane(const Node& node, const std::string& worktree) {
  DiscardLane(node.id);
  auto lane = std::make_unique<LaneRun>();
  lane->commit = node.commit;
  lane->build_ctx = ContextAt(node, worktree, "build");
  lane->check_ctx = ContextAt(node, worktree, "check");
  LaneRun* run = lane.get();
  Target* target = lane_target_.get();  // not job_target_: its notes belong to this thread
  lane->done = std::async(std::launch::async, [run, target] {
    run->build = target->Build(run->build_ctx);
    if (run->build.ok()) run->check = target->Check(run->check_ctx);
  });
  lanes_[node.id] = std::move(lane);
}

Status Orchestrator::AwaitLane(NodeId id) {
  LaneRun& lane = *lanes_.at(id);
  // Implementations that finish meanwhile are recorded and start their own lanes at once.
  while (lane.done.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) {
    if (!in_flight_.empty()) ARBOR_TRY(RecordReady(id));
  }
  lane.done.get();
  return {};
}

Result<bool> Orchestrator::BuildInLane(Node* node) {
  auto it = lanes_.find(node->id);
  if (it == lanes_.end() || it->second->commit != node->commit) {
    ARBOR_TRY(PrepareWorktree(*node));
    StartLane(*node, cursor_.worktree());
  }
  ARBOR_TRY(AwaitLane(node->id));
  LaneRun& lane = *lanes_.at(node->id);
  cursor_.Prepared(node->id, lane.build_ctx.worktree);  // built there, recorded just below
  job_target_->Note(lane.build_ctx, lane.build);
  StepResult r = lane.build;  // a copy: a failed build's lane is dropped before it is recorded
  if (!r.ok()) lanes_.erase(node->id);
  return RecordBuild(node, r);
}

std::optional<Measurement> Orchestrator::TakeLaneCheck(const Node& node) {
  auto it = lanes_.find(node.id);
  if (it == lanes_.end()) return std::nullopt;
  std::unique_ptr<LaneRun> lane = std::move(it->second);
  lanes_.erase(it);
  if (lane->done.valid()) lane->done.wait();
  if (lane->commit != node.commit || !lane->check) return std::nullopt;
  job_target_->Note(lane->check_ctx, lane->check->step);
  return std::move(lane->check);
}

void Orchestrator::DiscardLane(NodeId id) {
  auto it = lanes_.find(id);
  if (it == lanes_.end()) return;
  if (it->second->done.valid()) it->second->done.wait();
  lanes_.erase(it);
}

}  // namespace arbor
