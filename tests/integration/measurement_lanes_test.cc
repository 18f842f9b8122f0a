// Measurement lanes end to end ([search] lanes = 2, lane_cpus = ["0", "1"];
// docs/lanes.md#measurement-lanes), with the real binary and the local executor: two nodes'
// benchmarks run at once on the two lanes, every benchmark run carries ARBOR_LANE and
// ARBOR_LANE_CPUS and runs pinned to that lane's CPUs (what /proc/self/status says, not what
// Arbor meant), each A/B pair's baseline and candidate runs share one lane, and builds and
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
// ARBOR_LANE_CPUS and the CPUs the kernel lets this shell run on. A benchmark run also writes
// "<node> <lane> <start> <end>" to @AUX@/bench-times.log, and the first A/B run of each
// candidate (not the baseline's, node 1) waits, at most 60 s and only until the first meeting,
// for another node's benchmark to be running; it then touches @AUX@/met. Concurrent
// measurements are thus shown without timing: the test fails only if no two could overlap.
constexpr char kLaneLog[] = R"SH(#!/bin/sh
kind=$1; shift
cpus=$(cat /proc/self/status | grep Cpus_allowed_list | cut -f2)
echo "$kind $ARBOR_OUT ${ARBOR_LANE:--} ${ARBOR_LANE_CPUS:--} $cpus" >> @AUX@/lanes.log
[ "$kind" = bench ] || exec "$@"
start=$(date +%s.%N)
touch @AUX@/benching-$ARBOR_NODE
case "$ARBOR_OUT" in
  */base-*|*/cand-*)
    if [ "$ARBOR_NODE" != 1 ] && [ ! -e @AUX@/met ] && [ ! -e @AUX@/tried-$ARBOR_NODE ]; then
      touch @AUX@/tried-$ARBOR_NODE
      i=0
      while [ $i -lt 1200 ] && [ ! -e @AUX@/met ]; do
        for f in @AUX@/benching-*; do
          [ -e "$f" ] && [ "$f" != @AUX@/benching-$ARBOR_NODE ] && touch @AUX@/met
        done
        sleep 0.05; i=$((i+1))
      done
    fi;;
esac
"$@"
status=$?
rm -f @AUX@/benching-$ARBOR_NODE
echo "$ARBOR_NODE ${ARBOR_LANE:--} $start $(date +%s.%N)" >> @AUX@/bench-times.log
exit $status
)SH";

std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) {
    text.replace(at, from.size(), to);
  }
  return text;
}

TEST(IntegrationMeasurementLanes, TwoNodesMeasureAtOnceEachPinnedToItsLane) {
  TempWorkspace ws;
  WriteAgentCampaign(ws, "ml", 2, /*agent_sleep_s=*/0.1,
                     AgentAction("kernel.speed", "double-speed", 2.0) +
                         EnvAction("sys.boost", "BOOST = \"1.5\"", 1.5));
  const std::string wrap = ws.aux() + "/lane.sh";
  WriteFile(wrap, ReplaceAll(kLaneLog, "@AUX@", ws.aux()));
  ASSERT_EQ(chmod(wrap.c_str(), 0755), 0);
  std::string toml = ReadFile(ws.repo() + "/arbor.toml");
  toml =
      ReplaceAll(toml, "parallel = 2\n", "parallel = 2\nlanes = 2\nlane_cpus = [\"0\", \"1\"]\n");
  toml = ReplaceAll(toml, "build = \"cc -O0", "build = \"" + wrap + " build cc -O0");
  toml = ReplaceAll(toml, "check = \"./bench", "check = \"" + wrap + " check ./bench");
  toml = ReplaceAll(toml, "bench = \"./bench", "bench = \"" + wrap + " bench ./bench");
  ASSERT_NE(toml.find("lanes = 2"), std::string::npos) << toml;
  ws.Write("arbor.toml", toml);
  ws.CommitAll();
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 300);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();

  std::stringstream log(ReadFile(ws.aux() + "/lanes.log"));
  // "n<node>/<label>" -> the lane of its last run: the one recorded (a lane's runs dropped at
  // its node's turn, its base having moved, are measured again later under the same names).
  std::map<std::string, std::string> lane_of;
  int benches = 0;
  for (std::string kind, out, lane, lane_cpus, allowed;
       log >> kind >> out >> lane >> lane_cpus >> allowed;) {
    if (kind != "bench") {
      EXPECT_EQ(lane, "-") << kind << " " << out << " ran on a lane";
      continue;
    }
    ++benches;
    ASSERT_TRUE(lane == "0" || lane == "1") << out << ": ARBOR_LANE=" << lane;
    EXPECT_EQ(lane_cpus, lane) << out;  // lane_cpus = ["0", "1"]
    EXPECT_EQ(allowed, lane) << out << " was not pinned to its lane's CPU";
    fs::path label_dir = fs::path(out).parent_path();
    lane_of[label_dir.parent_path().filename().string() + "/" + label_dir.filename().string()] =
        lane;
  }
  EXPECT_GE(benches, 10);
  // Each pair of an A/B comparison ("base-3" and "cand-3", "confirm-base-0" and
  // "confirm-cand-0", the warm-up "base--1" and "cand--1"): its baseline's run on its
  // candidate's lane.
  int pairs = 0;
  for (const auto& [run, lane] : lane_of) {
    const size_t at =
        run.find("/base-") != std::string::npos ? run.find("/base-") : run.find("/confirm-base-");
    if (at == std::string::npos) continue;
    std::string cand = run;
    cand.replace(cand.find("base-", at), 5, "cand-");
    ASSERT_EQ(lane_of.count(cand), 1u) << run;
    EXPECT_EQ(lane, lane_of.at(cand)) << run << ": baseline and candidate on different lanes";
    ++pairs;
  }
  EXPECT_GE(pairs, 4);

  // Two nodes' benchmarks ran at once, on different lanes (the meeting above made them wait
  // for each other, bounded, instead of timing anything).
  EXPECT_TRUE(fs::exists(ws.aux() + "/met")) << "no two nodes' benchmarks ever ran at once";
  struct Interval {
    std::string node, lane;
    double start, end;
  };
  std::vector<Interval> runs;
  std::stringstream times(ReadFile(ws.aux() + "/bench-times.log"));
  for (Interval i; times >> i.node >> i.lane >> i.start >> i.end;) runs.push_back(i);
  bool overlapped = false;
  for (const Interval& a : runs) {
    for (const Interval& b : runs) {
      overlapped = overlapped ||
                   (a.node != b.node && a.lane != b.lane && a.start < b.end && b.start < a.end);
    }
  }
  EXPECT_TRUE(overlapped) << "no two nodes' benchmarks overlapped on two lanes";
}

}  // namespace
}  // namespace arbor::integration
