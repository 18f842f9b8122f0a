// Well-formed campaign files and the typed values they produce.
#include "config/campaign_loader.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "util/escape.h"

namespace arbor {
namespace {

namespace fs = std::filesystem;

const std::string kMinimal =
    "[campaign]\n"
    "name = \"demo\"\n"
    "[target]\n"
    "bench = \"./bench\"\n"
    "[metric]\n"
    "source = \"json:a.b\"\n";

// A fresh folder per test, for patch files and LoadCampaignFile.
class CampaignLoaderTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "arbor-config-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = fs::canonical(pattern);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& relative, const std::string& text) {
    fs::create_directories((dir_ / relative).parent_path());
    std::ofstream(dir_ / relative) << text;
  }

  CampaignSpec Parse(const std::string& text) {
    Result<CampaignSpec> spec = ParseCampaign(text, "arbor.toml", dir_.string());
    EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.error().message);
    return spec.ok() ? *spec : CampaignSpec{};
  }

  fs::path dir_;
};

TEST_F(CampaignLoaderTest, MinimalFileGetsEveryDefault) {
  CampaignSpec spec = Parse(kMinimal);
  EXPECT_EQ(spec.name, "demo");
  EXPECT_EQ(spec.file, "arbor.toml");
  EXPECT_EQ(spec.workspace, dir_.string());
  EXPECT_EQ(spec.seed, 1u);
  EXPECT_EQ(spec.target.bench, "./bench");
  EXPECT_EQ(spec.target.build, "");
  EXPECT_EQ(spec.target.timeout_s, 600);
  EXPECT_EQ(spec.target.bench_timeout_s, 600);
  EXPECT_FALSE(spec.target.memory_limit_mb);
  EXPECT_FALSE(spec.target.max_processes);
  EXPECT_FALSE(spec.target.cpu_limit_s);
  EXPECT_EQ(spec.target.output_limit_mb, 16);
  EXPECT_TRUE(spec.target.pass_env.empty());
  EXPECT_FALSE(spec.target.serve.enabled());
  EXPECT_EQ(spec.metric.name, "metric");
  EXPECT_EQ(spec.metric.goal, Goal::kMax);
  EXPECT_EQ(spec.metric.source.kind, MetricSource::Kind::kJson);
  EXPECT_EQ(spec.metric.source.expr, "a.b");
  EXPECT_EQ(spec.metric.source.text, "json:a.b");
  EXPECT_EQ(spec.metric.repetitions, 5);
  EXPECT_FALSE(spec.metric.target);
  EXPECT_FALSE(spec.metric.work);
  EXPECT_FALSE(spec.accuracy.source);
  EXPECT_EQ(spec.accuracy.max_drop, 0.01);
  EXPECT_EQ(spec.search.max_nodes, 60);
  EXPECT_EQ(spec.search.max_time_s, 7200);
  EXPECT_EQ(spec.search.formula, Formula::kPaper);
  EXPECT_EQ(spec.search.min_gain, 0.002);
  EXPECT_EQ(spec.critic.circuit_breaker, 5);
  EXPECT_TRUE(spec.search.reprofile);
  EXPECT_TRUE(spec.search.revisit);
  EXPECT_TRUE(spec.search.pairs);
  EXPECT_TRUE(spec.critic.constraints);
  EXPECT_TRUE(spec.critic.recheck);
  EXPECT_FALSE(spec.critic.trust_large_gains);
  EXPECT_FALSE(spec.critic.max_plausible_speedup);
  EXPECT_FALSE(spec.metric.min);
  EXPECT_FALSE(spec.metric.max);
  EXPECT_EQ(spec.metric.fixed, BenchFixed::kWork);
  EXPECT_EQ(spec.kb.path, "");
  EXPECT_TRUE(spec.specialists.empty());
  EXPECT_TRUE(spec.actions.empty());
}

