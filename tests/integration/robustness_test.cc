// Commands that misbehave: a benchmark that hangs, a benchmark that floods its output.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "campaign_checks.h"
#include "harness.h"

namespace arbor::integration {
namespace {

namespace fs = std::filesystem;

// A campaign of shell commands only, with one action that sets X=1.
std::string Campaign(const std::string& name, const std::string& bench,
                     const std::string& extra_target) {
  return "[campaign]\nname = \"" + name + "\"\nworkspace = \".\"\n\n" +
         "[target]\nbuild = \"true\"\ncheck = \"true\"\nbench = '''" + bench + "'''\n" +
         extra_target +
         "\n[metric]\nname = \"v\"\nsource = \"json:v\"\nrepetitions = 2\n\n"
         "[search]\nmax_nodes = 3\n\n"
         "[[action]]\nid = \"set-x\"\nlayer = \"application\"\ncategory = \"env\"\nspeedup = 2.0\n"
         "apply = { env = { X = \"1\" } }\n";
}

TEST(IntegrationRobustness, HangingBenchIsKilledAndRecordedAsCrash) {
  TempWorkspace ws;
  std::string pid_file = ws.aux() + "/sleep.pid";
  ws.Write("arbor.toml", Campaign("hang",
                                  "if [ \"$X\" = 1 ]; then echo $$ > '" + pid_file +
                                      "'; exec sleep 1000; fi; echo '{\"v\": 1}'",
                                  "bench_timeout = \"2s\"\n"));
  ws.CommitAll();
  auto start = std::chrono::steady_clock::now();
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 120);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  std::vector<TreeNode> nodes = LoadTree(ws);
  ExpectTreeInvariants(nodes);
  const TreeNode* hung = FindKey(nodes, "set-x");
  ASSERT_NE(hung, nullptr);
  EXPECT_EQ(hung->outcome, "crashed");
  EXPECT_TRUE(hung->diagnosis.find("timeout") != std::string::npos ||
              hung->diagnosis.find("timed out") != std::string::npos)
      << hung->diagnosis;
  std::string pid_text = ReadFile(pid_file);
  ASSERT_FALSE(pid_text.empty()) << "the hanging bench never ran";
  pid_t pid = static_cast<pid_t>(std::stol(pid_text));
  // The group was killed before the verdict was written; allow the reaper a moment anyway.
  for (int i = 0; i < 20 && ProcessAlive(pid); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::string cmdline = ReadFile("/proc/" + std::to_string(pid) + "/cmdline");
  EXPECT_FALSE(ProcessAlive(pid) && cmdline.find("sleep") != std::string::npos)
      << "sleep 1000 (pid " << pid << ") survived the timeout";
}

TEST(IntegrationRobustness, OutputFloodIsCappedAndTheRunCompletes) {
  TempWorkspace ws;
  ws.Write("arbor.toml",
           Campaign("flood", "head -c 200000000 /dev/zero | tr '\\0' x; echo; echo '{\"v\": 1}'",
                    "output_limit = \"1M\"\n"));
  ws.CommitAll();
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 300);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  nlohmann::json status = ws.ArborJson({"status", "--json"});
  EXPECT_EQ(status.value("state", ""), "finished") << status.dump();
  std::vector<TreeNode> nodes = LoadTree(ws);
  ExpectTreeInvariants(nodes);
  ASSERT_FALSE(nodes.empty());
  EXPECT_EQ(nodes[0].metric, nlohmann::json(1.0)) << "the metric after the flood was lost";
  const uintmax_t limit = 1024 * 1024;
  const uintmax_t slack = 64 * 1024;
  uintmax_t total = 0;
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(ws.repo() + "/.arbor")) {
    if (!entry.is_regular_file()) continue;
    std::string path = entry.path().string();
    if (path.find("/worktrees/") != std::string::npos) continue;
    ++files;
    total += entry.file_size();
    if (path.find("/runs/") != std::string::npos) {
      EXPECT_LE(entry.file_size(), limit + slack) << path;
    }
  }
  EXPECT_GT(files, 0);
  EXPECT_LT(total, 64 * limit) << "state directory holds " << total << " bytes";
}

}  // namespace
}  // namespace arbor::integration
