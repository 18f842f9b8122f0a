#include "config/detect.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "config/campaign_loader.h"

namespace arbor {
namespace {

RepoFiles Repo(const std::map<std::string, std::string>& files,
               const std::vector<std::string>& more = {}) {
  RepoFiles r;
  for (const auto& [path, text] : files) r.paths.push_back(path);
  for (const std::string& p : more) r.paths.push_back(p);
  for (const std::string& p : DetectFilesToRead(r.paths)) {
    auto it = files.find(p);
    if (it != files.end()) r.contents[p] = it->second;
  }
  return r;
}

HostFacts Host(bool allocators = true) {
  HostFacts h;
  h.cpus = 2;
  h.thp = "madvise";
  h.commands = {"taskset"};
  if (allocators) {
    for (const std::string& lib : DetectLibraries()) h.libraries[lib] = "/usr/lib/x/" + lib;
  }
  return h;
}

CampaignSpec Parse(const Detection& d) {
  Result<CampaignSpec> spec = ParseCampaign(d.campaign_text, "arbor.toml", "/w");
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.error().message) << "\n" << d.campaign_text;
  return spec.ok() ? *spec : CampaignSpec{};
}

const ActionSpec* Find(const CampaignSpec& spec, const std::string& id) {
  for (const ActionSpec& a : spec.actions) {
    if (a.id == id) return &a;
  }
  return nullptr;
}

size_t Candidates(const CampaignSpec& spec) {
  size_t n = 0;
  for (const ActionSpec& a : spec.actions) n += std::max<size_t>(1, a.values.size());
  return n;
}

const std::map<std::string, std::string> kCMakeProject = {
    {"CMakeLists.txt",
     "cmake_minimum_required(VERSION 3.16)\nproject(tiny CXX)  # a comment (not a call)\n"
     "find_package(benchmark REQUIRED)\nadd_library(tiny STATIC tiny.cc)\n"
     "add_subdirectory(bench)\nenable_testing()\n"
     "add_executable(tiny_test tests/tiny_test.cc)\n"
     "target_link_libraries(tiny_test PRIVATE tiny)\nadd_test(NAME t COMMAND tiny_test)\n"},
    {"bench/CMakeLists.txt",
     "add_executable(${PROJECT_NAME}_bench tiny_bench.cc)\n"
     "target_link_libraries(${PROJECT_NAME}_bench\n  PRIVATE tiny benchmark::benchmark)\n"},
    {"tiny.cc", ""},
    {"bench/tiny_bench.cc", ""},
};

TEST(Detect, CMakeWithGoogleBenchmark) {
  Result<Detection> d = Detect(Repo(kCMakeProject), Host(), {"my repo", ""});
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->system, BuildSystem::kCMake);
  CampaignSpec spec = Parse(*d);
  EXPECT_EQ(spec.name, "my-repo");
  EXPECT_NE(spec.target.build.find("cmake --no-warn-unused-cli -S . -B build"), std::string::npos);
  EXPECT_NE(spec.target.build.find("\"-DCMAKE_CXX_FLAGS_RELEASE=-DNDEBUG $CXXFLAGS $pgo\""),
            std::string::npos);
  EXPECT_EQ(spec.target.check, "ctest --test-dir build --output-on-failure");
  // Declared in bench/CMakeLists.txt, so built in build/bench/; ${PROJECT_NAME} resolved.
  EXPECT_EQ(spec.target.bench, "$RUN_PREFIX ./build/bench/tiny_bench --benchmark_format=json");
  EXPECT_EQ(spec.target.env.at("CXXFLAGS"), "-O3");
  EXPECT_EQ(spec.metric.source.text, "preset:google-benchmark");
  EXPECT_EQ(spec.metric.goal, Goal::kMin);
  EXPECT_EQ(spec.metric.fixed, BenchFixed::kDuration);
  for (const char* id :
       {"compiler.opt-level", "compiler.march-native", "compiler.lto", "compiler.pgo",
        "compiler.no-plt", "compiler.no-semantic-interposition", "allocator.jemalloc",
        "allocator.tcmalloc", "allocator.mimalloc", "memory.thp", "affinity.taskset"}) {
    EXPECT_NE(Find(spec, id), nullptr) << id;
  }
  EXPECT_EQ(Find(spec, "threads.omp"), nullptr);  // no OpenMP in the build files
  EXPECT_GE(Candidates(spec), 12u);
  EXPECT_EQ(Find(spec, "compiler.opt-level")->values, (std::vector<std::string>{"2", "s"}));
  // PGO trains on the benchmark command.
  EXPECT_NE(Find(spec, "compiler.pgo")
                ->apply.run.find("$RUN_PREFIX ./build/bench/tiny_bench --benchmark_format=json"),
            std::string::npos);
  EXPECT_NE(d->campaign_text.find("#   benchmark: Google Benchmark executable tiny_bench "
                                  "(bench/CMakeLists.txt)"),
            std::string::npos);
}

