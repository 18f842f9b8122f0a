// Golden tests of the importers on fixtures produced by the real tools (tests/data/profiles),
// format detection, and grouping.
#include "formats/importers.h"

#include <gtest/gtest.h>

#include "formats/importers_test_util.h"

namespace arbor {
namespace {

using testing_profiles::Find;
using testing_profiles::Fixture;
using testing_profiles::ShareOf;
using testing_profiles::ShareSum;

ProfileSpec Spec(ProfileFormat format = ProfileFormat::kAuto) {
  ProfileSpec spec;
  spec.format = format;
  return spec;
}

Profile Import(const std::string& text, const ProfileSpec& spec) {
  Result<Profile> p = ImportProfile(text, spec);
  EXPECT_TRUE(p.ok()) << p.error().message;
  return p.ok() ? *p : Profile{};
}

TEST(DetectProfileFormatTest, RecognisesEveryFixture) {
  EXPECT_EQ(DetectProfileFormat(Fixture("perf_report.txt")), ProfileFormat::kPerf);
  EXPECT_EQ(DetectProfileFormat(Fixture("perf_script.txt")), ProfileFormat::kPerf);
  EXPECT_EQ(DetectProfileFormat(Fixture("chrome_trace.json")), ProfileFormat::kChromeTrace);
  EXPECT_EQ(DetectProfileFormat(Fixture("callgrind_annotate.txt")), ProfileFormat::kCallgrind);
  EXPECT_EQ(DetectProfileFormat(Fixture("callgrind.out")), ProfileFormat::kCallgrind);
  EXPECT_EQ(DetectProfileFormat(Fixture("collapsed.txt")), ProfileFormat::kCollapsed);
}

TEST(DetectProfileFormatTest, NamesMatchTheCampaignFile) {
  EXPECT_EQ(ProfileFormatName(ProfileFormat::kChromeTrace), "chrome-trace");
  EXPECT_EQ(ProfileFormatName(ProfileFormat::kCollapsed), "collapsed");
  EXPECT_EQ(ProfileFormatName(ProfileFormat::kAuto), "auto");
}

TEST(DetectProfileFormatTest, JsonShapesAndLogs) {
  EXPECT_EQ(DetectProfileFormat(R"({"components": []})"), ProfileFormat::kArbor);
  EXPECT_EQ(DetectProfileFormat("building...\n12% done\n{\"components\": [{\"name\": \"a\", "
                                "\"share\": 0.5}]}\n"),
            ProfileFormat::kArbor);
  EXPECT_EQ(DetectProfileFormat(R"([{"name": "a", "ph": "X", "ts": 0, "dur": 1}])"),
            ProfileFormat::kChromeTrace);
  EXPECT_EQ(DetectProfileFormat(R"([{"name": "a", "ph": "X", "ts": 0, "dur": 1},)"),
            ProfileFormat::kChromeTrace);  // the array format may lack its ']'
  EXPECT_EQ(DetectProfileFormat("  42.00%  toy  toy  [.] matmul\n"), ProfileFormat::kPerf);
  EXPECT_EQ(DetectProfileFormat("main;work 12\nmain 3\n"), ProfileFormat::kCollapsed);
  EXPECT_EQ(DetectProfileFormat("hello world\n"), std::nullopt);
  EXPECT_EQ(DetectProfileFormat(""), std::nullopt);
}

TEST(ImportProfileTest, PerfReportGolden) {
  Profile p = Import(Fixture("perf_report.txt"), Spec());
  EXPECT_NEAR(ShareOf(p, "gemm_tiled"), 0.3662, 1e-9);
  EXPECT_NEAR(ShareOf(p, "softmax_rows"), 0.3134, 1e-9);
  EXPECT_NEAR(ShareOf(p, "layer_norm"), 0.1549, 1e-9);
  EXPECT_NEAR(ShareOf(p, "__expf_fma"), 0.1303, 1e-9);
  EXPECT_NEAR(ShareOf(p, "sample_topk"), 0.0246, 1e-9);
  EXPECT_LE(ShareSum(p), 1 + 1e-9);
  ASSERT_FALSE(p.raw.empty());
  EXPECT_EQ(p.raw[0].first, "gemm_tiled");
}

TEST(ImportProfileTest, PerfScriptCountsLeafSymbols) {
  Profile p = Import(Fixture("perf_script.txt"), Spec(ProfileFormat::kPerf));
  // 284 samples of equal period: 104 in gemm_tiled, 89 softmax_rows, 44 layer_norm, ...
  EXPECT_NEAR(ShareOf(p, "gemm_tiled"), 104.0 / 284, 1e-9);
  EXPECT_NEAR(ShareOf(p, "softmax_rows"), 89.0 / 284, 1e-9);
  EXPECT_NEAR(ShareOf(p, "layer_norm"), 44.0 / 284, 1e-9);
  EXPECT_NEAR(ShareOf(p, "__expf_fma"), 37.0 / 284, 1e-9);
  EXPECT_NEAR(ShareOf(p, "sample_topk"), 7.0 / 284, 1e-9);
  EXPECT_NEAR(ShareSum(p), 1, 1e-9);
}

TEST(ImportProfileTest, PerfScriptWithoutCallchains) {
  std::string text =
      "   toy  5436  2435.873275:     250000 cpu-clock:ppp:      5559ef7b1145 main+0x1c "
      "(/tmp/t)\n"
      "   toy  5436  2435.873521:     750000 cpu-clock:ppp:      7f3529b7562a "
      "std::vector<int, std::allocator<int> >::push_back(int const&)+0xa (/tmp/t)\n";
  Profile p = Import(text, Spec(ProfileFormat::kPerf));
  EXPECT_NEAR(ShareOf(p, "main"), 0.25, 1e-12);
  EXPECT_NEAR(ShareOf(p, "std::vector<int, std::allocator<int> >::push_back(int const&)"), 0.75,
              1e-12);
}

TEST(ImportProfileTest, CallgrindAnnotateGolden) {
  Profile p = Import(Fixture("callgrind_annotate.txt"), Spec());
  const double total = 243584824;
  EXPECT_NEAR(ShareOf(p, "gemm_tiled"), 129815380 / total, 1e-12);
  EXPECT_NEAR(ShareOf(p, "__expf_fma"), (59719680 + 4423680) / total, 1e-12);  // two files
  EXPECT_NEAR(ShareOf(p, "softmax_rows"), 26623684 / total, 1e-12);
  EXPECT_LE(ShareSum(p), 1 + 1e-9);
}

TEST(ImportProfileTest, CallgrindOutAgreesWithAnnotate) {
  Profile raw = Import(Fixture("callgrind.out"), Spec());
  Profile annotated = Import(Fixture("callgrind_annotate.txt"), Spec());
  for (const char* name : {"gemm_tiled", "softmax_rows", "layer_norm", "sample_topk"}) {
    EXPECT_NEAR(ShareOf(raw, name), ShareOf(annotated, name), 1e-12) << name;
  }
  EXPECT_NEAR(ShareSum(raw), 1, 1e-9);
}

TEST(ImportProfileTest, CollapsedGolden) {
  Profile p = Import(Fixture("collapsed.txt"), Spec());
  EXPECT_NEAR(ShareOf(p, "gemm_tiled"), 104.0 / 284, 1e-12);
  EXPECT_NEAR(ShareOf(p, "main"), 1.0 / 284, 1e-12);  // self weight of the leaf only
  EXPECT_NEAR(ShareOf(p, "irqentry_exit_to_user_mode"), 2.0 / 284, 1e-12);
}

TEST(ImportProfileTest, ChromeTraceGoldenSelfTimes) {
  Profile p = Import(Fixture("chrome_trace.json"), Spec());
  const double total = 92838.4219982681;  // CPU + GPU self microseconds
  EXPECT_NEAR(ShareOf(p, "softmax_rows"), 43945.529 / total, 1e-9);
  EXPECT_NEAR(ShareOf(p, "gemm_tiled"), 29215.719 / total, 1e-9);
  EXPECT_NEAR(ShareOf(p, "step"), 471.419 / total, 1e-8);  // B/E minus its X children
  ASSERT_NE(Find(p, "sgemm_128x64_nn"), nullptr);
  EXPECT_EQ(Find(p, "sgemm_128x64_nn")->layer, "kernel");
  EXPECT_EQ(Find(p, "gemm_tiled")->layer, "");
  EXPECT_NEAR(ShareSum(p), 1, 1e-9);
  EXPECT_GT(p.total_s, 0.05);
}

TEST(ImportProfileTest, ChromeTraceTrackSelection) {
  ProfileSpec cpu = Spec();
  cpu.tracks = TraceTracks::kCpu;
  Profile p = Import(Fixture("chrome_trace.json"), cpu);
  EXPECT_EQ(Find(p, "sgemm_128x64_nn"), nullptr);
  EXPECT_NEAR(ShareOf(p, "softmax_rows"), 43945.529 / 85534.491, 1e-8);
  ProfileSpec gpu = Spec();
  gpu.tracks = TraceTracks::kGpu;
  p = Import(Fixture("chrome_trace.json"), gpu);
  ASSERT_EQ(p.components.size(), 1u);
  EXPECT_EQ(p.components[0].name, "sgemm_128x64_nn");
  EXPECT_NEAR(p.components[0].share, 1, 1e-12);
}

TEST(ImportProfileTest, ChromeTraceNestingOutOfOrderAndTracks) {
  // Child listed before its parent; a second thread's time is its own; a B with no E ends at
  // the trace's last timestamp.
  std::string text = R"({"traceEvents": [
    {"name": "inner", "ph": "X", "pid": 1, "tid": 1, "ts": 20, "dur": 30},
    {"name": "outer", "ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
    {"name": "inner", "ph": "X", "pid": 1, "tid": 2, "ts": 0, "dur": 50},
    {"name": "open", "ph": "B", "pid": 1, "tid": 3, "ts": 60},
    {"name": "launch", "cat": "cuda_runtime", "ph": "X", "pid": 1, "tid": 1, "ts": 60, "dur": 10},
    {"name": "k", "cat": "Kernel", "ph": "X", "pid": 9, "tid": 9, "ts": 70, "dur": 10},
    {"name": "outer", "ph": "X", "pid": 2, "tid": "stream 1", "ts": 0, "dur": 10},
    {"name": "thread_name", "ph": "M", "pid": 2, "tid": "stream 1", "args": {"name": "stream 1"}},
    {"name": "tick", "ph": "i", "pid": 1, "tid": 1, "ts": 5}]})";
  Profile p = Import(text, Spec());
  // outer 100-30-10 = 60; inner 30 + 50; open 100-60 = 40; launch 10; k 10; outer [gpu] 10.
  const double total = 60 + 80 + 40 + 10 + 10 + 10;
  EXPECT_NEAR(ShareOf(p, "outer"), 60 / total, 1e-12);
  EXPECT_NEAR(ShareOf(p, "inner"), 80 / total, 1e-12);
  EXPECT_NEAR(ShareOf(p, "open"), 40 / total, 1e-12);
  EXPECT_EQ(Find(p, "launch")->layer, "");  // cuda_runtime is a host category
  EXPECT_EQ(Find(p, "k")->layer, "kernel");
  ASSERT_NE(Find(p, "outer [gpu]"), nullptr);
  EXPECT_EQ(Find(p, "outer [gpu]")->layer, "kernel");
}

