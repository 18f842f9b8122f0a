// Re-checking the incumbent ([critic] recheck): a change kept on a check that passed by chance
// is un-kept as soon as a candidate built on it fails the check and its own re-check fails too.
#include <gtest/gtest.h>

#include <optional>

#include "core/testing/critic_rig_testing.h"

namespace arbor {
namespace {

using critic_rig::Env;
using critic_rig::Rig;

// fast.flaky doubles the metric but its check passes only the first two times it runs (its own
// check and the re-check before the keep), then fails; other.win is
// a real 1.3x win with a deterministic check.
void InstallFlakyWin(Rig* rig, int* flaky_checks) {
  ActionSpec flaky = Env("fast.flaky", "FLAKY", "1", {}, 2.0);
  ActionSpec win = Env("other.win", "WIN", "1", {}, 1.3);
  rig->spec.actions = {flaky, win};
  rig->spec.search.max_nodes = 6;
  rig->target.metric = [](const EnvOverlay& env) {
    return 100.0 * (env.count("FLAKY") ? 2 : 1) * (env.count("WIN") ? 1.3 : 1);
  };
  rig->target.check_ok = [flaky_checks](const EnvOverlay& env) {
    // Passes its own check and the re-check before the keep (confirmation), then fails.
    return env.count("FLAKY") == 0 || ++*flaky_checks <= 2;
  };
}

TEST(RecheckTest, AFlakyKeepIsUnkeptAndTheCandidateIsNotBlamed) {
  Rig rig;
  int flaky_checks = 0;
  InstallFlakyWin(&rig, &flaky_checks);
  auto r = rig.Run();
  ASSERT_TRUE(r.ok());
  auto flaky = rig.All("fast.flaky");
  ASSERT_GE(flaky.size(), 1u);
  EXPECT_EQ(flaky[0]->outcome, Outcome::kReverted);
  EXPECT_EQ(flaky[0]->diagnosis.rfind("un-kept", 0), 0u) << flaky[0]->diagnosis;
  EXPECT_TRUE(std::count(flaky[0]->critic.flags.begin(), flaky[0]->critic.flags.end(), "unkept"));
  auto win = rig.All("other.win");
  ASSERT_EQ(win.size(), 2u);
  EXPECT_EQ(win[0]->parent, flaky[0]->id);
  EXPECT_EQ(win[0]->critic.rca, RcaClass::kFlakyIncumbent);
  EXPECT_NE(win[0]->diagnosis.find("not this change's fault"), std::string::npos);
  // Tried again under the baseline, where it is the real win it is, and kept.
  EXPECT_EQ(win[1]->parent, kRootId);
  EXPECT_EQ(win[1]->outcome, Outcome::kKept);
  ASSERT_EQ(r->best, win[1]->id);
  EXPECT_EQ(rig.store.nodes.at(r->best).overlay.count("FLAKY"), 0u);
  EXPECT_EQ(rig.Events("unkept"), 1);
  // The campaign's branch holds the real win on the baseline, not the flaky change.
  EXPECT_EQ(rig.ws.branch, win[1]->commit);
  EXPECT_EQ(rig.ws.parent_of.at(rig.ws.branch), rig.store.nodes.at(kRootId).commit);
}

// Candidates blamed on a flaky state are un-blamed with it: cat.a and cat.b fail their checks
// only because fast.flaky is under them (its own re-check passes the first times), and two
// accuracy failures pause category cat. When other.c's failure exposes the flaky keep, their
// blame and the pause it published go too, and cat.a is kept under the clean state (before,
// cat was paused until a keep that never came).
// fast.flaky doubles the metric; A and B are real wins on top of it (×1.3, ×1.2).
std::optional<double> FlakyWithTwoWins(const EnvOverlay& env) {
  return 100.0 * (env.count("FLAKY") ? 2 : 1) * (env.count("A") ? 1.3 : 1) *
         (env.count("B") ? 1.2 : 1);
}

TEST(RecheckTest, CandidatesBlamedOnAFlakyStateAreUnblamedAndTheirConstraintsWithdrawn) {
  Rig rig;
  rig.spec.actions = {Env("fast.flaky", "FLAKY", "1", {}, 2.0), Env("cat.a", "A", "1", {}, 1.3),
                      Env("cat.b", "B", "1", {}, 1.25), Env("other.c", "C", "1", {}, 1.2)};
  rig.spec.search.max_nodes = 10;
  rig.target.metric = FlakyWithTwoWins;
  int alone = 0;
  rig.target.check_ok = [&alone](const EnvOverlay& env) {
    if (env.count("FLAKY") == 0) return true;
    if (env.size() > 1) return false;  // anything on top of it fails
    return ++alone <= 4;               // its check, the keep's, two re-checks; then it fails
  };
  auto r = rig.Run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto a = rig.All("cat.a");
  ASSERT_GE(a.size(), 2u);
  EXPECT_EQ(a[0]->critic.rca, RcaClass::kFlakyIncumbent) << a[0]->diagnosis;
  EXPECT_TRUE(a[0]->critic.constraints.empty());
  EXPECT_NE(a[0]->diagnosis.find("not this change's fault"), std::string::npos);
  bool a_kept = false;
  for (const Node* n : a) a_kept |= n->outcome == Outcome::kKept;
  EXPECT_TRUE(a_kept);
  for (const auto& [id, n] : rig.store.nodes) {
    EXPECT_EQ(n.diagnosis.find("forbid category cat"), std::string::npos) << id << n.diagnosis;
  }
}

// A check that fails one time in five passes a single re-run four times in five: the first
// candidate failing on it is blamed, but when a second one fails on the same state, the
// incumbent's check is re-run 8 times, fails, and the flaky keep is un-kept (both candidates
// un-blamed with it).
TEST(RecheckTest, ASecondFailureOnOneStateReRunsItsCheckUntilTheFlakinessShows) {
  Rig rig;
  rig.spec.actions = {Env("fast.flaky", "FLAKY", "1", {}, 2.0), Env("one.a", "A", "1", {}, 1.3),
                      Env("two.b", "B", "1", {}, 1.25)};
  rig.spec.search.max_nodes = 8;
  rig.spec.search.pairs = false;  // a pair on top would show it as well
  rig.target.metric = FlakyWithTwoWins;
  int alone = 0;
  rig.target.check_ok = [&alone](const EnvOverlay& env) {
    if (env.count("FLAKY") == 0) return true;
    if (env.size() > 1) return false;
    return ++alone != 5;  // its check, the keep's, the first re-check pass; the 5th run fails
  };
  auto r = rig.Run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto flaky = rig.All("fast.flaky");
  ASSERT_GE(flaky.size(), 1u);
  EXPECT_TRUE(HasFlag(*flaky[0], "unkept")) << flaky[0]->diagnosis;
  // Shown by the second candidate's failure, not left to the final validation.
  const Node* second = rig.All("two.b").empty() ? nullptr : rig.All("two.b")[0];
  ASSERT_NE(second, nullptr);
  EXPECT_NE(flaky[0]->diagnosis.find("(in #" + std::to_string(second->id) + ":"), std::string::npos)
      << flaky[0]->diagnosis;
  for (const char* key : {"one.a", "two.b"}) {
    auto tries = rig.All(key);
    ASSERT_GE(tries.size(), 1u) << key;
    EXPECT_EQ(tries[0]->critic.rca, RcaClass::kFlakyIncumbent)
        << key << ": " << tries[0]->diagnosis;
  }
  EXPECT_EQ(rig.store.nodes.at(r->best).overlay.count("FLAKY"), 0u);
}

// The candidate passes its check, and fails the re-run before its keep: that failure may be
// the path's too, so the incumbent's check runs again there as well, fails, and the flaky keep
// goes (before, the candidate was blamed and the flaky keep stayed to the final validation).
TEST(RecheckTest, AFailedCheckBeforeTheKeepAlsoReChecksTheIncumbent) {
  Rig rig;
  rig.spec.actions = {Env("fast.flaky", "FLAKY", "1", {}, 2.0), Env("one.a", "A", "1", {}, 1.3)};
  rig.spec.search.max_nodes = 4;
  rig.spec.search.pairs = false;
  rig.target.metric = FlakyWithTwoWins;
  int alone = 0, on_top = 0;
  rig.target.check_ok = [&](const EnvOverlay& env) {
    if (env.count("FLAKY") == 0) return true;
    if (env.size() > 1) return ++on_top == 1;  // A's check passes, its re-run does not
    return ++alone <= 2;                       // its check and the keep's; then it fails
  };
  auto r = rig.Run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto flaky = rig.All("fast.flaky");
  auto a = rig.All("one.a");
  ASSERT_GE(flaky.size(), 1u);
  ASSERT_GE(a.size(), 1u);
  EXPECT_TRUE(HasFlag(*flaky[0], "unkept")) << flaky[0]->diagnosis;
  EXPECT_NE(flaky[0]->diagnosis.find("(in #" + std::to_string(a[0]->id) + ":"), std::string::npos)
      << flaky[0]->diagnosis;
  EXPECT_EQ(a[0]->critic.rca, RcaClass::kFlakyIncumbent) << a[0]->diagnosis;
}

TEST(RecheckTest, TheKnowledgeBaseGetsACorrectionOfTheUnkeptEntry) {
  Rig rig;
  int flaky_checks = 0;
  InstallFlakyWin(&rig, &flaky_checks);
  testing::FakeKnowledgeBase kb;
  rig.kb = &kb;
  ASSERT_TRUE(rig.Run().ok());
  auto flaky = rig.All("fast.flaky");
  ASSERT_GE(flaky.size(), 1u);
  ASSERT_EQ(flaky[0]->outcome, Outcome::kReverted);
  const KbEntry* first = nullptr;
  const KbEntry* correction = nullptr;
  for (const KbEntry& e : kb.entries) {
    if (e.uid == "c-uid/" + std::to_string(flaky[0]->id)) first = &e;
    if (e.uid == "c-uid/" + std::to_string(flaky[0]->id) + kKbCorrectionSuffix) correction = &e;
  }
  ASSERT_NE(first, nullptr) << "the keep was recorded when it happened";
  EXPECT_EQ(first->outcome, "kept");
  ASSERT_NE(correction, nullptr) << "no correction of the un-kept entry";
  EXPECT_EQ(correction->outcome, "reverted");
  EXPECT_TRUE(Corrects(*correction, *first));
  EXPECT_EQ(correction->path_hash, first->path_hash);
}

TEST(RecheckTest, WithoutRecheckTheFlakyChangeStaysKeptAndTheWinIsBlamed) {
  Rig rig;
  int flaky_checks = 0;
  InstallFlakyWin(&rig, &flaky_checks);
  rig.spec.critic.recheck = false;
  auto r = rig.Run();
  ASSERT_TRUE(r.ok());
  auto flaky = rig.All("fast.flaky");
  ASSERT_EQ(flaky.size(), 1u);
  EXPECT_EQ(flaky[0]->outcome, Outcome::kKept);
  auto win = rig.All("other.win");
  ASSERT_EQ(win.size(), 1u);
  EXPECT_EQ(win[0]->outcome, Outcome::kReverted);
  EXPECT_EQ(win[0]->diagnosis.rfind("accuracy", 0), 0u) << win[0]->diagnosis;
  EXPECT_EQ(rig.Events("unkept"), 0);
}

TEST(RecheckTest, ACandidateThatAloneFailsTheCheckIsBlamedAsBefore) {
  Rig rig;
  ActionSpec good = Env("good.win", "GOOD", "1", {}, 2.0);
  ActionSpec bad = Env("bad.math", "BAD", "1", {}, 1.5);
  rig.spec.actions = {good, bad};
  rig.target.metric = [](const EnvOverlay& env) { return env.count("GOOD") ? 200.0 : 100.0; };
  rig.target.check_ok = [](const EnvOverlay& env) { return env.count("BAD") == 0; };
  ASSERT_TRUE(rig.Run().ok());
  ASSERT_EQ(rig.All("good.win").size(), 1u);
  EXPECT_EQ(rig.All("good.win")[0]->outcome, Outcome::kKept);
  ASSERT_EQ(rig.All("bad.math").size(), 1u);
  EXPECT_EQ(rig.All("bad.math")[0]->diagnosis.rfind("accuracy", 0), 0u);
  EXPECT_EQ(rig.Events("unkept"), 0);
}

TEST(RecheckTest, TheFlakyChangeDeeperInThePathIsFoundAndTheGoodKeepsComeBack) {
  Rig rig;
  int flaky_checks = 0;
  // fast.flaky (x2, check passes only twice) is tried first, then good.win (x1.5) is kept on top
  // of it; late.win (x1.2) then fails the check because of fast.flaky.
  ActionSpec flaky = Env("fast.flaky", "FLAKY", "1", {}, 3.0);
  ActionSpec good = Env("good.win", "GOOD", "1", {}, 2.0);
  ActionSpec late = Env("late.win", "LATE", "1", {}, 1.5);
  rig.spec.actions = {flaky, good, late};
  rig.spec.search.max_nodes = 10;
  rig.target.metric = [](const EnvOverlay& env) {
    return 100.0 * (env.count("FLAKY") ? 2 : 1) * (env.count("GOOD") ? 1.5 : 1) *
           (env.count("LATE") ? 1.2 : 1);
  };
  rig.target.check_ok = [&flaky_checks](const EnvOverlay& env) {
    // Its own check and confirmation re-check, and good.win's two.
    return env.count("FLAKY") == 0 || ++flaky_checks <= 4;
  };
  auto r = rig.Run();
  ASSERT_TRUE(r.ok());
  const Node& best = rig.store.nodes.at(r->best);
  EXPECT_EQ(best.overlay.count("FLAKY"), 0u);
  EXPECT_EQ(best.overlay.count("GOOD"), 1u);
  EXPECT_EQ(best.overlay.count("LATE"), 1u);
  auto f = rig.All("fast.flaky");
  ASSERT_GE(f.size(), 1u);
  EXPECT_EQ(f[0]->outcome, Outcome::kReverted);
  EXPECT_NE(f[0]->diagnosis.find("flaky check"), std::string::npos) << f[0]->diagnosis;
  auto g = rig.All("good.win");
  ASSERT_EQ(g.size(), 2u);  // un-kept with the flaky change under it, then kept on the baseline
  EXPECT_EQ(g[0]->outcome, Outcome::kReverted);
  EXPECT_NE(g[0]->diagnosis.find("built on #" + std::to_string(f[0]->id)), std::string::npos)
      << g[0]->diagnosis;
  EXPECT_EQ(g[1]->outcome, Outcome::kKept);
  EXPECT_EQ(rig.Events("unkept"), 2);
}

// The runtime twin: fast.flaky's state crashes now and then; it passed every run it was given
// until it was kept, then crashed as the base arm of the next candidate's A/B. Before, that
// candidate was blamed (runtime_crash, its direction pruned) and the crashing state stayed the
// incumbent.
TEST(RecheckTest, AnIncumbentWhoseBenchmarkCrashesIsUnkeptAndTheCandidateIsNotBlamed) {
  Rig rig;
  ActionSpec flaky = Env("fast.flaky", "FLAKY", "1", {}, 3.0);
  ActionSpec win = Env("other.win", "WIN", "1", {}, 1.3);
  rig.spec.actions = {flaky, win};
  rig.spec.search.max_nodes = 6;
  rig.target.bench = [](const RunContext& ctx, int) {
    Measurement m;
    m.step.duration_s = 1;
    // The first run of fast.flaky's state as another candidate's base arm crashes.
    if (ctx.env.count("FLAKY") && ctx.env.count("WIN") == 0 && ctx.label == "base-0") {
      m.step.kind = ExitKind::kSignaled;
      m.step.signal = 11;
      return m;
    }
    m.value = 100.0 * (ctx.env.count("FLAKY") ? 2 : 1) * (ctx.env.count("WIN") ? 1.3 : 1);
    return m;
  };
  auto r = rig.Run();
  ASSERT_TRUE(r.ok());
  auto f = rig.All("fast.flaky");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->outcome, Outcome::kCrashed);
  EXPECT_EQ(f[0]->critic.rca, RcaClass::kRuntimeCrash);
  EXPECT_EQ(f[0]->diagnosis.rfind("un-kept", 0), 0u) << f[0]->diagnosis;
  EXPECT_FALSE(f[0]->critic.constraints.empty()) << "a crashing state's action is pruned";
  auto w = rig.All("other.win");
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0]->parent, f[0]->id);
  EXPECT_EQ(w[0]->outcome, Outcome::kReverted);
  EXPECT_EQ(w[0]->critic.rca, RcaClass::kFlakyIncumbent);
  EXPECT_TRUE(w[0]->critic.constraints.empty()) << "the candidate is not blamed";
  // Tried again under the baseline, and kept: the campaign hands the user the clean win.
  EXPECT_EQ(w[1]->parent, kRootId);
  EXPECT_EQ(w[1]->outcome, Outcome::kKept);
  ASSERT_EQ(r->best, w[1]->id);
  EXPECT_EQ(rig.store.nodes.at(r->best).overlay.count("FLAKY"), 0u);
  EXPECT_EQ(rig.Events("unkept"), 1);
}

