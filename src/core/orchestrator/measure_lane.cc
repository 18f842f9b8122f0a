// Measure lanes (search.lanes = N > 1; docs/lanes.md#measurement-lanes): while the
// Orchestrator measures one node of a batch on lane 0, the first look of the A/B comparison of
// the batch's next nodes runs on lanes 1 .. N-1, each against the incumbent built in a base
// worktree of that lane's own, so a comparison's baseline runs on its candidate's lane.
//
// A lane only computes. It makes the runs MeasureUntilDecided would make for the node's first
// look (the same arms, order, run names, repetition numbers and warm-up) and keeps the samples
// in memory. At the node's turn, in dispatch order, its bench step saves them first, exactly as
// if measured then, and the normal path finds them stored (measure.cc recovers from stored
// samples after a kill the same way) and measures only what is still missing. A lane whose
// node's base moved (a keep before its turn), whose build is not the one recorded, or whose run
// failed is dropped, never recorded: the node is re-dispatched, or measured as with one lane.
// The record does not depend on which thread finished first. After a kill -9 what the lanes
// measured is lost; the node measures its first look again.
#include <algorithm>
#include <chrono>

#include "core/orchestrator/orchestrator.h"
#include "core/search/moves.h"

namespace arbor {
Status Orchestrator::PrepareLaneBase(int lane) {
  const Node& inc = *tree_.Find(tree_.Incumbent());
  LaneBase& b = lane_bases_[lane];
  if (b.state == inc.id && b.commit == inc.commit) return {};
  if (b.build.valid()) b.build.wait();
  b = LaneBase{};
  ARBOR_TRY_ASSIGN(auto wt, ports_.workspace->Prepare(-static_cast<NodeId>(lane), inc.commit));
  b.state = inc.id;
  b.commit = inc.commit;
  b.worktree = wt;
  // A build like any other (shared with the batch's builds, never beside a measurement), named
  // apart from the Orchestrator's own base build of the same state.
  RunContext ctx = ContextAt(inc, wt, "build-base-lane" + std::to_string(lane));
  Target* target = lane_target_.get();
  b.build = std::async(std::launch::async, [target, ctx] { return target->Build(ctx); });
  return {};
}

Status Orchestrator::TendMeasureLanes(NodeId evaluating, Step next) {
  if (spec_.search.lanes <= 1 || !critic_ || batch_.size() < 2) return {};
  for (auto& [id, lane] : measure_lanes_) {
    if (lane->base != tree_.Incumbent() || tree_.Find(id)->step == Step::kDone) lane->cancel = true;
  }
  if (next != Step::kBench) return {};
  // A measurement waits for the builds that run anyway: the next nodes' checks finish first, so
  // that they can be measured beside this one.
  for (auto it = std::find(batch_.begin(), batch_.end(), evaluating); it != batch_.end(); ++it) {
    auto lane = lanes_.find(*it);
    if (*it != evaluating && lane != lanes_.end() && lane->second->done.valid()) {
      lane->second->done.wait();
    }
  }
  return StartMeasureLanes(evaluating);
}

Status Orchestrator::StartMeasureLanes(NodeId evaluating) {
  auto after = std::find(batch_.begin(), batch_.end(), evaluating);
  if (after == batch_.end()) return {};
  // The batch's later nodes on the incumbent whose build and check (in their build lanes)
  // passed, and that no lane measures yet, in dispatch order.
  std::vector<NodeId> ready;
  for (auto it = std::next(after); it != batch_.end(); ++it) {
    const Node& n = *tree_.Find(*it);
    auto built = lanes_.find(*it);
    if (n.step == Step::kDone || measure_lanes_.count(*it) != 0 ||
        tree_.BaseOf(*it) != tree_.Incumbent() || IsFixGroup(n) || built == lanes_.end() ||
        built->second->commit != n.commit ||
        built->second->done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      continue;
    }
    const LaneRun& run = *built->second;
    if (run.build.ok() && run.check && run.check->step.ok()) ready.push_back(*it);
  }
  if (ready.empty()) return {};
  // The evaluated node's own base arm is built first: a build waits for every open measurement,
  // so built after the lanes started it would wait for their whole first look. (A failed build
  // records nothing here: the bench step builds it again and finishes the node.)
  ARBOR_TRY_ASSIGN(const bool base_built,
                   EnsureBaseBuilt(*tree_.Find(tree_.BaseOf(evaluating)), nullptr));
  if (!base_built) return {};
  for (const NodeId id : ready) {
    const Node& n = *tree_.Find(id);
    const NodeId base = tree_.BaseOf(id);
    LaneRun& run = *lanes_.at(id);
    // A free lane: none of the unfinished measure lanes holds it.
    int free = -1;
    for (int lane = 1; lane < spec_.search.lanes && free < 0; ++lane) {
      bool used = false;
      for (const auto& [other, m] : measure_lanes_) {
        used = used || (m->lane == lane &&
                        m->done.wait_for(std::chrono::seconds(0)) != std::future_status::ready);
      }
      if (!used) free = lane;
    }
    if (free < 0) return {};
    ARBOR_TRY(PrepareLaneBase(free));
    LaneBase& b = lane_bases_[free];
    if (b.build.valid()) b.built = b.build.get().ok();
    if (!b.built) continue;  // the node measures on lane 0 at its turn, as with one lane
    auto lane = std::make_unique<MeasureLane>();
    lane->lane = free;
    lane->commit = n.commit;
    lane->base = base;
    const Node& parent = *tree_.Find(base);
    lane->base_commit = parent.commit;
    lane->reps = RepetitionsFor(n);
    // The runs the node's bench step would take for its first look, in its order.
    for (const AbRun& r : protocol_.FirstLook(lane->reps)) {
      RunContext ctx =
          ContextAt(r.base ? parent : n, r.base ? b.worktree : run.build_ctx.worktree,
                    std::string(SampleArmName(r.base ? SampleArm::kBase : SampleArm::kCand)) + "-" +
                        std::to_string(r.rep));
      ctx.node = id;
      ctx.repetition = r.rep;
      lane->runs.push_back(MeasureRun{r.base, r.rep, std::move(ctx)});
    }
    MeasureLane* m = lane.get();
    LaneTarget* target = lane_target_.get();
    const std::atomic<bool>* stop = &stop_requested_;
    lane->done = std::async(std::launch::async, [m, target, stop, id] {
      target->BeginMeasurementOn(id, m->lane);
      for (const MeasureRun& r : m->runs) {
        if (m->cancel.load() || stop->load()) break;
        Measurement result = target->Bench(r.ctx);
        m->steps.push_back(result.step);
        m->cost_s += result.step.duration_s;
        if (!result.step.ok() || !result.value) break;
        if (r.rep < 0) continue;  // the warm-up: discarded, as in MeasureUntilDecided
        Sample s{id, std::string(SampleArmName(r.is_base ? SampleArm::kBase : SampleArm::kCand)),
                 r.rep, *result.value, result.extra};
        if (result.step.duration_s > 0) s.extra["wall_s"] = result.step.duration_s;
        m->samples.push_back(std::move(s));
      }
      target->EndMeasurement(id);
      const size_t warmups = static_cast<size_t>(std::count_if(
          m->runs.begin(), m->runs.end(), [](const MeasureRun& r) { return r.rep < 0; }));
      m->ok = m->steps.size() == m->runs.size() && m->samples.size() + warmups == m->runs.size();
    });
    measure_lanes_[id] = std::move(lane);
  }
  return {};
}

Status Orchestrator::AdoptMeasureLane(Node* node) {
  auto it = measure_lanes_.find(node->id);
  if (it == measure_lanes_.end()) return {};
  std::unique_ptr<MeasureLane> lane = std::move(it->second);
  measure_lanes_.erase(it);
  lane->done.wait();
  const NodeId base = tree_.BaseOf(node->id);
  ARBOR_TRY_ASSIGN(auto all, SamplesOf(node->id));
  const bool fresh = SamplesOfArm(all, "base").empty() && SamplesOfArm(all, "cand").empty();
  if (lane->ok && fresh && lane->commit == node->commit && lane->base == base &&
      base == tree_.Incumbent() && lane->base_commit == tree_.Find(base)->commit &&
      lane->reps == RepetitionsFor(*node)) {
    for (size_t i = 0; i < lane->steps.size(); ++i)
      job_target_->Note(lane->runs[i].ctx, lane->steps[i]);
    node->cost_s += lane->cost_s;
    ARBOR_TRY(Save(*node, {}, std::move(lane->samples)));
  }
  // Its lane is free: the nodes after this one may start theirs while it is judged.
  return StartMeasureLanes(node->id);
}

void Orchestrator::DiscardMeasureLane(NodeId id) {
  auto it = measure_lanes_.find(id);
  if (it == measure_lanes_.end()) return;
  it->second->cancel = true;
  if (it->second->done.valid()) it->second->done.wait();
  measure_lanes_.erase(it);
}

}  // namespace arbor
