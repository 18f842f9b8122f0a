// The Orchestrator with a knowledge base: entries recorded once per finished node, priors that
// change the next campaign's choices, and a failing knowledge base that changes nothing else.
#include <gtest/gtest.h>

#include <set>

#include "core/testing/toy_rig_testing.h"

namespace arbor {
namespace {

using testing::FakeKnowledgeBase;
using testing::FakeStore;
using toy::Outcomes;
using toy::Rig;

KbContext Context(std::string uid, std::string cpu = "cpu A") {
  KbContext c;
  c.workload = {"campaign=t"};
  c.hardware.cpu_model = std::move(cpu);
  c.hardware.cores = 2;
  c.now = 1e9;
  c.campaign_uid = std::move(uid);
  return c;
}

// Evaluated nodes (by dispatch order) until the incumbent first reached its final metric.
int NodesToBest(const FakeStore& store) {
  std::vector<const Node*> done;
  double best = 0;
  for (const auto& [id, n] : store.nodes) {
    if (n.outcome == Outcome::kKept && n.metric) best = std::max(best, *n.metric);
    if (n.seq > 0) done.push_back(&n);
  }
  std::sort(done.begin(), done.end(), [](auto* a, auto* b) { return a->seq < b->seq; });
  for (size_t i = 0; i < done.size(); ++i) {
    if (done[i]->outcome == Outcome::kKept && done[i]->metric && *done[i]->metric >= best) {
      return static_cast<int>(i) + 1;
    }
  }
  return static_cast<int>(done.size());
}

// Candidates that failed (reverted or crashed) in `reference`, dispatched in `store` before its
// best was reached.
int BadBeforeBest(const FakeStore& store, const FakeStore& reference) {
  std::set<std::string> bad;
  for (const auto& [id, n] : reference.nodes) {
    if (n.outcome == Outcome::kReverted || n.outcome == Outcome::kCrashed) {
      bad.insert(n.CandidateKey());
    }
  }
  int limit = NodesToBest(store);
  int count = 0;
  for (const auto& [id, n] : store.nodes) {
    count += n.seq > 0 && n.seq <= limit && bad.count(n.CandidateKey());
  }
  return count;
}

TEST(KbOrchestratorTest, EveryFinishedNodeBecomesOneEntry) {
  FakeKnowledgeBase kb;
  Rig rig;
  rig.kb = &kb;
  rig.kb_context = Context("run1");
  ASSERT_TRUE(rig.Run().ok());
  std::set<std::string> uids;
  int finished = 0;
  for (const auto& [id, n] : rig.store.nodes) {
    bool dispatched = n.outcome == Outcome::kKept || n.outcome == Outcome::kReverted ||
                      n.outcome == Outcome::kCrashed;
    finished += dispatched && id != kRootId;
  }
  for (const KbEntry& e : kb.entries) {
    EXPECT_TRUE(uids.insert(e.uid).second) << e.uid;
    EXPECT_EQ(e.campaign_uid, "run1");
    EXPECT_FALSE(e.lesson.empty());
    EXPECT_EQ(e.outcome, std::string(OutcomeName(rig.store.nodes[e.node].outcome)));
  }
  EXPECT_EQ(static_cast<int>(kb.entries.size()), finished);
  EXPECT_EQ(rig.store.LoadMeta().value()->uid, "run1");
}

TEST(KbOrchestratorTest, ASecondCampaignLearnsFromTheFirst) {
  FakeKnowledgeBase kb;
  Rig first;
  first.kb = &kb;
  first.kb_context = Context("run1");
  ASSERT_TRUE(first.Run().ok());
  Rig second;
  second.kb = &kb;
  second.kb_context = Context("run2");
  ASSERT_TRUE(second.Run().ok());
  EXPECT_EQ(second.store.LoadMeta().value()->kb_snapshot,
            static_cast<int64_t>(kb.entries.size() / 2));
  // Same wins, reached no later; the scores name the entries that shaped them.
  EXPECT_EQ(Outcomes(second.store)["algo.fast"], Outcome::kKept);
  EXPECT_LE(NodesToBest(second.store), NodesToBest(first.store));
  int with_refs = 0;
  for (const auto& [id, n] : second.store.nodes) with_refs += !n.score.kb.empty();
  EXPECT_GT(with_refs, 0);
  // Fewer of run 1's failures are tried before the best is reached.
  EXPECT_LT(BadBeforeBest(second.store, first.store), BadBeforeBest(first.store, first.store));
}

TEST(KbOrchestratorTest, AFailingKnowledgeBaseIsAWarningNotAStop) {
  FakeKnowledgeBase kb;
  kb.fail = true;
  Rig with;
  with.kb = &kb;
  with.kb_context = Context("x");
  Rig without;
  ASSERT_TRUE(with.Run().ok());
  ASSERT_TRUE(without.Run().ok());
  EXPECT_EQ(Outcomes(with.store), Outcomes(without.store));
  bool warned = false;
  for (const Event& e : with.store.events()) warned |= e.kind == "kb";
  EXPECT_TRUE(warned);
}

TEST(KbOrchestratorTest, AResumeRecordsWhatAKilledRunDidNotAndNothingTwice) {
  Rig reference;
  ASSERT_TRUE(reference.Run().ok());
  int total = reference.store.applies();
  for (int k = 0; k < total; k += 3) {
    FakeKnowledgeBase kb;
    Rig rig;
    rig.kb = &kb;
    rig.kb_context = Context("r");
    rig.store.FailAfter(k);
    ASSERT_FALSE(rig.Run().ok());
    ASSERT_TRUE(rig.Run().ok()) << "write " << k;
    std::set<NodeId> nodes;
    for (const KbEntry& e : kb.entries) EXPECT_TRUE(nodes.insert(e.node).second) << k;
    int finished = 0;
    for (const auto& [id, n] : rig.store.nodes) {
      finished +=
          id != kRootId && (n.outcome == Outcome::kKept || n.outcome == Outcome::kReverted ||
                            n.outcome == Outcome::kCrashed);
    }
    EXPECT_EQ(static_cast<int>(nodes.size()), finished) << "write " << k;
  }
}

}  // namespace
}  // namespace arbor