TEST(Detect, MissingAllocatorsAreLeftOutWithANote) {
  Result<Detection> d = Detect(Repo(kCMakeProject), Host(/*allocators=*/false), {"t", ""});
  ASSERT_TRUE(d.ok());
  CampaignSpec spec = Parse(*d);
  EXPECT_EQ(Find(spec, "allocator.jemalloc"), nullptr);
  EXPECT_NE(d->campaign_text.find("#   allocator.jemalloc: libjemalloc.so.2 is not installed "
                                  "(apt-get install libjemalloc2)"),
            std::string::npos);
  EXPECT_GE(Candidates(spec), 10u);  // still enough for a first campaign
}

TEST(Detect, NoBenchmarkNeedsBench) {
  std::map<std::string, std::string> files = {
      {"CMakeLists.txt", "project(p)\nadd_executable(app main.cc)\n"}};
  Result<Detection> d = Detect(Repo(files), Host(), {"t", ""});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().message,
            "found CMake (CMakeLists.txt) but no benchmark (a Google Benchmark executable, a "
            "bench target or pytest-benchmark tests): name the command to measure with --bench "
            "\"COMMAND\"");
  // Without tests the check always passes, and says so.
  d = Detect(Repo(files), Host(), {"t", "./build/app --size 100"});
  ASSERT_TRUE(d.ok());
  CampaignSpec spec = Parse(*d);
  EXPECT_EQ(spec.target.check, "true");
  EXPECT_NE(d->campaign_text.find("# No tests were found, so the check always passes"),
            std::string::npos);
  // A command Arbor knows no output of is timed.
  EXPECT_EQ(spec.metric.source.text, "json:wall_s");
  EXPECT_NE(spec.target.bench.find("$RUN_PREFIX ./build/app --size 100\n} || exit $?"),
            std::string::npos);
}

TEST(Detect, UserBenchCommandsGetTheirToolsPreset) {
  auto source_of = [](const std::string& bench) {
    Result<Detection> d = Detect(Repo(kCMakeProject), Host(), {"t", bench});
    EXPECT_TRUE(d.ok());
    CampaignSpec spec = Parse(*d);
    return spec.metric.source.text + " | " + spec.target.bench;
  };
  EXPECT_EQ(source_of("hyperfine -N './build/app'"),
            "preset:hyperfine | $RUN_PREFIX hyperfine -N './build/app' --export-json "
            "\"$ARBOR_OUT/metrics.json\"");
  EXPECT_EQ(source_of("wrk -t2 -d5s --latency http://127.0.0.1:8080/"),
            "preset:wrk | $RUN_PREFIX wrk -t2 -d5s --latency http://127.0.0.1:8080/");
  EXPECT_EQ(source_of("fio job.fio"), "preset:fio | $RUN_PREFIX fio job.fio --output-format=json");
  // A detected Google Benchmark executable, run with the user's options.
  EXPECT_EQ(source_of("./build/bench/tiny_bench --benchmark_filter=Sum"),
            "preset:google-benchmark | $RUN_PREFIX ./build/bench/tiny_bench "
            "--benchmark_filter=Sum --benchmark_format=json");
}

TEST(Detect, MakeWhoseFlagsBeatTheEnvironment) {
  std::map<std::string, std::string> files = {
      {"Makefile",
       "CXX ?= g++\nCXXFLAGS = -O2 -Wall\nall: app\napp: main.o\n\t$(CXX) -o $@ $^\n"
       "check: app\n\t./app --check\nbench: app\n\t./app --bench\nX := 1\n"}};
  Result<Detection> d = Detect(Repo(files), Host(), {"t", ""});
  ASSERT_TRUE(d.ok()) << d.error().message;
  CampaignSpec spec = Parse(*d);
  EXPECT_EQ(spec.target.build, "make -j$(nproc)");
  EXPECT_EQ(spec.target.check, "make check");
  EXPECT_NE(spec.target.bench.find("$RUN_PREFIX make bench"), std::string::npos);
  EXPECT_EQ(Find(spec, "compiler.lto"), nullptr);
  EXPECT_NE(d->campaign_text.find("Makefile sets CXXFLAGS with '=' on line 2"), std::string::npos);
  EXPECT_NE(Find(spec, "allocator.jemalloc"), nullptr);
}

