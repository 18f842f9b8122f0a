#include "core/search/selector.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/search/moves.h"
#include "core/search/scoring.h"

namespace arbor {
namespace {

ActionSpec Action(const std::string& id, double speedup, std::vector<std::string> targets = {}) {
  ActionSpec a;
  a.id = id;
  a.category = id.substr(0, id.find('.'));
  a.speedup = speedup;
  a.targets = std::move(targets);
  a.cost_s = 10;
  return a;
}

Node MakeNode(NodeId id, NodeId parent, const std::string& action, Outcome outcome, int64_t seq) {
  Node n;
  n.id = id;
  n.parent = parent;
  n.action_id = action;
  n.category = action.substr(0, action.find('.'));
  n.outcome = outcome;
  n.step = outcome == Outcome::kPending ? Step::kNone : Step::kDone;
  n.seq = seq;
  return n;
}

Profile TwoComponents(double hot_share) {
  Profile p;
  p.total_s = 1;
  p.components = {{"hot", "runtime", hot_share}, {"cold", "runtime", 1 - hot_share}};
  return p;
}

// A campaign's state, built by hand: the spec's actions, the tree (a baseline root), the
// statistics of its finished nodes and no knowledge base.
class SelectorTest : public ::testing::Test {
 protected:
  SelectorTest() {
    Node root = MakeNode(kRootId, kNoNode, "baseline", Outcome::kBaseline, 0);
    root.metric = 100;
    tree_.Upsert(root);
  }
  // The catalog points into spec_.actions: set once per test, before anything is scored.
  void SetActions(std::vector<ActionSpec> actions) {
    spec_.actions = std::move(actions);
    catalog_.emplace(spec_.actions);
  }
  // As the Orchestrator does on load: the tree and its statistics move together.
  void Add(const Node& n) {
    tree_.Upsert(n);
    stats_.Observe(n);
  }
  Selector Make() const { return Selector(spec_, tree_, *catalog_, stats_, kb_); }
  std::vector<ScoredCandidate> Score(const std::optional<Profile>& profile = std::nullopt) const {
    return Make().Score(profile);
  }

  CampaignSpec spec_;
  Tree tree_;
  std::optional<Catalog> catalog_;
  CategoryStats stats_;
  KbPriors kb_;
};

std::vector<std::string> Keys(const std::vector<ScoredCandidate>& scored) {
  std::vector<std::string> keys;
  for (const ScoredCandidate& s : scored) keys.push_back(s.candidate.key);
  return keys;
}

std::vector<std::string> Keys(const std::vector<const ScoredCandidate*>& batch) {
  std::vector<std::string> keys;
  for (const ScoredCandidate* s : batch) keys.push_back(s->candidate.key);
  return keys;
}

using Keyset = std::vector<std::string>;

TEST_F(SelectorTest, ScoresAgainstTheProfileBestFirstTiesInCampaignFileOrder) {
  SetActions({Action("b.cold", 2, {"cold"}), Action("a.hot", 2, {"hot"})});
  std::vector<ScoredCandidate> with = Score(TwoComponents(0.8));
  EXPECT_EQ(Keys(with), (Keyset{"a.hot", "b.cold"}));
  EXPECT_DOUBLE_EQ(with[0].terms.g, 0.8 * 0.5);
  EXPECT_DOUBLE_EQ(with[1].terms.g, 0.2 * 0.5);
  EXPECT_GT(with[0].terms.h, with[1].terms.h);
  // Without a profile both act on the whole program: equal scores, the file's order.
  std::vector<ScoredCandidate> without = Score();
  EXPECT_EQ(Keys(without), (Keyset{"b.cold", "a.hot"}));
  EXPECT_DOUBLE_EQ(without[0].terms.g, 0.5);
  EXPECT_DOUBLE_EQ(without[0].terms.h, without[1].terms.h);
  for (const ScoredCandidate& s : without) EXPECT_EQ(s.pending, kNoNode);
}

TEST_F(SelectorTest, CandidatesTriedFromTheIncumbentAreNotScoredAgain) {
  SetActions({Action("a.one", 2), Action("b.two", 1.5)});
  Add(MakeNode(2, kRootId, "a.one", Outcome::kReverted, 1));
  EXPECT_EQ(Keys(Score()), (Keyset{"b.two"}));
}

TEST_F(SelectorTest, ScoresAtTheIncumbentNotAtTheRoot) {
  ActionSpec after_one = Action("d.four", 1.1);
  after_one.requires_ = {"a.one"};
  SetActions({Action("a.one", 2), Action("b.two", 1.5), Action("c.three", 1.2), after_one});
  Node kept = MakeNode(2, kRootId, "a.one", Outcome::kKept, 1);
  kept.metric = 50;
  Add(kept);
  ASSERT_EQ(tree_.Incumbent(), 2);
  // Tried under the root before the keep: its failure holds in the subtree below.
  Add(MakeNode(3, kRootId, "c.three", Outcome::kReverted, 2));
  // d.four needs a.one on the path: applicable at the incumbent only.
  EXPECT_EQ(Keys(Score()), (Keyset{"b.two", "d.four"}));
}

TEST_F(SelectorTest, TiesKeepCampaignFileOrderHoweverMany) {
  // Enough equal scores that an unstable sort would reorder them.
  std::vector<ActionSpec> actions;
  Keyset keys;
  for (int i = 0; i < 40; ++i) {
    std::string id = "c" + std::to_string(i) + ".same";
    actions.push_back(Action(id, 1.5));
    keys.push_back(id);
  }
  SetActions(std::move(actions));
  EXPECT_EQ(Keys(Score()), keys);
}

TEST_F(SelectorTest, APendingReQueuedNodeCompetesWithTheUntriedCandidates) {
  SetActions({Action("a.one", 1.5), Action("b.two", 3), Action("c.three", 1.2)});
  Add(MakeNode(2, kRootId, "b.two", Outcome::kReverted, 1));
  Add(MakeNode(3, kRootId, "b.two", Outcome::kPending, 0));  // re-queued by the Critic
  std::vector<ScoredCandidate> scored = Score();
  // Once, as the waiting node: the revert counts as tried, and so does the pending node.
  ASSERT_EQ(Keys(scored), (Keyset{"b.two", "a.one", "c.three"}));
  EXPECT_EQ(scored[0].pending, 3);
  EXPECT_EQ(scored[1].pending, kNoNode);
  EXPECT_EQ(scored[2].pending, kNoNode);
  std::vector<const ScoredCandidate*> batch = Make().ChooseBatch(scored, LlmBudgetState::kLeft);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0]->pending, 3);
}