// The last line: a flaky change kept just before the budget ran out, with no later candidate to
// show it, is caught by the final validation (its check kCleanRuns times) and not handed over.
TEST(RecheckTest, TheFinalValidationUnkeepsAFlakyKeepNothingElseShowed) {
  Rig rig;
  int flaky_checks = 0;
  rig.spec.actions = {Env("fast.flaky", "FLAKY", "1", {}, 2.0)};
  rig.spec.search.max_nodes = 1;
  rig.target.metric = [](const EnvOverlay& env) { return env.count("FLAKY") ? 200.0 : 100.0; };
  rig.target.check_ok = [&flaky_checks](const EnvOverlay& env) {
    return env.count("FLAKY") == 0 || ++flaky_checks <= 3;  // its check, the re-check, one more
  };
  auto r = rig.Run();
  ASSERT_TRUE(r.ok());
  auto f = rig.All("fast.flaky");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->outcome, Outcome::kReverted);
  EXPECT_NE(f[0]->diagnosis.find("final validation"), std::string::npos) << f[0]->diagnosis;
  EXPECT_EQ(r->best, kRootId) << "the user is handed the baseline, not the flaky state";
  EXPECT_EQ(rig.ws.branch, rig.store.nodes.at(kRootId).commit);
  EXPECT_EQ(rig.Events("unkept"), 1);
  EXPECT_EQ(rig.target.contract_violations, 0);
}

