// Revisit ([search] revisit): with every candidate tried and budget left, reverted ideas the
// path changed under, and the other values of kept parameters, get one more try.
#include <gtest/gtest.h>

#include "core/search/moves.h"
#include "core/testing/critic_rig_testing.h"

namespace arbor {
namespace {

using critic_rig::Env;
using critic_rig::Rig;

// conv.fusion is worth nothing until layout.nhwc is kept (an
// interaction no profile shows), and is tried first because its prior is higher.
void InstallLateWin(Rig* rig) {
  ActionSpec fusion = Env("conv.fusion", "FUSION", "1", {}, 2.0);
  ActionSpec nhwc = Env("layout.nhwc", "NHWC", "1", {}, 1.2);
  ActionSpec dud = Env("misc.dud", "DUD", "1", {}, 1.1);
  rig->spec.actions = {fusion, nhwc, dud};
  rig->spec.search.max_nodes = 12;
  rig->target.metric = [](const EnvOverlay& env) {
    double v = env.count("NHWC") ? 110 : 100;
    if (env.count("NHWC") && env.count("FUSION")) v *= 1.8;
    return v;
  };
}

TEST(RevisitTest, WithBudgetLeftIdeasRevertedBeforeAKeepAreRetriedOnce) {
  Rig rig;
  InstallLateWin(&rig);
  auto r = rig.Run();
  ASSERT_TRUE(r.ok());
  auto fusion = rig.All("conv.fusion");
  ASSERT_EQ(fusion.size(), 2u);
  EXPECT_EQ(fusion[0]->outcome, Outcome::kReverted);
  EXPECT_EQ(fusion[1]->outcome, Outcome::kKept);
  EXPECT_EQ(fusion[1]->critic.requeued_from, fusion[0]->id);
  bool says_why = false;  // the re-queue names what changed under the idea
  for (const auto& e : rig.store.events()) {
    says_why |= e.kind == "requeued" && e.node == fusion[1]->id &&
                e.message.find("layout.nhwc") != std::string::npos;
  }
  EXPECT_TRUE(says_why);
  // misc.dud was reverted under the baseline and revisited once after the keeps (each reverted
  // node is revisited at most once per incumbent); then, nothing else being left, it gets its
  // last looks with 2x, 4x, 8x the repetitions; then each kept change is taken back out once
  // (a drop: both cost, both reverted); then those keeps are verified again with more
  // repetitions (a drop's last looks) until the budget is spent.
  int revisits = 0, looks = 0;
  for (const Node* n : rig.All("misc.dud")) {
    revisits += MoveOf(*n) == Move::kRevisit;
    looks += MoveOf(*n) == Move::kRemeasure;
  }
  EXPECT_EQ(revisits, 1);
  EXPECT_EQ(looks, kMaxRemeasures);
  EXPECT_EQ(rig.All("misc.dud").size(), 2u + kMaxRemeasures);
  int verified = 0;
  for (const char* key : {"-conv.fusion", "-layout.nhwc"}) {
    std::vector<const Node*> drops = rig.All(key);
    ASSERT_GE(drops.size(), 1u) << key;
    EXPECT_EQ(MoveOf(*drops[0]), Move::kDrop) << key;
    for (const Node* d : drops) {
      EXPECT_EQ(d->outcome, Outcome::kReverted) << key;
      if (d != drops[0]) verified += MoveOf(*d) == Move::kRemeasure;
    }
  }
  EXPECT_GE(verified, 1);
  EXPECT_EQ(r->evaluated, rig.spec.search.max_nodes);
  EXPECT_EQ(r->stop_reason, StopReason::kMaxNodes);
  EXPECT_GE(rig.Events("requeued"), 2);
}

TEST(RevisitTest, WithoutRevisitTheCampaignStopsWhenEverythingWasTriedOnce) {
  Rig rig;
  InstallLateWin(&rig);
  rig.spec.search.revisit = false;
  auto r = rig.Run();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop_reason, StopReason::kExhausted);
  ASSERT_EQ(rig.All("conv.fusion").size(), 1u);
  EXPECT_EQ(rig.All("conv.fusion")[0]->outcome, Outcome::kReverted);
  EXPECT_EQ(rig.Events("requeued"), 0);
}

TEST(RevisitTest, WithBudgetLeftAKeptParameterIsReTunedOnTheNewPath) {
  Rig rig;
  // tile=16 is the best value at first; once algo.fast is kept, 128 is.
  ActionSpec tile = Env("kernel.tile", "TILE", "{value}", {}, 2.0);
  tile.values = {"16", "64", "128"};
  ActionSpec fast = Env("algo.fast", "FAST", "1", {}, 1.5);
  rig.spec.actions = {tile, fast};
  rig.spec.search.max_nodes = 12;
  rig.target.metric = [](const EnvOverlay& env) {
    double v = 100;
    std::string t = env.count("TILE") ? env.at("TILE") : "";
    bool f = env.count("FAST") > 0;
    if (f) v *= 1.5;
    if (t == "16") v *= f ? 1.1 : 1.3;
    if (t == "64") v *= f ? 1.2 : 1.1;
    if (t == "128") v *= f ? 1.6 : 0.9;
    return v;
  };
  auto r = rig.Run();
  ASSERT_TRUE(r.ok());
  const Node* best = rig.store.nodes.count(r->best) ? &rig.store.nodes.at(r->best) : nullptr;
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(best->CandidateKey(), "kernel.tile[128]");
  EXPECT_EQ(best->overlay.at("TILE"), "128");
  EXPECT_EQ(best->overlay.at("FAST"), "1");
  // Kept as a re-tune: a neighbour of the kept 64 (queued at that keep, a line search), or the
  // re-tune of the parameter once nothing else was left.
  EXPECT_EQ(MoveOf(*best), Move::kRetune) << best->diagnosis;
  EXPECT_NE(best->critic.requeued_from, kNoNode);
  EXPECT_LE(rig.All("kernel.tile[128]").size(), 2u);
}

}  // namespace
}  // namespace arbor