TEST_F(SelectorTest, APendingNodeLosesToABetterUntriedCandidate) {
  SetActions({Action("a.one", 3), Action("b.two", 1.2)});
  Add(MakeNode(2, kRootId, "b.two", Outcome::kPending, 0));
  std::vector<ScoredCandidate> scored = Score();
  ASSERT_EQ(Keys(scored), (Keyset{"a.one", "b.two"}));
  EXPECT_EQ(scored[1].pending, 2);
}

TEST_F(SelectorTest, PendingNodesInABranchJudgedAgainstTheIncumbentCompeteToo) {
  SetActions({Action("a.one", 1.5), Action("b.two", 3), Action("c.three", 1.2)});
  Add(MakeNode(2, kRootId, "a.one", Outcome::kReverted, 1));
  Node branch = MakeNode(3, 2, "b.two", Outcome::kPending, 0);
  AddFlag(&branch, kBranchFlag);
  Add(branch);
  // An ordinary child of a reverted node is judged against that node, not the incumbent.
  Add(MakeNode(4, 2, "c.three", Outcome::kPending, 0));
  std::vector<ScoredCandidate> scored = Score();
  // b.two alone is still untried at the incumbent; the branch node is the pair a.one + b.two.
  // Equal scores: the untried candidate first, then the waiting node.
  ASSERT_EQ(Keys(scored), (Keyset{"b.two", "b.two", "c.three"}));
  EXPECT_EQ(scored[0].pending, kNoNode);
  EXPECT_EQ(scored[1].pending, 3);
  EXPECT_DOUBLE_EQ(scored[0].terms.h, scored[1].terms.h);
  EXPECT_EQ(scored[2].pending, kNoNode);  // c.three untried at the incumbent, not node 4
}

// A revert measured at `gain`; `clear`: its 95% interval ends below 1 (clearly slower).
Node Revert(NodeId id, NodeId parent, const std::string& action, double gain, bool clear,
            int64_t seq) {
  Node n = MakeNode(id, parent, action, Outcome::kReverted, seq);
  n.gain = gain;
  n.critic.rca = RcaClass::kNoGain;
  n.critic.ci_high = clear ? 1 + gain / 2 : 1.02;
  return n;
}