TEST_F(CampaignLoaderTest, DurationsSizesAndTimeoutInheritance) {
  CampaignSpec spec = Parse(
      "[campaign]\nname = \"d\"\nseed = 42\n"
      "[target]\nbench = \"b\"\ntimeout = \"1h30m\"\nbuild_timeout = 90\ncheck_timeout = 2.5\n"
      "cpu_limit = \"250ms\"\nmemory_limit = \"2G\"\noutput_limit = 64\nmax_processes = 256\n"
      "env = { OMP_NUM_THREADS = \"1\", A_B = \"x y\" }\n"
      "[metric]\nsource = \"regex:tok/s: ([0-9.]+)\"\ngoal = \"min\"\ntarget = 900\n"
      "work = \"json:work.0.tokens\"\n"
      "[search]\nmax_time = \"2h\"\nformula = \"seed-literal\"\nexplore = 0\n"
      "reprofile = false\npairs = false\n");
  EXPECT_EQ(spec.seed, 42u);
  EXPECT_EQ(spec.target.timeout_s, 5400);
  EXPECT_EQ(spec.target.build_timeout_s, 90);
  EXPECT_EQ(spec.target.check_timeout_s, 2.5);
  EXPECT_EQ(spec.target.bench_timeout_s, 5400);
  EXPECT_EQ(spec.target.profile_timeout_s, 5400);
  EXPECT_DOUBLE_EQ(*spec.target.cpu_limit_s, 0.25);
  EXPECT_EQ(*spec.target.memory_limit_mb, 2048);
  EXPECT_EQ(spec.target.max_processes, 256);
  EXPECT_EQ(spec.target.output_limit_mb, 64);
  EXPECT_EQ(spec.target.env.at("OMP_NUM_THREADS"), "1");
  EXPECT_EQ(spec.target.env.at("A_B"), "x y");
  EXPECT_EQ(spec.metric.source.kind, MetricSource::Kind::kRegex);
  EXPECT_EQ(spec.metric.source.expr, "tok/s: ([0-9.]+)");
  EXPECT_EQ(spec.metric.goal, Goal::kMin);
  EXPECT_EQ(*spec.metric.target, 900);
  EXPECT_EQ(spec.metric.work->expr, "work.0.tokens");
  EXPECT_EQ(spec.search.max_time_s, 7200);
  EXPECT_EQ(spec.search.formula, Formula::kSeedLiteral);
  EXPECT_EQ(spec.search.explore, 0);
  EXPECT_FALSE(spec.search.reprofile);
  EXPECT_FALSE(spec.search.pairs);
  EXPECT_TRUE(spec.search.revisit);
}

TEST_F(CampaignLoaderTest, ServeAndPassEnv) {
  CampaignSpec spec = Parse(
      "[campaign]\nname = \"d\"\n"
      "[target]\nbench = \"./load --port $ARBOR_PORT\"\n"
      "pass_env = [\"CUDA_VISIBLE_DEVICES\", \"MY_*\", \"A?\"]\n"
      "[target.serve]\ncommand = \"./server --port $ARBOR_PORT\"\n"
      "ready = \"curl -sf http://127.0.0.1:$ARBOR_PORT/health\"\nready_timeout = \"90s\"\n"
      "stop = \"./server --stop\"\nstop_timeout = 5\n"
      "[metric]\nsource = \"json:a\"\n");
  EXPECT_EQ(spec.target.pass_env, (std::vector<std::string>{"CUDA_VISIBLE_DEVICES", "MY_*", "A?"}));
  EXPECT_TRUE(spec.target.serve.enabled());
  EXPECT_EQ(spec.target.serve.command, "./server --port $ARBOR_PORT");
  EXPECT_EQ(spec.target.serve.ready, "curl -sf http://127.0.0.1:$ARBOR_PORT/health");
  EXPECT_EQ(spec.target.serve.ready_timeout_s, 90);
  EXPECT_EQ(spec.target.serve.stop, "./server --stop");
  EXPECT_EQ(spec.target.serve.stop_timeout_s, 5);
  // Only the command is required: readiness is then the port accepting, no graceful stop.
  CampaignSpec bare = Parse(kMinimal + "[target.serve]\ncommand = \"./server\"\n");
  EXPECT_EQ(bare.target.serve.ready, "");
  EXPECT_EQ(bare.target.serve.ready_timeout_s, 60);
  EXPECT_EQ(bare.target.serve.stop, "");
  EXPECT_EQ(bare.target.serve.stop_timeout_s, 30);
}

