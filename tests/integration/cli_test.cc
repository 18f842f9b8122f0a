// The CLI's refusals and exit codes (docs/cli.md): dirty workspace, malformed campaign file,
// `arbor init`, unknown verbs.
#include <gtest/gtest.h>

#include <regex>

#include "harness.h"

namespace arbor::integration {
namespace {

TEST(IntegrationCli, UntrackedFileMakesTheWorkspaceDirty) {
  auto ws = TempWorkspace::Toy();
  ws->Write("scratch.txt", "not committed\n");
  ProcResult r = ws->Arbor({"run", "arbor.toml", "--quiet"});
  EXPECT_EQ(r.exit_code, 4) << r.Describe();
  EXPECT_NE(r.err.find("dirty"), std::string::npos) << r.err;
}

TEST(IntegrationCli, ModifiedFileMakesTheWorkspaceDirty) {
  auto ws = TempWorkspace::Toy();
  ws->Write("toy.c", ReadFile(ws->repo() + "/toy.c") + "/* edited */\n");
  ProcResult r = ws->Arbor({"run", "arbor.toml", "--quiet"});
  EXPECT_EQ(r.exit_code, 4) << r.Describe();
  EXPECT_NE(r.err.find("dirty"), std::string::npos) << r.err;
}

TEST(IntegrationCli, SyntaxErrorNamesFileLineAndColumn) {
  TempWorkspace ws;
  ws.Write("arbor.toml", "[campaign]\nname = \"bad\"\nworkspace = \".\"\n[target\nbench = \"x\"\n");
  ws.CommitAll();
  ProcResult r = ws.Arbor({"run", "arbor.toml", "--quiet"});
  EXPECT_EQ(r.exit_code, 3) << r.Describe();
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(arbor\.toml:4:[0-9]+:)"))) << r.err;
}

TEST(IntegrationCli, TypeErrorNamesFileLineAndColumn) {
  TempWorkspace ws;
  ws.Write(
      "arbor.toml",
      "[campaign]\nname = \"bad\"\nworkspace = \".\"\n[target]\nbench = \"echo '{}'\"\n\n[metric]\n"
      "source = \"json:v\"\nrepetitions = \"three\"\n");
  ws.CommitAll();
  ProcResult r = ws.Arbor({"status", "arbor.toml"});
  EXPECT_EQ(r.exit_code, 3) << r.Describe();
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(arbor\.toml:9:[0-9]+:)"))) << r.err;
}

TEST(IntegrationCli, InitWritesATemplateThatParses) {
  TempWorkspace ws;
  ProcResult init = ws.Arbor({"init"});
  ASSERT_EQ(init.exit_code, 0) << init.Describe();
  std::string text = ReadFile(ws.repo() + "/arbor.toml");
  ASSERT_FALSE(text.empty());
  // A newcomer is sent to `arbor try` first, by the printed steps and by the template.
  EXPECT_LT(init.out.find("arbor try"), init.out.find("arbor run")) << init.out;
  EXPECT_NE(text.find("run `arbor try`"), std::string::npos);
  // It parses: status finds no campaign state (4), not a campaign file error (3).
  ProcResult status = ws.Arbor({"status"});
  EXPECT_EQ(status.exit_code, 4) << status.Describe();
  ProcResult tree = ws.Arbor({"tree", "arbor.toml", "--format", "json"});
  EXPECT_EQ(tree.exit_code, 4) << tree.Describe();
  // It does not overwrite without --force.
  ws.Write("arbor.toml", text + "# mine\n");
  ProcResult again = ws.Arbor({"init"});
  EXPECT_NE(again.exit_code, 0);
  EXPECT_EQ(ReadFile(ws.repo() + "/arbor.toml"), text + "# mine\n");
  ProcResult forced = ws.Arbor({"init", "--force"});
  EXPECT_EQ(forced.exit_code, 0) << forced.Describe();
  EXPECT_EQ(ReadFile(ws.repo() + "/arbor.toml"), text);
}

TEST(IntegrationCli, UsageErrorsExitTwo) {
  TempWorkspace ws;
  EXPECT_EQ(ws.Arbor({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(ws.Arbor({"run", "--no-such-option"}).exit_code, 2);
  EXPECT_EQ(ws.Arbor({"try", "--runs", "0"}).exit_code, 2);
}

TEST(IntegrationCli, MissingCampaignFileIsAConfigError) {
  TempWorkspace ws;
  ProcResult r = ws.Arbor({"status", "nowhere.toml"});
  EXPECT_EQ(r.exit_code, 3) << r.Describe();
}

TEST(IntegrationCli, StatusShowsTheBudgetTheCampaignRanWith) {
  auto ws = TempWorkspace::Toy();
  ProcResult run =
      ws->Arbor({"run", "arbor.toml", "--quiet", "--max-nodes", "2", "--max-time", "7m"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  nlohmann::json status = ws->ArborJson({"status", "arbor.toml", "--json"});
  EXPECT_EQ(status["budget"]["max_nodes"], 2) << status.dump();
  EXPECT_EQ(status["budget"]["max_time_s"], 420.0) << status.dump();
  ProcResult text = ws->Arbor({"status", "arbor.toml"});
  EXPECT_NE(text.out.find("of 7m"), std::string::npos) << text.out;
}

// A campaign that finishes without evaluating a single change is no success: here the baseline
// already meets the target. `arbor run` exits 7 and says why; `arbor status` says it again.
TEST(IntegrationCli, ACampaignThatEvaluatedNothingExitsSevenAndSaysWhy) {
  auto ws = TempWorkspace::Toy();
  std::string toml = ReadFile(ws->repo() + "/arbor.toml");
  const std::string goal = "goal = \"max\"\n";
  ASSERT_NE(toml.find(goal), std::string::npos);
  toml.replace(toml.find(goal), goal.size(), goal + "target = 1\n");
  ws->Write("arbor.toml", toml);
  ws->CommitAll();
  ProcResult run = ws->Arbor({"run", "arbor.toml", "--quiet"});
  EXPECT_EQ(run.exit_code, 7) << run.Describe();
  EXPECT_NE(run.err.find("nothing was evaluated (target): the baseline already meets"),
            std::string::npos)
      << run.Describe();
  nlohmann::json status = ws->ArborJson({"status", "arbor.toml", "--json"});
  EXPECT_EQ(status.value("stop_reason", ""), "target") << status.dump();
  EXPECT_NE(status.value("nothing_evaluated", "").find("raise the target"), std::string::npos)
      << status.dump();
  ProcResult text = ws->Arbor({"status", "arbor.toml"});
  EXPECT_NE(text.out.find("why       nothing was evaluated"), std::string::npos) << text.out;
  // A campaign that evaluated something exits 0 and has no such line.
  auto other = TempWorkspace::Toy();
  ProcResult ok = other->Arbor({"run", "arbor.toml", "--quiet", "--max-nodes", "1"});
  ASSERT_EQ(ok.exit_code, 0) << ok.Describe();
  EXPECT_TRUE(other->ArborJson({"status", "arbor.toml", "--json"})["nothing_evaluated"].is_null());
}

TEST(IntegrationCli, UnknownNodeIsAStateError) {
  auto ws = TempWorkspace::Toy();
  ProcResult run = ws->Arbor({"run", "arbor.toml", "--quiet", "--max-nodes", "1"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  ProcResult show = ws->Arbor({"show", "999", "--json"});
  EXPECT_EQ(show.exit_code, 4) << show.Describe();
}

}  // namespace
}  // namespace arbor::integration