Node Requeued(NodeId id, NodeId parent, const std::string& action, Move move,
              const std::string& with = "") {
  Node n = MakeNode(id, parent, action, Outcome::kPending, 0);
  n.critic.flags = {MoveFlag(move)};
  if (!with.empty()) n.critic.flags.push_back(CompanionFlag(with));
  return n;
}

TEST_F(SelectorTest, AReTryOfAnIdeaThatLostClearlyComesAfterOneThatLostByAHair) {
  SetActions({Action("a.one", 2), Action("b.two", 1.5), Action("c.three", 1.2)});
  Add(Revert(2, kRootId, "a.one", -0.6, /*clear=*/true, 1));
  Add(Revert(3, kRootId, "b.two", -0.01, /*clear=*/false, 2));
  Node kept = MakeNode(4, kRootId, "c.three", Outcome::kKept, 3);
  kept.metric = 110;
  Add(kept);
  Add(Requeued(5, 4, "a.one", Move::kRevisit));
  Add(Requeued(6, 4, "b.two", Move::kRevisit));
  std::vector<ScoredCandidate> scored = Score();
  // a.one promised x2 and measured x0.4: x0.8 in all, a loss; b.two's x1.5 stands.
  ASSERT_EQ(Keys(scored), (Keyset{"b.two", "a.one"}));
  EXPECT_NEAR(GainNow(scored[0].terms), 1 - 1 / 1.5, 1e-9);
  EXPECT_DOUBLE_EQ(scored[0].terms.measured, 1);
  EXPECT_NEAR(GainNow(scored[1].terms), 1 - 0.5 / 0.4, 1e-9);
  // The node keeps the prior's g (the Critic's plausibility bound and the knowledge base read
  // it so) and what it measured.
  EXPECT_NEAR(scored[1].terms.g, 0.5, 1e-9);
  EXPECT_NEAR(scored[1].terms.measured, 0.4, 1e-9);
  // Below min_gain: it comes when nothing else is left, and it still comes.
  spec_.search.min_gain = 0.01;
  std::vector<const ScoredCandidate*> batch = Make().ChooseBatch(scored, LlmBudgetState::kLeft);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0]->pending, 6);
  Add(Revert(6, 4, "b.two", 0.0, /*clear=*/false, 4));
  scored = Score();
  batch = Make().ChooseBatch(scored, LlmBudgetState::kLeft);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0]->pending, 5);
}

TEST_F(SelectorTest, ABranchNodesLossIsItsBranchsNotItsOwnIdeas) {
  SetActions({Action("a.one", 2), Action("b.two", 1.5)});
  Node kept = MakeNode(2, kRootId, "a.one", Outcome::kKept, 1);
  kept.metric = 110;
  Add(kept);
  // A follow-up of a branch left under a path node: its loss is the branch's.
  Node follow = Revert(3, 2, "b.two", -0.6, /*clear=*/true, 2);
  AddFlag(&follow, kBranchFlag);
  Add(follow);
  Node c = MakeNode(4, 2, "c.three", Outcome::kKept, 3);
  c.metric = 120;
  Add(c);
  Add(Requeued(5, 4, "b.two", Move::kRevisit));
  int pending = 0;
  for (const ScoredCandidate& s : Score()) {
    pending += s.pending == 5;
    EXPECT_DOUBLE_EQ(s.terms.measured, 1) << s.candidate.key;
  }
  EXPECT_EQ(pending, 1);
}

TEST_F(SelectorTest, ForATimeToMinimizeWhatARetryMeasuredIsTheRatioOfTimes) {
  spec_.metric.goal = Goal::kMin;
  SetActions({Action("a.one", 2), Action("c.three", 1.2)});
  Add(Revert(2, kRootId, "a.one", -1.0, /*clear=*/true, 1));  // its time doubled
  Node kept = MakeNode(3, kRootId, "c.three", Outcome::kKept, 2);
  kept.metric = 90;
  Add(kept);
  Add(Requeued(4, 3, "a.one", Move::kRevisit));
  std::vector<ScoredCandidate> scored = Score();
  ASSERT_EQ(scored.size(), 1u);
  // x2 promised, x0.5 measured (not 1 + gain = 0): no gain, no loss.
  EXPECT_NEAR(scored[0].terms.measured, 0.5, 1e-9);
  EXPECT_NEAR(GainNow(scored[0].terms), 0, 1e-9);
}

