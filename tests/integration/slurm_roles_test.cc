// Each kind of job on its own hardware through a real Slurm cluster (docs/slurm.md, "Builds on
// one class of node, benchmarks on another"): the test cluster has two partitions on its one
// node, `arbor` (the default) and `arborbuild`. With [executor.build] and [executor.check]
// naming `arborbuild` (builds also asking for --cpus-per-task), every build and check job
// runs there and every benchmark and profile in the default partition, without the builds'
// option; benchmarks and profiles have their node to themselves (--exclusive), builds and
// checks do not. Each command logs what Slurm gave it ($SLURM_JOB_PARTITION,
// $SLURM_CPUS_PER_TASK, the job's OverSubscribe as scontrol shows it), so the test reads the
// placement from the jobs themselves. Run by tests/slurm/with-slurm.sh.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>

#include "campaign_checks.h"
#include "harness.h"
#include "slurm_checks.h"

namespace arbor::integration {
namespace {

// One line per command: "<kind> <partition> <cpus per task or none> OverSubscribe=<NO|OK>".
std::string Logger(const std::string& aux, const std::string& kind) {
  return "o=$(scontrol show job \"$SLURM_JOB_ID\" | grep -o 'OverSubscribe=[A-Z]*')\n"
         "echo \"" +
         kind + " $SLURM_JOB_PARTITION ${SLURM_CPUS_PER_TASK:-none} $o\" >> '" + aux + "/placed'\n";
}

TEST(IntegrationSlurmRoles, BuildsAndChecksOnTheirPartitionBenchmarksAndProfilesExclusive) {
  REQUIRE_CLUSTER();
  TempWorkspace ws;
  ws.Write("build.sh", Logger(ws.aux(), "build"));
  ws.Write("check.sh", Logger(ws.aux(), "check"));
  ws.Write("profile.sh",
           Logger(ws.aux(), "profile") +
               "echo '{\"total_s\": 1, \"components\": [{\"name\": \"main\", \"layer\": "
               "\"application\", \"share\": 1.0}]}'\n");
  ws.Write("bench.sh", Logger(ws.aux(), "bench") +
                           "v=$((100 + ARBOR_REPETITION % 3)); [ -n \"$FAST\" ] && v=$((v * 2))\n"
                           "echo \"{\\\"v\\\": $v}\"\n");
  std::string campaign =
      FastCampaign("roles", Executor(ws,
                                     "[executor.build]\npartition = \"arborbuild\"\n"
                                     "extra = [\"--cpus-per-task=1\"]\n"
                                     "[executor.check]\npartition = \"arborbuild\"\n"));
  const std::string bench_line = "bench = \"sh bench.sh\"\n";
  ASSERT_NE(campaign.find(bench_line), std::string::npos);
  campaign.insert(campaign.find(bench_line),
                  "check = \"sh check.sh\"\nprofile = \"sh profile.sh\"\n");
  ws.Write("arbor.toml", campaign);
  ws.CommitAll();

  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 1800);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<TreeNode> nodes = LoadTree(ws);
  ExpectTreeInvariants(nodes);
  const TreeNode* fast = FindKey(nodes, "app.fast");
  ASSERT_NE(fast, nullptr) << DescribeTree(nodes);
  EXPECT_EQ(fast->outcome, "kept") << DescribeTree(nodes);

  std::map<std::string, std::set<std::string>> placed;  // kind -> "<partition> <cpus>"
  std::map<std::string, int> count;
  std::stringstream lines(ReadFile(ws.aux() + "/placed"));
  for (std::string line; std::getline(lines, line);) {
    size_t space = line.find(' ');
    ASSERT_NE(space, std::string::npos) << line;
    placed[line.substr(0, space)].insert(line.substr(space + 1));
    ++count[line.substr(0, space)];
  }
  EXPECT_GE(count["build"], 2) << "the baseline's and the candidate's builds";
  EXPECT_GE(count["check"], 2);
  EXPECT_GE(count["bench"], 6);
  EXPECT_GE(count["profile"], 1) << "the baseline is profiled";
  EXPECT_EQ(placed["build"], (std::set<std::string>{"arborbuild 1 OverSubscribe=OK"}));
  EXPECT_EQ(placed["check"], (std::set<std::string>{"arborbuild none OverSubscribe=OK"}))
      << "[executor.check] sets no extra: the builds' --cpus-per-task is theirs alone";
  EXPECT_EQ(placed["bench"], (std::set<std::string>{"arbor none OverSubscribe=NO"}));
  EXPECT_EQ(placed["profile"], (std::set<std::string>{"arbor none OverSubscribe=NO"}));
  EXPECT_TRUE(ActiveJobs().empty());
}

}  // namespace
}  // namespace arbor::integration
