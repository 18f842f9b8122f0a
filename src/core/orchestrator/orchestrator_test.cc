#include "core/orchestrator/orchestrator.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/critic/critic_gate.h"
#include "core/testing/toy_rig_testing.h"
#include "fakes/fakes.h"

namespace arbor {
namespace {

using testing::FakeStore;
using toy::EnvAction;
using toy::Outcomes;
using toy::Rig;
using toy::ToySpec;

TEST(OrchestratorTest, ToyCampaignKeepsWinsAndRecordsEveryFailureKind) {
  Rig rig;
  auto r = rig.Run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->state, CampaignState::kFinished);
  auto out = Outcomes(rig.store);
  EXPECT_EQ(out["baseline"], Outcome::kBaseline);
  EXPECT_EQ(out["algo.fast"], Outcome::kKept);
  EXPECT_EQ(out["io.fmt"], Outcome::kKept);
  EXPECT_EQ(out["algo.tune"], Outcome::kKept);
  EXPECT_EQ(out["sched.slow"], Outcome::kReverted);
  EXPECT_EQ(out["math.bad"], Outcome::kReverted);
  EXPECT_EQ(out["mem.crash"], Outcome::kCrashed);
  EXPECT_EQ(out["kernel.agent"], Outcome::kSkipped);
  for (const auto& [id, n] : rig.store.nodes) {
    EXPECT_EQ(n.step, Step::kDone) << n.CandidateKey();
    if (n.CandidateKey() == "math.bad") {
      EXPECT_EQ(n.diagnosis.rfind("accuracy", 0), 0u);
    }
  }
  // io.fmt only became worth trying after algo.fast moved the bottleneck: it must sit below it.
  NodeId fast = 0;
  for (const auto& [id, n] : rig.store.nodes) {
    if (n.action_id == "algo.fast") fast = id;
  }
  for (const auto& [id, n] : rig.store.nodes) {
    if (n.action_id == "io.fmt" || n.action_id == "algo.tune") {
      NodeId cur = n.parent;
      bool below = false;
      while (cur != kNoNode) {
        below |= cur == fast;
        cur = rig.store.nodes[cur].parent;
      }
      EXPECT_TRUE(below) << n.action_id;
    }
  }
  // The branch points at the incumbent, and every worktree was released.
  Orchestrator o(rig.spec, rig.ports());
  EXPECT_TRUE(rig.ws.worktrees.empty());
  EXPECT_EQ(rig.ws.branch, rig.store.nodes.rbegin()->second.outcome == Outcome::kKept
                               ? rig.store.nodes.rbegin()->second.commit
                               : rig.ws.branch);
}

TEST(OrchestratorTest, SameInputsGiveTheSameTree) {
  Rig a;
  Rig b;
  ASSERT_TRUE(a.Run().ok());
  ASSERT_TRUE(b.Run().ok());
  ASSERT_EQ(a.store.nodes.size(), b.store.nodes.size());
  for (const auto& [id, n] : a.store.nodes) {
    EXPECT_EQ(n.CandidateKey(), b.store.nodes[id].CandidateKey());
    EXPECT_EQ(n.outcome, b.store.nodes[id].outcome);
  }
}

// Every Apply is a point where a kill -9 can land: fail each one in turn, then resume on the
// same store and workspace, and compare with the uninterrupted run.
TEST(OrchestratorTest, ResumeAfterAFailureAtEveryStoreWriteLosesNothing) {
  Rig reference;
  ASSERT_TRUE(reference.Run().ok());
  int total = reference.store.applies();
  auto ref_out = Outcomes(reference.store);
  for (int k = 0; k < total; ++k) {
    Rig rig;
    rig.store.FailAfter(k);
    auto first = rig.Run();
    ASSERT_FALSE(first.ok()) << "write " << k;
    std::map<NodeId, Node> before = rig.store.nodes;
    auto second = rig.Run();
    ASSERT_TRUE(second.ok()) << "write " << k << ": " << second.error().message;
    EXPECT_EQ(Outcomes(rig.store), ref_out) << "write " << k;
    std::set<std::pair<NodeId, std::string>> siblings;
    for (const auto& [id, n] : rig.store.nodes) {
      EXPECT_EQ(n.step, Step::kDone) << "write " << k << " node " << id;
      EXPECT_TRUE(siblings.insert({n.parent, n.CandidateKey()}).second)
          << "duplicate " << n.CandidateKey() << " after write " << k;
      auto it = before.find(id);
      if (it != before.end() && it->second.step == Step::kDone) {
        EXPECT_EQ(it->second.outcome, n.outcome);
        EXPECT_EQ(it->second.metric, n.metric);
      }
    }
    // Commit names differ when a snapshot was redone; the branch must be the incumbent's.
    Tree tree;
    for (const auto& [id, n] : rig.store.nodes) tree.Upsert(n);
    EXPECT_EQ(rig.ws.branch, tree.Find(tree.Incumbent())->commit) << "write " << k;
  }
}

TEST(OrchestratorTest, StopsOnMaxNodes) {
  Rig rig;
  rig.spec.search.max_nodes = 2;
  auto r = rig.Run();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop_reason, StopReason::kMaxNodes);
  EXPECT_EQ(r->evaluated, 2);
}