TEST(ImportProfileTest, GroupsNameComponentsFirstMatchWins) {
  ProfileSpec spec = Spec();
  spec.groups = {{"matmul", {"*gemm*", "*matmul*"}, "kernel"},
                 {"math", {"*softmax*", "*norm*", "*gemm*"}, "kernel"},
                 {"unused", {"nothing*"}, "application"}};
  Profile p = Import(Fixture("perf_report.txt"), spec);
  EXPECT_NEAR(ShareOf(p, "matmul"), 0.3662, 1e-9);
  EXPECT_NEAR(ShareOf(p, "math"), 0.3134 + 0.1549, 1e-9);
  EXPECT_EQ(Find(p, "unused"), nullptr);  // a group that matched nothing is left out
  ASSERT_NE(Find(p, "other"), nullptr);
  EXPECT_EQ(Find(p, "other")->layer, "other");
  // perf rounds: the listed percentages add up to 99.99.
  EXPECT_NEAR(ShareOf(p, "other"), 0.9999 - 0.3662 - 0.3134 - 0.1549, 1e-9);
  EXPECT_EQ(Find(p, "matmul")->layer, "kernel");
  EXPECT_FALSE(p.raw.empty());  // raw names are kept either way
}

TEST(ImportProfileTest, TopNFoldsTheRestIntoOther) {
  ProfileSpec spec = Spec();
  spec.top_n = 2;
  Profile p = Import("a 50\nb 30\nc 15\nd 5\n", spec);
  ASSERT_EQ(p.components.size(), 3u);
  EXPECT_EQ(p.components[0].name, "a");
  EXPECT_EQ(p.components[1].name, "b");
  EXPECT_EQ(p.components[2].name, "other");
  EXPECT_NEAR(p.components[2].share, 0.2, 1e-12);
  ASSERT_EQ(p.raw.size(), 2u);
  EXPECT_EQ(p.raw[1], (std::pair<std::string, double>("b", 0.3)));
}