TEST_F(SelectorTest, AMeasurementAgainOfTheSameStateKeepsItsPrior) {
  SetActions({Action("a.one", 2)});
  Add(Revert(2, kRootId, "a.one", -0.6, /*clear=*/true, 1));
  Add(Requeued(3, kRootId, "a.one", Move::kRemeasure));
  std::vector<ScoredCandidate> scored = Score();
  ASSERT_EQ(scored.size(), 1u);
  EXPECT_NEAR(scored[0].terms.g, 0.5, 1e-9);
  EXPECT_DOUBLE_EQ(scored[0].terms.measured, 1);
}

TEST_F(SelectorTest, APairWithASideThatLostClearlyAloneComesAfterOneWithoutIt) {
  SetActions({Action("a.one", 2), Action("b.two", 1.5), Action("c.three", 1.2)});
  Add(Revert(2, kRootId, "a.one", -0.6, /*clear=*/true, 1));
  Add(Revert(3, kRootId, "b.two", -0.01, /*clear=*/false, 2));
  Add(Revert(4, kRootId, "c.three", -0.01, /*clear=*/false, 3));
  Add(Requeued(5, kRootId, "b.two", Move::kPair, "a.one"));
  Add(Requeued(6, kRootId, "b.two", Move::kPair, "c.three"));
  std::vector<ScoredCandidate> scored = Score();
  // The same own side and prior: without the measured loss, tree order would put #5 first.
  ASSERT_EQ(scored.size(), 2u);
  EXPECT_EQ(scored[0].pending, 6);
  EXPECT_EQ(scored[1].pending, 5);
  EXPECT_NEAR(GainNow(scored[1].terms), 1 - (1 / 1.5) / 0.4, 1e-9);
}

TEST_F(SelectorTest, APendingNodeWhoseActionLeftTheCatalogIsNotScored) {
  SetActions({Action("a.one", 1.5)});
  Add(MakeNode(2, kRootId, "gone.away", Outcome::kPending, 0));
  EXPECT_EQ(Keys(Score()), (Keyset{"a.one"}));
}

TEST_F(SelectorTest, APlateauDoublesTheExploration) {
  // x.big promises more, but its category was tried twice; y.small's was never tried.
  SetActions({Action("x.one", 2), Action("x.two", 2), Action("x.big", 2),
              Action("y.small", 1.0 / (1 - 0.34))});
  Add(MakeNode(2, kRootId, "x.one", Outcome::kReverted, 1));
  Add(MakeNode(3, kRootId, "x.two", Outcome::kReverted, 2));
  ASSERT_EQ(tree_.TrailingNonKept(), 2);
  spec_.search.plateau = 3;
  std::vector<ScoredCandidate> before = Score();
  spec_.search.plateau = 2;
  std::vector<ScoredCandidate> after = Score();
  ASSERT_EQ(before.size(), 2u);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(Keys(before), (Keyset{"x.big", "y.small"}));
  // Exploitation is unchanged; the exploration bonus doubles, enough to try the unexplored.
  EXPECT_EQ(Keys(after), (Keyset{"y.small", "x.big"}));
  for (size_t i = 0; i < 2; ++i) {
    const ScoredCandidate& b = before[i];
    const ScoredCandidate& a = after[1 - i];
    ASSERT_EQ(a.candidate.key, b.candidate.key);
    EXPECT_DOUBLE_EQ(a.terms.exploit, b.terms.exploit);
    EXPECT_GT(b.terms.bonus, 0);
    EXPECT_DOUBLE_EQ(a.terms.bonus, 2 * b.terms.bonus);
  }
}

TEST_F(SelectorTest, TheBonusCountsTheCampaignsTriesWithItsFormula) {
  SetActions({Action("a.one", 2), Action("a.two", 2), Action("a.three", 2), Action("b.one", 2)});
  Add(MakeNode(2, kRootId, "a.one", Outcome::kReverted, 1));
  Add(MakeNode(3, kRootId, "a.two", Outcome::kReverted, 2));
  // N = 2 nodes evaluated; category a tried twice, b never.
  std::vector<ScoredCandidate> paper = Score();
  ASSERT_EQ(Keys(paper), (Keyset{"b.one", "a.three"}));
  const double c = spec_.search.explore;
  EXPECT_DOUBLE_EQ(paper[0].terms.bonus, c * std::sqrt(std::log(2.0) / 1));
  EXPECT_DOUBLE_EQ(paper[1].terms.bonus, c * std::sqrt(std::log(2.0) / 3));
  spec_.search.formula = Formula::kSeedLiteral;
  std::vector<ScoredCandidate> literal = Score();
  ASSERT_EQ(Keys(literal), (Keyset{"b.one", "a.three"}));
  EXPECT_DOUBLE_EQ(literal[0].terms.bonus, c * std::log(2.0) / 1);
  EXPECT_DOUBLE_EQ(literal[1].terms.bonus, c * std::log(2.0) / 3);
}

