// [executor]: local by default, the Slurm job options, and one exact line:column error per
// mistake (docs/campaign-file.md, docs/slurm.md).
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "config/campaign_loader.h"

namespace arbor {
namespace {

// Six lines; [executor] is line 7, its first key line 8. The workspace is /nonexistent-arbor.
const std::string kHead =
    "[campaign]\n"
    "name = \"demo\"\n"
    "[target]\n"
    "bench = \"./bench\"\n"
    "[metric]\n"
    "source = \"json:a.b\"\n";

Result<CampaignSpec> Parse(const std::string& executor) {
  return ParseCampaign(kHead + "[executor]\n" + executor, "c.toml", "/nonexistent-arbor");
}

TEST(ExecutorLoader, LocalByDefault) {
  auto spec = ParseCampaign(kHead, "c.toml", "/nonexistent-arbor");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->executor.kind, ExecutorSpec::Kind::kLocal);
  auto local = Parse("kind = \"local\"\n");
  ASSERT_TRUE(local.ok()) << local.error().message;
  EXPECT_EQ(local->executor.kind, ExecutorSpec::Kind::kLocal);
}

TEST(ExecutorLoader, ReadsEverySlurmOption) {
  auto spec = Parse(
      "kind = \"slurm\"\npartition = \"gpu\"\naccount = \"perf\"\ntime_limit = \"90m\"\n"
      "queue_timeout = \"20m\"\n"
      "gres = \"gpu:1\"\nconstraint = \"a100\"\nextra = [\"--qos=high\", \"--mem=8G\"]\n"
      "exclusive_bench = false\nshared_dir = \"/\"\n");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  const ExecutorSpec& e = spec->executor;
  EXPECT_EQ(e.kind, ExecutorSpec::Kind::kSlurm);
  EXPECT_EQ(e.partition, "gpu");
  EXPECT_EQ(e.account, "perf");
  ASSERT_TRUE(e.time_limit_s.has_value());
  EXPECT_DOUBLE_EQ(*e.time_limit_s, 5400);
  ASSERT_TRUE(e.queue_timeout_s.has_value());
  EXPECT_DOUBLE_EQ(*e.queue_timeout_s, 1200);
  EXPECT_EQ(e.gres, "gpu:1");
  EXPECT_EQ(e.constraint, "a100");
  EXPECT_EQ(e.extra, (std::vector<std::string>{"--qos=high", "--mem=8G"}));
  EXPECT_FALSE(e.exclusive_bench);
  EXPECT_EQ(e.shared_dir, "/");
}

TEST(ExecutorLoader, SharedDirIsResolvedAgainstTheCampaignFile) {
  auto spec = Parse("kind = \"slurm\"\nshared_dir = \".\"\n");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->executor.shared_dir, "/nonexistent-arbor");
  EXPECT_TRUE(spec->executor.exclusive_bench);
  EXPECT_FALSE(spec->executor.time_limit_s.has_value());
  EXPECT_FALSE(spec->executor.queue_timeout_s.has_value());
}

TEST(ExecutorLoader, RoleTablesGiveEachKindOfJobItsOwnHardware) {
  auto spec = Parse(
      "kind = \"slurm\"\nshared_dir = \"/\"\npartition = \"gpu\"\ngres = \"gpu:1\"\n"
      "constraint = \"a100\"\nextra = [\"--qos=high\"]\nqueue_timeout = \"2h\"\n"
      "[executor.build]\npartition = \"cpu\"\ngres = \"\"\nconstraint = \"\"\n"
      "extra = [\"--cpus-per-task=32\"]\ntime_limit = \"20m\"\nqueue_timeout = \"10m\"\n"
      "[executor.profile]\naccount = \"prof\"\n");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  const ExecutorSpec& e = spec->executor;
  ASSERT_EQ(e.roles.size(), 2u);
  ExecutorSpec build = e.For("build");
  EXPECT_EQ(build.partition, "cpu");
  EXPECT_EQ(build.gres, "") << "\"\" drops [executor]'s gres";
  EXPECT_EQ(build.constraint, "");
  EXPECT_EQ(build.account, "");
  EXPECT_EQ(build.extra, (std::vector<std::string>{"--qos=high", "--cpus-per-task=32"}));
  ASSERT_TRUE(build.time_limit_s.has_value());
  EXPECT_DOUBLE_EQ(*build.time_limit_s, 1200);
  EXPECT_DOUBLE_EQ(build.queue_timeout_s.value_or(0), 600);
  EXPECT_TRUE(build.roles.empty());
  ExecutorSpec profile = e.For("profile");
  EXPECT_EQ(profile.account, "prof");
  EXPECT_EQ(profile.partition, "gpu") << "a key the role omits keeps [executor]'s";
  EXPECT_EQ(profile.gres, "gpu:1");
  EXPECT_EQ(profile.extra, (std::vector<std::string>{"--qos=high"}));
  for (const char* role : {"bench", "check"}) {
    ExecutorSpec same = e.For(role);
    EXPECT_EQ(same.partition, "gpu") << role;
    EXPECT_EQ(same.gres, "gpu:1") << role;
    EXPECT_FALSE(same.time_limit_s.has_value()) << role;
    EXPECT_DOUBLE_EQ(same.queue_timeout_s.value_or(0), 7200) << role;
  }
}

