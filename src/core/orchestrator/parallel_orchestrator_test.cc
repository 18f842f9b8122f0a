// The Orchestrator with search.parallel > 1 (src/core/orchestrator/parallel.cc): implementations of
// a batch overlap, a keep re-dispatches the rest of the batch, and neither thread timing nor a kill
// at any store write changes what the campaign records.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/testing/scripted_specialist_testing.h"

namespace arbor {
namespace {

using testing::FakeStore;
using testing::TaskRecord;
using toy::AgentRig;
using toy::EnvAction;

void Sleep(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

ActionSpec AgentAction(const std::string& id, double speedup) {
  ActionSpec a = EnvAction(id, "X_" + id, {"compute"}, speedup);
  a.apply.kind = ApplySpec::Kind::kAgent;
  a.apply.agent = "kernel";
  return a;
}

// The toy landscape with three more agent actions scored right below algo.fast: two that
// propose the same follow-up and one whose implementation fails.
void Landscape(AgentRig* rig) {
  rig->spec.search.parallel = 3;
  rig->spec.actions.push_back(AgentAction("ka.one", 2.9));
  rig->spec.actions.push_back(AgentAction("kb.two", 2.8));
  rig->spec.actions.push_back(AgentAction("kf.fail", 2.7));
  rig->scripted.script = [](const Task& task, SpecialistResult* r) {
    const std::string& id = task.action->id;
    if (id == "ka.one" || id == "kb.two") {
      r->proposals.push_back(EnvAction("kernel.shared", "SHARED", {"compute"}, 1.1));
    }
    if (id == "kf.fail") {
      r->status = SpecialistResult::Status::kFailed;
      r->diagnosis = "the patch did not apply";
    }
  };
}

std::vector<const Node*> BySeq(const FakeStore& store) {
  std::vector<const Node*> out;
  for (const auto& [id, n] : store.nodes) {
    if (n.seq > 0) out.push_back(&n);
  }
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->seq < b->seq; });
  return out;
}

TEST(ParallelOrchestratorTest, TheImplementationsOfABatchRunTogether) {
  AgentRig rig;
  rig.spec.search.parallel = 3;
  rig.scripted.gather = 3;
  auto r = rig.Run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  // The first three calls waited for each other: all were in flight before the first node
  // could be built or measured.
  EXPECT_TRUE(rig.scripted.gathered());
  std::vector<TaskRecord> tasks = rig.scripted.tasks();
  ASSERT_GE(tasks.size(), 3u);
  std::set<NodeId> first{tasks[0].node, tasks[1].node, tasks[2].node};
  EXPECT_EQ(first.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(tasks[i].base_commit, "c0");
  for (NodeId id : first) EXPECT_LE(rig.store.nodes[id].seq, 3);
}

TEST(ParallelOrchestratorTest, AKeepReDispatchesTheRestOfTheBatchOnTheNewIncumbent) {
  AgentRig rig;
  rig.spec.search.parallel = 3;
  ASSERT_TRUE(rig.Run().ok());
  std::vector<const Node*> order = BySeq(rig.store);
  ASSERT_GE(order.size(), 3u);
  const Node* kept = order[0];
  ASSERT_EQ(kept->outcome, Outcome::kKept) << kept->CandidateKey();
  std::set<NodeId> requeued;
  for (const Event& e : rig.store.events()) {
    if (e.kind == "requeued") requeued.insert(e.node);
  }
  for (int i = 1; i < 3; ++i) {
    const Node* n = order[i];
    EXPECT_EQ(requeued.count(n->id), 1u) << n->CandidateKey();
    EXPECT_EQ(n->parent, kept->id) << n->CandidateKey();
    EXPECT_EQ(n->step, Step::kDone);
    std::vector<std::string> bases;
    for (const TaskRecord& t : rig.scripted.tasks()) {
      if (t.node == n->id) bases.push_back(t.base_commit);
    }
    ASSERT_EQ(bases.size(), 2u) << n->CandidateKey() << " was not implemented again";
    EXPECT_EQ(bases[0], "c0");
    EXPECT_EQ(bases[1], kept->commit);
  }
}

// What a node row says about the search, without commit names and clock readings.
std::string Row(const Node& n) {
  std::string s = std::to_string(n.id) + " parent=" + std::to_string(n.parent) + " " +
                  n.CandidateKey() + " " + std::string(OutcomeName(n.outcome)) + " " +
                  std::string(StepName(n.step)) + " seq=" + std::to_string(n.seq) +
                  " metric=" + (n.metric ? std::to_string(*n.metric) : "-") +
                  " cost=" + std::to_string(n.cost_s) + " diag=" + n.diagnosis +
                  " summary=" + n.summary + " rca=" + std::string(RcaClassName(n.critic.rca)) +
                  " constraints=" + std::to_string(n.critic.constraints.size()) + " overlay=";
  for (const auto& [k, v] : n.overlay) s += k + "=" + v + ",";
  s += " proposed=";
  for (const std::string& p : n.agent.proposed) s += p + ",";
  return s;
}

std::vector<std::string> Rows(const FakeStore& store) {
  std::vector<std::string> out;
  for (const auto& [id, n] : store.nodes) out.push_back(Row(n));
  return out;
}

TEST(ParallelOrchestratorTest, TheTreeDoesNotDependOnThreadTiming) {
  // Later nodes of a batch finish first (every Prepare lets the threads run), or last.
  AgentRig early;
  Landscape(&early);
  early.ws.on_prepare = [](NodeId) { Sleep(5); };
  AgentRig late;
  Landscape(&late);
  late.scripted.before = [](const Task& task) {
    if (task.action->apply.kind == ApplySpec::Kind::kAgent) Sleep(25);
  };
  AgentRig plain;
  Landscape(&plain);
  AgentRig again;
  Landscape(&again);
  for (AgentRig* rig : {&early, &late, &plain, &again}) {
    auto r = rig->Run();
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  std::vector<std::string> expected = Rows(plain.store);
  EXPECT_EQ(Rows(again.store), expected);
  EXPECT_EQ(Rows(early.store), expected);
  EXPECT_EQ(Rows(late.store), expected);
  // The landscape exercises what it is meant to: a shared follow-up and a failing agent.
  ASSERT_NE(plain.NodeOf("kernel.shared"), nullptr);
  ASSERT_NE(plain.NodeOf("kf.fail"), nullptr);
  EXPECT_EQ(plain.NodeOf("kf.fail")->outcome, Outcome::kCrashed);
}

// Every store write of a parallel campaign is a point where a kill -9 can land. Eight nodes
// cover a batch re-dispatched after a keep, a shared follow-up and a failed implementation.
void ShortLandscape(AgentRig* rig) {
  Landscape(rig);
  rig->spec.search.max_nodes = 8;
}

TEST(ParallelOrchestratorTest, ResumeAfterAFailureAtEveryStoreWriteFinishesEveryNode) {
  AgentRig reference;
  ShortLandscape(&reference);
  ASSERT_TRUE(reference.Run().ok());
  ASSERT_NE(reference.NodeOf("kf.fail"), nullptr);
  ASSERT_EQ(reference.store.LoadActions().value().size(), 1u);
  int total = reference.store.applies();
  for (int k = 0; k < total; ++k) {
    AgentRig rig;
    ShortLandscape(&rig);
    rig.store.FailAfter(k);
    if (rig.Run().ok()) continue;  // a shorter run than the reference's
    auto second = rig.Run();
    ASSERT_TRUE(second.ok()) << "write " << k << ": " << second.error().message;
    EXPECT_EQ(second->state, CampaignState::kFinished) << "write " << k;
    std::set<std::pair<NodeId, std::string>> siblings;
    for (const auto& [id, n] : rig.store.nodes) {
      EXPECT_EQ(n.step, Step::kDone) << "write " << k << " node " << id;
      EXPECT_NE(n.outcome, Outcome::kRunning) << "write " << k << " node " << id;
      EXPECT_TRUE(siblings.insert({n.parent, n.CandidateKey()}).second)
          << "duplicate " << n.CandidateKey() << " under " << n.parent << " after write " << k;
    }
    EXPECT_EQ(rig.store.LoadActions().value().size(), 1u) << "write " << k;
    Tree tree;
    for (const auto& [id, n] : rig.store.nodes) tree.Upsert(n);
    EXPECT_EQ(rig.ws.branch, tree.Find(tree.Incumbent())->commit) << "write " << k;
  }
}

}  // namespace
}  // namespace arbor