TEST_F(SelectorTest, WhatEarlierCampaignsLearnedMovesACandidatesPriors) {
  ActionSpec x = Action("k.x", 2);
  x.content_hash = "c1";
  SetActions({x, Action("m.w", 1.2)});  // the knowledge base also doubles x's cost
  KbContext context;
  context.workload = ParseWorkload("campaign=toy bench=1");
  context.hardware.cpu_model = "EPYC 7763";
  context.hardware.cores = 2;
  context.now = 1e9;
  context.campaign_uid = "new";
  // k.x was kept ×4 on its targets (gain 0.375 at share 0.5), same change, hardware, workload.
  KbEntry e;
  e.id = 1;
  e.campaign_uid = "old";
  e.uid = "old/1";
  e.action_id = "k.x";
  e.category = "k";
  e.content_hash = "c1";
  e.workload = context.workload;
  e.hardware = context.hardware;
  e.outcome = "kept";
  e.gain = 0.375;
  e.prior_speedup = 2;
  e.target_share = 0.5;
  e.implied_speedup = ImpliedSpeedup(e.gain, e.target_share, Goal::kMin);
  e.cost_s = 30;
  e.controlled = true;
  e.recorded_at = 1e9;
  kb_ = KbPriors::Compute({e}, spec_.actions, context);
  const KbPrior* prior = kb_.Find("k.x");
  ASSERT_NE(prior, nullptr);
  ASSERT_GT(prior->speedup, 2);
  ASSERT_EQ(kb_.Find("m.w"), nullptr);

  std::vector<ScoredCandidate> scored = Score();
  ASSERT_EQ(Keys(scored), (Keyset{"k.x", "m.w"}));
  EXPECT_DOUBLE_EQ(scored[0].terms.speedup, prior->speedup);
  EXPECT_DOUBLE_EQ(scored[0].terms.g, 1 - 1 / prior->speedup);
  EXPECT_DOUBLE_EQ(scored[0].terms.c, prior->cost_s);
  EXPECT_EQ(scored[0].terms.kb.size(), prior->refs.size());
  EXPECT_FALSE(scored[0].terms.kb.empty());
  // A candidate the knowledge base knows nothing of keeps its declared priors.
  EXPECT_DOUBLE_EQ(scored[1].terms.speedup, 1.2);
  EXPECT_TRUE(scored[1].terms.kb.empty());
}

TEST_F(SelectorTest, TheGapToTheTargetRaisesUrgency) {
  SetActions({Action("a.one", 2)});
  spec_.metric.goal = Goal::kMin;
  spec_.metric.target = 50;  // the baseline reads 100
  std::vector<ScoredCandidate> scored = Score();
  ASSERT_EQ(scored.size(), 1u);
  EXPECT_DOUBLE_EQ(scored[0].terms.m_gap, GapMultiplier(100, 50, Goal::kMin));
  EXPECT_GT(scored[0].terms.m_gap, 1);
}

TEST_F(SelectorTest, TheBatchHoldsTheBestAndTheNextKMinusOne) {
  SetActions(
      {Action("a.one", 1.2), Action("b.two", 3), Action("c.three", 2), Action("d.four", 1.5)});
  std::vector<ScoredCandidate> scored = Score();
  ASSERT_EQ(Keys(scored), (Keyset{"b.two", "c.three", "d.four", "a.one"}));
  EXPECT_EQ(Keys(Make().ChooseBatch(scored, LlmBudgetState::kLeft)), (Keyset{"b.two"}));
  spec_.search.parallel = 3;
  std::vector<const ScoredCandidate*> batch = Make().ChooseBatch(scored, LlmBudgetState::kLeft);
  ASSERT_EQ(batch.size(), 3u);
  for (size_t i = 0; i < batch.size(); ++i) EXPECT_EQ(batch[i], &scored[i]);  // into `scored`
}

