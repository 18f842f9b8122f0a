#include "core/model/config_diff.h"

#include <gtest/gtest.h>

#include "core/testing/toy_rig_testing.h"

namespace arbor {
namespace {

using toy::ToySpec;

ConfigDiff Diff(const CampaignSpec& before, const CampaignSpec& after) {
  return DiffConfig(ConfigOf(before), ConfigOf(after));
}

const ConfigChange* Find(const ConfigDiff& diff, const std::string& key) {
  for (const ConfigChange& c : diff.changes) {
    if (c.key == key) return &c;
  }
  return nullptr;
}

TEST(ConfigDiffTest, TheSameSpecHasNoChanges) { EXPECT_TRUE(Diff(ToySpec(), ToySpec()).empty()); }

TEST(ConfigDiffTest, BudgetsThresholdsAndKnobsAreApplied) {
  CampaignSpec after = ToySpec();
  after.search.max_nodes += 5;
  after.search.max_time_s = 3600;
  after.search.explore = 1.5;
  after.critic.max_cv = 0.3;
  after.critic.min_effect = 0.02;
  after.metric.target = 500;
  after.metric.repetitions = 9;
  after.target.bench_timeout_s = 1234;
  ConfigDiff diff = Diff(ToySpec(), after);
  EXPECT_FALSE(diff.refused()) << DescribeChanges(diff, ChangeVerdict::kRefused);
  for (const char* key :
       {"search.max_nodes", "search.max_time", "search.explore", "critic.max_cv",
        "critic.min_effect", "metric.target", "metric.repetitions", "target.bench_timeout"}) {
    const ConfigChange* c = Find(diff, key);
    ASSERT_NE(c, nullptr) << key;
    EXPECT_EQ(c->verdict, ChangeVerdict::kApplied) << key;
  }
  EXPECT_EQ(Find(diff, "search.max_time")->after, "1h");
  EXPECT_EQ(Find(diff, "metric.target")->before, "unset");
  std::string text = DescribeChanges(diff, ChangeVerdict::kApplied);
  EXPECT_NE(text.find("critic.max_cv 0.05 → 0.3"), std::string::npos) << text;
}

TEST(ConfigDiffTest, WhatWasMeasuredCannotChange) {
  struct Case {
    const char* key;
    void (*edit)(CampaignSpec*);
  };
  const Case cases[] = {
      {"target.build", [](CampaignSpec* s) { s->target.build = "make -j8"; }},
      {"target.check", [](CampaignSpec* s) { s->target.check = "true"; }},
      {"target.bench", [](CampaignSpec* s) { s->target.bench += " --fast"; }},
      {"target.profile", [](CampaignSpec* s) { s->target.profile = "perf record"; }},
      {"target.env.CFLAGS", [](CampaignSpec* s) { s->target.env["CFLAGS"] = "-O3"; }},
      {"metric.source",
       [](CampaignSpec* s) {
         s->metric.source = {MetricSource::Kind::kRegex, "x (\\d+)", "regex:x (\\d+)"};
       }},
      {"metric.goal", [](CampaignSpec* s) { s->metric.goal = Goal::kMin; }},
      {"campaign.seed", [](CampaignSpec* s) { s->seed = 99; }},
      {"target.serve.command", [](CampaignSpec* s) { s->target.serve.command = "./server"; }},
      {"target.pass_env", [](CampaignSpec* s) { s->target.pass_env = {"CUDA_*"}; }},
      {"executor.kind", [](CampaignSpec* s) { s->executor.kind = ExecutorSpec::Kind::kSlurm; }},
  };
  for (const Case& c : cases) {
    CampaignSpec after = ToySpec();
    c.edit(&after);
    ConfigDiff diff = Diff(ToySpec(), after);
    const ConfigChange* change = Find(diff, c.key);
    ASSERT_NE(change, nullptr) << c.key;
    EXPECT_EQ(change->verdict, ChangeVerdict::kRefused) << c.key;
    EXPECT_TRUE(diff.refused()) << c.key;
  }
}

TEST(ConfigDiffTest, ANewActionIsOneAppliedChangeARemovedOneIsRefused) {
  CampaignSpec before = ToySpec();
  CampaignSpec after = before;
  after.actions.push_back(toy::EnvAction("net.new", "NEW", {"compute"}, 1.5));
  ConfigDiff added = Diff(before, after);
  ASSERT_EQ(added.changes.size(), 1u) << DescribeChanges(added, ChangeVerdict::kApplied);
  EXPECT_EQ(added.changes[0].key, "action net.new");
  EXPECT_EQ(added.changes[0].kind, ChangeKind::kAdded);
  EXPECT_FALSE(added.refused());
  EXPECT_EQ(DescribeChanges(added, ChangeVerdict::kApplied), "action net.new added");

  ConfigDiff removed = Diff(after, before);
  ASSERT_EQ(removed.changes.size(), 1u);
  EXPECT_EQ(removed.changes[0].key, "action net.new");
  EXPECT_TRUE(removed.refused());
}

TEST(ConfigDiffTest, AnActionsPriorsMayChangeWhatItDoesMayNot) {
  CampaignSpec before = ToySpec();
  before.actions = {toy::EnvAction("a.b", "X", {"compute"}, 1.5)};
  CampaignSpec priors = before;
  priors.actions[0].speedup = 3;
  priors.actions[0].cost_s = 120;
  ConfigDiff p = Diff(before, priors);
  EXPECT_FALSE(p.refused());
  ASSERT_NE(Find(p, "action.a.b.speedup"), nullptr);
  EXPECT_EQ(Find(p, "action.a.b.cost")->after, "2m");

  CampaignSpec apply = before;
  apply.actions[0].apply.env = {{"X", "2"}};
  ConfigDiff a = Diff(before, apply);
  ASSERT_NE(Find(a, "action.a.b.apply"), nullptr);
  EXPECT_TRUE(a.refused());
}

TEST(ConfigDiffTest, ValuesMayBeAddedNotRemoved) {
  CampaignSpec before = ToySpec();
  ActionSpec chunk = toy::EnvAction("rt.chunk", "CHUNK", {"compute"}, 1.2);
  chunk.apply.env = {{"CHUNK", "{value}"}};
  chunk.values = {"1", "64"};
  before.actions = {chunk};
  CampaignSpec more = before;
  more.actions[0].values.push_back("4096");
  ConfigDiff added = Diff(before, more);
  EXPECT_FALSE(added.refused());
  ASSERT_NE(Find(added, "action.rt.chunk.value.4096"), nullptr);
  EXPECT_EQ(DescribeChanges(added, ChangeVerdict::kApplied), "action.rt.chunk.value.4096 added");
  EXPECT_TRUE(Diff(more, before).refused());
}

TEST(ConfigDiffTest, PathsInsideTheWorkspaceCompareRelative) {
  CampaignSpec before = ToySpec();
  before.workspace = "/home/a/repo";
  before.kb.path = "/home/a/repo/kb.db";
  CampaignSpec moved = before;
  moved.workspace = "/srv/b/repo";
  moved.kb.path = "/srv/b/repo/kb.db";
  EXPECT_TRUE(Diff(before, moved).empty());
}

TEST(ConfigDiffTest, EncodingRoundTripsAndRejectsOtherText) {
  CampaignSpec spec = ToySpec();
  spec.target.bench = "printf 'a\\tb\\n' \t\n# two lines\\";
  Config config = ConfigOf(spec);
  auto decoded = DecodeConfig(EncodeConfig(config));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(*decoded, config);
  EXPECT_TRUE(DecodeConfig("")->empty());
  EXPECT_FALSE(DecodeConfig("no tab here\n").has_value());
  EXPECT_FALSE(DecodeConfig("b\t1\na\t2\n").has_value()) << "unsorted";
  EXPECT_FALSE(DecodeConfig("a\t\\q\n").has_value()) << "unknown escape";
}

TEST(ConfigDiffTest, EveryKeyOfAFullSpecHasADeliberateRule) {
  // Keys no rule names are refused by default; this lists each section's verdict so that a new
  // setting gets one on purpose.
  CampaignSpec spec = ToySpec();
  spec.executor.kind = ExecutorSpec::Kind::kSlurm;
  spec.executor.roles["bench"].gres = "gpu:1";
  spec.specialists["kernel"].domain = "kernel";
  spec.metric.guards.push_back({"p99", {MetricSource::Kind::kJson, "p99", "json:p99"}, {}, 10.0});
  spec.target.serve = {"./server", "./ready", 60, "./stop", 30};
  spec.target.pass_env = {"CUDA_VISIBLE_DEVICES"};
  for (const ConfigEntry& e : ConfigOf(spec)) {
    const std::string& k = e.key;
    ChangeVerdict v = VerdictFor(k, ChangeKind::kChanged);
    bool measured =
        k == "campaign.seed" || k == "target.build" || k == "target.check" || k == "target.bench" ||
        k == "target.profile" || k.starts_with("target.env.") || k == "target.pass_env" ||
        k == "target.serve.command" ||
        (k.starts_with("metric.") && k != "metric.target" && k != "metric.repetitions") ||
        k == "accuracy.source" || k.starts_with("profile.") ||
        (k.starts_with("action.") && k.ends_with(".apply")) ||
        (k.starts_with("executor.") && !k.ends_with("time_limit") &&
         !k.ends_with("queue_timeout") && !k.ends_with("account") && k != "executor.shared_dir");
    EXPECT_EQ(v, measured ? ChangeVerdict::kRefused : ChangeVerdict::kApplied) << k;
  }
}

TEST(ConfigDiffTest, TheRefusalNamesEveryChangeAndBothWaysOn) {
  CampaignSpec after = ToySpec();
  after.target.bench = "./bench --v2";
  after.search.max_nodes = 99;
  std::string text = RefusalMessage("toy", Diff(ToySpec(), after));
  EXPECT_NE(text.find("campaign 'toy'"), std::string::npos) << text;
  EXPECT_NE(text.find("target.bench"), std::string::npos) << text;
  EXPECT_NE(text.find("\"./bench --v2\""), std::string::npos) << text;
  EXPECT_NE(text.find("search.max_nodes"), std::string::npos) << text;
  EXPECT_NE(text.find("arbor run --restart"), std::string::npos) << text;
  EXPECT_NE(text.find("new name"), std::string::npos) << text;
  EXPECT_EQ(text.find('\n'), std::string::npos) << "an Error is one line";
}

}  // namespace
}  // namespace arbor
