// The toy campaign end to end, uninterrupted: every outcome of examples/toy/README.md.
#include <gtest/gtest.h>

#include "campaign_checks.h"
#include "harness.h"

namespace arbor::integration {
namespace {

TEST(IntegrationHarness, ToyWorkspaceIsACleanCommittedRepo) {
  auto ws = TempWorkspace::Toy();
  EXPECT_EQ(ws->Git({"rev-parse", "--verify", "HEAD"}).exit_code, 0);
  EXPECT_EQ(ws->Git({"status", "--porcelain"}).out, "");
  EXPECT_NE(ReadFile(ws->repo() + "/arbor.toml").find("name = \"toy\""), std::string::npos);
  ProcResult ls = ws->Git({"ls-files"});
  EXPECT_NE(ls.out.find("patches/crc-table.diff"), std::string::npos) << ls.out;
  ProcResult apply = ws->Git({"apply", "--check", "patches/crc-table.diff"});
  EXPECT_EQ(apply.exit_code, 0) << "the patch no longer applies to toy.c: " << apply.Describe();
}

TEST(IntegrationHarness, RunProcessReportsExitSignalAndTimeout) {
  TempWorkspace ws;
  ProcResult ok = RunProcess({"sh", "-c", "echo out; echo err >&2; exit 3"}, ws.repo());
  EXPECT_EQ(ok.exit_code, 3);
  EXPECT_EQ(ok.out, "out\n");
  EXPECT_EQ(ok.err, "err\n");
  ProcResult killed = RunProcess({"sh", "-c", "kill -9 $$"}, ws.repo());
  EXPECT_EQ(killed.signal, 9);
  ProcResult slow = RunProcess({"sleep", "30"}, ws.repo(), {}, 0.3);
  EXPECT_TRUE(slow.timed_out);
  ProcResult env =
      RunProcess({"sh", "-c", "echo \"$ARBOR_CRASH_AT|$X\""}, ws.repo(), {{"X", "a b"}});
  EXPECT_EQ(env.out, "|a b\n") << "ARBOR_* must not leak in from the test's environment";
}

TEST(IntegrationToy, FullCampaignReachesTheKnownAnswer) {
  auto ws = TempWorkspace::Toy();
  ProcResult run = ws->Arbor({"run", "arbor.toml", "--quiet"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  ExpectToyFinished(*ws);
  std::vector<TreeNode> nodes = LoadTree(*ws);
  ExpectTreeInvariants(nodes);
  ExpectToyOutcomes(*ws, nodes);
  // The skipped agent action and every finished node are visible in `show`.
  for (const auto& n : nodes) {
    nlohmann::json show = ws->ArborJson({"show", std::to_string(n.id), "--json"});
    EXPECT_EQ(show.value("id", int64_t{0}), n.id);
    if (n.outcome == "kept" || n.outcome == "baseline") {
      ASSERT_TRUE(show.contains("samples") && show["samples"].is_array()) << show.dump();
      EXPECT_GE(show["samples"].size(), 3u) << "repetitions = 3";
    }
  }
  // A second `run` of a finished campaign changes nothing.
  std::map<int64_t, NodeRecord> before = RecordFinished(*ws, nodes);
  ProcResult again = ws->Arbor({"run", "arbor.toml", "--quiet"});
  EXPECT_EQ(again.exit_code, 0) << again.Describe();
  ExpectPreserved(before, *ws);
  EXPECT_EQ(LoadTree(*ws).size(), nodes.size());
}

}  // namespace
}  // namespace arbor::integration
