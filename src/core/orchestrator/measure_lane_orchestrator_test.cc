// Measure lanes (src/core/orchestrator/measure_lane.cc; search.lanes = 2): the next node of a
// batch is measured on lane 1 while the Orchestrator measures one on lane 0; a node whose base
// moved before its turn drops what its lane measured; the record equals the one-lane record.
//
// Overlap is shown without timing: the first benchmark runs of the first batch's two nodes wait
// for each other at a latch with a generous bound, so the test fails (never hangs) if they
// cannot be in flight together.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/testing/latch_testing.h"
#include "core/testing/toy_rig_testing.h"

namespace arbor {
namespace {

using toy::Rig;

using latch_testing::kBound;
using latch_testing::Latch;

// The toy landscape (toy_rig_testing.h), safe to call from several threads, recording every
// benchmark run. With a latch, the first run of each node in `gated` waits there.
class LaneToyTarget : public Target {
 public:
  struct Run {
    NodeId node;
    std::string label;
    int lane;
    bool fast;  // the state run had algo.fast applied
  };
  Latch* latch = nullptr;
  std::set<NodeId> gated;
  bool meet_builds = true;  // the first builds of nodes 2 and 3 wait for each other

  StepResult Build(const RunContext& ctx) override {
    bool wait = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      wait = meet_builds && built_.insert(ctx.node).second && (ctx.node == 2 || ctx.node == 3);
    }
    // The first batch's first builds wait for each other (bounded): node 3's implementation is
    // recorded, and its build under way, before node 2 can be measured, whatever the threads do.
    if (wait) build_latch_.Arrive();
    return Command();
  }
  Measurement Check(const RunContext& ctx) override {
    Measurement m;
    m.step = Command();
    if (ctx.env.count("BAD")) m.step.kind = ExitKind::kFailed;
    return m;
  }
  Measurement Bench(const RunContext& ctx) override {
    bool wait = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      runs_.push_back(Run{ctx.node, ctx.label, ctx.lane, ctx.env.count("FAST") != 0});
      ++benching_;
      max_benching_ = std::max(max_benching_, benching_);
      overlaps_ += building_;
      wait = latch != nullptr && gated.count(ctx.node) != 0 && first_.insert(ctx.node).second;
    }
    if (wait) latch->Arrive();
    Measurement m;
    m.step.duration_s = 1;
    if (ctx.env.count("CRASH")) {
      m.step.kind = ExitKind::kSignaled;
      m.step.signal = 11;
    } else {
      double v = 100;
      if (ctx.env.count("FAST")) v *= 2.5;
      if (ctx.env.count("SLOW")) v *= 0.7;
      if (ctx.env.count("FAST") && ctx.env.count("FMT")) v *= 1.6;
      if (ctx.env.count("FAST") && ctx.env.count("TUNE")) v *= 1.2;
      m.value = v;
    }
    std::lock_guard<std::mutex> lock(mu_);
    --benching_;
    return m;
  }
  ProfileResult Profile(const RunContext& ctx) override {
    ProfileResult r;
    r.step.duration_s = 1;
    ::arbor::Profile p;
    if (ctx.env.count("FAST") && !ctx.env.count("FMT")) {
      p.components = {{"compute", "kernel", 0.4}, {"format", "application", 0.6}};
    } else {
      p.components = {{"compute", "kernel", 1.0}};
    }
    r.profile = p;
    return r;
  }
  void BeginMeasurement(NodeId) override {}
  void EndMeasurement(NodeId) override {}
  bool MeasurementsNeedTheMachine() const override { return true; }

  std::vector<Run> runs() {
    std::lock_guard<std::mutex> lock(mu_);
    return runs_;
  }
  int max_benching() {
    std::lock_guard<std::mutex> lock(mu_);
    return max_benching_;
  }
  int overlaps() {
    std::lock_guard<std::mutex> lock(mu_);
    return overlaps_;
  }

 private:
  StepResult Command() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++building_;
      overlaps_ += benching_;
    }
    StepResult r;
    r.duration_s = 1;
    std::lock_guard<std::mutex> lock(mu_);
    --building_;
    return r;
  }

  std::mutex mu_;
  Latch build_latch_{2};
  std::set<NodeId> built_;
  std::vector<Run> runs_;
  std::set<NodeId> first_;
  int benching_ = 0;
  int building_ = 0;
  int max_benching_ = 0;
  int overlaps_ = 0;
};