// The environment, not a change: after the keep every check fails, on the baseline too. The
// final validation probes the path up to the baseline, finds no clean state, and un-keeps
// nothing: a machine that fails every check cannot tell a flaky change from a good one.
TEST(RecheckTest, AFinalValidationTheBaselineFailsTooUnkeepsNothing) {
  Rig rig;
  int checks = 0;
  rig.spec.actions = {Env("fast.win", "FAST", "1", {}, 2.0)};
  rig.spec.search.max_nodes = 1;
  rig.target.metric = [](const EnvOverlay& env) { return env.count("FAST") ? 200.0 : 100.0; };
  // The baseline's check, the candidate's and its re-check before the keep pass; then none.
  rig.target.check_ok = [&checks](const EnvOverlay&) { return ++checks <= 3; };
  auto r = rig.Run();
  ASSERT_TRUE(r.ok());
  auto f = rig.All("fast.win");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->outcome, Outcome::kKept) << f[0]->diagnosis;
  EXPECT_EQ(r->best, f[0]->id);
  EXPECT_EQ(rig.Events("unkept"), 0);
  // The first final check failed, then the baseline's probe failed at once: nothing is un-kept.
  EXPECT_EQ(checks, 5) << "the baseline is probed before anything is un-kept";
}

}  // namespace
}  // namespace arbor
