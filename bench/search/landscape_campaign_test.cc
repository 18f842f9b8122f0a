// The landscape's campaign: ToCampaignSpec, and CampaignToml read back by Arbor's own loader.
#include <gtest/gtest.h>

#include <filesystem>

#include "bench/search/landscape.h"
#include "bench/search/landscape_testing.h"
#include "config/campaign_loader.h"

namespace arbor::search {
namespace {

using testing::Example;

TEST(LandscapeCampaignTest, SpecCarriesThePriorsNotTheTruth) {
  Landscape l = Example();
  CampaignSpec spec = l.ToCampaignSpec(42, 25);
  EXPECT_EQ(spec.name, "example");
  EXPECT_EQ(spec.seed, 42u);
  EXPECT_EQ(spec.metric.name, "value");
  EXPECT_EQ(spec.metric.goal, Goal::kMax);
  EXPECT_EQ(spec.metric.source.text, "json:value");
  EXPECT_EQ(spec.metric.repetitions, 3);
  ASSERT_TRUE(spec.metric.work.has_value());  // the Critic's inflation check reads it
  EXPECT_EQ(spec.metric.work->text, "json:work");
  EXPECT_EQ(spec.search.max_nodes, 25);
  EXPECT_GE(spec.search.max_time_s, 1e9);
  EXPECT_TRUE(spec.target.bench.empty());
  EXPECT_FALSE(spec.kb.enabled);
  // The Critic's defaults: a noisy landscape is gated with more repetitions, not a wider max_cv.
  EXPECT_EQ(spec.critic.max_cv, CriticSpec{}.max_cv);
  ASSERT_EQ(spec.actions.size(), l.actions.size());

  const ActionSpec& fast_a = spec.actions[0];
  EXPECT_EQ(fast_a.id, "fast_a");
  EXPECT_EQ(fast_a.targets, std::vector<std::string>{"a"});  // from the true effects
  EXPECT_EQ(fast_a.speedup, 1.2);                            // the prior, not the truth (3)
  EXPECT_EQ(fast_a.cost_s, 30);
  EXPECT_EQ(fast_a.apply.kind, ApplySpec::Kind::kEnv);
  EXPECT_EQ(fast_a.apply.env, (std::map<std::string, std::string>{{"LS_FAST_A", "1"}}));
  EXPECT_TRUE(fast_a.values.empty());
  EXPECT_TRUE(spec.actions[2].targets.empty());  // fast_all: "*" = the whole program
  EXPECT_EQ(spec.actions[3].targets, std::vector<std::string>{"a"});  // fuse: its `when`
  EXPECT_EQ(spec.actions[3].requires_, std::vector<std::string>{"fast_a"});
  EXPECT_EQ(spec.actions[4].conflicts, std::vector<std::string>{"fast_b"});
  EXPECT_EQ(spec.actions[4].risk_crash, 0.5);

  const ActionSpec& tile = spec.actions[8];
  EXPECT_EQ(tile.category, "tiling");
  EXPECT_EQ(tile.values, (std::vector<std::string>{"8", "16", "32", "64"}));
  EXPECT_EQ(tile.apply.env.at("LS_KERNEL_TILE"), "{value}");
  EXPECT_EQ(tile.speedup, 1.4);
  EXPECT_EQ(tile.cost_s, 12);
  EXPECT_FALSE(tile.content_hash.empty());
  EXPECT_NE(tile.content_hash, fast_a.content_hash);
}

TEST(LandscapeCampaignTest, QuietLandscapesKeepTheDefaultMaxCv) {
  Landscape l = Example();
  l.noise.cv = 0.01;
  EXPECT_EQ(l.ToCampaignSpec(1, 10).critic.max_cv, CriticSpec{}.max_cv);
}

void ExpectSameActions(const std::vector<ActionSpec>& loaded, const std::vector<ActionSpec>& spec) {
  ASSERT_EQ(loaded.size(), spec.size());
  for (size_t i = 0; i < spec.size(); ++i) {
    SCOPED_TRACE(spec[i].id);
    const ActionSpec& a = loaded[i];
    const ActionSpec& b = spec[i];
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.layer, b.layer);
    EXPECT_EQ(a.category, b.category);
    EXPECT_EQ(a.describe, b.describe);
    EXPECT_EQ(a.targets, b.targets);
    EXPECT_EQ(a.speedup, b.speedup);
    EXPECT_EQ(a.cost_s, b.cost_s);
    EXPECT_EQ(a.risk_crash, b.risk_crash);
    EXPECT_EQ(a.risk_accuracy, b.risk_accuracy);
    EXPECT_EQ(a.requires_, b.requires_);
    EXPECT_EQ(a.conflicts, b.conflicts);
    EXPECT_EQ(a.apply.kind, b.apply.kind);
    EXPECT_EQ(a.apply.env, b.apply.env);
    EXPECT_EQ(a.values, b.values);
    EXPECT_EQ(a.content_hash, b.content_hash);
  }
}

void ExpectFileMatchesSpec(const Landscape& l) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  std::string toml =
      l.CampaignToml("/opt/bin/arbor_landscape_target", "/data/l \"1\".json", "/tmp/state", 42, 33);
  Result<CampaignSpec> loaded = ParseCampaign(toml, "landscape.toml", dir);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message << "\n" << toml;
  CampaignSpec spec = l.ToCampaignSpec(42, 33);
  EXPECT_EQ(loaded->name, spec.name);
  EXPECT_EQ(loaded->seed, 42u);
  EXPECT_EQ(loaded->target.build, "");
  EXPECT_EQ(loaded->target.bench, "/opt/bin/arbor_landscape_target --bench");
  EXPECT_EQ(loaded->target.check, "/opt/bin/arbor_landscape_target --check");
  EXPECT_EQ(loaded->target.profile, "/opt/bin/arbor_landscape_target --profile");
  EXPECT_EQ(loaded->target.env,
            (std::map<std::string, std::string>{{"LANDSCAPE_FILE", "/data/l \"1\".json"},
                                                {"LANDSCAPE_SEED", "42"},
                                                {"LANDSCAPE_STATE", "/tmp/state"}}));
  EXPECT_EQ(loaded->metric.name, spec.metric.name);
  EXPECT_EQ(loaded->metric.goal, spec.metric.goal);
  EXPECT_EQ(loaded->metric.source.text, spec.metric.source.text);
  EXPECT_EQ(loaded->metric.repetitions, spec.metric.repetitions);
  ASSERT_TRUE(loaded->metric.work.has_value());
  EXPECT_EQ(loaded->metric.work->text, spec.metric.work->text);
  EXPECT_EQ(loaded->search.max_nodes, 33);
  EXPECT_EQ(loaded->search.max_time_s, spec.search.max_time_s);
  EXPECT_EQ(loaded->critic.max_cv, spec.critic.max_cv);
  EXPECT_EQ(loaded->kb.enabled, spec.kb.enabled);
  EXPECT_EQ(loaded->profile.format, ProfileFormat::kArbor);
  ExpectSameActions(loaded->actions, spec.actions);
}

TEST(LandscapeCampaignTest, CampaignFileLoadsAsTheSameCampaign) {
  Landscape l = Example();
  l.actions[0].describe = "quotes \" and \\ and a\nnewline";
  ExpectFileMatchesSpec(l);
}

TEST(LandscapeCampaignTest, EveryShippedLandscapeMakesAValidCampaignFile) {
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(LANDSCAPES_DIR)) {
    if (e.path().extension() != ".json") continue;
    SCOPED_TRACE(e.path().string());
    Result<Landscape> l = Landscape::Load(e.path().string());
    ASSERT_TRUE(l.ok()) << l.error().message;
    ExpectFileMatchesSpec(*l);
    ++files;
  }
  EXPECT_GE(files, 8);
}

}  // namespace
}  // namespace arbor::search