TEST_F(CampaignLoaderTest, GuardsAccuracyCriticKbAndSpecialists) {
  CampaignSpec spec = Parse(kMinimal + "min = 0\nmax = 1e9\nfixed = \"duration\"\n" +
                            "[[metric.guard]]\nname = \"p99\"\nsource = \"json:lat.p99\"\n"
                            "max = 250\n"
                            "[[metric.guard]]\nname = \"rss\"\nsource = \"regex:rss=(\\\\d+)\"\n"
                            "min = 1\nmax = 2.5\n"
                            "[accuracy]\nsource = \"json:acc\"\nmax_drop = 0\n"
                            "[critic]\nmin_effect = 0.02\nalpha = 0.1\nmax_cv = 0.2\n"
                            "circuit_breaker = 3\nconstraints = false\nrecheck = false\n"
                            "trust_large_gains = true\nmax_plausible_speedup = 50\n"
                            "[kb]\npath = \"state/../kb.db\"\nworkload = \"w/1\"\n"
                            "[specialists.kernel]\nbackend = \"llm\"\nmodel = \"m\"\n"
                            "base_url = \"http://x/v1\"\napi_key_env = \"KEY\"\n"
                            "[specialists.refactor]\nbackend = \"command\"\ncommand = \"agent\"\n");
  ASSERT_EQ(spec.metric.guards.size(), 2u);
  EXPECT_EQ(spec.metric.guards[0].name, "p99");
  EXPECT_FALSE(spec.metric.guards[0].min);
  EXPECT_EQ(*spec.metric.guards[0].max, 250);
  EXPECT_EQ(spec.metric.guards[1].source.expr, "rss=(\\d+)");
  EXPECT_EQ(*spec.metric.guards[1].min, 1);
  EXPECT_EQ(spec.accuracy.source->expr, "acc");
  EXPECT_EQ(spec.accuracy.max_drop, 0);
  EXPECT_EQ(spec.critic.alpha, 0.1);
  EXPECT_EQ(spec.critic.circuit_breaker, 3);
  EXPECT_FALSE(spec.critic.constraints);
  EXPECT_FALSE(spec.critic.recheck);
  EXPECT_TRUE(spec.critic.trust_large_gains);
  EXPECT_EQ(*spec.critic.max_plausible_speedup, 50);
  EXPECT_EQ(spec.metric.fixed, BenchFixed::kDuration);
  EXPECT_EQ(*spec.metric.min, 0);
  EXPECT_EQ(*spec.metric.max, 1e9);
  EXPECT_EQ(spec.kb.path, (dir_ / "kb.db").string());
  EXPECT_EQ(spec.kb.workload, "w/1");
  ASSERT_EQ(spec.specialists.size(), 2u);
  EXPECT_EQ(spec.specialists.at("kernel").domain, "kernel");
  EXPECT_EQ(spec.specialists.at("kernel").backend, SpecialistBackend::kLlm);
  EXPECT_EQ(spec.specialists.at("kernel").api_key_env, "KEY");
  EXPECT_EQ(spec.specialists.at("refactor").command, "agent");
}

// A relative agent program names a file next to the campaign file: the command runs in a
// worktree or a scratch folder, so the loader makes that program absolute (quoted for the
// shell); a bare name, an absolute path or anything but a plain first word is left as written.
TEST_F(CampaignLoaderTest, ARelativeAgentProgramResolvesAgainstTheCampaignFilesFolder) {
  auto command = [&](const std::string& value) {
    CampaignSpec spec = Parse(kMinimal + "[specialists.refactor]\nbackend = \"command\"\n" +
                              "command = '" + value + "'\n");
    return spec.specialists.at("refactor").command;
  };
  EXPECT_EQ(command("./agent.sh --fast"), ShellQuote(dir_.string() + "/agent.sh") + " --fast");
  EXPECT_EQ(command("tools/../bin/agent"), ShellQuote(dir_.string() + "/bin/agent"));
  EXPECT_EQ(command("claude -p"), "claude -p");
  EXPECT_EQ(command("/usr/bin/agent x"), "/usr/bin/agent x");
  EXPECT_EQ(command("FOO=1 ./agent.sh"), "FOO=1 ./agent.sh");
  EXPECT_EQ(command("\"./my agent\" x"), "\"./my agent\" x");
}

TEST_F(CampaignLoaderTest, KbPathExpandsHome) {
  const char* old = getenv("HOME");
  std::string saved = old ? old : "";
  setenv("HOME", "/home/someone", 1);
  CampaignSpec spec = Parse(kMinimal + "[kb]\npath = \"~/.local/share/arbor/kb.db\"\n");
  if (old) setenv("HOME", saved.c_str(), 1);
  EXPECT_EQ(spec.kb.path, "/home/someone/.local/share/arbor/kb.db");
}

