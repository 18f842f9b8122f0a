// Build lanes through a real Slurm cluster (docs/lanes.md): with [search] parallel = 3 two
// candidates' build jobs run at the same time, and benchmark jobs never overlap each other
// (each measurement is one exclusive allocation). Run by tests/slurm/with-slurm.sh like
// slurm_test.cc (skipped without SLURM_CONF).
//
// No timing: a candidate's build waits for another candidate's build job to be running
// (lane_scripts.h); every build and benchmark appends "<ns> start|end <kind> <job>" to one log
// on this machine's clock.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "campaign_checks.h"
#include "harness.h"
#include "lane_scripts.h"

namespace arbor::integration {
namespace {

constexpr char kBuild[] = R"(log=@AUX@/lanes.log
echo "$(date +%s%N) start build $SLURM_JOB_ID" >> $log
. @AUX@/meet.sh
echo "$(date +%s%N) end build $SLURM_JOB_ID" >> $log
)";

constexpr char kBench[] = R"(log=@AUX@/lanes.log
echo "$(date +%s%N) start bench $SLURM_JOB_ID.$SLURM_STEP_ID" >> $log
v=$((100 + ARBOR_REPETITION % 3)); [ -n "$FAST" ] && v=$((v * 2))
sleep 0.1
echo "$(date +%s%N) end bench $SLURM_JOB_ID.$SLURM_STEP_ID" >> $log
echo "{\"v\": $v}"
)";

std::string WithAux(std::string text, const std::string& aux) {
  for (size_t at; (at = text.find("@AUX@")) != std::string::npos;) text.replace(at, 5, aux);
  return text;
}

TEST(IntegrationSlurmLanes, BuildJobsRunTogetherAndBenchmarksNeverOverlap) {
  if (std::getenv("SLURM_CONF") == nullptr) {
    GTEST_SKIP() << "no SLURM_CONF: run through tests/slurm/with-slurm.sh";
  }
  TempWorkspace ws;
  ws.Write("build.sh", WithAux(kBuild, ws.aux()));
  WriteFile(ws.aux() + "/meet.sh", WithAux(kMeetAnotherBuild, ws.aux()));
  ws.Write("bench.sh", WithAux(kBench, ws.aux()));
  std::string actions;
  for (const char* id : {"app.fast", "app.a", "app.b", "app.c"}) {
    std::string var = std::string(id) == "app.fast" ? "FAST" : "X_" + std::string(id + 4);
    actions += std::string("[[action]]\nid = \"") + id +
               "\"\nlayer = \"application\"\ncategory = \"algo\"\nspeedup = 1.5\n"
               "apply = { env = { " +
               var + " = \"1\" } }\n";
  }
  ws.Write("arbor.toml",
           "[campaign]\nname = \"lanes\"\nseed = 1\n"
           "[target]\nbuild = \"sh build.sh\"\nbench = \"sh bench.sh\"\n"
           "timeout = \"10m\"\n"
           "[metric]\nsource = \"json:v\"\nrepetitions = 3\n"
           "[search]\nmax_nodes = 6\nparallel = 3\n[critic]\nmin_effect = 0.1\n" +
               actions + "\n[executor]\nkind = \"slurm\"\nshared_dir = \"" + ws.root() + "\"\n");
  ws.CommitAll();
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 1800);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_TRUE(std::filesystem::exists(ws.aux() + "/met"))
      << "no two build jobs ran at the same time";
  // (ns, "start bench 12.0"), in time order: benchmarks open and close in pairs.
  std::vector<std::pair<long long, std::string>> benches;
  int builds = 0;
  std::stringstream lines(ReadFile(ws.aux() + "/lanes.log"));
  for (std::string line; std::getline(lines, line);) {
    size_t space = line.find(' ');
    ASSERT_NE(space, std::string::npos) << line;
    std::string what = line.substr(space + 1);
    if (what.find(" bench ") != std::string::npos) {
      benches.emplace_back(std::stoll(line.substr(0, space)), what);
    } else if (what.rfind("start build", 0) == 0) {
      ++builds;
    }
  }
  std::stable_sort(benches.begin(), benches.end());
  EXPECT_GE(builds, 4);
  ASSERT_GT(benches.size(), 20u) << "benchmarks of several nodes ran";
  for (size_t i = 0; i + 1 < benches.size(); i += 2) {
    const std::string& open = benches[i].second;
    ASSERT_EQ(open.rfind("start bench ", 0), 0u) << "two benchmarks overlapped near entry " << i;
    EXPECT_EQ(benches[i + 1].second, "end " + open.substr(6))
        << "benchmark " << open << " overlapped another";
  }
  std::vector<TreeNode> nodes = LoadTree(ws);
  ExpectTreeInvariants(nodes);
  const TreeNode* fast = FindKey(nodes, "app.fast");
  ASSERT_NE(fast, nullptr) << DescribeTree(nodes);
  EXPECT_EQ(fast->outcome, "kept") << DescribeTree(nodes);
}

}  // namespace
}  // namespace arbor::integration
