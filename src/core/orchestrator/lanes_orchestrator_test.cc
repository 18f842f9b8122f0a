// Build lanes (src/core/orchestrator/build_lane.cc, core/orchestrator/lanes.h): with
// search.parallel = K the builds and checks of a batch's nodes run at once, never while a
// measurement that needs the machine runs, and what the campaign records does not depend on which
// lane finished first.
//
// Overlap is shown without timing: the first builds of a batch's candidates wait for each other
// (a latch with a generous bound), so the test fails only if they cannot be in flight together.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/testing/latch_testing.h"
#include "core/testing/scripted_specialist_testing.h"

namespace arbor {
namespace {

using testing::FakeStore;
using testing::FakeTarget;
using toy::AgentRig;
using toy::EnvAction;

using latch_testing::kBound;
using latch_testing::Latch;

ActionSpec AgentAction(const std::string& id, double speedup) {
  ActionSpec a = EnvAction(id, "X_" + id, {"compute"}, speedup);
  a.apply.kind = ApplySpec::Kind::kAgent;
  a.apply.agent = "kernel";
  return a;
}

// The toy landscape with two agent actions right below algo.fast: the first batch is
// algo.fast (kept), ka.one and kb.two (re-dispatched on it).
void Landscape(AgentRig* rig) {
  rig->spec.search.parallel = 3;
  rig->spec.search.max_nodes = 10;
  rig->spec.actions.push_back(AgentAction("ka.one", 2.9));
  rig->spec.actions.push_back(AgentAction("kb.two", 2.8));
}

// The first batch is nodes 2, 3 and 4 (the baseline is node 1). Their first builds wait for
// each other at the latch: all three are in flight together before anything is measured.
// Then node 4's build (never the one the Orchestrator waits for first) waits, at most `wait`,
// for a measurement to begin: with a local target the lane lock must keep it from beginning.
void GatherBuilds(AgentRig* rig, Latch* latch, std::chrono::milliseconds wait) {
  auto seen = std::make_shared<std::set<NodeId>>();
  auto mu = std::make_shared<std::mutex>();
  FakeTarget* target = &rig->target;
  rig->target.on_build = [=](const RunContext& ctx) {
    if (ctx.node < 2 || ctx.node > 4) return;
    {
      std::lock_guard<std::mutex> lock(*mu);
      if (!seen->insert(ctx.node).second) return;
    }
    // Before the latch no candidate can be measured yet (node 2 waits for it to build).
    int measured = target->MeasurementsBegun();
    latch->Arrive();
    if (ctx.node == 4) target->WaitForMeasurement(measured, wait);
  };
}

void ExpectFirstBatch(const AgentRig& rig) {
  for (const char* key : {"algo.fast", "ka.one", "kb.two"}) {
    const Node* n = rig.NodeOf(key);
    ASSERT_NE(n, nullptr) << key;
    EXPECT_LE(n->seq, 3) << key;
    EXPECT_TRUE(n->id >= 2 && n->id <= 4) << key;
  }
}

std::string Row(const Node& n) {
  std::string s = std::to_string(n.id) + " parent=" + std::to_string(n.parent) + " " +
                  n.CandidateKey() + " " + std::string(OutcomeName(n.outcome)) +
                  " seq=" + std::to_string(n.seq) +
                  " metric=" + (n.metric ? std::to_string(*n.metric) : "-") +
                  " cost=" + std::to_string(n.cost_s) + " diag=" + n.diagnosis;
  for (const auto& [k, v] : n.overlay) s += " " + k + "=" + v;
  return s;
}

std::vector<std::string> Rows(const FakeStore& store) {
  std::vector<std::string> out;
  for (const auto& [id, n] : store.nodes) out.push_back(Row(n));
  return out;
}

// What the build and check steps recorded: event kinds and messages, in node order.
std::vector<std::string> StepEvents(const AgentRig& rig) {
  std::vector<std::string> out;
  for (const auto& [id, n] : rig.store.nodes) {
    for (const Event& e : rig.store.events()) {
      if (e.node == id && (e.kind == "built" || e.kind == "checked" || e.kind == "crashed")) {
        out.push_back(std::to_string(id) + " " + e.kind + " " + e.message);
      }
    }
  }
  return out;
}

TEST(LanesOrchestratorTest, BuildsOfABatchOverlapButNeverAMeasurementLocally) {
  AgentRig rig;
  Landscape(&rig);
  Latch latch(3);
  GatherBuilds(&rig, &latch, std::chrono::milliseconds(300));
  auto r = rig.Run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectFirstBatch(rig);
  EXPECT_TRUE(latch.met()) << "the batch's builds were never in flight together";
  EXPECT_GE(rig.target.max_concurrent_builds, 3);
  // Local measurements need the machine: no build or check ran during one (or a profile).
  EXPECT_EQ(rig.target.overlaps, 0);
  EXPECT_EQ(rig.target.contract_violations, 0);
  EXPECT_GT(rig.target.measurements, 3);
}

TEST(LanesOrchestratorTest, WithAClusterBuildsGoOnWhileAMeasurementRuns) {
  AgentRig rig;
  Landscape(&rig);
  rig.target.measurements_need_machine = false;
  Latch latch(3);
  GatherBuilds(&rig, &latch, kBound);
  auto r = rig.Run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectFirstBatch(rig);
  EXPECT_TRUE(latch.met());
  // Node 4's build was running when node 2's measurement opened.
  EXPECT_GT(rig.target.overlaps, 0);
  EXPECT_EQ(rig.target.contract_violations, 0);
}

TEST(LanesOrchestratorTest, AReDispatchedNodeDoesNotUseItsStaleBuild) {
  AgentRig rig;
  Landscape(&rig);
  Latch latch(3);
  GatherBuilds(&rig, &latch, std::chrono::milliseconds(0));
  // A build of ka.one or kb.two on the old base (without FAST) fails: had a stale build been
  // used after algo.fast was kept, the re-dispatched node would have crashed.
  rig.target.build_ok = [](const EnvOverlay& env) {
    return env.count("FAST") != 0 || (env.count("X_ka.one") == 0 && env.count("X_kb.two") == 0);
  };
  auto r = rig.Run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(latch.met());
  const Node* fast = rig.NodeOf("algo.fast");
  ASSERT_NE(fast, nullptr);
  ASSERT_EQ(fast->outcome, Outcome::kKept);
  int stale = 0;
  for (const auto& [node, env] : rig.target.built()) {
    if (node != fast->id && env.count("FAST") == 0) ++stale;
  }
  EXPECT_GE(stale, 1) << "no build on the old base ran: the test shows nothing";
  for (const char* key : {"ka.one", "kb.two"}) {
    const Node* n = rig.NodeOf(key);
    ASSERT_NE(n, nullptr) << key;
    EXPECT_EQ(n->parent, fast->id) << key;
    EXPECT_NE(n->outcome, Outcome::kCrashed) << key << ": " << n->diagnosis;
  }
}

TEST(LanesOrchestratorTest, TheRecordDoesNotDependOnWhichBuildFinishesFirst) {
  // Builds of odd or of even nodes are slow; the lanes finish in a different order each time.
  auto slow = [](int parity) {
    return [parity](const RunContext& ctx) {
      if (ctx.node % 2 == parity) std::this_thread::sleep_for(std::chrono::milliseconds(15));
    };
  };
  AgentRig plain, odd, even;
  odd.target.on_build = slow(1);
  even.target.on_build = slow(0);
  for (AgentRig* rig : {&plain, &odd, &even}) {
    Landscape(rig);
    auto r = rig->Run();
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  EXPECT_EQ(Rows(odd.store), Rows(plain.store));
  EXPECT_EQ(Rows(even.store), Rows(plain.store));
  EXPECT_EQ(StepEvents(odd), StepEvents(plain));
  EXPECT_EQ(StepEvents(even), StepEvents(plain));
}

}  // namespace
}  // namespace arbor