TEST_F(CampaignLoaderTest, RelativePathsResolveAgainstBaseDir) {
  Write("patches/fuse.diff", "--- a\n+++ b\n");
  CampaignSpec spec = Parse(
      "[campaign]\nname = \"d\"\nworkspace = \"../repo/./src/..\"\n"
      "[target]\nbench = \"b\"\n[metric]\nsource = \"json:x\"\n"
      "[[action]]\nid = \"code.fuse\"\nlayer = \"kernel\"\n"
      "apply = { patch = \"patches/../patches/fuse.diff\" }\n"
      "[[action]]\nid = \"code.abs\"\nlayer = \"kernel\"\n"
      "apply = { patch = \"" +
      (dir_ / "patches/fuse.diff").string() + "\" }\n");
  EXPECT_EQ(spec.workspace, (dir_.parent_path() / "repo").string());
  ASSERT_EQ(spec.actions.size(), 2u);
  EXPECT_EQ(spec.actions[0].apply.kind, ApplySpec::Kind::kPatch);
  EXPECT_EQ(spec.actions[0].apply.patch, (dir_ / "patches/fuse.diff").string());
  EXPECT_EQ(spec.actions[1].apply.patch, (dir_ / "patches/fuse.diff").string());
}

TEST_F(CampaignLoaderTest, AbsoluteWorkspaceIsNormalized) {
  CampaignSpec spec = Parse(
      "[campaign]\nname = \"d\"\nworkspace = \"/srv//repo/\"\n"
      "[target]\nbench = \"b\"\n[metric]\nsource = \"json:x\"\n");
  EXPECT_EQ(spec.workspace, "/srv/repo");
}

TEST_F(CampaignLoaderTest, PatchPerValueMustExist) {
  Write("p/tile-16.diff", "x");
  std::string head = kMinimal + "[[action]]\nid = \"k.tile\"\nlayer = \"kernel\"\n";
  CampaignSpec spec = Parse(head + "values = [16]\napply = { patch = \"p/tile-{value}.diff\" }\n");
  ASSERT_EQ(spec.actions.size(), 1u);
  EXPECT_EQ(spec.actions[0].apply.patch, (dir_ / "p/tile-{value}.diff").string());

  Result<CampaignSpec> missing =
      ParseCampaign(head + "values = [16, 32]\napply = { patch = \"p/tile-{value}.diff\" }\n",
                    "arbor.toml", dir_.string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find((dir_ / "p/tile-32.diff").string() + " does not exist"),
            std::string::npos)
      << missing.error().message;
}

TEST_F(CampaignLoaderTest, ActionsGetTypedValuesDefaultsAndLines) {
  CampaignSpec spec = Parse(kMinimal +
                            "\n[[action]]\n"
                            "id = \"kernel.gemm-tiled\"\nlayer = \"kernel\"\n"
                            "describe = \"Cache-blocked GEMM\"\ntargets = [\"matmul*\"]\n"
                            "speedup = 2.0\ncost = \"40s\"\n"
                            "risk = { accuracy = 0.0, crash = 0.05 }\n"
                            "requires = [\"O3\"]\nconflicts = [\"kernel.naive\"]\n"
                            "values = [16, 0.5, 2.0, \"x\", -3, 1e-7]\n"
                            "apply = { env = { TS_TILE = \"{value}\" } }\n"
                            "[[action]]\nid = \"O3\"\nlayer = \"compiler\"\ncategory = \"flags\"\n"
                            "apply = { append = { CXXFLAGS = \" -O3\" } }\n"
                            "[[action]]\nid = \"kernel.naive\"\nlayer = \"kernel\"\n"
                            "apply = { agent = \"kernel\", goal = \"Fuse\" }\n"
                            "[[action]]\nid = \"sed\"\nlayer = \"application\"\n"
                            "apply = { run = \"sed -i s/a/b/ x.cc\" }\n");
  ASSERT_EQ(spec.actions.size(), 4u);
  const ActionSpec& gemm = spec.actions[0];
  EXPECT_EQ(gemm.id, "kernel.gemm-tiled");
  EXPECT_EQ(gemm.category, "kernel");
  EXPECT_EQ(gemm.layer, "kernel");
  EXPECT_EQ(gemm.describe, "Cache-blocked GEMM");
  EXPECT_EQ(gemm.targets, std::vector<std::string>{"matmul*"});
  EXPECT_EQ(gemm.speedup, 2.0);
  EXPECT_EQ(gemm.cost_s, 40);
  EXPECT_EQ(gemm.risk_accuracy, 0);
  EXPECT_EQ(gemm.risk_crash, 0.05);
  EXPECT_EQ(gemm.requires_, std::vector<std::string>{"O3"});
  EXPECT_EQ(gemm.conflicts, std::vector<std::string>{"kernel.naive"});
  EXPECT_EQ(gemm.values, (std::vector<std::string>{"16", "0.5", "2", "x", "-3", "1e-07"}));
  EXPECT_EQ(gemm.apply.kind, ApplySpec::Kind::kEnv);
  EXPECT_EQ(gemm.apply.env.at("TS_TILE"), "{value}");
  EXPECT_EQ(gemm.line, 8);

  EXPECT_EQ(spec.actions[1].category, "flags");
  EXPECT_EQ(spec.actions[1].apply.kind, ApplySpec::Kind::kAppend);
  EXPECT_EQ(spec.actions[1].apply.append.at("CXXFLAGS"), " -O3");
  EXPECT_EQ(spec.actions[1].speedup, 1.1);
  EXPECT_EQ(spec.actions[1].cost_s, 60);
  EXPECT_EQ(spec.actions[1].line, 20);
  EXPECT_EQ(spec.actions[2].category, "kernel");
  EXPECT_EQ(spec.actions[2].apply.kind, ApplySpec::Kind::kAgent);
  EXPECT_EQ(spec.actions[2].apply.agent, "kernel");
  EXPECT_EQ(spec.actions[2].apply.goal, "Fuse");
  EXPECT_EQ(spec.actions[3].category, "sed");
  EXPECT_EQ(spec.actions[3].apply.kind, ApplySpec::Kind::kRun);
  EXPECT_EQ(spec.actions[3].apply.run, "sed -i s/a/b/ x.cc");
}