// The toy landscape in batches of two. With `noops`, two promising ideas that change nothing
// come first: the first batch (nodes 2 and 3) is both of them, reverted, so node 3's bench step
// finds its base unmoved and records what its lane measured. Without, the first batch is
// algo.fast (kept) and sched.slow, re-dispatched on it.
enum class Noops { kFirst, kNone };
struct LaneRig : Rig {
  LaneToyTarget lane_target;
  LaneRig(int lanes, Noops noops) {
    spec.search.parallel = 2;
    spec.search.lanes = lanes;
    spec.search.max_nodes = 16;
    if (noops == Noops::kFirst) {
      spec.actions.push_back(toy::EnvAction("cache.noop", "NOOP_A", {"compute"}, 6));
      spec.actions.push_back(toy::EnvAction("sys.noop", "NOOP_B", {"compute"}, 5));
    }
  }
  Result<RunSummary> Run() {
    Ports p = ports();
    p.target = &lane_target;
    Orchestrator o(spec, p);
    return o.Run();
  }
  std::vector<Sample> SamplesOf(NodeId id) {
    auto s = store.LoadSamples(id);
    return s.ok() ? *s : std::vector<Sample>{};
  }
};

std::string Row(const Node& n) {
  std::string s = std::to_string(n.id) + " parent=" + std::to_string(n.parent) + " " +
                  n.CandidateKey() + " " + std::string(OutcomeName(n.outcome)) +
                  " seq=" + std::to_string(n.seq) +
                  " metric=" + (n.metric ? std::to_string(*n.metric) : "-") +
                  " cost=" + std::to_string(n.cost_s) + " diag=" + n.diagnosis;
  for (const auto& [k, v] : n.overlay) s += " " + k + "=" + v;
  return s;
}

// Nodes, their samples and every event (but its time), in the store's order.
std::vector<std::string> Record(LaneRig* rig) {
  std::vector<std::string> out;
  for (const auto& [id, n] : rig->store.nodes) {
    out.push_back(Row(n));
    for (const Sample& s : rig->SamplesOf(id)) {
      std::string line = "  " + s.arm + "-" + std::to_string(s.rep) + " " + std::to_string(s.value);
      for (const auto& [k, v] : s.extra) line += " " + k + "=" + std::to_string(v);
      out.push_back(line);
    }
  }
  for (const Event& e : rig->store.events()) {
    out.push_back(std::to_string(e.node) + " " + e.kind + " " + e.message);
  }
  return out;
}

// The first batch is nodes 2 and 3 (the baseline is node 1).
TEST(MeasureLaneOrchestratorTest, TheNextNodeIsMeasuredOnLaneOneWhileLaneZeroMeasures) {
  LaneRig rig(2, Noops::kFirst);
  Latch latch(2);
  rig.lane_target.latch = &latch;
  rig.lane_target.gated = {2, 3};
  auto r = rig.Run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(latch.met()) << "node 3's lane never measured while node 2 was measured";
  EXPECT_EQ(rig.lane_target.max_benching(), 2);
  // Never a build or check beside a benchmark run, and every run on a lane, 0 or 1.
  EXPECT_EQ(rig.lane_target.overlaps(), 0);
  for (const auto& run : rig.lane_target.runs()) {
    EXPECT_TRUE(run.lane == 0 || run.lane == 1) << run.node << " " << run.label;
  }
  // Some node's stored first look was measured on lane 1, every pair on one lane (the
  // baseline's run on its candidate's lane): the lane's samples were saved at its turn.
  std::map<std::pair<NodeId, std::string>, int> lane_of;  // the last run of each label
  for (const auto& run : rig.lane_target.runs()) lane_of[{run.node, run.label}] = run.lane;
  int adopted = 0;
  for (const auto& [id, n] : rig.store.nodes) {
    for (const Sample& s : rig.SamplesOf(id)) {
      if (s.arm != "base" || s.rep < 0) continue;
      const std::string rep = std::to_string(s.rep);
      ASSERT_EQ(lane_of.count({id, "cand-" + rep}), 1u) << id;
      EXPECT_EQ((lane_of[{id, "base-" + rep}]), (lane_of[{id, "cand-" + rep}])) << id << " " << rep;
      adopted += lane_of[{id, "base-" + rep}] == 1 ? 1 : 0;
    }
  }
  EXPECT_GT(adopted, 0) << "no sample measured on lane 1 was recorded";
}

