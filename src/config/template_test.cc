#include "config/template.h"

#include <gtest/gtest.h>

#include "config/campaign_loader.h"
#include "util/strings.h"

namespace arbor {
namespace {

TEST(TemplateTest, ParsesWithTheDocumentedDefaults) {
  Result<CampaignSpec> spec = ParseCampaign(CampaignTemplate("tinyserve"), "arbor.toml", "/w");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->name, "tinyserve");
  EXPECT_EQ(spec->workspace, "/w");
  EXPECT_EQ(spec->kb.workload, "tinyserve");
  EXPECT_EQ(spec->target.bench, "./bench");
  EXPECT_EQ(spec->target.timeout_s, 600);
  EXPECT_EQ(spec->target.build_timeout_s, 600);
  EXPECT_EQ(spec->target.output_limit_mb, 16);
  EXPECT_EQ(spec->metric.repetitions, 5);
  EXPECT_EQ(spec->search.max_nodes, 60);
  EXPECT_EQ(spec->search.max_time_s, 7200);
  EXPECT_EQ(spec->critic.alpha, 0.05);
  ASSERT_EQ(spec->actions.size(), 2u);
  EXPECT_EQ(spec->actions[0].category, "compiler");
  EXPECT_EQ(spec->actions[1].values, (std::vector<std::string>{"2", "4", "8"}));
  EXPECT_EQ(spec->actions[1].requires_, std::vector<std::string>{"compiler.O3"});
}

TEST(TemplateTest, DefaultsMatchAnUnsetSpec) {
  // The template shows defaults; if spec.h changes a default the template must follow.
  Result<CampaignSpec> spec = ParseCampaign(CampaignTemplate("x"), "arbor.toml", "/w");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  CampaignSpec defaults;
  EXPECT_EQ(spec->seed, defaults.seed);
  EXPECT_EQ(spec->accuracy.max_drop, defaults.accuracy.max_drop);
  EXPECT_EQ(spec->search.explore, defaults.search.explore);
  EXPECT_EQ(spec->search.plateau, defaults.search.plateau);
  EXPECT_EQ(spec->search.parallel, defaults.search.parallel);
  EXPECT_EQ(spec->search.min_gain, defaults.search.min_gain);
  EXPECT_EQ(spec->critic.min_effect, defaults.critic.min_effect);
  EXPECT_EQ(spec->critic.max_cv, defaults.critic.max_cv);
  EXPECT_EQ(spec->critic.circuit_breaker, defaults.critic.circuit_breaker);
  EXPECT_EQ(spec->metric.name, defaults.metric.name);
}

TEST(TemplateTest, UnusableNamesAreMadeValid) {
  for (const char* name : {"my project", "", "..hidden", "-x", "a..b", "x.lock", "ü"}) {
    Result<CampaignSpec> spec = ParseCampaign(CampaignTemplate(name), "arbor.toml", "/w");
    ASSERT_TRUE(spec.ok()) << name << ": " << spec.error().message;
  }
  EXPECT_EQ(ParseCampaign(CampaignTemplate("my project"), "a", "/w")->name, "my-project");
  EXPECT_EQ(ParseCampaign(CampaignTemplate(""), "a", "/w")->name, "campaign");
}

TEST(TemplateTest, EveryCommentedApplyKindParsesWhenUncommented) {
  std::string text = CampaignTemplate("x");
  for (const char* kind : {"append", "run", "agent"}) {
    std::string line = "#   apply = { " + std::string(kind);
    size_t at = text.find(line);
    ASSERT_NE(at, std::string::npos) << kind;
    std::string apply = text.substr(at + 4, text.find('\n', at) - at - 4);
    std::string file = text + "[[action]]\nid = \"extra\"\nlayer = \"x\"\n" + apply + "\n";
    Result<CampaignSpec> spec = ParseCampaign(file, "arbor.toml", "/w");
    EXPECT_TRUE(spec.ok()) << kind << ": " << spec.error().message;
  }
}

TEST(TemplateTest, TheCommentedServeBlockAndPassEnvParseWhenUncommented) {
  std::string text = CampaignTemplate("x");
  size_t serve = text.find("# [target.serve]");
  ASSERT_NE(serve, std::string::npos);
  // Uncomment the block: every "# " that starts a line from "[target.serve]" to its blank line.
  size_t end = text.find("\n\n", serve);
  std::string block = text.substr(serve, end - serve);
  std::string uncommented;
  for (const std::string& line : Split(block, '\n')) uncommented += line.substr(2) + "\n";
  size_t pass_env = text.find("# pass_env");
  ASSERT_NE(pass_env, std::string::npos);
  text.replace(serve, end - serve, uncommented);
  text.erase(pass_env, 2);
  Result<CampaignSpec> spec = ParseCampaign(text, "arbor.toml", "/w");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  ASSERT_TRUE(spec->target.serve.enabled());
  EXPECT_EQ(spec->target.serve.command, "./server --port $ARBOR_PORT");
  EXPECT_EQ(spec->target.pass_env, std::vector<std::string>{"CUDA_*"});
}

}  // namespace
}  // namespace arbor
