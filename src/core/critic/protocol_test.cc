#include "core/critic/protocol.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace arbor {
namespace {

std::vector<Sample> Arm(const std::vector<double>& values, const std::string& arm) {
  std::vector<Sample> out;
  for (size_t i = 0; i < values.size(); ++i) {
    Sample s;
    s.arm = arm;
    s.rep = static_cast<int>(i);
    s.value = values[i];
    out.push_back(s);
  }
  return out;
}

// A gate that answers what it is told, and counts its looks.
class ScriptedGate : public Gate {
 public:
  Verdict Judge(const GateInput& in) override {
    ++looks;
    last = in;
    Verdict v = answer;
    if (more_until > 0 && static_cast<int>(in.candidate.size()) < more_until) {
      v.decision = Decision::kMore;
      v.more_samples = in.repetitions;
    }
    return v;
  }
  Verdict answer;
  int more_until = 0;  // "more" while the candidate has fewer samples than this
  int looks = 0;
  GateInput last;
};

class ProtocolTest : public ::testing::Test {
 protected:
  ProtocolTest() {
    spec_.metric.repetitions = 3;
    spec_.critic.min_effect = 0.01;
  }
  AbState State(std::vector<double> base, std::vector<double> cand, int reps = 3) {
    AbState s;
    s.base = Arm(base, "base");
    s.cand = Arm(cand, "cand");
    s.reps = reps;
    return s;
  }
  CampaignSpec spec_;
  ScriptedGate gate_;
  MeasurementProtocol protocol_{spec_, &gate_};
};

std::string Runs(const std::vector<AbRun>& runs) {
  std::string out;
  for (const AbRun& r : runs) out += (r.base ? "B" : "C") + std::to_string(r.rep) + " ";
  return out;
}

TEST_F(ProtocolTest, AFreshComparisonWarmsUpBothArmsAndAResumedOneDoesNot) {
  EXPECT_EQ(Runs(protocol_.Warmup(State({}, {}))), "B-1 C-1 ");
  EXPECT_TRUE(protocol_.Warmup(State({10}, {})).empty());
}

TEST_F(ProtocolTest, ALookIsInterleavedPairsAlternatingWhichArmRunsFirst) {
  AbNext next = protocol_.Next(State({}, {}));
  EXPECT_EQ(Runs(next.runs), "B0 C0 C1 B1 B2 C2 ");
  EXPECT_EQ(gate_.looks, 0);  // nothing is judged before the look is complete
}

TEST_F(ProtocolTest, AnInterruptedLookIsCompletedBeforeTheGateJudges) {
  // A kill between the arms of pair 1: the candidate's run of pair 1 and pair 2 are missing.
  AbNext next = protocol_.Next(State({10, 10}, {11}));
  EXPECT_EQ(Runs(next.runs), "C1 B2 C2 ");
  EXPECT_EQ(gate_.looks, 0);
}

TEST_F(ProtocolTest, ARunPastACompleteLookMeansTheNextLookIsUnderWay) {
  // Killed after the first run of pair 3: look 1 was judged "more" before it.
  AbNext next = protocol_.Next(State({10, 10, 10, 10}, {11, 11, 11}));
  EXPECT_EQ(gate_.looks, 0);
  EXPECT_EQ(Runs(next.runs), "C3 B4 C4 C5 B5 ");
}

TEST_F(ProtocolTest, ACompleteLookIsJudgedAndMoreMeansTheNextLook) {
  gate_.answer.decision = Decision::kKeep;
  gate_.more_until = 6;
  AbNext next = protocol_.Next(State({10, 10, 10}, {11, 11, 11}));
  EXPECT_EQ(gate_.looks, 1);
  EXPECT_EQ(gate_.last.repetitions, 3);
  EXPECT_EQ(Runs(next.runs), "C3 B3 B4 C4 C5 B5 ");
  next = protocol_.Next(State({10, 10, 10, 10, 10, 10}, {11, 11, 11, 11, 11, 11}));
  EXPECT_TRUE(next.runs.empty());
  EXPECT_EQ(next.verdict.decision, Decision::kKeep);
}

TEST_F(ProtocolTest, AMeasureLaneTakesExactlyTheRunsOfTheFirstLook) {
  std::vector<AbRun> expected = protocol_.Warmup(State({}, {}));
  for (const AbRun& r : protocol_.Next(State({}, {}, 4)).runs) expected.push_back(r);
  EXPECT_EQ(Runs(protocol_.FirstLook(4)), Runs(expected));
}

JudgeContext Context(const Node* base) {
  JudgeContext ctx;
  ctx.base = base;
  return ctx;
}

Node Kept(NodeId id, double metric) {
  Node n;
  n.id = id;
  n.outcome = Outcome::kKept;
  n.metric = metric;
  return n;
}

TEST_F(ProtocolTest, ABaseMeasuredOrdersOfMagnitudeOffItsKeptValueIsUnkept) {
  const Node base = Kept(4, 1000);
  Verdict v;
  v.decision = Decision::kKeep;
  NodeDecision d =
      protocol_.JudgeAb(Arm({10, 11, 9}, "base"), Arm({12, 12, 12}, "cand"), v, Context(&base));
  EXPECT_EQ(d.verdict, NodeVerdict::kUnkeepIncumbent);
  EXPECT_DOUBLE_EQ(d.incumbent_now, 10);
  // The baseline is never un-kept.
  Node root = Kept(kRootId, 1000);
  root.outcome = Outcome::kBaseline;
  d = protocol_.JudgeAb(Arm({10, 11, 9}, "base"), Arm({12, 12, 12}, "cand"), v, Context(&root));
  EXPECT_EQ(d.verdict, NodeVerdict::kConfirm);
}

TEST_F(ProtocolTest, AKeepThatDidLessWorkIsRevertedAsInflation) {
  const Node base = Kept(2, 10);
  Verdict v;
  v.decision = Decision::kKeep;
  v.gain = 0.2;
  std::vector<Sample> b = Arm({10, 10, 10}, "base");
  std::vector<Sample> c = Arm({12, 12, 12}, "cand");
  for (Sample& s : b) s.extra["work"] = 1;
  for (Sample& s : c) s.extra["work"] = 0.5;
  NodeDecision d = protocol_.JudgeAb(b, c, v, Context(&base));
  EXPECT_EQ(d.verdict, NodeVerdict::kRevert);
  EXPECT_EQ(d.rca, RcaClass::kInflation);
  EXPECT_NE(d.diagnosis.find("less work"), std::string::npos);
  // The same work: on to the confirmation, with the A/B's figures and a "measured" event.
  for (Sample& s : c) s.extra["work"] = 1;
  d = protocol_.JudgeAb(b, c, v, Context(&base));
  EXPECT_EQ(d.verdict, NodeVerdict::kConfirm);
  ASSERT_TRUE(d.metric.has_value());
  EXPECT_DOUBLE_EQ(*d.metric, 12);
  ASSERT_EQ(d.events.size(), 1u);
  EXPECT_EQ(d.events[0].kind, EventKind::kMeasured);
}

TEST_F(ProtocolTest, ANoGainRevertSaysWhetherMoreRunsCouldTell) {
  Verdict v;
  v.decision = Decision::kRevert;
  v.inconclusive = true;
  v.reason = "not significant";
  NodeDecision d =
      protocol_.JudgeAb(Arm({10, 10, 10}, "base"), Arm({10, 10, 10}, "cand"), v, Context(nullptr));
  EXPECT_EQ(d.verdict, NodeVerdict::kRevert);
  EXPECT_EQ(d.rca, RcaClass::kNoGain);
  EXPECT_EQ(d.diagnosis, "no_gain: not significant");
  EXPECT_EQ(d.flags, std::vector<std::string>{"inconclusive"});
}

TEST_F(ProtocolTest, ABaseThatDriftedIsRecordedAndAnImplausibleWinFlagged) {
  const Node base = Kept(3, 10);
  Verdict v;
  v.decision = Decision::kKeep;
  v.speedup = 40;
  JudgeContext ctx = Context(&base);
  ctx.noise_cv = 0.01;
  ctx.plausibility = [](double speedup) {
    Plausibility p;
    p.anomaly = speedup > 2;
    p.message = "anomaly";
    return p;
  };
  NodeDecision d =
      protocol_.JudgeAb(Arm({12, 12, 12}, "base"), Arm({480, 480, 480}, "cand"), v, ctx);
  EXPECT_EQ(d.verdict, NodeVerdict::kConfirm);
  EXPECT_EQ(d.flags, (std::vector<std::string>{"drift", "anomaly"}));
  ASSERT_EQ(d.events.size(), 3u);
  EXPECT_EQ(d.events[0].kind, EventKind::kRebaselined);
  EXPECT_EQ(d.events[1].kind, EventKind::kMeasured);
  EXPECT_EQ(d.events[2].kind, EventKind::kAnomaly);
}

TEST_F(ProtocolTest, AnAnomalyIsConfirmedWithTwiceTheRunsAndNoReplicationDiscount) {
  Node n;
  EXPECT_EQ(protocol_.ConfirmationReps(n, 5), 5);
  EXPECT_TRUE(protocol_.ConfirmationReplicates(n));
  AddFlag(&n, "anomaly");
  EXPECT_EQ(protocol_.ConfirmationReps(n, 5), 10);
  EXPECT_FALSE(protocol_.ConfirmationReplicates(n));
}

TEST_F(ProtocolTest, AConfirmationThatFailsRevertsAndOneThatPassesKeepsOnItsOwnFigures) {
  Node n;
  n.critic.p_value = 0.001;
  Verdict v;
  v.decision = Decision::kRevert;
  v.reason = "not significant";
  const auto b = Arm({10, 10, 10}, "confirm-base");
  const auto c = Arm({11, 11, 11}, "confirm-cand");
  NodeDecision d = protocol_.JudgeConfirmation(n, {}, {}, b, c, v, Context(nullptr));
  EXPECT_EQ(d.verdict, NodeVerdict::kRevert);
  EXPECT_EQ(d.rca, RcaClass::kNotConfirmed);
  v.decision = Decision::kKeep;
  v.gain = 0.1;
  v.p_value = 0.04;
  v.ci_low = 1.05;
  v.ci_high = 1.15;
  d = protocol_.JudgeConfirmation(n, {}, {}, b, c, v, Context(nullptr));
  EXPECT_EQ(d.verdict, NodeVerdict::kKeep);
  EXPECT_TRUE(d.confirmed);
  EXPECT_DOUBLE_EQ(*d.metric, 11);
  EXPECT_DOUBLE_EQ(*d.p_value, 0.04);  // the larger of the two looks' p-values
}

TEST_F(ProtocolTest, TheFinalSpeedupIsGoalAware) {
  const auto b = Arm({10, 10, 10, 10}, "final-base");
  const auto c = Arm({5, 5, 5, 5}, "final-cand");
  FinalFigures f = protocol_.JudgeFinal(b, c, 7);
  EXPECT_DOUBLE_EQ(f.speedup, 0.5);
  spec_.metric.goal = Goal::kMin;
  f = protocol_.JudgeFinal(b, c, 7);
  EXPECT_DOUBLE_EQ(f.speedup, 2);
  EXPECT_DOUBLE_EQ(f.ci_low, 2);
  EXPECT_DOUBLE_EQ(f.ci_high, 2);
}

TEST_F(ProtocolTest, TheBaselinesPreflightRunsTwiceAndRaisesRepetitionsForANoisyBenchmark) {
  EXPECT_EQ(protocol_.SelfRuns(true), 6);
  EXPECT_EQ(protocol_.SelfRuns(false), 3);
  spec_.critic.max_cv = 0.01;
  SelfDecision d = protocol_.JudgeSelf({100, 110, 90, 105, 95, 100}, true, {1, 1, 1});
  EXPECT_DOUBLE_EQ(d.metric, 100);
  ASSERT_TRUE(d.noise.has_value());
  EXPECT_GT(d.noise->recommended_repetitions, 3);
  EXPECT_EQ(d.flags, std::vector<std::string>{"noisy"});
  ASSERT_EQ(d.events.size(), 1u);
  EXPECT_EQ(d.events[0].kind, EventKind::kNoise);
}

}  // namespace
}  // namespace arbor
