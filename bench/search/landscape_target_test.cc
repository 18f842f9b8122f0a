// arbor_landscape_target run as a real process: what `arbor` would see from it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bench/search/landscape.h"
#include "bench/search/landscape_testing.h"
#include "config/campaign_loader.h"
#include "formats/metrics.h"

extern char** environ;

namespace arbor::search {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Proc {
  int exit_code = -1;  // when signal == 0
  int signal = 0;
  std::string out;
  std::string err;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class LandscapeTargetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "arbor-landscape-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    file_ = dir_ + "/example.json";
    std::ofstream(file_) << testing::kExample;
    state_ = dir_ + "/state";
    Result<Landscape> l = Landscape::Parse(testing::kExample, file_);
    ASSERT_TRUE(l.ok());
    l_ = *l;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::map<std::string, std::string> BaseEnv() const {
    return {{"LANDSCAPE_FILE", file_}, {"LANDSCAPE_SEED", "7"}, {"LANDSCAPE_STATE", state_}};
  }

  // Runs the target with exactly `env` (plus PATH), stdout and stderr to files.
  Proc Run(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
    const std::string out = dir_ + "/out";
    const std::string err = dir_ + "/err";
    std::vector<std::string> argv = {LANDSCAPE_TARGET_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> envs = {"PATH=/usr/bin:/bin"};
    for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
    pid_t pid = fork();
    if (pid == 0) {
      int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(o, 1);
      ::dup2(e, 2);
      // The abort is expected: no core file for it.
      ::signal(SIGABRT, SIG_DFL);
      std::vector<char*> a;
      for (auto& s : argv) a.push_back(s.data());
      a.push_back(nullptr);
      std::vector<char*> ev;
      for (auto& s : envs) ev.push_back(s.data());
      ev.push_back(nullptr);
      ::execve(a[0], a.data(), ev.data());
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    Proc p;
    if (WIFEXITED(status)) p.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) p.signal = WTERMSIG(status);
    p.out = Slurp(out);
    p.err = Slurp(err);
    return p;
  }

  std::string dir_;
  std::string file_;
  std::string state_;
  Landscape l_;
};

TEST_F(LandscapeTargetTest, MissingEnvironmentExitsTwo) {
  Proc p = Run({"--bench"}, {});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_EQ(p.err, "arbor_landscape_target: LANDSCAPE_FILE is not set\n");
  p = Run({"--bench"}, {{"LANDSCAPE_FILE", file_}, {"LANDSCAPE_SEED", "x7"}});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_EQ(p.err,
            "arbor_landscape_target: LANDSCAPE_SEED is 'x7', expected an unsigned integer\n");
  p = Run({"--bench"}, {{"LANDSCAPE_FILE", file_}, {"LANDSCAPE_SEED", "7"}});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_EQ(p.err, "arbor_landscape_target: LANDSCAPE_STATE is not set\n");
  p = Run({"--frobnicate"}, BaseEnv());
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("usage: arbor_landscape_target"), std::string::npos);
}

TEST_F(LandscapeTargetTest, BenchTakesTheNextReadingAndCrashesByAbort) {
  auto env = BaseEnv();
  env["LS_FAST_A"] = "1";
  Config c = {{"fast_a", "on"}};
  for (uint64_t k = 0; k < 3; ++k) {
    Proc p = Run({"--bench"}, env);
    ASSERT_EQ(p.exit_code, 0) << p.err;
    json out = json::parse(p.out);
    EXPECT_DOUBLE_EQ(out["value"].get<double>(), *l_.Reading(c, 7, k)) << k;
  }
  EXPECT_EQ(Slurp(state_), "bench 3\n");

  env["LS_KERNEL_TILE"] = "64";  // the crash region
  Proc crash = Run({"--bench"}, env);
  EXPECT_EQ(crash.signal, SIGABRT);
  EXPECT_EQ(crash.out, "");
  EXPECT_NE(crash.err.find("landscape: crashed at reading 3"), std::string::npos) << crash.err;
  EXPECT_EQ(Slurp(state_), "bench 4\n");
}

// A gated action without its prerequisite dies of SIGILL (what Arbor's RCA reads as a missing
// prerequisite); an inflation knob reports less work.
TEST_F(LandscapeTargetTest, GatedCrashIsSigillAndKnobsReportLessWork) {
  json doc = json::parse(testing::kExample);
  doc["actions"].push_back({{"id", "avx"},
                            {"layer", "kernel"},
                            {"effects", {{"a", 2}}},
                            {"crash_unless", {"fast_all"}}});
  doc["actions"].push_back({{"id", "skip"}, {"layer", "application"}, {"inflation", 2}});
  std::ofstream(file_) << doc.dump();
  auto env = BaseEnv();
  env["LS_AVX"] = "1";
  Proc crash = Run({"--bench"}, env);
  EXPECT_EQ(crash.signal, SIGILL);
  EXPECT_NE(crash.err.find("illegal instruction"), std::string::npos) << crash.err;
  env["LS_FAST_ALL"] = "1";  // the prerequisite: runs now
  Proc ok = Run({"--bench"}, env);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_DOUBLE_EQ(json::parse(ok.out)["work"].get<double>(), 1);
  env["LS_SKIP"] = "1";
  Proc knob = Run({"--bench"}, env);
  ASSERT_EQ(knob.exit_code, 0) << knob.err;
  EXPECT_DOUBLE_EQ(json::parse(knob.out)["work"].get<double>(), 0.5);
  env["LS_FAST_ALL"] = "0";
  env["LS_FAST_B"] = "1";
  env["LS_UNSAFE"] = "1";  // a crash pair and a missing prerequisite: the SIGILL comes first
  EXPECT_EQ(Run({"--bench"}, env).signal, SIGILL);
}

TEST_F(LandscapeTargetTest, CheckFailsOnAccuracyAndKeepsItsOwnCounter) {
  auto env = BaseEnv();
  env["LS_APPROX"] = "1";
  Proc p = Run({"--check"}, env);
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_EQ(p.out, "accuracy: check 0 failed (failure rate 1)\n");
  env["LS_FIX"] = "1";
  p = Run({"--check"}, env);
  EXPECT_EQ(p.exit_code, 0) << p.out;
  EXPECT_EQ(Slurp(state_), "check 2\n");
  ASSERT_EQ(Run({"--bench"}, env).exit_code, 0);
  EXPECT_EQ(Slurp(state_), "bench 1\ncheck 2\n");
}

TEST_F(LandscapeTargetTest, ProfileIsArborsFormatWithTheTrueShares) {
  auto env = BaseEnv();
  env["LS_FAST_A"] = "1";
  Proc p = Run({"--profile"}, env);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  Result<Profile> parsed = ParseProfile(p.out);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message << ": " << p.out;
  Profile truth = l_.TrueProfile({{"fast_a", "on"}});
  ASSERT_EQ(parsed->components.size(), truth.components.size());
  for (size_t i = 0; i < truth.components.size(); ++i) {
    EXPECT_EQ(parsed->components[i].name, truth.components[i].name);
    EXPECT_EQ(parsed->components[i].layer, truth.components[i].layer);
    EXPECT_DOUBLE_EQ(parsed->components[i].share, truth.components[i].share);
  }
  EXPECT_FALSE(fs::exists(state_));  // profiling takes no reading
}

TEST_F(LandscapeTargetTest, CampaignFileNamesThisExecutable) {
  Proc p = Run({"--campaign", "--state", dir_ + "/s2", "--max-nodes", "12"}, BaseEnv());
  ASSERT_EQ(p.exit_code, 0) << p.err;
  Result<CampaignSpec> spec = ParseCampaign(p.out, "landscape.toml", dir_);
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  const std::string bin = fs::canonical(LANDSCAPE_TARGET_BIN).string();
  EXPECT_EQ(spec->target.bench, bin + " --bench");
  EXPECT_EQ(spec->target.env.at("LANDSCAPE_FILE"), file_);
  EXPECT_EQ(spec->target.env.at("LANDSCAPE_STATE"), dir_ + "/s2");
  EXPECT_EQ(spec->target.env.at("LANDSCAPE_SEED"), "7");
  EXPECT_EQ(spec->search.max_nodes, 12);
  EXPECT_EQ(spec->actions.size(), l_.actions.size());
  // Without --state, LANDSCAPE_STATE is the counter file.
  p = Run({"--campaign"}, BaseEnv());
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("LANDSCAPE_STATE = \"" + state_ + "\""), std::string::npos);
}

TEST_F(LandscapeTargetTest, OptimumIsTheExactOne) {
  Proc p = Run({"--optimum"}, {{"LANDSCAPE_FILE", file_}});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  json out = json::parse(p.out);
  Optimum o = FindOptimum(l_);
  EXPECT_EQ(out["exact"], true);
  EXPECT_DOUBLE_EQ(out["value"].get<double>(), o.value);
  EXPECT_EQ(out["config"].get<Config>(), o.config);
}

}  // namespace
}  // namespace arbor::search
