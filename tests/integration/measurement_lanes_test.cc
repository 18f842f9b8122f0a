// Measurement lanes end to end ([search] lanes = 2, docs/lanes.md#measurement-lanes), with the
// real binary and the local executor: every benchmark run carries ARBOR_LANE and
// ARBOR_LANE_CPUS and runs pinned to that lane's CPUs (what /proc/self/status says, not what
// Arbor meant), each measurement's baseline and candidate runs share one lane, and builds and
// checks run on no lane.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "agent_campaign.h"
#include "harness.h"

namespace arbor::integration {
namespace {

namespace fs = std::filesystem;

// $1: build | check | bench; the rest: the command. One line per run in @AUX@/lanes.log:
// kind, $ARBOR_OUT (names the node and the run: .../n<node>/<label>/out), ARBOR_LANE,
// ARBOR_LANE_CPUS and the CPUs the kernel lets this shell run on.
constexpr char kLaneLog[] = R"SH(#!/bin/sh
kind=$1; shift
cpus=$(cat /proc/self/status | grep Cpus_allowed_list | cut -f2)
echo "$kind $ARBOR_OUT ${ARBOR_LANE:--} ${ARBOR_LANE_CPUS:--} $cpus" >> @AUX@/lanes.log
exec "$@"
)SH";

std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) {
    text.replace(at, from.size(), to);
  }
  return text;
}

TEST(IntegrationMeasurementLanes, BenchmarksRunPinnedToTheirLaneAndEachComparisonOnOne) {
  TempWorkspace ws;
  WriteAgentCampaign(ws, "ml", 2, /*agent_sleep_s=*/0.1,
                     AgentAction("kernel.speed", "double-speed", 2.0) +
                         EnvAction("sys.boost", "BOOST = \"1.5\"", 1.5));
  const std::string wrap = ws.aux() + "/lane.sh";
  WriteFile(wrap, ReplaceAll(kLaneLog, "@AUX@", ws.aux()));
  ASSERT_EQ(chmod(wrap.c_str(), 0755), 0);
  std::string toml = ReadFile(ws.repo() + "/arbor.toml");
  toml = ReplaceAll(toml, "parallel = 2\n", "parallel = 2\nlanes = 2\n");
  toml = ReplaceAll(toml, "build = \"cc -O0", "build = \"" + wrap + " build cc -O0");
  toml = ReplaceAll(toml, "check = \"./bench", "check = \"" + wrap + " check ./bench");
  toml = ReplaceAll(toml, "bench = \"./bench", "bench = \"" + wrap + " bench ./bench");
  ASSERT_NE(toml.find("lanes = 2"), std::string::npos) << toml;
  ws.Write("arbor.toml", toml);
  ws.CommitAll();
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 300);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();

  std::stringstream log(ReadFile(ws.aux() + "/lanes.log"));
  std::map<std::string, std::set<std::string>> lanes_of;  // "n<node>/<arm kind>" -> lanes
  int benches = 0;
  for (std::string kind, out, lane, lane_cpus, allowed;
       log >> kind >> out >> lane >> lane_cpus >> allowed;) {
    if (kind != "bench") {
      EXPECT_EQ(lane, "-") << kind << " " << out << " ran on a lane";
      continue;
    }
    ++benches;
    ASSERT_TRUE(lane == "0" || lane == "1") << out << ": ARBOR_LANE=" << lane;
    EXPECT_EQ(lane_cpus, lane) << out;  // no lane_cpus: lane i is CPU i
    EXPECT_EQ(allowed, lane) << out << " was not pinned to its lane's CPU";
    // .../n<node>/<label>/out; the label's arm ("base-3", "confirm-cand-1", "bench-0") less
    // its repetition and side names the measurement.
    fs::path label_dir = fs::path(out).parent_path();
    std::string label = label_dir.filename().string();
    std::string node = label_dir.parent_path().filename().string();
    std::string measurement = label.rfind("confirm-", 0) == 0 ? "confirm"
                              : label.rfind("bench-", 0) == 0 ? "self"
                                                              : "ab";
    lanes_of[node + "/" + measurement].insert(lane);
  }
  EXPECT_GE(benches, 10);
  for (const auto& [measurement, lanes] : lanes_of) {
    EXPECT_EQ(lanes.size(), 1u) << measurement << ": baseline and candidate on different lanes";
  }
}

}  // namespace
}  // namespace arbor::integration
