#include "config/starter_actions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "config/campaign_loader.h"
#include "config/embedded_text.h"

namespace arbor {
namespace {

StarterContext Everything(BuildSystem system) {
  StarterContext ctx;
  ctx.system = system;
  ctx.features = {"openmp", "thp"};
  for (const std::string& lib : StarterNeededLibraries()) ctx.libraries[lib] = "/usr/lib/x/" + lib;
  for (const std::string& cmd : StarterNeededCommands()) ctx.commands.insert(cmd);
  ctx.placeholders = {{"OPT_LEVELS", R"(["2", "s"])"},
                      {"THREADS", R"(["1", "2"])"},
                      {"CPUSETS", R"(["0"])"},
                      {"TRAIN", "$RUN_PREFIX ./build/b --benchmark_format=json"}};
  return ctx;
}

Result<CampaignSpec> Load(const std::string& actions) {
  const std::string text =
      "[campaign]\nname = \"t\"\n[target]\nbench = \"./b\"\n[metric]\nsource = \"json:v\"\n" +
      actions;
  return ParseCampaign(text, "arbor.toml", "/w");
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(StarterActions, TheCatalogueIsEmbedded) {
  std::set<std::string> names;
  for (const EmbeddedText& t : StarterCatalogueFiles()) names.insert(std::string(t.name));
  EXPECT_EQ(names, (std::set<std::string>{"c-cxx.toml", "runtime.toml", "rust.toml"}));
  EXPECT_EQ(StarterNeededLibraries(),
            (std::vector<std::string>{"libjemalloc.so.2", "libmimalloc.so.2",
                                      "libtcmalloc_minimal.so.4"}));
  EXPECT_EQ(StarterNeededCommands(), std::vector<std::string>{"taskset"});
}

// Every file, as written for every build system with everything installed, loads with the
// campaign-file loader: the catalogue cannot rot silently.
TEST(StarterActions, EveryFileLoadsForEverySystem) {
  for (BuildSystem system : {BuildSystem::kCMake, BuildSystem::kMeson, BuildSystem::kMake,
                             BuildSystem::kCargo, BuildSystem::kPython}) {
    for (bool c_ext : {false, true}) {
      Result<StarterActions> a =
          RenderStarterActions(StarterFilesFor(system, c_ext), Everything(system));
      ASSERT_TRUE(a.ok()) << a.error().message;
      EXPECT_TRUE(a->skipped.empty());
      Result<CampaignSpec> spec = Load(a->text);
      ASSERT_TRUE(spec.ok()) << BuildSystemName(system) << ": " << spec.error().message << "\n"
                             << a->text;
      EXPECT_EQ(spec->actions.size(), a->ids.size());
      for (const ActionSpec& act : spec->actions) {
        EXPECT_NE(act.describe, "") << act.id;
        EXPECT_TRUE(Contains(a->ids, act.id)) << act.id;
      }
    }
  }
}

TEST(StarterActions, WhatEachSystemGets) {
  auto ids = [](BuildSystem s) {
    return RenderStarterActions(StarterFilesFor(s, false), Everything(s))->ids;
  };
  std::vector<std::string> cmake = ids(BuildSystem::kCMake);
  EXPECT_TRUE(Contains(cmake, "compiler.pgo"));
  EXPECT_TRUE(Contains(cmake, "compiler.lto"));
  EXPECT_TRUE(Contains(cmake, "allocator.jemalloc"));
  EXPECT_TRUE(Contains(cmake, "affinity.taskset"));
  EXPECT_TRUE(Contains(ids(BuildSystem::kMeson), "compiler.pgo"));
  EXPECT_FALSE(Contains(ids(BuildSystem::kMake), "compiler.pgo"));  // objects in the tree
  EXPECT_TRUE(Contains(ids(BuildSystem::kCargo), "rust.lto"));
  EXPECT_FALSE(Contains(ids(BuildSystem::kCargo), "compiler.lto"));
  EXPECT_FALSE(Contains(ids(BuildSystem::kPython), "compiler.lto"));
}

TEST(StarterActions, PlaceholdersAreFilled) {
  StarterContext ctx = Everything(BuildSystem::kCMake);
  ctx.libraries["libjemalloc.so.2"] = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";
  Result<StarterActions> a = RenderStarterActions({"c-cxx.toml", "runtime.toml"}, ctx);
  ASSERT_TRUE(a.ok());
  Result<CampaignSpec> spec = Load(a->text);
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  for (const ActionSpec& act : spec->actions) {
    if (act.id == "allocator.jemalloc") {
      EXPECT_EQ(act.apply.env.at("LD_PRELOAD"), "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2");
    }
    if (act.id == "compiler.opt-level") {
      EXPECT_EQ(act.values, (std::vector<std::string>{"2", "s"}));
    }
    if (act.id == "compiler.pgo") {
      EXPECT_NE(act.apply.run.find("$RUN_PREFIX ./build/b --benchmark_format=json > /dev/null"),
                std::string::npos)
          << act.apply.run;
    }
  }
  EXPECT_EQ(a->text.find('@'), std::string::npos) << a->text;
}

TEST(StarterActions, WhatIsNotInstalledIsWrittenCommentedOutWithTheReason) {
  StarterContext ctx = Everything(BuildSystem::kCMake);
  ctx.libraries.erase("libjemalloc.so.2");
  ctx.commands.clear();
  ctx.features.erase("openmp");
  Result<StarterActions> a = RenderStarterActions({"runtime.toml"}, ctx);
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(Contains(a->skipped,
                       "allocator.jemalloc: libjemalloc.so.2 is not installed (apt-get install "
                       "libjemalloc2)"));
  EXPECT_TRUE(Contains(a->skipped,
                       "affinity.taskset: taskset is not on PATH (apt-get install util-linux)"));
  EXPECT_TRUE(Contains(a->skipped,
                       "threads.omp: the project does not use OpenMP (none in its "
                       "build files)"));
  EXPECT_NE(a->text.find("# skipped: libjemalloc.so.2 is not installed (apt-get install "
                         "libjemalloc2)\n"),
            std::string::npos);
  EXPECT_NE(a->text.find("# [[action]]\n# id = \"allocator.jemalloc\""), std::string::npos);
  Result<CampaignSpec> spec = Load(a->text);
  ASSERT_TRUE(spec.ok()) << spec.error().message << "\n" << a->text;
  for (const ActionSpec& act : spec->actions) {
    EXPECT_NE(act.id, "allocator.jemalloc");
    // The others no longer name the left-out allocator.
    EXPECT_FALSE(Contains(act.conflicts, "allocator.jemalloc")) << act.id;
  }
  EXPECT_EQ(spec->actions.size(), 3u);  // tcmalloc, mimalloc, THP
}

TEST(StarterActions, NeedsAreShownAsComments) {
  Result<StarterActions> a =
      RenderStarterActions({"runtime.toml"}, Everything(BuildSystem::kCMake));
  ASSERT_TRUE(a.ok());
  EXPECT_NE(a->text.find("# needs: libjemalloc.so.2 (Debian package libjemalloc2)"),
            std::string::npos);
  EXPECT_EQ(a->text.find("#@"), std::string::npos);
}

TEST(StarterActions, Errors) {
  EXPECT_FALSE(RenderStarterActions({"nope.toml"}, Everything(BuildSystem::kCMake)).ok());
  StarterContext ctx = Everything(BuildSystem::kCMake);
  ctx.placeholders.erase("OPT_LEVELS");
  Result<StarterActions> a = RenderStarterActions({"c-cxx.toml"}, ctx);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().message,
            "starter action compiler.opt-level: placeholder @OPT_LEVELS@ not filled");
  ctx = Everything(BuildSystem::kCMake);
  ctx.placeholders["TRAIN"] = "echo '''";
  EXPECT_FALSE(RenderStarterActions({"c-cxx.toml"}, ctx).ok());
}

}  // namespace
}  // namespace arbor
