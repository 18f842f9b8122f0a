#include "core/model/model.h"

#include <gtest/gtest.h>

#include "core/model/event_kind.h"
#include "core/model/ports.h"

namespace arbor {
namespace {

TEST(ModelTest, OutcomeNamesRoundTrip) {
  const Outcome all[] = {Outcome::kPending, Outcome::kRunning,  Outcome::kBaseline,
                         Outcome::kKept,    Outcome::kReverted, Outcome::kCrashed,
                         Outcome::kPruned,  Outcome::kSkipped};
  for (Outcome o : all) EXPECT_EQ(ParseOutcome(OutcomeName(o)), o) << OutcomeName(o);
  EXPECT_EQ(OutcomeName(Outcome::kReverted), "reverted");
  EXPECT_EQ(OutcomeName(Outcome::kBaseline), "baseline");
  EXPECT_EQ(ParseOutcome("Kept"), std::nullopt);
  EXPECT_EQ(ParseOutcome(""), std::nullopt);
}

TEST(ModelTest, OnlyPendingAndRunningAreUnfinished) {
  EXPECT_FALSE(IsFinished(Outcome::kPending));
  EXPECT_FALSE(IsFinished(Outcome::kRunning));
  EXPECT_TRUE(IsFinished(Outcome::kBaseline));
  EXPECT_TRUE(IsFinished(Outcome::kKept));
  EXPECT_TRUE(IsFinished(Outcome::kCrashed));
  EXPECT_TRUE(IsFinished(Outcome::kPruned));
  EXPECT_TRUE(IsFinished(Outcome::kSkipped));
}

TEST(ModelTest, StepNamesRoundTrip) {
  const Step all[] = {Step::kNone,  Step::kApply,   Step::kBuild,  Step::kCheck,
                      Step::kBench, Step::kProfile, Step::kDecide, Step::kDone};
  for (Step s : all) EXPECT_EQ(ParseStep(StepName(s)), s) << StepName(s);
  EXPECT_EQ(StepName(Step::kProfile), "profile");
  EXPECT_EQ(ParseStep("benchmark"), std::nullopt);
}

TEST(ModelTest, ExitKindNames) {
  EXPECT_EQ(ExitKindName(ExitKind::kOk), "ok");
  EXPECT_EQ(ExitKindName(ExitKind::kFailed), "failed");
  EXPECT_EQ(ExitKindName(ExitKind::kSignaled), "signaled");
  EXPECT_EQ(ExitKindName(ExitKind::kTimedOut), "timed_out");
  EXPECT_EQ(ExitKindName(ExitKind::kSpawnError), "spawn_error");
  EXPECT_EQ(ExitKindName(ExitKind::kBadOutput), "bad_output");
}

TEST(ModelTest, CandidateKeyAppendsValueInBrackets) {
  EXPECT_EQ(CandidateKey("compiler.O3", ""), "compiler.O3");
  EXPECT_EQ(CandidateKey("server.batch", "16"), "server.batch[16]");
  Node n;
  n.action_id = "server.batch";
  n.value = "32";
  EXPECT_EQ(n.CandidateKey(), "server.batch[32]");
  n.value.clear();
  EXPECT_EQ(n.CandidateKey(), "server.batch");
}

// Every word of a vocabulary parses back to its value, and the words are the ones the store,
// the campaign file and `arbor status --json` have always used.
TEST(ModelTest, BackendStopReasonAndStateNamesRoundTrip) {
  for (SpecialistBackend b :
       {SpecialistBackend::kBuiltin, SpecialistBackend::kCommand, SpecialistBackend::kLlm}) {
    EXPECT_EQ(ParseSpecialistBackend(SpecialistBackendName(b)), b);
  }
  EXPECT_EQ(SpecialistBackendName(SpecialistBackend::kLlm), "llm");
  EXPECT_EQ(ParseSpecialistBackend("gpt"), std::nullopt);
  for (StopReason r : {StopReason::kNone, StopReason::kTarget, StopReason::kMaxNodes,
                       StopReason::kMaxTime, StopReason::kPlateau, StopReason::kExhausted,
                       StopReason::kInterrupted, StopReason::kDiskLow}) {
    EXPECT_EQ(ParseStopReason(StopReasonName(r)), r) << StopReasonName(r);
  }
  EXPECT_EQ(StopReasonName(StopReason::kMaxNodes), "max_nodes");
  EXPECT_EQ(StopReasonName(StopReason::kNone), "");
  EXPECT_EQ(ParseStopReason("too_noisy"), std::nullopt);
  for (CampaignState s :
       {CampaignState::kRunning, CampaignState::kStopped, CampaignState::kFinished}) {
    EXPECT_EQ(ParseCampaignState(CampaignStateName(s)), s);
  }
  EXPECT_EQ(CampaignStateName(CampaignState::kStopped), "stopped");
  EXPECT_EQ(ParseCampaignState("paused"), std::nullopt);
}

// Event kinds and sample arms: each word parses back to its value, the words are the stored
// ones, and a word this build does not know (an older or newer build's) reads as kUnknown.
TEST(ModelTest, EventKindAndSampleArmNamesRoundTrip) {
  for (int i = static_cast<int>(EventKind::kProposed); i <= static_cast<int>(EventKind::kLlmBudget);
       ++i) {
    const auto k = static_cast<EventKind>(i);
    EXPECT_NE(EventKindName(k), "unknown") << i;
    EXPECT_EQ(ParseEventKind(EventKindName(k)), k) << EventKindName(k);
  }
  EXPECT_EQ(EventKindName(EventKind::kConfigChanged), "config_changed");
  EXPECT_EQ(EventKindName(EventKind::kDispatched), "dispatched");
  EXPECT_EQ(ParseEventKind("retired_kind"), EventKind::kUnknown);
  EXPECT_EQ(ParseEventKind(""), EventKind::kUnknown);
  Event e;
  e.kind = "reprofiled";
  EXPECT_EQ(KindOf(e), EventKind::kReprofiled);

  for (int i = static_cast<int>(SampleArm::kSelf); i <= static_cast<int>(SampleArm::kCheck); ++i) {
    const auto a = static_cast<SampleArm>(i);
    EXPECT_NE(SampleArmName(a), "unknown") << i;
    EXPECT_EQ(ParseSampleArm(SampleArmName(a)), a) << SampleArmName(a);
  }
  EXPECT_EQ(SampleArmName(SampleArm::kConfirmCand), "confirm-cand");
  EXPECT_EQ(ParseSampleArm("warmup"), SampleArm::kUnknown);
  Sample s;  // the default arm is the node's own series
  EXPECT_EQ(ArmOf(s), SampleArm::kSelf);
}

}  // namespace
}  // namespace arbor
