// A run the executor lost (StepResult::infrastructure: a cluster job cancelled, preempted, over
// its time limit) is an "infrastructure" crash: the node runs once more, whatever kind of action
// it is, and the loss is not counted against the action's category. Every run that names an
// executor's job is recorded as a "job" event on its node.
#include <gtest/gtest.h>

#include "core/testing/toy_rig_testing.h"

namespace arbor {
namespace {

using toy::Rig;

// algo.fast's first benchmark run is lost by the "cluster"; every run names a job.
void LoseFirstFastBench(Rig* rig, int* lost) {
  auto metric = rig->target.metric;
  rig->target.bench = [metric, lost](const RunContext& ctx, int call) {
    Measurement m;
    m.step.executor = "slurm";
    m.step.job = std::to_string(100 + call);
    m.step.host = "cn7";
    m.step.duration_s = 1;
    if (ctx.env.count("FAST") != 0 && *lost == 0) {
      ++*lost;
      m.step.kind = ExitKind::kSignaled;
      m.step.signal = 15;
      m.step.infrastructure = true;
      m.step.detail = "Slurm job " + m.step.job + " was cancelled (scancel)";
      return m;
    }
    m.value = metric(ctx.env);
    if (!m.value) {
      m.step.kind = ExitKind::kSignaled;
      m.step.signal = 11;
    }
    return m;
  };
}

TEST(InfrastructureTest, ALostRunIsRequeuedOnceAndNotHeldAgainstTheAction) {
  Rig rig;
  int lost = 0;
  LoseFirstFastBench(&rig, &lost);
  auto r = rig.Run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(lost, 1);
  const Node* crashed = nullptr;
  const Node* retry = nullptr;
  for (const auto& [id, n] : rig.store.nodes) {
    if (n.action_id != "algo.fast") continue;
    if (n.outcome == Outcome::kCrashed) crashed = &n;
    if (n.critic.requeued_from != kNoNode) retry = &n;
  }
  ASSERT_NE(crashed, nullptr);
  EXPECT_EQ(crashed->critic.rca, RcaClass::kInfrastructure);
  EXPECT_NE(crashed->diagnosis.find("Slurm job"), std::string::npos) << crashed->diagnosis;
  ASSERT_NE(retry, nullptr) << "a declarative action is re-run after an infrastructure loss";
  EXPECT_EQ(retry->critic.requeued_from, crashed->id);
  EXPECT_EQ(retry->parent, crashed->parent);
  EXPECT_EQ(retry->outcome, Outcome::kKept) << retry->diagnosis;
  // The rest of the campaign reaches the same answer as without the loss.
  EXPECT_EQ(toy::Outcomes(rig.store)["io.fmt"], Outcome::kKept);
  // No constraint was published for the loss: it says nothing about the change.
  EXPECT_TRUE(crashed->critic.constraints.empty());
  // Category statistics: the loss is neither a try nor a crash of "algo".
  CategoryStats stats;
  for (const auto& [id, n] : rig.store.nodes) stats.Observe(n);
  EXPECT_EQ(stats.Counts("algo").crashes, 0);
}

TEST(InfrastructureTest, EveryJobIsRecordedOnItsNode) {
  Rig rig;
  int lost = 0;
  LoseFirstFastBench(&rig, &lost);
  ASSERT_TRUE(rig.Run().ok());
  int jobs = 0;
  bool lost_recorded = false;
  for (const Event& e : rig.store.events()) {
    if (e.kind != "job") continue;
    ++jobs;
    EXPECT_NE(e.node, kNoNode);
    EXPECT_NE(e.data.find("\"executor\":\"slurm\""), std::string::npos) << e.data;
    EXPECT_NE(e.data.find("\"host\":\"cn7\""), std::string::npos) << e.data;
    EXPECT_NE(e.message.find(" on cn7 ("), std::string::npos) << e.message;
    if (e.data.find("\"infrastructure\":true") != std::string::npos) lost_recorded = true;
  }
  EXPECT_EQ(jobs, rig.target.benches) << "one job event per benchmark run";
  EXPECT_TRUE(lost_recorded);
}

TEST(InfrastructureTest, LocalRunsRecordNoJobs) {
  Rig rig;
  ASSERT_TRUE(rig.Run().ok());
  for (const Event& e : rig.store.events()) EXPECT_NE(e.kind, "job");
}

// Every benchmark run happens inside a measurement (Target::BeginMeasurement/EndMeasurement),
// nothing else runs inside one, and each one ends, also when a run in it is lost.
TEST(InfrastructureTest, BenchmarksRunInsideBalancedMeasurements) {
  Rig rig;
  int lost = 0;
  LoseFirstFastBench(&rig, &lost);
  ASSERT_TRUE(rig.Run().ok());
  EXPECT_GT(rig.target.measurements, 2);
  EXPECT_LT(rig.target.measurements, rig.target.benches) << "A/B arms share one measurement";
  EXPECT_EQ(rig.target.open_measurements, 0);
  EXPECT_EQ(rig.target.contract_violations, 0);
}

}  // namespace
}  // namespace arbor
