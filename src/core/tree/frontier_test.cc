#include "core/tree/frontier.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace arbor {
namespace {

Node Make(NodeId id, NodeId parent, const std::string& action, Outcome outcome,
          RcaClass rca = RcaClass::kNone, bool branch = false) {
  Node n;
  n.id = id;
  n.parent = parent;
  n.action_id = action;
  n.outcome = outcome;
  n.step = Step::kDone;
  n.seq = id;
  n.commit = outcome == Outcome::kPending ? "" : "c" + std::to_string(id);
  n.critic.rca = rca;
  if (branch) AddFlag(&n, kBranchFlag);
  return n;
}

// root(1) ── a(2) kept, the incumbent; under it:
//   r(3) no gain ── x(7) branch, no gain ── y(8) branch, no gain
//   p(4) a pair (with:q), not confirmed;  c(5) crashed;  k(6) check failed (accuracy)
//   s(9) pending;  w(10) no gain but never applied (no commit)
Tree Sample() {
  Tree t;
  Node root = Make(kRootId, kNoNode, "baseline", Outcome::kBaseline);
  t.Upsert(root);
  t.Upsert(Make(2, 1, "a", Outcome::kKept));
  t.Upsert(Make(3, 2, "r", Outcome::kReverted, RcaClass::kNoGain));
  Node p = Make(4, 2, "p", Outcome::kReverted, RcaClass::kNotConfirmed);
  AddFlag(&p, CompanionFlag("q"));
  t.Upsert(p);
  t.Upsert(Make(5, 2, "c", Outcome::kCrashed, RcaClass::kRuntimeCrash));
  t.Upsert(Make(6, 2, "k", Outcome::kReverted, RcaClass::kAccuracy));
  t.Upsert(Make(7, 3, "x", Outcome::kReverted, RcaClass::kNoGain, true));
  t.Upsert(Make(8, 7, "y", Outcome::kReverted, RcaClass::kNoGain, true));
  t.Upsert(Make(9, 2, "s", Outcome::kPending));
  Node w = Make(10, 2, "w", Outcome::kReverted, RcaClass::kNoGain);
  w.commit.clear();
  t.Upsert(w);
  return t;
}

TEST(FrontierTest, OpenStatesAreTheMeasuredRevertsJudgedAgainstTheIncumbent) {
  Tree t = Sample();
  std::vector<NodeId> ids;
  for (const OpenState& s : Frontier(t, 2)) ids.push_back(s.node->id);
  // y holds r, x and y: a follow-up would make four changes, over kMaxBranchChanges.
  EXPECT_EQ(ids, (std::vector<NodeId>{3, 7, 4, 6}));
  for (const OpenState& s : Frontier(t, 2)) {
    if (s.node->id == 3) {
      EXPECT_EQ(s.changes, 1);
      EXPECT_EQ(s.visits, 2) << "x and y were evaluated in its subtree";
      EXPECT_EQ(s.lost, 2);
    }
    if (s.node->id == 7) {
      EXPECT_EQ(s.changes, 2);
      EXPECT_EQ(s.visits, 1);
    }
    if (s.node->id == 4) {
      EXPECT_EQ(s.visits, 0);
    }
  }
  EXPECT_TRUE(Frontier(t, 3).empty()) << "r is no incumbent: nothing is judged against it";
}

TEST(FrontierTest, TheChangeSetIsTheHypothesisWhicheverOrderTheBranchTook) {
  Tree t = Sample();
  EXPECT_EQ(ChangeSet(t, *t.Find(8)), (std::set<std::string>{"r", "x", "y"}));
  EXPECT_EQ(ChangeSet(t, *t.Find(4)), (std::set<std::string>{"p", "q"}));
  // The same three changes reached the other way round.
  t.Upsert(Make(11, 2, "x", Outcome::kReverted, RcaClass::kNoGain));
  t.Upsert(Make(12, 11, "y", Outcome::kReverted, RcaClass::kNoGain, true));
  t.Upsert(Make(13, 12, "r", Outcome::kPending, RcaClass::kNone, true));
  EXPECT_EQ(ChangeSet(t, *t.Find(13)), ChangeSet(t, *t.Find(8)));
  Node drop = Make(14, 2, "a", Outcome::kReverted, RcaClass::kNoGain);
  AddFlag(&drop, DropFlag("a"));
  t.Upsert(drop);
  EXPECT_EQ(ChangeSet(t, *t.Find(14)), (std::set<std::string>{"-a"}));
}

}  // namespace
}  // namespace arbor