TEST(MeasureLaneOrchestratorTest, AKeepBeforeItsTurnDropsWhatItsLaneMeasured) {
  LaneRig rig(2, Noops::kNone);
  Latch latch(2);
  rig.lane_target.latch = &latch;
  rig.lane_target.gated = {2, 3};
  auto r = rig.Run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(latch.met());
  const Node& first = rig.store.nodes.at(2);
  ASSERT_EQ(first.CandidateKey(), "algo.fast") << "the landscape changed: the test shows nothing";
  ASSERT_EQ(first.outcome, Outcome::kKept);
  // Node 3's lane measured it against the baseline (no FAST) while node 2 was measured...
  bool old_base = false;
  for (const auto& run : rig.lane_target.runs()) {
    old_base = old_base ||
               (run.node == 3 && run.lane == 1 && run.label.rfind("base-", 0) == 0 && !run.fast);
  }
  ASSERT_TRUE(old_base) << "node 3's lane never measured it against the old incumbent";
  // ... then node 2 was kept: node 3 was re-dispatched on it, and measured again there. None
  // of what its lane measured against the baseline (value 100) was recorded.
  const Node& next = rig.store.nodes.at(3);
  EXPECT_EQ(next.parent, 2);
  bool base_measured = false;
  for (const Sample& s : rig.SamplesOf(3)) {
    if (s.arm == "base") {
      base_measured = true;
      EXPECT_EQ(s.value, 250) << "rep " << s.rep << ": a sample against the old incumbent";
    }
  }
  EXPECT_TRUE(base_measured) << Row(next);
}

TEST(MeasureLaneOrchestratorTest, TheRecordIsTheOneLaneRecord) {
  // Lanes adopted (the no-ops), dropped (a keep before their turn) and failing (mem.crash).
  for (Noops noops : {Noops::kFirst, Noops::kNone}) {
    LaneRig one(1, noops), two(2, noops);
    // Node 3's lane runs while node 2 is measured, before anything can drop it.
    Latch latch(2);
    two.lane_target.latch = &latch;
    two.lane_target.gated = {2, 3};
    auto r1 = one.Run();
    ASSERT_TRUE(r1.ok()) << r1.error().message;
    auto r2 = two.Run();
    ASSERT_TRUE(r2.ok()) << r2.error().message;
    bool laned = false;
    for (const auto& run : two.lane_target.runs()) laned = laned || run.lane == 1;
    ASSERT_TRUE(laned && latch.met()) << "nothing was measured on lane 1: the test shows nothing";
    EXPECT_EQ(Record(&two), Record(&one));
  }
}

// A kill -9 can land at any store write: what lanes measured is then lost, never half
// recorded. Each interrupted campaign resumes to a finished tree with every node done once and
// the branch at its incumbent.
TEST(MeasureLaneOrchestratorTest, ResumeAfterAFailureAtEveryStoreWriteFinishesEveryNode) {
  LaneRig reference(2, Noops::kFirst);
  reference.lane_target.meet_builds = false;
  ASSERT_TRUE(reference.Run().ok());
  const int total = reference.store.applies();
  for (int k = 0; k < total; ++k) {
    LaneRig rig(2, Noops::kFirst);
    rig.lane_target.meet_builds = false;
    rig.store.FailAfter(k);
    if (rig.Run().ok()) continue;  // a shorter run than the reference's
    auto second = rig.Run();
    ASSERT_TRUE(second.ok()) << "write " << k << ": " << second.error().message;
    EXPECT_EQ(second->state, CampaignState::kFinished) << "write " << k;
    std::set<std::pair<NodeId, std::string>> siblings;
    for (const auto& [id, n] : rig.store.nodes) {
      EXPECT_EQ(n.step, Step::kDone) << "write " << k << " node " << id;
      EXPECT_TRUE(siblings.insert({n.parent, n.CandidateKey()}).second)
          << "duplicate " << n.CandidateKey() << " under " << n.parent << " after write " << k;
      // Every recorded pair is whole: a lane's samples are saved all at once or not at all.
      std::set<std::pair<std::string, int>> arms;
      for (const Sample& s : rig.SamplesOf(id)) arms.insert({s.arm, s.rep});
      for (const auto& [arm, rep] : arms) {
        if (arm == "base") {
          EXPECT_EQ(arms.count({"cand", rep}), 1u) << "write " << k << " node " << id;
        }
      }
    }
    Tree tree;
    for (const auto& [id, n] : rig.store.nodes) tree.Upsert(n);
    EXPECT_EQ(rig.ws.branch, tree.Find(tree.Incumbent())->commit) << "write " << k;
  }
}

}  // namespace
}  // namespace arbor