TEST_F(CampaignLoaderTest, RegexThatDoesNotCompileNamesTheLine) {
  Result<CampaignSpec> spec = ParseCampaign(
      "[campaign]\nname = \"d\"\n[target]\nbench = \"b\"\n[metric]\nsource = \"regex:([0-9\"\n",
      "c.toml", dir_.string());
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(
      spec.error().message.rfind(
          "c.toml:6:10: invalid metric.source \"regex:([0-9\": the pattern does not compile (", 0),
      0u)
      << spec.error().message;
}

TEST_F(CampaignLoaderTest, LoadCampaignFileReadsAndResolves) {
  Write("sub/arbor.toml", kMinimal);
  Result<CampaignSpec> spec = LoadCampaignFile((dir_ / "sub/../sub/arbor.toml").string());
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->file, (dir_ / "sub/arbor.toml").string());
  EXPECT_EQ(spec->workspace, (dir_ / "sub").string());
}

TEST_F(CampaignLoaderTest, LoadCampaignFileNamesTheFileAsGiven) {
  Write("bad.toml", kMinimal + "[search]\nmax_nodes = \"many\"\n");
  std::string path = (dir_ / "bad.toml").string();
  Result<CampaignSpec> spec = LoadCampaignFile(path);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().message,
            path + ":8:13: expected an integer for search.max_nodes, got string");

  Result<CampaignSpec> missing = LoadCampaignFile((dir_ / "none.toml").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, (dir_ / "none.toml").string() +
                                         ": cannot read the campaign file (No such file or "
                                         "directory); expected a readable arbor.toml (arbor "
                                         "init writes one)");
}

TEST_F(CampaignLoaderTest, MeasurementLanesDefaultToOneAndReadTheirCpus) {
  auto plain = ParseCampaign(kMinimal, "c.toml", dir_.string());
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->search.lanes, 1);
  EXPECT_TRUE(plain->search.lane_cpus.empty());
  auto spec =
      ParseCampaign(kMinimal + "[search]\nparallel = 3\nlanes = 2\nlane_cpus = [\"0\", \"2-3\"]\n",
                    "c.toml", dir_.string());
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->search.lanes, 2);
  EXPECT_EQ(spec->search.lane_cpus, std::vector<std::string>({"0", "2-3"}));
  // Given CPU lists, a lane count above the machine's CPUs is the user's choice.
  auto many = ParseCampaign(
      kMinimal + "[search]\nparallel = 4096\nlanes = 4096\nlane_cpus = [" +
          [] {
            std::string s;
            for (int i = 0; i < 4096; ++i) s += (i ? ", \"0\"" : "\"0\"");
            return s;
          }() +
          "]\n",
      "c.toml", dir_.string());
  EXPECT_TRUE(many.ok()) << many.error().message;
}

}  // namespace
}  // namespace arbor
