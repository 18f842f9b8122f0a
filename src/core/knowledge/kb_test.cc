#include "core/knowledge/kb.h"

#include <gtest/gtest.h>

#include <cmath>

namespace arbor {
namespace {

HardwareSignature Hw(std::string cpu = "EPYC 7763", int cores = 2) {
  HardwareSignature h;
  h.cpu_model = std::move(cpu);
  h.cores = cores;
  h.isa = {"avx2", "fma"};
  h.mem_gib = 24;
  return h;
}

ActionSpec Action(std::string id, std::string category, double speedup = 2) {
  ActionSpec a;
  a.id = std::move(id);
  a.category = std::move(category);
  a.speedup = speedup;
  a.cost_s = 10;
  a.content_hash = "c1";
  return a;
}

KbContext Context() {
  KbContext c;
  c.workload = ParseWorkload("campaign=toy bench=1");
  c.hardware = Hw();
  c.now = 1e9;
  c.campaign_uid = "new";
  return c;
}

KbEntry Entry(std::string action, std::string outcome, std::optional<double> gain = {}) {
  KbEntry e;
  static int next = 0;
  e.id = ++next;
  e.campaign_uid = "old";
  e.uid = "old/" + std::to_string(e.id);
  e.action_id = std::move(action);
  e.category = e.action_id.substr(0, e.action_id.find('.'));
  e.content_hash = "c1";
  e.workload = Context().workload;
  e.hardware = Hw();
  e.outcome = std::move(outcome);
  e.gain = gain;
  e.prior_speedup = 2;
  e.target_share = 0.5;
  e.implied_speedup = ImpliedSpeedup(gain, e.target_share, Goal::kMin);
  e.cost_s = 30;
  e.controlled = true;
  e.recorded_at = 1e9;
  return e;
}

TEST(KbSignatureTest, HardwareRoundTripsAndRejectsGarbage) {
  HardwareSignature h = Hw("Xeon; Gold=6338", 64);
  h.gpu = "A100";
  auto back = HardwareSignature::Decode(h.Encode());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->cpu_model, "Xeon  Gold 6338");
  EXPECT_EQ(back->cores, 64);
  EXPECT_EQ(back->isa, (std::vector<std::string>{"avx2", "fma"}));
  EXPECT_EQ(back->gpu, "A100");
  EXPECT_FALSE(HardwareSignature::Decode("").has_value());
  EXPECT_FALSE(HardwareSignature::Decode("cores=many").has_value());
  EXPECT_FALSE(HardwareSignature::Decode("cpu=x;colour=red").has_value());
  EXPECT_FALSE(HardwareSignature::Decode("just text").has_value());
}

TEST(KbSignatureTest, SimilarityFallsAsHardwareDiffersButNeverToZero) {
  HardwareSignature a = Hw();
  EXPECT_DOUBLE_EQ(HardwareSimilarity(a, a), 1);
  double more_cores = HardwareSimilarity(a, Hw("EPYC 7763", 64));
  double other_cpu = HardwareSimilarity(a, Hw("Graviton3", 64));
  EXPECT_LT(more_cores, 1);
  EXPECT_LT(other_cpu, more_cores);
  HardwareSignature far = Hw("Graviton3", 64);
  far.isa = {"sve"};
  far.mem_gib = 512;
  far.gpu = "H100";
  EXPECT_DOUBLE_EQ(HardwareSimilarity(a, far), 0.1);
}

TEST(KbSignatureTest, WorkloadTagsAreASetAndCompareByJaccard) {
  EXPECT_EQ(ParseWorkload("b=2, a=1  b=2"), (WorkloadSignature{"a=1", "b=2"}));
  EXPECT_EQ(EncodeWorkload(ParseWorkload("b=2 a=1")), "a=1 b=2");
  EXPECT_DOUBLE_EQ(WorkloadSimilarity({"a"}, {"a"}), 1);
  EXPECT_DOUBLE_EQ(WorkloadSimilarity({"a", "b"}, {"a", "c"}), 0.1 + 0.9 / 3);
  EXPECT_DOUBLE_EQ(WorkloadSimilarity({"a"}, {"b"}), 0.1);
}

TEST(KbEntryTest, ImpliedSpeedupInvertsAmdahl) {
  // Time to minimise: half the time, 25% less time overall → ×2 on it.
  EXPECT_NEAR(*ImpliedSpeedup(0.25, 0.5, Goal::kMin), 2.0, 1e-12);
  EXPECT_NEAR(*ImpliedSpeedup(-0.25, 0.5, Goal::kMin), 1 / 1.5, 1e-12);
  // Throughput to maximise: +150% on the whole program is ×2.5 on it.
  EXPECT_NEAR(*ImpliedSpeedup(1.5, 1.0, Goal::kMax), 2.5, 1e-12);
  EXPECT_NEAR(*ImpliedSpeedup(1.0 / 3, 0.5, Goal::kMax), 2.0, 1e-12);
  EXPECT_DOUBLE_EQ(*ImpliedSpeedup(0.9, 0.5, Goal::kMin), 100);  // more than the share allows
  EXPECT_DOUBLE_EQ(*ImpliedSpeedup(-0.99, 0.1, Goal::kMax), 0.25);
  EXPECT_FALSE(ImpliedSpeedup(0.1, 0, Goal::kMax).has_value());
  EXPECT_FALSE(ImpliedSpeedup(std::nullopt, 0.5, Goal::kMax).has_value());
}

TEST(KbEntryTest, EntryFromNodeCarriesContextAndALesson) {
  Node n;
  n.id = 7;
  n.parent = 1;
  n.action_id = "kernel.tile";
  n.value = "64";
  n.category = "kernel";
  n.outcome = Outcome::kCrashed;
  n.diagnosis = "runtime_crash: bench killed by signal 11";
  n.critic.rca = RcaClass::kRuntimeCrash;
  n.critic.suggestion = "try smaller tiles";
  n.score.g = 0.4;
  n.score.speedup = 2;
  n.cost_s = 12;
  ActionSpec a = Action("kernel.tile", "kernel");
  a.describe = "Tile the matmul";
  KbEntry e = EntryFromNode(n, a, Context(), "p1", "toy", Goal::kMax);
  EXPECT_EQ(e.uid, "new/7");
  EXPECT_EQ(e.CandidateKey(), "kernel.tile[64]");
  EXPECT_EQ(e.outcome, "crashed");
  EXPECT_DOUBLE_EQ(e.target_share, 0.8);
  EXPECT_EQ(e.content_hash, "c1");
  EXPECT_TRUE(e.IsPitfall());
  EXPECT_NE(e.lesson.find("crashed (runtime_crash)"), std::string::npos) << e.lesson;
  EXPECT_NE(e.lesson.find("try smaller tiles"), std::string::npos) << e.lesson;
  n.outcome = Outcome::kReverted;
  n.diagnosis = "accuracy: check failed";
  EXPECT_TRUE(EntryFromNode(n, a, Context(), "p1", "toy", Goal::kMax).accuracy_failure);
}

TEST(KbConflictTest, ControlledSupersedesUncontrolledAndOperatingPointsCoexist) {
  KbEntry controlled = Entry("k.x", "kept", 0.3);
  KbEntry loose = Entry("k.x", "reverted", -0.02);
  loose.controlled = false;
  EXPECT_EQ(Compare(controlled, loose), KbRelation::kSupersedes);
  EXPECT_EQ(Compare(loose, controlled), KbRelation::kSupersededBy);
  KbEntry other = Entry("k.x", "reverted", -0.02);
  EXPECT_EQ(Compare(controlled, other), KbRelation::kConflict);
  other.path_hash = "elsewhere";  // another operating point: both stay
  EXPECT_EQ(Compare(controlled, other), KbRelation::kAgree);
  KbEntry close = Entry("k.x", "kept", 0.31);
  EXPECT_EQ(Compare(controlled, close), KbRelation::kAgree);
  controlled.ci_low = 1.2;
  controlled.ci_high = 1.4;
  close.ci_low = 1.1;
  close.ci_high = 1.25;  // overlapping intervals agree even with different point estimates
  close.gain = 0.2;
  EXPECT_EQ(Compare(controlled, close), KbRelation::kAgree);
}

TEST(KbConflictTest, ACorrectionSupersedesTheEntryItCorrectsWhateverTheResults) {
  KbEntry kept = Entry("k.x", "kept", 0.3);
  KbEntry correction = kept;
  correction.uid += kKbCorrectionSuffix;
  correction.outcome = "reverted";
  EXPECT_TRUE(Corrects(correction, kept));
  EXPECT_FALSE(Corrects(kept, correction));
  EXPECT_EQ(Compare(correction, kept), KbRelation::kSupersedes);
  EXPECT_EQ(Compare(kept, correction), KbRelation::kSupersededBy);
  correction.outcome = "kept";  // the same result still replaces it: no double counting
  EXPECT_EQ(Compare(correction, kept), KbRelation::kSupersedes);
  KbEntry unrelated = Entry("k.x", "kept", 0.3);  // another node's entry of the same context
  EXPECT_FALSE(Corrects(correction, unrelated));
  EXPECT_EQ(Compare(correction, unrelated), KbRelation::kAgree);
}

TEST(KbPriorsTest, ExactHistoryMovesTheSpeedupAndRisks) {
  std::vector<ActionSpec> actions = {Action("k.x", "k"), Action("k.y", "k"),
                                     Action("m.z", "m", 1.5)};
  // k.x measured ×4 on its targets (gain 0.375 at share 0.5) where ×2 was assumed.
  std::vector<KbEntry> entries = {Entry("k.x", "kept", 0.375), Entry("m.z", "crashed")};
  KbPriors p = KbPriors::Compute(entries, actions, Context());
  const KbPrior* x = p.Find("k.x");
  ASSERT_NE(x, nullptr);
  // Declared ×2 and one exact observation of ×4 weigh the same: geometric mean ×2.83.
  EXPECT_NEAR(x->speedup, std::sqrt(8.0), 1e-9);
  EXPECT_NEAR(x->cost_s, 20, 1e-9);
  EXPECT_EQ(x->refs.size(), 1u);
  EXPECT_NE(x->refs[0].summary.find("same hardware"), std::string::npos) << x->refs[0].summary;
  // k.y learns only through its category, at a fraction of the weight.
  const KbPrior* y = p.Find("k.y");
  ASSERT_NE(y, nullptr);
  EXPECT_GT(y->speedup, 2);
  EXPECT_LT(y->speedup, x->speedup);
  EXPECT_NEAR(y->category_weight, kKbLevelSameCategory, 1e-12);
  const KbPrior* z = p.Find("m.z");
  ASSERT_NE(z, nullptr);
  EXPECT_DOUBLE_EQ(z->crash_events, kKbObservationWeight);  // unclassified: counted once
  EXPECT_DOUBLE_EQ(z->acc_trials, 0);
}

TEST(KbPriorsTest, OtherHardwareCountsLessAndStaleOrSupersededEntriesFade) {
  std::vector<ActionSpec> actions = {Action("m.z", "m")};
  KbEntry same = Entry("m.z", "crashed");
  KbEntry far = same;
  far.hardware = Hw("Graviton3", 64);
  double w_same = KbPriors::Compute({same}, actions, Context()).Find("m.z")->crash_events;
  double w_far = KbPriors::Compute({far}, actions, Context()).Find("m.z")->crash_events;
  EXPECT_GT(w_far, 0);
  EXPECT_LT(w_far, w_same);
  KbEntry old = same;
  old.recorded_at = Context().now - kKbHalfLifeDays * 86400;
  EXPECT_NEAR(KbPriors::Compute({old}, actions, Context()).Find("m.z")->crash_events, w_same / 2,
              1e-9);
  KbEntry superseded = same;
  superseded.superseded_by = 99;
  EXPECT_EQ(KbPriors::Compute({superseded}, actions, Context()).Find("m.z"), nullptr);
  KbEntry own = same;
  own.campaign_uid = "new";  // this campaign's own entries are in its tree already
  EXPECT_EQ(KbPriors::Compute({own}, actions, Context()).Find("m.z"), nullptr);
}

TEST(KbPriorsTest, ValuesMatchExactlyAndOtherValuesCountLess) {
  ActionSpec tile = Action("k.tile", "k");
  tile.values = {"32", "128"};
  KbEntry crash = Entry("k.tile", "crashed");
  crash.value = "128";
  crash.rca = "runtime_crash";  // deterministic: counts kKbDeterministicFactor times
  KbPriors p = KbPriors::Compute({crash}, {tile}, Context());
  EXPECT_DOUBLE_EQ(p.Find("k.tile[128]")->crash_events,
                   kKbObservationWeight * kKbDeterministicFactor);
  EXPECT_DOUBLE_EQ(p.Find("k.tile[32]")->crash_events, kKbObservationWeight * kKbLevelSameAction);
  EXPECT_EQ(p.Find("k.tile"), nullptr);
  tile.content_hash = "c2";  // the action changed since: its history counts as a sibling's
  KbPriors changed = KbPriors::Compute({crash}, {tile}, Context());
  EXPECT_DOUBLE_EQ(changed.Find("k.tile[128]")->crash_events,
                   kKbObservationWeight * kKbLevelSameAction);
}

TEST(KbPriorsTest, TopKRanksExactBeforeCategoryAndMatchesPriorWeights) {
  ActionSpec x = Action("k.x", "k");
  std::vector<KbEntry> entries = {Entry("k.y", "kept", 0.1), Entry("k.x", "reverted", -0.01),
                                  Entry("q.q", "kept", 0.5)};
  auto top = RelevantEntries(entries, x, "", Context(), 5);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].action_id, "k.x");
  EXPECT_EQ(top[1].action_id, "k.y");
  EXPECT_DOUBLE_EQ(EntryWeight(entries[1], x, "", Context()), 1);
  EXPECT_DOUBLE_EQ(EntryWeight(entries[0], x, "", Context()), kKbLevelSameCategory);
  EXPECT_EQ(RelevantEntries(entries, x, "", Context(), 1).size(), 1u);
}

