// An edited campaign file is never silently ignored (docs/cli.md, "A changed campaign file"):
// a raised budget continues a finished campaign and is recorded, a changed benchmark is refused
// with exit 8 and the ways on, and `arbor run --restart` archives the old state and starts over.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "campaign_checks.h"
#include "harness.h"

namespace arbor::integration {
namespace {

namespace fs = std::filesystem;

// The toy campaign with `from` replaced by `to` in its file, committed (a run needs a clean
// workspace, and the user commits the edit too).
void EditCampaign(TempWorkspace& ws, const std::string& from, const std::string& to) {
  std::string toml = ReadFile(ws.repo() + "/arbor.toml");
  size_t at = toml.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  toml.replace(at, from.size(), to);
  ws.Write("arbor.toml", toml);
  ws.CommitAll();
}

std::vector<nlohmann::json> EventsOf(const std::string& path, const std::string& kind) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.value("type", "") == "event" && j.value("kind", "") == kind) {
      out.push_back(j);
    }
  }
  return out;
}

// Nodes the budget counts: kept, reverted or crashed (pruned and skipped ones are free).
size_t Evaluated(const std::vector<TreeNode>& nodes) {
  size_t n = 0;
  for (const TreeNode& t : nodes) {
    n += t.outcome == "kept" || t.outcome == "reverted" || t.outcome == "crashed";
  }
  return n;
}

// A toy campaign finished on a 2-node budget.
std::unique_ptr<TempWorkspace> FinishedOnTwoNodes() {
  auto ws = TempWorkspace::Toy();
  EditCampaign(*ws, "max_nodes = 10", "max_nodes = 2");
  ProcResult run = ws->Arbor({"run", "arbor.toml", "--quiet"});
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  nlohmann::json status = ws->ArborJson({"status", "arbor.toml", "--json"});
  EXPECT_EQ(status.value("state", ""), "finished") << status.dump();
  EXPECT_EQ(status.value("stop_reason", ""), "max_nodes") << status.dump();
  return ws;
}

TEST(IntegrationConfigChange, ARaisedBudgetContinuesAFinishedCampaignAndIsRecorded) {
  auto ws = FinishedOnTwoNodes();
  ASSERT_EQ(Evaluated(LoadTree(*ws)), 2u);
  EditCampaign(*ws, "max_nodes = 2", "max_nodes = 4");
  EditCampaign(*ws, "max_cv = 0.2", "max_cv = 0.25");
  const std::string events = ws->aux() + "/events.jsonl";
  ProcResult run = ws->Arbor({"run", "arbor.toml", "--events", events});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  // Said on the log (stderr is no TTY here: every event is a line) and recorded.
  EXPECT_NE(run.err.find("config_changed: settings changed since the last run, applied: "
                         "critic.max_cv 0.2 → 0.25; search.max_nodes 2 → 4"),
            std::string::npos)
      << run.err;
  std::vector<nlohmann::json> changed = EventsOf(events, "config_changed");
  ASSERT_EQ(changed.size(), 1u) << ReadFile(events);
  EXPECT_NE(changed[0].value("message", "").find("search.max_nodes 2 → 4"), std::string::npos);
  std::vector<TreeNode> nodes = LoadTree(*ws);
  ExpectTreeInvariants(nodes);
  nlohmann::json status = ws->ArborJson({"status", "arbor.toml", "--json"});
  EXPECT_EQ(status["budget"]["max_nodes"], 4) << status.dump();
  EXPECT_EQ(status.value("state", ""), "finished") << status.dump();
  // The campaign spent the raised budget.
  EXPECT_EQ(Evaluated(nodes), 4u) << DescribeTree(nodes);
  // Run again unchanged: nothing new to record.
  ProcResult again = ws->Arbor({"run", "arbor.toml", "--quiet", "--events", events});
  EXPECT_EQ(again.exit_code, 0) << again.Describe();
  EXPECT_EQ(EventsOf(events, "config_changed").size(), 1u) << ReadFile(events);
}

TEST(IntegrationConfigChange, AChangedBenchmarkIsRefusedWithTheWaysOn) {
  auto ws = FinishedOnTwoNodes();
  std::vector<TreeNode> nodes = LoadTree(*ws);
  std::map<int64_t, NodeRecord> recorded = RecordFinished(*ws, nodes);
  EditCampaign(*ws, "bench = \"./toy --bench\"", "bench = \"env TOY_INPUT=big ./toy --bench\"");
  for (const char* verb : {"run", "resume"}) {
    ProcResult r = ws->Arbor({verb, "arbor.toml", "--quiet"});
    EXPECT_EQ(r.exit_code, 8) << verb << ": " << r.Describe();
    EXPECT_NE(r.err.find("target.bench \"./toy --bench\" → \"env TOY_INPUT=big ./toy --bench\""),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("arbor run --restart"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("new name"), std::string::npos) << r.err;
  }
  ExpectPreserved(recorded, *ws);
  EXPECT_EQ(LoadTree(*ws).size(), nodes.size());
  nlohmann::json status = ws->ArborJson({"status", "arbor.toml", "--json"});
  EXPECT_EQ(status.value("state", ""), "finished") << status.dump();
}

TEST(IntegrationConfigChange, RestartArchivesTheOldStateAndStartsOver) {
  auto ws = FinishedOnTwoNodes();
  const std::string old_branch = ws->Git({"rev-parse", "arbor/toy"}).out;
  EditCampaign(*ws, "bench = \"./toy --bench\"", "bench = \"env TOY_INPUT=big ./toy --bench\"");
  ProcResult r = ws->Arbor({"run", "arbor.toml", "--restart", "--max-nodes", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(r.err.find("archived to .arbor/toy.archived-1"), std::string::npos) << r.err;
  // The old state is on disk, whole, and its kept commits are still on a branch.
  const std::string archived = ws->repo() + "/.arbor/toy.archived-1";
  EXPECT_TRUE(fs::exists(archived + "/arbor.db")) << archived;
  EXPECT_TRUE(fs::is_directory(archived + "/runs"));
  EXPECT_EQ(ws->Git({"rev-parse", "arbor/toy.archived-1"}).out, old_branch);
  // The campaign under the same name is a fresh one, on the edited benchmark.
  std::vector<TreeNode> nodes = LoadTree(*ws);
  EXPECT_EQ(Evaluated(nodes), 1u) << DescribeTree(nodes);
  nlohmann::json status = ws->ArborJson({"status", "arbor.toml", "--json"});
  EXPECT_EQ(status["budget"]["max_nodes"], 1) << status.dump();
  // A second restart takes the next archive name.
  ProcResult again = ws->Arbor({"run", "arbor.toml", "--restart", "--quiet", "--max-nodes", "1"});
  ASSERT_EQ(again.exit_code, 0) << again.Describe();
  EXPECT_TRUE(fs::exists(ws->repo() + "/.arbor/toy.archived-2/arbor.db"));
  EXPECT_TRUE(fs::exists(archived + "/arbor.db"));
}

}  // namespace
}  // namespace arbor::integration
