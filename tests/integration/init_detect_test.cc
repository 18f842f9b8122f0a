// `arbor init --detect` on real repositories (docs/cli.md): the campaign file it writes runs as
// it is, and the starter catalogue's missing packages are dependencies, not crashes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "campaign_checks.h"
#include "harness.h"

namespace arbor::integration {
namespace {

namespace fs = std::filesystem;

bool OnPath(const std::string& command) {
  return RunProcess({"sh", "-c", "command -v " + command}, "/", {}, 30).exit_code == 0;
}

// A small CMake project with a Google Benchmark executable in bench/ and a CTest test. Each
// benchmark runs 10 ms (MinTime), so a benchmark run is short and the campaign stays short
// under sanitizers on a loaded machine.
void WriteTinyCMakeProject(const std::string& dir) {
  WriteFile(dir + "/CMakeLists.txt",
            "cmake_minimum_required(VERSION 3.16)\n"
            "project(tiny CXX)\n"
            "find_package(benchmark REQUIRED)\n"
            "add_library(tiny STATIC tiny.cc)\n"
            "add_subdirectory(bench)\n"
            "enable_testing()\n"
            "add_executable(tiny_test tests/tiny_test.cc)\n"
            "target_link_libraries(tiny_test PRIVATE tiny)\n"
            "add_test(NAME tiny_test COMMAND tiny_test)\n");
  WriteFile(dir + "/bench/CMakeLists.txt",
            "add_executable(tiny_bench tiny_bench.cc)\n"
            "target_link_libraries(tiny_bench PRIVATE tiny benchmark::benchmark)\n");
  WriteFile(dir + "/tiny.h",
            "#pragma once\n#include <vector>\n"
            "long SumOfSquares(const std::vector<int>& v);\n"
            "std::vector<int> Histogram(const std::vector<int>& v, int buckets);\n");
  WriteFile(dir + "/tiny.cc",
            "#include \"tiny.h\"\n"
            "long SumOfSquares(const std::vector<int>& v) {\n"
            "  long s = 0;\n  for (int x : v) s += static_cast<long>(x) * x;\n  return s;\n}\n"
            "std::vector<int> Histogram(const std::vector<int>& v, int buckets) {\n"
            "  std::vector<int> h(buckets);\n"
            "  for (int x : v) {\n"
            "    if (x % 7 == 0) h[(x / 7) % buckets] += 2; else h[x % buckets] += 1;\n"
            "  }\n  return h;\n}\n");
  WriteFile(dir + "/bench/tiny_bench.cc",
            "#include <benchmark/benchmark.h>\n#include \"../tiny.h\"\n"
            "static void BM_SumOfSquares(benchmark::State& state) {\n"
            "  std::vector<int> v(4096);\n"
            "  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int>(i * 7 % 1000);\n"
            "  for (auto _ : state) benchmark::DoNotOptimize(SumOfSquares(v));\n}\n"
            "BENCHMARK(BM_SumOfSquares)->MinTime(0.01);\n"
            "static void BM_Histogram(benchmark::State& state) {\n"
            "  std::vector<int> v(4096);\n"
            "  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int>(i * 13 % 997);\n"
            "  for (auto _ : state) benchmark::DoNotOptimize(Histogram(v, 64));\n}\n"
            "BENCHMARK(BM_Histogram)->MinTime(0.01);\n"
            "BENCHMARK_MAIN();\n");
  WriteFile(dir + "/tests/tiny_test.cc",
            "#include \"../tiny.h\"\n"
            "int main() { return SumOfSquares({1, 2, 3}) == 14 && Histogram({7, 1}, 4)[1] == 3 "
            "? 0 : 1; }\n");
}

// From a fresh clone of a small CMake project with a Google Benchmark binary, `arbor init
// --detect && arbor run arbor.toml` evaluates `budget` nodes with no hand edits. The budget is
// given on the command line (--max-nodes), not edited in.
void RunsAsWritten(int budget) {
  if (!OnPath("cmake") || !OnPath("c++") || !fs::exists("/usr/include/benchmark/benchmark.h")) {
    GTEST_SKIP() << "needs cmake, a C++ compiler and libbenchmark-dev (scripts/deps)";
  }
  TempWorkspace ws;
  const std::string origin = ws.aux() + "/origin";
  WriteTinyCMakeProject(origin);
  for (const std::vector<std::string>& git :
       {std::vector<std::string>{"git", "init", "-q"},
        {"git", "add", "-A"},
        {"git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "tiny"}}) {
    ProcResult r = RunProcess(git, origin);
    ASSERT_EQ(r.exit_code, 0) << r.Describe();
  }
  fs::remove_all(ws.repo());
  ProcResult clone = RunProcess({"git", "clone", "-q", origin, ws.repo()}, ws.aux());
  ASSERT_EQ(clone.exit_code, 0) << clone.Describe();

  ProcResult init = ws.Arbor({"init", "--detect"});
  ASSERT_EQ(init.exit_code, 0) << init.Describe();
  EXPECT_NE(init.out.find("benchmark: Google Benchmark executable tiny_bench "
                          "(bench/CMakeLists.txt), metric real_time_ns "
                          "(preset:google-benchmark)"),
            std::string::npos)
      << init.out;
  const std::string toml = ReadFile(ws.repo() + "/arbor.toml");
  EXPECT_NE(toml.find("bench = \"$RUN_PREFIX ./build/bench/tiny_bench --benchmark_format=json\""),
            std::string::npos)
      << toml;
  EXPECT_NE(toml.find("check = \"ctest --test-dir build --output-on-failure\""), std::string::npos);
  // The new file does not make the workspace dirty: `arbor run` starts without a commit.
  ProcResult status = ws.Git({"status", "--porcelain"});
  EXPECT_EQ(status.out, "") << status.Describe();

  // Ten nodes take about 5 minutes on a loaded 2-core machine (the Critic raises the
  // repetitions of a noisy benchmark); under ctest's 900 s limit with room to spare.
  ProcResult run =
      ws.Arbor({"run", "arbor.toml", "--max-nodes", std::to_string(budget), "--quiet"}, {}, 840);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<TreeNode> nodes = LoadTree(ws);
  int evaluated = 0;
  for (const TreeNode& n : nodes) {
    if (n.id == 1) {
      EXPECT_EQ(n.outcome, "baseline") << DescribeTree(nodes);  // it built and measured
      EXPECT_TRUE(n.metric.is_number()) << DescribeTree(nodes);
      continue;
    }
    if (IsFinished(n.outcome)) ++evaluated;
    // Every benchmark run that finished gave a reading through the preset.
    EXPECT_EQ(n.diagnosis.find("bad_output"), std::string::npos) << DescribeTree(nodes);
  }
  EXPECT_GE(evaluated, budget) << DescribeTree(nodes);
}

// The "done when": at least 10 nodes (the long tier, tests/tiers/long.txt).
TEST(IntegrationInitDetect, FreshCloneOfACMakeProjectRunsTenNodesAsWritten) { RunsAsWritten(10); }

// The same in CI, with a budget of 3.
TEST(IntegrationInitDetect, FreshCloneOfACMakeProjectRunsAsWritten) { RunsAsWritten(3); }

// A starter action whose library is missing when the campaign runs (another machine, a removed
// package) is a dependency diagnosis that blocks that action, not a crash blamed on the idea.
TEST(IntegrationInitDetect, APreloadThatIsNotInstalledIsADependency) {
  TempWorkspace ws;
  ws.Write("arbor.toml",
           "[campaign]\nname = \"dep\"\nworkspace = \".\"\n"
           "[target]\nbench = \"echo '{\\\"v\\\": 1.0}'\"\n"
           "[metric]\nsource = \"json:v\"\nrepetitions = 2\n"
           "[search]\nmax_nodes = 1\n"
           "[[action]]\nid = \"allocator.jemalloc\"\nlayer = \"framework\"\n"
           "describe = \"jemalloc\"\nspeedup = 1.5\n"
           "apply = { env = { LD_PRELOAD = \"/nonexistent/lib/libjemalloc.so.2\" } }\n");
  ws.CommitAll();
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"});
  ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 7) << run.Describe();
  nlohmann::json show = ws.ArborJson({"show", "2", "--json"});
  EXPECT_EQ(show["outcome"], "crashed") << show.dump(2);
  EXPECT_EQ(show["critic"]["rca"], "dependency") << show.dump(2);
  EXPECT_NE(show["critic"]["evidence"].get<std::string>().find(
                "LD_PRELOAD: /nonexistent/lib/libjemalloc.so.2: cannot open shared object file"),
            std::string::npos)
      << show.dump(2);
}

TEST(IntegrationInitDetect, RefusesWhatItCannotDetect) {
  TempWorkspace ws;
  ws.Write("README.md", "nothing to build\n");
  ws.CommitAll();
  ProcResult none = ws.Arbor({"init", "--detect"});
  EXPECT_EQ(none.exit_code, 4) << none.Describe();
  EXPECT_NE(none.err.find("no build system at the top of the repository"), std::string::npos)
      << none.err;
  EXPECT_FALSE(fs::exists(ws.repo() + "/arbor.toml"));

  ws.Write("Makefile", "all:\n\ttrue\n");
  ws.CommitAll();
  ProcResult no_bench = ws.Arbor({"init", "--detect"});
  EXPECT_EQ(no_bench.exit_code, 4) << no_bench.Describe();
  EXPECT_NE(no_bench.err.find("name the command to measure with --bench"), std::string::npos);

  EXPECT_EQ(ws.Arbor({"init", "--bench", "./x"}).exit_code, 2);  // --bench needs --detect

  // With --bench the file is written and parses (status: no campaign yet, exit 4, not 3).
  ProcResult with = ws.Arbor({"init", "--detect", "--bench", "sleep 0"});
  ASSERT_EQ(with.exit_code, 0) << with.Describe();
  EXPECT_NE(ReadFile(ws.repo() + "/arbor.toml").find("source = \"json:wall_s\""),
            std::string::npos);
  EXPECT_EQ(ws.Arbor({"status"}).exit_code, 4);
  EXPECT_EQ(ws.Git({"status", "--porcelain"}).out, "");
  EXPECT_EQ(ws.Arbor({"init", "--detect", "--bench", "sleep 0"}).exit_code, 2);  // exists
}

}  // namespace
}  // namespace arbor::integration