TEST(KbPriorsTest, DeterministicFailuresInTheSameContextAreReplays) {
  std::vector<ActionSpec> actions = {Action("m.z", "m")};
  KbEntry crash = Entry("m.z", "crashed");
  crash.rca = "runtime_crash";
  crash.path_hash = "here";
  KbPriors p = KbPriors::Compute({crash}, actions, Context());
  ASSERT_NE(p.Replay("m.z", "here"), nullptr);
  EXPECT_EQ(p.Replay("m.z", "here")->what, "crashed (runtime_crash)");
  EXPECT_EQ(p.Replay("m.z", "elsewhere"), nullptr);  // another operating point re-opens it
  KbEntry timeout = crash;
  timeout.rca = "timeout";  // may depend on the machine's load: not a replay
  EXPECT_FALSE(KbPriors::Compute({timeout}, actions, Context()).has_replays());
  KbEntry other_hw = crash;
  other_hw.hardware = Hw("EPYC 7763", 64);
  EXPECT_FALSE(KbPriors::Compute({other_hw}, actions, Context()).has_replays());
  KbEntry accuracy = Entry("m.z", "reverted");
  accuracy.accuracy_failure = true;
  accuracy.path_hash = "here";
  EXPECT_TRUE(IsDeterministicFailure(accuracy));
  EXPECT_NE(KbPriors::Compute({accuracy}, actions, Context()).Replay("m.z", "here"), nullptr);
  EXPECT_FALSE(IsDeterministicFailure(Entry("m.z", "reverted", -0.5)));
}

}  // namespace
}  // namespace arbor