TEST(OrchestratorTest, StopsWhenTargetReached) {
  Rig rig;
  rig.spec.metric.target = 240;
  auto r = rig.Run();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop_reason, StopReason::kTarget);
}

TEST(OrchestratorTest, CandidatesTheProfileRulesOutAreTriedLastNotNever) {
  // io.fmt targets a component the profile never shows (g = 0 < min_gain): it is tried only
  // after algo.x, which the profile supports, and the budget is not left unspent.
  Rig rig;
  rig.spec.actions = {EnvAction("io.fmt", "FMT", {"format"}, 3),
                      EnvAction("algo.x", "X", {"compute"}, 1.2)};
  auto r = rig.Run();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop_reason, StopReason::kExhausted);
  std::map<std::string, int64_t> seq;
  for (const auto& [id, n] : rig.store.nodes) seq[n.CandidateKey()] = n.seq;
  ASSERT_TRUE(seq.count("io.fmt") && seq.count("algo.x"));
  EXPECT_LT(seq["algo.x"], seq["io.fmt"]);
}

TEST(OrchestratorTest, FailedBaselineIsAnErrorAndIsRetriedNextRun) {
  Rig rig;
  rig.target.build_ok = [](const EnvOverlay&) { return false; };
  auto r = rig.Run();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("baseline failed"), std::string::npos);
  rig.target.build_ok = [](const EnvOverlay&) { return true; };
  EXPECT_TRUE(rig.Run().ok());
}

TEST(OrchestratorTest, ContinuingAFinishedCampaignWithALargerBudgetGoesOn) {
  Rig rig;
  rig.spec.search.max_nodes = 2;
  ASSERT_TRUE(rig.Run().ok());
  rig.spec.search.max_nodes = 4;
  auto r = rig.Run();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->evaluated, 4);
}

TEST(OrchestratorTest, EveryNodeRecordsItsScoreAndEvents) {
  Rig rig;
  ASSERT_TRUE(rig.Run().ok());
  std::map<std::string, int> kinds;
  for (const auto& e : rig.store.events()) kinds[e.kind]++;
  EXPECT_GT(kinds["proposed"], 0);
  EXPECT_EQ(kinds["proposed"], kinds["dispatched"] - 1);  // the baseline is dispatched too
  EXPECT_EQ(kinds["kept"], 3);
  EXPECT_EQ(kinds["reprofiled"], 4);  // baseline + each keep
  EXPECT_EQ(kinds["stopped"], 1);
  for (const auto& e : rig.store.events()) EXPECT_NE(KindOf(e), EventKind::kUnknown) << e.kind;
  for (const auto& [id, n] : rig.store.nodes) {
    if (id != kRootId) {
      EXPECT_GT(n.score.h, 0) << n.CandidateKey();
    }
  }
}

}  // namespace
}  // namespace arbor

namespace arbor {
namespace {

TEST(OrchestratorTest, WithoutTheCriticTheMedianGateDecidesOnOwnRuns) {
  Rig rig;
  rig.spec.critic.enabled = false;
  ASSERT_TRUE(rig.Run().ok());
  auto out = Outcomes(rig.store);
  EXPECT_EQ(out["algo.fast"], Outcome::kKept);
  EXPECT_EQ(out["sched.slow"], Outcome::kReverted);
  EXPECT_EQ(out["mem.crash"], Outcome::kCrashed);
  for (const auto& [id, n] : rig.store.nodes) {
    if (n.outcome != Outcome::kKept) continue;
    auto samples = rig.store.LoadSamples(id).value();
    ASSERT_FALSE(samples.empty());
    for (const Sample& s : samples) EXPECT_EQ(s.arm, "self") << "no A/B arms without the Critic";
  }
  EXPECT_EQ(rig.store.LoadMeta().value()->no_critic, 1);
}

}  // namespace
}  // namespace arbor
