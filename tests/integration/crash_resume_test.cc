// kill -9 at deterministic points (ARBOR_CRASH_AT) and at an arbitrary moment, then resume:
// nothing finished is lost or redone, and the campaign reaches the uninterrupted answer.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "campaign_checks.h"
#include "harness.h"

namespace arbor::integration {
namespace {

// Resumes the campaign in `ws` to completion with `verb` and checks it against what was
// recorded after the kill.
void ResumeAndCheck(const TempWorkspace& ws, const std::string& verb,
                    const std::map<int64_t, NodeRecord>& before) {
  ProcResult resumed = ws.Arbor({verb, "arbor.toml", "--quiet"});
  ASSERT_EQ(resumed.exit_code, 0) << verb << ": " << resumed.Describe();
  ExpectToyFinished(ws);
  std::vector<TreeNode> nodes = LoadTree(ws);
  ExpectTreeInvariants(nodes);
  ExpectPreserved(before, ws);
  ExpectToyOutcomes(ws, nodes);
}

class IntegrationCrashAt : public ::testing::TestWithParam<const char*> {};

TEST_P(IntegrationCrashAt, KilledAtAStoreWriteResumesToTheSameAnswer) {
  auto ws = TempWorkspace::Toy();
  ProcResult crashed =
      ws->Arbor({"run", "arbor.toml", "--quiet"}, {{"ARBOR_CRASH_AT", GetParam()}});
  ASSERT_EQ(crashed.signal, SIGKILL)
      << "expected to die at " << GetParam() << ": " << crashed.Describe();
  std::vector<TreeNode> at_kill = LoadTree(*ws);
  std::map<int64_t, NodeRecord> before = RecordFinished(*ws, at_kill);
  ASSERT_FALSE(before.empty()) << "not even the baseline was recorded";
  nlohmann::json status = ws->ArborJson({"status", "--json"});
  EXPECT_NE(status.value("state", ""), "finished") << status.dump();
  ResumeAndCheck(*ws, "run", before);
}

// Points across the whole life of a node: dispatch, build, measurement, each verdict, the
// re-profile after a keep. The n-th event counts within the crashing process.
INSTANTIATE_TEST_SUITE_P(Points, IntegrationCrashAt,
                         ::testing::Values("after:measured:2", "before:kept:1", "after:kept:1",
                                           "after:built:3", "before:reverted:1",
                                           "after:dispatched:4", "before:crashed:1",
                                           "before:reprofiled:1", "after:reprofiled:2",
                                           "before:skipped:1"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (c == ':') c = '_';
                           }
                           return name;
                         });

TEST(IntegrationCrash, ExternalKillThenResume) {
  auto ws = TempWorkspace::Toy();
  auto proc = ws->StartArbor({"run", "arbor.toml", "--quiet"});
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  proc->Signal(SIGKILL);
  ProcResult killed = proc->Wait(30);
  ASSERT_EQ(killed.signal, SIGKILL) << "the campaign ended before the kill: " << killed.Describe();
  std::vector<TreeNode> at_kill = LoadTree(*ws);
  std::map<int64_t, NodeRecord> before = RecordFinished(*ws, at_kill);
  ResumeAndCheck(*ws, "resume", before);
  // No worktree is left behind: every node is finished.
  ProcResult worktrees = ws->Git({"worktree", "list", "--porcelain"});
  ASSERT_EQ(worktrees.exit_code, 0) << worktrees.Describe();
  int count = 0;
  for (size_t pos = 0; (pos = worktrees.out.find("worktree ", pos)) != std::string::npos;
       pos += 9) {
    ++count;
  }
  EXPECT_EQ(count, 1) << "leftover worktrees:\n" << worktrees.out;
}

TEST(IntegrationCrash, ResumeWithoutACampaignIsAStateError) {
  auto ws = TempWorkspace::Toy();
  ProcResult r = ws->Arbor({"resume", "arbor.toml", "--quiet"});
  EXPECT_EQ(r.exit_code, 4) << r.Describe();
}

}  // namespace
}  // namespace arbor::integration
