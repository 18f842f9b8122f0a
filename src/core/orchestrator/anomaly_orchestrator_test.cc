// Impossible results inside the loop (docs/critic.md, "Plausibility"): a benchmark that prints
// a broken number is not kept unless the evidence holds up, and an incumbent whose
// re-measurement disagrees by an order of magnitude is un-kept, with what was measured on top
// of it re-queued. The real Orchestrator and CriticGate over fakes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/critic/statistics.h"
#include "core/model/rng.h"
#include "core/orchestrator/orchestrator.h"
#include "core/testing/critic_rig_testing.h"
#include "fakes/fakes.h"

namespace arbor {
namespace {

using critic_rig::Env;
using critic_rig::Rig;

// ±1% noise, deterministic in the call: no ties, so the rank test can decide.
double Jitter(double mean, int call) {
  Rng rng(static_cast<uint64_t>(call) * 2654435761ULL + 7);
  return mean * (1 + 0.01 * (2 * rng.Uniform() - 1));
}

// Baseline 100; HUGE prints 1e308 (a ×1e306 "speedup"); FAST is a real +20%.
void BrokenAndReal(Rig* rig, double huge) {
  rig->spec.actions = {Env("broken.huge", "HUGE", "1", {}, 1.1),
                       Env("real.fast", "FAST", "1", {}, 1.1)};
  rig->spec.actions[0].cost_s = 1;  // tried first
  rig->target.bench = [huge](const RunContext& ctx, int call) {
    Measurement m;
    m.value = ctx.env.count("HUGE") ? huge : Jitter(ctx.env.count("FAST") ? 120 : 100, call);
    m.extra["work"] = 1000;
    return m;
  };
}

TEST(AnomalyLoopTest, ABrokenNumberIsNotKeptAndTheRealWinIs) {
  Rig rig;
  BrokenAndReal(&rig, 1e308);
  ASSERT_TRUE(rig.Run().ok());
  const Node* huge = rig.ByKey("broken.huge");
  ASSERT_NE(huge, nullptr);
  EXPECT_EQ(huge->outcome, Outcome::kReverted) << huge->diagnosis;
  EXPECT_EQ(huge->critic.rca, RcaClass::kAnomaly);
  EXPECT_TRUE(HasFlag(*huge, "anomaly"));
  EXPECT_NE(huge->diagnosis.find("not kept without evidence"), std::string::npos)
      << huge->diagnosis;
  EXPECT_GE(rig.Events("anomaly"), 2);  // raised, then decided after the re-runs
  const Node* fast = rig.ByKey("real.fast");
  ASSERT_NE(fast, nullptr);
  EXPECT_EQ(fast->outcome, Outcome::kKept) << fast->diagnosis;
  EXPECT_EQ(fast->parent, kRootId);  // measured against the baseline, not against 1e308
  EXPECT_FALSE(HasFlag(*fast, "anomaly"));
}

TEST(AnomalyLoopTest, AWorkMetricThatHeldOrTrustKeepsALargeGain) {
  for (int variant = 0; variant < 2; ++variant) {
    Rig rig;
    BrokenAndReal(&rig, 1000);  // ×10, beyond the ×2 a +10% prior explains
    if (variant == 0) rig.spec.metric.work = MetricSource{};  // and work stays 1000
    if (variant == 1) rig.spec.critic.trust_large_gains = true;
    rig.target.bench = [](const RunContext& ctx, int call) {
      Measurement m;
      m.value = Jitter(ctx.env.count("HUGE") ? 1000 : ctx.env.count("FAST") ? 120 : 100, call);
      m.extra["work"] = 1000;
      return m;
    };
    ASSERT_TRUE(rig.Run().ok());
    const Node* huge = rig.ByKey("broken.huge");
    ASSERT_NE(huge, nullptr);
    EXPECT_EQ(huge->outcome, Outcome::kKept) << variant << ": " << huge->diagnosis;
    EXPECT_TRUE(HasFlag(*huge, "anomaly"));
  }
}

TEST(AnomalyLoopTest, AWorkMetricThatFellIsNoEvidence) {
  Rig rig;
  BrokenAndReal(&rig, 1000);
  rig.spec.metric.work = MetricSource{};
  rig.target.bench = [](const RunContext& ctx, int call) {
    Measurement m;
    m.value = Jitter(ctx.env.count("HUGE") ? 1000 : 100, call);
    m.extra["work"] = ctx.env.count("HUGE") ? 1 : 1000;  // the fast run did nothing
    return m;
  };
  ASSERT_TRUE(rig.Run().ok());
  const Node* huge = rig.ByKey("broken.huge");
  ASSERT_NE(huge, nullptr);
  EXPECT_EQ(huge->outcome, Outcome::kReverted);
  EXPECT_TRUE(huge->critic.rca == RcaClass::kAnomaly || huge->critic.rca == RcaClass::kInflation)
      << RcaClassName(huge->critic.rca);
}

TEST(AnomalyLoopTest, AnIncumbentReMeasuredOrdersOfMagnitudeOffIsUnkept) {
  // TIMER reads ~0 s until its node is kept (the rate is ×100), then reads true (the rate is
  // back to 100). The keep is trusted (trust_large_gains), so only the un-keep can undo it.
  Rig rig;
  rig.spec.critic.trust_large_gains = true;
  rig.spec.actions = {Env("timer.broken", "TIMER", "1", {}, 1.1),
                      Env("real.fast", "FAST", "1", {}, 1.1)};
  rig.spec.actions[0].cost_s = 1;
  const auto* store = &rig.store;
  rig.target.bench = [store](const RunContext& ctx, int call) {
    bool kept = false;
    for (const auto& [id, n] : store->nodes) {
      kept = kept || (n.action_id == "timer.broken" && n.outcome == Outcome::kKept);
    }
    double v = ctx.env.count("FAST") ? 120 : 100;
    if (ctx.env.count("TIMER") && !kept) v = 1e4;
    Measurement m;
    m.value = Jitter(v, call);
    return m;
  };
  ASSERT_TRUE(rig.Run().ok());
  auto timer = rig.All("timer.broken");
  ASSERT_FALSE(timer.empty());
  EXPECT_EQ(timer[0]->outcome, Outcome::kReverted) << timer[0]->diagnosis;
  EXPECT_TRUE(HasFlag(*timer[0], "unkept"));
  EXPECT_TRUE(HasFlag(*timer[0], "anomaly"));
  EXPECT_NE(timer[0]->diagnosis.find("un-kept: anomaly"), std::string::npos);
  EXPECT_EQ(rig.Events("unkept"), 1);
  // real.fast was measured on top of it, not judged, and re-queued under the baseline, where
  // it is kept.
  auto fast = rig.All("real.fast");
  ASSERT_GE(fast.size(), 2u);
  EXPECT_EQ(fast[0]->parent, timer[0]->id);
  EXPECT_EQ(fast[0]->critic.rca, RcaClass::kAnomalousIncumbent);
  const Node* retry = fast.back();
  EXPECT_EQ(retry->parent, kRootId);
  EXPECT_EQ(retry->critic.requeued_from, fast[0]->id);
  EXPECT_EQ(retry->outcome, Outcome::kKept) << retry->diagnosis;
  EXPECT_EQ(rig.ws.branch, retry->commit);
}

}  // namespace
}  // namespace arbor
