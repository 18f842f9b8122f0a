// The [profile] table: formats, profile_file, top_n, tracks and [[profile.group]] rules.
#include <gtest/gtest.h>

#include <string>

#include "config/campaign_loader.h"

namespace arbor {
namespace {

// Six lines; [profile] starts on line 7.
const std::string kHead =
    "[campaign]\n"
    "name = \"demo\"\n"
    "[target]\n"
    "bench = \"./bench\"\n"
    "[metric]\n"
    "source = \"json:a.b\"\n";

Result<CampaignSpec> Parse(const std::string& rest) {
  return ParseCampaign(kHead + rest, "c.toml", "/tmp");
}

TEST(ProfileLoaderTest, DefaultsWithoutTheTable) {
  Result<CampaignSpec> spec = Parse("");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->profile.format, ProfileFormat::kAuto);
  EXPECT_EQ(spec->profile.profile_file, "");
  EXPECT_EQ(spec->profile.top_n, 20);
  EXPECT_EQ(spec->profile.tracks, TraceTracks::kAll);
  EXPECT_TRUE(spec->profile.groups.empty());
}

TEST(ProfileLoaderTest, EveryKey) {
  Result<CampaignSpec> spec = Parse(
      "[profile]\n"
      "format = \"chrome-trace\"\n"
      "profile_file = \"$ARBOR_OUT/trace.json\"\n"
      "top_n = 5\n"
      "tracks = \"gpu\"\n"
      "[[profile.group]]\n"
      "name = \"matmul\"\n"
      "match = [\"*gemm*\", \"*matmul*\"]\n"
      "layer = \"kernel\"\n"
      "[[profile.group]]\n"
      "name = \"attention\"\n"
      "match = [\"*attn*\"]\n");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  const ProfileSpec& p = spec->profile;
  EXPECT_EQ(p.format, ProfileFormat::kChromeTrace);
  EXPECT_EQ(p.profile_file, "$ARBOR_OUT/trace.json");
  EXPECT_EQ(p.top_n, 5);
  EXPECT_EQ(p.tracks, TraceTracks::kGpu);
  ASSERT_EQ(p.groups.size(), 2u);
  EXPECT_EQ(p.groups[0].name, "matmul");
  EXPECT_EQ(p.groups[0].match, (std::vector<std::string>{"*gemm*", "*matmul*"}));
  EXPECT_EQ(p.groups[0].layer, "kernel");
  EXPECT_EQ(p.groups[1].layer, "");
}

TEST(ProfileLoaderTest, EachFormatName) {
  const std::pair<const char*, ProfileFormat> names[] = {
      {"auto", ProfileFormat::kAuto},           {"arbor", ProfileFormat::kArbor},
      {"perf", ProfileFormat::kPerf},           {"chrome-trace", ProfileFormat::kChromeTrace},
      {"callgrind", ProfileFormat::kCallgrind}, {"collapsed", ProfileFormat::kCollapsed}};
  for (const auto& [name, format] : names) {
    Result<CampaignSpec> spec = Parse("[profile]\nformat = \"" + std::string(name) + "\"\n");
    ASSERT_TRUE(spec.ok()) << spec.error().message;
    EXPECT_EQ(spec->profile.format, format) << name;
  }
}

TEST(ProfileLoaderTest, ErrorsNameTheKey) {
  const std::pair<std::string, std::string> rows[] = {
      {"[profile]\nformat = \"pprof\"\n",
       "c.toml:8:10: invalid profile.format \"pprof\"; expected \"arbor\", \"perf\", "
       "\"chrome-trace\", \"callgrind\", \"collapsed\" or \"auto\""},
      {"[profile]\ntop_n = 0\n",
       "c.toml:8:9: invalid profile.top_n 0; expected an integer from 1 to 1000"},
      {"[profile]\ntracks = \"both\"\n",
       "c.toml:8:10: invalid profile.tracks \"both\"; expected \"all\", \"cpu\" or \"gpu\""},
      {"[profile]\nprofile_file = \"$HOME/p.txt\"\n",
       "c.toml:8:16: invalid profile.profile_file \"$HOME/p.txt\"; expected a path relative to "
       "the worktree, an absolute path, or \"$ARBOR_OUT/NAME\" (no other variable is expanded)"},
      {"[profile]\nfromat = \"perf\"\n",
       "c.toml:8:1: unknown key 'fromat' in [profile]; did you mean 'format'?"},
      {"[[profile.group]]\nname = \"a\"\n",
       "c.toml:7:1: missing required key 'match' in [[profile.group]]; expected globs of raw "
       "names like [\"*gemm*\"]"},
      {"[[profile.group]]\nname = \"a\"\nmatch = []\n",
       "c.toml:9:9: profile.group.match is empty; expected at least one glob like \"*gemm*\""},
      {"[[profile.group]]\nname = \"other\"\nmatch = [\"*\"]\n",
       "c.toml:8:8: invalid profile.group.name \"other\": \"other\" is reserved for unmatched "
       "time; expected another name"},
      {"[[profile.group]]\nname = \"a\"\nmatch = [\"x\"]\n[[profile.group]]\nname = \"a\"\n"
       "match = [\"y\"]\n",
       "c.toml:11:8: invalid profile.group.name \"a\": declared twice; expected a unique name per "
       "group"},
  };
  for (const auto& [text, expected] : rows) {
    Result<CampaignSpec> spec = Parse(text);
    ASSERT_FALSE(spec.ok()) << text;
    EXPECT_EQ(spec.error().message, expected);
  }
}

}  // namespace
}  // namespace arbor