TEST_F(SelectorTest, TheBatchNeverOutgrowsTheNodeBudgetYetHoldsOne) {
  SetActions(
      {Action("a.one", 1.2), Action("b.two", 3), Action("c.three", 2), Action("d.four", 1.5)});
  Add(MakeNode(2, kRootId, "a.one", Outcome::kReverted, 1));
  std::vector<ScoredCandidate> scored = Score();
  spec_.search.parallel = 3;
  spec_.search.max_nodes = 3;  // one finished: room for two more
  EXPECT_EQ(Keys(Make().ChooseBatch(scored, LlmBudgetState::kLeft)), (Keyset{"b.two", "c.three"}));
  // The stop is the loop's to decide (DueStopReason), not selection's.
  spec_.search.max_nodes = 1;
  EXPECT_EQ(Keys(Make().ChooseBatch(scored, LlmBudgetState::kLeft)), (Keyset{"b.two"}));
}

TEST_F(SelectorTest, CandidatesBelowMinGainComeOnlyWhenNothingElseIsLeft) {
  // With the profile, z.idle's target takes no time: g = 0 < min_gain.
  SetActions({Action("z.idle", 4, {"idle"}), Action("a.hot", 1.5, {"hot"})});
  Profile profile = TwoComponents(0.9);
  spec_.search.parallel = 4;
  std::vector<ScoredCandidate> scored = Score(profile);
  ASSERT_EQ(scored.size(), 2u);
  EXPECT_EQ(Keys(Make().ChooseBatch(scored, LlmBudgetState::kLeft)), (Keyset{"a.hot"}));
  Add(MakeNode(2, kRootId, "a.hot", Outcome::kReverted, 1));
  scored = Score(profile);
  ASSERT_EQ(Keys(scored), (Keyset{"z.idle"}));
  EXPECT_LT(scored[0].terms.g, spec_.search.min_gain);
  // Profiles can be wrong: a budget the user gave is spent on them before the campaign ends.
  EXPECT_EQ(Keys(Make().ChooseBatch(scored, LlmBudgetState::kLeft)), (Keyset{"z.idle"}));
}

TEST_F(SelectorTest, CandidatesCallingAnLlmWaitOnceItsBudgetIsSpent) {
  ActionSpec llm = Action("k.llm", 3);
  llm.apply.kind = ApplySpec::Kind::kAgent;
  llm.apply.agent = "kernel";
  ActionSpec command = Action("c.agent", 2);
  command.apply.kind = ApplySpec::Kind::kAgent;
  command.apply.agent = "compiler";
  SetActions({llm, command, Action("e.env", 1.5)});
  spec_.specialists["kernel"].backend = SpecialistBackend::kLlm;
  spec_.specialists["compiler"].backend = SpecialistBackend::kCommand;
  EXPECT_TRUE(UsesLlm(spec_, spec_.actions[0]));
  EXPECT_FALSE(UsesLlm(spec_, spec_.actions[1]));
  EXPECT_FALSE(UsesLlm(spec_, spec_.actions[2]));

  spec_.search.parallel = 2;
  std::vector<ScoredCandidate> scored = Score();
  ASSERT_EQ(Keys(scored), (Keyset{"k.llm", "c.agent", "e.env"}));
  EXPECT_EQ(Keys(Make().ChooseBatch(scored, LlmBudgetState::kLeft)), (Keyset{"k.llm", "c.agent"}));
  EXPECT_EQ(Keys(Make().ChooseBatch(scored, LlmBudgetState::kSpent)), (Keyset{"c.agent", "e.env"}));
}

TEST_F(SelectorTest, NothingLeftToTryGivesAnEmptyBatch) {
  ActionSpec llm = Action("k.llm", 3);
  llm.apply.kind = ApplySpec::Kind::kAgent;
  llm.apply.agent = "kernel";
  SetActions({Action("a.one", 2), llm});
  spec_.specialists["kernel"].backend = SpecialistBackend::kLlm;
  Add(MakeNode(2, kRootId, "a.one", Outcome::kReverted, 1));
  std::vector<ScoredCandidate> scored = Score();
  ASSERT_EQ(Keys(scored), (Keyset{"k.llm"}));
  // What is left calls an LLM whose budget is spent: nothing is worth dispatching.
  EXPECT_TRUE(Make().ChooseBatch(scored, LlmBudgetState::kSpent).empty());
  Add(MakeNode(3, kRootId, "k.llm", Outcome::kCrashed, 2));
  scored = Score();
  EXPECT_TRUE(scored.empty());
  EXPECT_TRUE(Make().ChooseBatch(scored, LlmBudgetState::kLeft).empty());
}

}  // namespace
}  // namespace arbor
