// Profiles in the profilers' own formats (docs/metrics-and-profiles.md "Importing profiles"):
// for each format, a small campaign whose profile command prints a committed fixture from
// tests/data/profiles; the baseline's stored profile must hold the grouped components. A
// profile that cannot be read fails the profile step, and the campaign goes on.
#include <gtest/gtest.h>

#include <string>

#include "campaign_checks.h"
#include "harness.h"

namespace arbor::integration {
namespace {

const std::string kFixtures = std::string(TOY_DIR) + "/../../tests/data/profiles/";

// A campaign of shell commands: the bench prints v = 1, or v = 2 once the action set X=1.
std::string Campaign(const std::string& name, const std::string& profile,
                     const std::string& profile_section) {
  return "[campaign]\nname = \"" + name + "\"\nworkspace = \".\"\n\n" +
         "[target]\nbuild = \"true\"\ncheck = \"true\"\n"
         "bench = '''if [ \"$X\" = 1 ]; then echo \"{\\\"v\\\": 2.00${ARBOR_REPETITION#-}}\"; "
         "else echo \"{\\\"v\\\": 1.00${ARBOR_REPETITION#-}}\"; fi'''\n"
         "profile = '''" +
         profile + "'''\n" +
         "\n[metric]\nname = \"v\"\nsource = \"json:v\"\nrepetitions = 3\n\n"
         "[search]\nmax_nodes = 2\n\n"
         "[[action]]\nid = \"set-x\"\nlayer = \"application\"\ncategory = \"env\"\n"
         "speedup = 2.0\napply = { env = { X = \"1\" } }\n\n" +
         profile_section;
}

// Runs the campaign and returns `arbor show NODE --json`.
nlohmann::json RunAndShow(TempWorkspace& ws, const std::string& toml, int node = 1) {
  ws.Write("arbor.toml", toml);
  ws.CommitAll();
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 300);
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  nlohmann::json status = ws.ArborJson({"status", "--json"});
  EXPECT_EQ(status.value("state", ""), "finished") << status.dump();
  return ws.ArborJson({"show", std::to_string(node), "--json"});
}

// name -> share of the stored profile's components; layer checked when given.
double Share(const nlohmann::json& show, const std::string& name, const char* layer = nullptr) {
  for (const auto& c : show["profile"]["components"]) {
    if (c.value("name", "") != name) continue;
    if (layer != nullptr) {
      EXPECT_EQ(c.value("layer", ""), layer) << name;
    }
    return c.value("share", -1.0);
  }
  ADD_FAILURE() << "no component " << name << " in " << show["profile"].dump();
  return -1;
}

std::string ReprofiledMessage(const nlohmann::json& show) {
  for (const auto& e : show["events"]) {
    if (e.value("kind", "") == "reprofiled") return e.value("message", "");
  }
  return "";
}

TEST(IntegrationProfileFormats, PerfReportGroupedIntoComponents) {
  TempWorkspace ws;
  nlohmann::json show = RunAndShow(
      ws,
      Campaign("perf", "cat '" + kFixtures + "perf_report.txt'",
               "[profile]\nformat = \"perf\"\n"
               "[[profile.group]]\nname = \"matmul\"\nmatch = [\"*gemm*\"]\nlayer = \"kernel\"\n"
               "[[profile.group]]\nname = \"math\"\nmatch = [\"*softmax*\", \"*norm*\", "
               "\"*expf*\"]\nlayer = \"kernel\"\n"));
  ASSERT_TRUE(show["profile"].is_object()) << show.dump();
  EXPECT_NEAR(Share(show, "matmul", "kernel"), 0.3662, 1e-9);
  EXPECT_NEAR(Share(show, "math", "kernel"), 0.3134 + 0.1549 + 0.1303, 1e-9);
  EXPECT_NEAR(Share(show, "other", "other"), 0.9999 - 0.3662 - 0.3134 - 0.1549 - 0.1303, 1e-9);
  ASSERT_TRUE(show["profile"]["raw"].is_array());
  EXPECT_EQ(show["profile"]["raw"][0].value("name", ""), "gemm_tiled");
  EXPECT_NE(ReprofiledMessage(show).find("bottlenecks"), std::string::npos);
}

TEST(IntegrationProfileFormats, PerfScriptDetected) {
  TempWorkspace ws;
  nlohmann::json show =
      RunAndShow(ws, Campaign("perfscript", "cat '" + kFixtures + "perf_script.txt'", ""));
  EXPECT_NEAR(Share(show, "gemm_tiled"), 104.0 / 284, 1e-9);
  EXPECT_NEAR(Share(show, "softmax_rows"), 89.0 / 284, 1e-9);
}

TEST(IntegrationProfileFormats, ChromeTraceKeepsGpuApart) {
  TempWorkspace ws;
  nlohmann::json show =
      RunAndShow(ws, Campaign("trace", "cat '" + kFixtures + "chrome_trace.json'", ""));
  const double total = 92838.4219982681;
  EXPECT_NEAR(Share(show, "softmax_rows", ""), 43945.529 / total, 1e-9);
  EXPECT_NEAR(Share(show, "sgemm_128x64_nn", "kernel"), 7303.931 / total, 1e-9);
  EXPECT_GT(show["profile"].value("total_s", 0.0), 0.05);
}

TEST(IntegrationProfileFormats, CallgrindFromProfileFile) {
  TempWorkspace ws;
  nlohmann::json show = RunAndShow(
      ws,
      Campaign("callgrind", "cp '" + kFixtures + "callgrind_annotate.txt' \"$ARBOR_OUT/cg.txt\"",
               "[profile]\nformat = \"callgrind\"\nprofile_file = \"$ARBOR_OUT/cg.txt\"\n"
               "[[profile.group]]\nname = \"matmul\"\nmatch = [\"gemm_*\"]\n"));
  EXPECT_NEAR(Share(show, "matmul", ""), 129815380.0 / 243584824, 1e-12);
  EXPECT_GT(Share(show, "other", "other"), 0.4);
}

TEST(IntegrationProfileFormats, CollapsedTruncatedToTopN) {
  TempWorkspace ws;
  nlohmann::json show = RunAndShow(
      ws, Campaign("collapsed", "cat '" + kFixtures + "collapsed.txt'", "[profile]\ntop_n = 2\n"));
  ASSERT_EQ(show["profile"]["components"].size(), 3u) << show["profile"].dump();
  EXPECT_NEAR(Share(show, "gemm_tiled"), 104.0 / 284, 1e-12);
  EXPECT_NEAR(Share(show, "softmax_rows"), 89.0 / 284, 1e-12);
  EXPECT_NEAR(Share(show, "other", "other"), (284.0 - 104 - 89) / 284, 1e-12);
  EXPECT_EQ(show["profile"]["raw"].size(), 2u);
}

TEST(IntegrationProfileFormats, GarbageProfileFailsTheStepAndTheRunFinishes) {
  TempWorkspace ws;
  nlohmann::json show = RunAndShow(ws, Campaign("garbage", "echo 'this is not a profile'", ""));
  EXPECT_TRUE(show["profile"].is_null()) << show["profile"].dump();
  std::string message = ReprofiledMessage(show);
  EXPECT_NE(message.find("profile failed"), std::string::npos) << message;
  EXPECT_NE(message.find("nor is it perf, chrome-trace, callgrind or collapsed"), std::string::npos)
      << message;
  ExpectTreeInvariants(LoadTree(ws));
}

TEST(IntegrationProfileFormats, BadProfileAfterAKeepKeepsTheLastGoodOne) {
  TempWorkspace ws;
  // The baseline's profile is good; once X=1 is kept, the profile command prints junk.
  nlohmann::json root =
      RunAndShow(ws, Campaign("lastgood",
                              "if [ \"$X\" = 1 ]; then echo '12 junk lines'; else cat '" +
                                  kFixtures + "perf_report.txt'; fi",
                              "[profile]\nformat = \"perf\"\n"));
  ASSERT_TRUE(root["profile"].is_object());
  std::vector<TreeNode> nodes = LoadTree(ws);
  const TreeNode* kept = FindKey(nodes, "set-x");
  ASSERT_NE(kept, nullptr);
  ASSERT_EQ(kept->outcome, "kept") << kept->diagnosis;
  nlohmann::json show = ws.ArborJson({"show", std::to_string(kept->id), "--json"});
  EXPECT_TRUE(show["profile"].is_null());
  std::string message = ReprofiledMessage(show);
  EXPECT_NE(message.find("perf: no sample lines found"), std::string::npos) << message;
  EXPECT_NE(message.find("keeps the last good profile"), std::string::npos) << message;
}

}  // namespace
}  // namespace arbor::integration