TEST(ImportProfileTest, ArborFormatPassesThrough) {
  std::string text = R"({"total_s": 2, "components": [{"name": "x", "share": 0.5}]})";
  ProfileSpec spec = Spec();
  spec.groups = {{"g", {"*"}, ""}};  // groups do not apply to Arbor JSON
  Profile p = Import(text, spec);
  ASSERT_EQ(p.components.size(), 1u);
  EXPECT_EQ(p.components[0].name, "x");
  EXPECT_TRUE(p.raw.empty());
}

struct BadCase {
  ProfileFormat format;
  std::string text;
  std::string message;
};

TEST(ImportProfileTest, MalformedInputIsOneLineError) {
  const BadCase cases[] = {
      {ProfileFormat::kPerf, "# Samples: 0\n#\n", "perf: no sample lines found"},
      {ProfileFormat::kPerf, "", "perf: the profile is empty"},
      {ProfileFormat::kChromeTrace,
       R"([{"name": "a", "ph": "B", "ts": 0}, {"name": "b", "ph": "X", "ts": 1}])",
       "chrome-trace: event 1 has ph 'X' without dur"},
      {ProfileFormat::kChromeTrace, R"([{"ph": "E", "ts": 3}])",
       "chrome-trace: event 0 has ph 'E' with no open 'B' on its track"},
      {ProfileFormat::kChromeTrace, R"({"events": []})",
       "chrome-trace: expected a JSON array of events or an object with a \"traceEvents\" array"},
      {ProfileFormat::kChromeTrace, R"({"traceEvents": [{"ph": "M"}]})",
       "chrome-trace: no complete ('X') or begin/end ('B'/'E') events found"},
      {ProfileFormat::kChromeTrace, "{\"traceEvents\": [", "chrome-trace: not valid JSON: "},
      {ProfileFormat::kCallgrind, "Profile data file 'x'\n", "callgrind: no \"PROGRAM TOTALS\""},
      {ProfileFormat::kCallgrind, "events: Ir\nfn=main\nbogus\n",
       "callgrind: line 3 is neither a spec nor a cost line"},
      {ProfileFormat::kCollapsed, "a;b 3\nnot a stack\n",
       "collapsed: line 2 is not \"frame;frame;leaf COUNT\""},
      {ProfileFormat::kCollapsed, "a;b 0\n", "collapsed: total weight is 0"},
      {ProfileFormat::kAuto, "hello\n",
       "profile: no JSON object with \"components\" in the output (6 bytes); nor is it perf"},
  };
  for (const BadCase& c : cases) {
    Result<Profile> p = ImportProfile(c.text, Spec(c.format));
    ASSERT_FALSE(p.ok()) << c.text;
    EXPECT_EQ(p.error().message.rfind(c.message, 0), 0u) << p.error().message;
    EXPECT_EQ(p.error().message.find('\n'), std::string::npos) << p.error().message;
  }
}

}  // namespace
}  // namespace arbor