struct Row {
  const char* name;
  std::string executor;
  std::string expected;
};

const Row kRows[] = {
    {"unknown_kind", "kind = \"k8s\"\n",
     "c.toml:8:8: invalid executor.kind \"k8s\"; expected \"local\" or \"slurm\""},
    {"unknown_key", "kind = \"slurm\"\npartiton = \"x\"\n",
     "c.toml:9:1: unknown key 'partiton' in [executor]; did you mean 'partition'?"},
    {"slurm_option_on_local", "partition = \"gpu\"\n",
     "c.toml:8:1: executor.partition applies to Slurm jobs only; expected kind = \"slurm\" with "
     "it"},
    {"missing_shared_dir", "kind = \"slurm\"\n",
     "c.toml:7:1: missing required key 'shared_dir' in [executor]; expected the folder every "
     "compute node sees at the same path, holding the campaign's workspace"},
    {"workspace_outside_shared_dir", "kind = \"slurm\"\nshared_dir = \"/shared\"\n",
     "c.toml:9:14: invalid executor.shared_dir \"/shared\": the workspace /nonexistent-arbor "
     "(its worktrees and run folders) is not under it; compute nodes must see them at the same "
     "path"},
    {"zero_time_limit", "kind = \"slurm\"\nshared_dir = \"/\"\ntime_limit = 0\n",
     "c.toml:10:14: invalid executor.time_limit 0; expected a positive duration like \"90s\", "
     "\"10m\", \"1h30m\" or a number of seconds"},
    {"extra_not_an_option", "kind = \"slurm\"\nshared_dir = \"/\"\nextra = [\"qos=high\"]\n",
     "c.toml:10:10: invalid executor.extra[0] \"qos=high\"; expected one srun option per item, "
     "like \"--qos=high\""},
    {"extra_sets_arbors_own_option",
     "kind = \"slurm\"\nshared_dir = \"/\"\nextra = [\"--exclusive\", \"--job-name=x\"]\n",
     "c.toml:10:25: invalid executor.extra[1] \"--job-name=x\": Arbor sets this option itself "
     "(it names, places and finds the job)"},
    {"role_on_local", "kind = \"local\"\n[executor.build]\npartition = \"cpu\"\n",
     "c.toml:9:11: executor.build applies to Slurm jobs only; expected kind = \"slurm\" with it"},
    {"unknown_role", "kind = \"slurm\"\nshared_dir = \"/\"\n[executor.benchmark]\n",
     "c.toml:10:11: unknown key 'benchmark' in [executor]; expected one of: kind, partition, "
     "account, time_limit, queue_timeout, gres, constraint, extra, exclusive_bench, shared_dir, "
     "build, check, bench, profile"},
    {"unknown_key_in_role",
     "kind = \"slurm\"\nshared_dir = \"/\"\n[executor.bench]\nexclusive_bench = false\n",
     "c.toml:11:1: unknown key 'exclusive_bench' in [executor.bench]; expected one of: "
     "partition, account, time_limit, queue_timeout, gres, constraint, extra"},
    {"role_extra_not_an_option",
     "kind = \"slurm\"\nshared_dir = \"/\"\n[executor.build]\nextra = [\"cpus=4\"]\n",
     "c.toml:11:10: invalid executor.build.extra[0] \"cpus=4\"; expected one srun option per "
     "item, like \"--qos=high\""},
    {"role_partition_not_string",
     "kind = \"slurm\"\nshared_dir = \"/\"\n[executor.check]\npartition = 3\n",
     "c.toml:11:13: expected a string for executor.check.partition, got integer"},
    {"exclusive_not_bool", "kind = \"slurm\"\nshared_dir = \"/\"\nexclusive_bench = \"yes\"\n",
     "c.toml:10:19: expected true or false for executor.exclusive_bench, got string"},
};

void PrintTo(const Row& row, std::ostream* os) { *os << row.name; }

class ExecutorMalformedTest : public testing::TestWithParam<Row> {};

TEST_P(ExecutorMalformedTest, ReportsOneExactLine) {
  const Row& row = GetParam();
  Result<CampaignSpec> spec = Parse(row.executor);
  ASSERT_FALSE(spec.ok()) << row.executor;
  EXPECT_EQ(spec.error().message, row.expected) << row.executor;
}

INSTANTIATE_TEST_SUITE_P(Executor, ExecutorMalformedTest, testing::ValuesIn(kRows),
                         [](const testing::TestParamInfo<Row>& info) { return info.param.name; });

}  // namespace
}  // namespace arbor
