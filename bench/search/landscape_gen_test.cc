// Generated landscapes (landscape_gen.h): deterministic, in range, every trouble present across
// seeds, and each one a valid landscape file whose optimum its own campaign file allows.
#include "bench/search/landscape_gen.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace arbor::search {
namespace {

constexpr int kSeeds = 200;

// Every declared requirement of an action on is on, and no declared conflict has both sides on.
bool AllowedByPriors(const Landscape& l, const Config& c) {
  for (const auto& [id, value] : c) {
    const LandscapeAction* a = l.Find(id);
    for (const std::string& r : a->prior.requires_) {
      if (!c.contains(r)) return false;
    }
    for (const std::string& x : a->prior.conflicts) {
      if (c.contains(x)) return false;
    }
  }
  return true;
}

TEST(LandscapeGenTest, SameSeedSameLandscapeOtherSeedOther) {
  EXPECT_EQ(Generate(7).ToJson(), Generate(7).ToJson());
  EXPECT_NE(Generate(7).ToJson(), Generate(8).ToJson());
  EXPECT_EQ(Generate(7).name, "gen-7");
}

TEST(LandscapeGenTest, RangesHoldForEverySeed) {
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    SCOPED_TRACE(seed);
    Landscape l = Generate(seed);
    EXPECT_GE(l.components.size(), 3u);
    EXPECT_LE(l.components.size(), 8u);
    EXPECT_GE(l.actions.size(), 10u);
    EXPECT_LE(l.actions.size(), 61u);  // 60, and a trap's fix may come on top
    double sum = 0;
    for (const LandscapeComponent& c : l.components) {
      EXPECT_GT(c.share, 0);
      sum += c.share;
    }
    EXPECT_NEAR(sum, 1, 1e-9);
    EXPECT_GE(l.noise.cv, 0.01);
    EXPECT_LE(l.noise.cv, 0.08);
    EXPECT_FALSE(l.Broken({}));
    EXPECT_FALSE(l.Inflated({}));
  }
}

TEST(LandscapeGenTest, OptionsBoundTheSizes) {
  GenOptions o;
  o.min_actions = o.max_actions = 12;
  o.min_components = o.max_components = 4;
  Landscape l = Generate(3, o);
  EXPECT_EQ(l.components.size(), 4u);
  EXPECT_GE(l.actions.size(), 12u);
  EXPECT_LE(l.actions.size(), 13u);
}

TEST(LandscapeGenTest, EveryFeatureAppearsAcrossSeedsAndNoneEverywhere) {
  std::map<std::string, int> count;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    for (const std::string& f : Features(Generate(seed))) ++count[f];
  }
  for (const std::string& f : FeatureNames()) {
    SCOPED_TRACE(f);
    if (f == "rivals") {  // only in its own family (GenOptions::rivals)
      EXPECT_EQ(count[f], 0);
      continue;
    }
    // Present often enough to be judged on, absent often enough to compare against.
    EXPECT_GE(count[f], kSeeds / 10);
    EXPECT_LT(count[f], kSeeds);
  }
}

TEST(LandscapeGenTest, EveryLandscapeRoundTripsThroughItsFile) {
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    SCOPED_TRACE(seed);
    Landscape l = Generate(seed);
    const std::string text = l.ToJson();
    Result<Landscape> back = Landscape::Parse(text, l.name + ".json");
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->ToJson(), text);
    // The same truth, not only the same text.
    Config all;
    for (const LandscapeAction& a : l.actions)
      all[a.id] = a.values.empty() ? "on" : a.values[0].value;
    EXPECT_EQ(back->TrueValue(all), l.TrueValue(all));
    EXPECT_EQ(back->CrashRate(all), l.CrashRate(all));
    EXPECT_EQ(back->Inflation(all), l.Inflation(all));
  }
}

// Misleading priors, not contradictory ones: the campaign file never forbids the optimum, so an
// engine that follows it can reach it. Checked on a sample (FindOptimum climbs on large ones).
TEST(LandscapeGenTest, TheOptimumIsAllowedByTheDeclaredPriors) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(seed);
    Landscape l = Generate(seed);
    Optimum o = FindOptimum(l, 2'000'000, 20);
    EXPECT_GT(o.value, l.TrueValue({}));
    EXPECT_FALSE(l.Broken(o.config));
    EXPECT_FALSE(l.Inflated(o.config));
    EXPECT_TRUE(AllowedByPriors(l, o.config));
  }
}