TEST(Detect, MesonWithGoogleBenchmarkAndOpenMP) {
  std::map<std::string, std::string> files = {
      {"meson.build",
       "project('m', 'cpp')\nomp = dependency('openmp')\n"
       "gbench = dependency('benchmark')\nsubdir('bench')\ntest('unit', executable('u', "
       "'u.cc'))\n"},
      {"bench/meson.build", "executable('speed', 'speed.cc',\n  dependencies : [gbench])\n"}};
  Result<Detection> d = Detect(Repo(files), Host(), {"t", ""});
  ASSERT_TRUE(d.ok()) << d.error().message;
  CampaignSpec spec = Parse(*d);
  EXPECT_NE(spec.target.build.find("meson setup build --buildtype=release"), std::string::npos);
  EXPECT_EQ(spec.target.check, "meson test -C build --print-errorlogs");
  EXPECT_EQ(spec.target.bench, "$RUN_PREFIX ./build/bench/speed --benchmark_format=json");
  ASSERT_NE(Find(spec, "threads.omp"), nullptr);
  EXPECT_EQ(Find(spec, "threads.omp")->values, (std::vector<std::string>{"1", "2"}));
  EXPECT_NE(Find(spec, "compiler.pgo"), nullptr);
}

TEST(Detect, CargoWithBenches) {
  std::map<std::string, std::string> files = {{"Cargo.toml", "[package]\nname = \"c\"\n"},
                                              {"benches/speed.rs", ""}};
  Result<Detection> d = Detect(Repo(files), Host(), {"t", ""});
  ASSERT_TRUE(d.ok()) << d.error().message;
  CampaignSpec spec = Parse(*d);
  EXPECT_EQ(spec.target.build, "cargo build --release && cargo bench --no-run");
  EXPECT_EQ(spec.target.check, "cargo test --release");
  EXPECT_NE(spec.target.bench.find("$RUN_PREFIX cargo bench"), std::string::npos);
  EXPECT_NE(Find(spec, "rust.lto"), nullptr);
  EXPECT_EQ(Find(spec, "compiler.lto"), nullptr);
}

TEST(Detect, PythonWithPytestBenchmark) {
  std::map<std::string, std::string> files = {
      {"pyproject.toml", "[project]\nname = \"p\"\n"},
      {"tests/test_speed.py", "def test_sum(benchmark):\n    benchmark(sum, range(9))\n"}};
  Result<Detection> d = Detect(Repo(files), Host(), {"t", ""});
  ASSERT_TRUE(d.ok()) << d.error().message;
  CampaignSpec spec = Parse(*d);
  EXPECT_EQ(spec.target.build, "");
  EXPECT_EQ(spec.target.check, "python3 -m pytest -q -p no:cacheprovider --benchmark-skip");
  EXPECT_EQ(spec.metric.source.text, "preset:pytest-benchmark");
  EXPECT_NE(spec.target.bench.find("--benchmark-json=\"$ARBOR_OUT/metrics.json\""),
            std::string::npos);
  EXPECT_EQ(Find(spec, "compiler.lto"), nullptr);  // no C extensions
  EXPECT_NE(Find(spec, "allocator.mimalloc"), nullptr);
}

TEST(Detect, NothingToBuild) {
  Result<Detection> d = Detect(Repo({{"README.md", "hi"}}), Host(), {"t", "./run"});
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("no build system at the top of the repository"),
            std::string::npos);
}

TEST(Detect, OnlyBuildFilesAndPythonTestsAreRead) {
  EXPECT_EQ(DetectFilesToRead({"a.cc", "CMakeLists.txt", "src/CMakeLists.txt", "x/y.cmake",
                               "tests/test_a.py", "lib/b.py", "Makefile", "sub/Makefile"}),
            (std::vector<std::string>{"CMakeLists.txt", "src/CMakeLists.txt", "x/y.cmake",
                                      "Makefile", "tests/test_a.py"}));
}

TEST(TomlString, QuotesWhatACommandHolds) {
  for (const std::string& s :
       {std::string("plain"), std::string("a \"q\" \\ b\tc"), std::string("two\nlines \"\"\""),
        std::string("ends with a quote\n\""), std::string("x\\\ny")}) {
    const std::string text = "[campaign]\nname = \"t\"\n[target]\nbench = " + TomlString(s) +
                             "\n[metric]\nsource = \"json:v\"\n";
    Result<CampaignSpec> spec = ParseCampaign(text, "a.toml", "/w");
    ASSERT_TRUE(spec.ok()) << spec.error().message << "\n" << text;
    EXPECT_EQ(spec->target.bench, s);
  }
}

}  // namespace
}  // namespace arbor