TEST(LandscapeGenTest, GatedActionsDieOfSigillAndKnobsInflate) {
  int gated = 0, knobs = 0;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    Landscape l = Generate(seed);
    for (const LandscapeAction& a : l.actions) {
      if (!a.crash_unless.empty()) {
        ++gated;
        Config alone = {{a.id, "on"}};
        EXPECT_EQ(l.CrashRate(alone), 1);
        EXPECT_EQ(l.CrashSignal(alone), 4);
        for (const std::string& p : a.crash_unless) alone[p] = "on";
        EXPECT_EQ(l.CrashSignal(alone), 6);
      }
      if (a.inflation > 1) {
        ++knobs;
        Config on = {{a.id, "on"}};
        EXPECT_LE(l.TrueValue(on), l.TrueValue({}));
        EXPECT_DOUBLE_EQ(l.Work(on), 1 / a.inflation);
        EXPECT_TRUE(l.Inflated(on));
      }
    }
  }
  EXPECT_GT(gated, 0);
  EXPECT_GT(knobs, 0);
}

}  // namespace
}  // namespace arbor::search

namespace arbor::search {
namespace {

// The rivals family (GenOptions::rivals): another landscape under another name, the trouble in
// each, and on the enumerable ones the optimum takes the weaker alternative with its
// complement, never the stronger one: what a search that locks in the first winner misses.
TEST(LandscapeGenTest, RivalsAreAFamilyWhoseOptimumTakesTheWeakerAlternative) {
  GenOptions o;
  o.rivals = 1;
  o.min_actions = o.max_actions = 12;
  o.min_components = o.max_components = 3;
  int enumerated = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(seed);
    const Landscape l = Generate(seed, o);
    EXPECT_EQ(l.name, "gen-" + std::to_string(seed) + "-rivals1");
    const std::vector<std::string> f = Features(l);
    EXPECT_NE(std::find(f.begin(), f.end(), "rivals"), f.end());
    // The trio: x pays only with b, b and a exclude each other and say so.
    const LandscapeAction *a = nullptr, *b = nullptr, *x = nullptr;
    for (const LandscapeAction& act : l.actions) {
      for (const ConditionalEffects& w : act.when) {
        const LandscapeAction* with = w.with.size() == 1 ? l.Find(w.with[0]) : nullptr;
        if (with != nullptr && !with->crash_with.empty() && with->prior.conflicts.size() == 1) {
          x = &act, b = with, a = l.Find(with->crash_with[0]);
        }
      }
    }
    ASSERT_NE(x, nullptr);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(b->prior.conflicts[0], a->id);
    const Optimum best = FindOptimum(l, 2'000'000, 20);
    if (!best.exact) continue;
    ++enumerated;
    EXPECT_TRUE(best.config.contains(b->id));
    EXPECT_TRUE(best.config.contains(x->id));
    EXPECT_FALSE(best.config.contains(a->id));
    EXPECT_TRUE(AllowedByPriors(l, best.config));
  }
  EXPECT_GE(enumerated, 6);
}

// Without rivals (the default) the landscapes are byte for byte those of the generator before
// GenOptions::rivals existed, so every figure measured on them stands: FNV-1a of the JSON of
// seeds 1-3 as `arbor_search_bench --gen-out` wrote them at d530c82.
TEST(LandscapeGenTest, TheDefaultFamilyIsTheOneEveryEarlierFigureWasMeasuredOn) {
  auto fnv = [](const std::string& text) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
    return h;
  };
  EXPECT_EQ(fnv(Generate(1).ToJson()), 0xc0d40bf09fbe5e50ULL);
  EXPECT_EQ(fnv(Generate(2).ToJson()), 0x33e67f480b6540e8ULL);
  EXPECT_EQ(fnv(Generate(3).ToJson()), 0x55d18e814920bc6aULL);
}

}  // namespace
}  // namespace arbor::search
