// search.parallel = K end to end (src/core/orchestrator/parallel.cc): implementations overlap,
// measurements do not, and the campaign reaches the same answer as with K = 1. Killed with -9 while
// agents are at work (at an arbitrary moment, and at deterministic store writes of a batch), it
// resumes to that answer with no node left in flight, none duplicated and no worktree left behind.
//
// Why the kept *set* may be compared across K: every win here multiplies the metric by a fixed
// factor and every failure fails whatever it is applied on, and a batch's nodes whose base moved
// are re-dispatched on the incumbent. So each candidate is eventually tried on top of the other
// wins in either mode; only the order and the tree's shape differ.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "agent_campaign.h"
#include "campaign_checks.h"
#include "harness.h"
#include "lane_scripts.h"

namespace arbor::integration {
namespace {

namespace fs = std::filesystem;

const std::set<std::string> kKept = {"kernel.speed", "kernel.tune", "sys.boost", kProposedAction};
constexpr double kBestValue = 1000 * 2 * 2 * 1.5 * 1.3;  // the wins' factors

std::string Actions() {
  return AgentAction("kernel.speed", "double-speed", 2.0) +
         AgentAction("kernel.tune", "double-tune", 1.9) + AgentAction("kernel.noop", "noop", 1.8) +
         EnvAction("sys.boost", "BOOST = \"1.5\"", 1.5) +
         EnvAction("sys.wrong", "WRONG = \"1\"", 1.4);
}

std::string Describe(const std::vector<TreeNode>& nodes) {
  std::string out;
  for (const auto& n : nodes) {
    out += "  #" + std::to_string(n.id) + " <- #" + std::to_string(n.parent) + " " + n.Key() +
           ": " + n.outcome + " " + n.diagnosis + "\n";
  }
  return out;
}

// A finished campaign: state, tree, kept set, best value, worktrees, branch and store.
void ExpectFinished(const TempWorkspace& ws, const std::string& name) {
  nlohmann::json status = ws.ArborJson({"status", "--json"});
  EXPECT_EQ(status.value("state", ""), "finished") << status.dump();
  std::vector<TreeNode> nodes = LoadTree(ws);
  ExpectTreeInvariants(nodes);  // every node finished, no sibling ran the same candidate twice
  EXPECT_EQ(KeysWithOutcome(nodes, "kept"), kKept) << Describe(nodes);
  // With the budget left, each kept environment change is taken back out once (a drop); the
  // agents' patches are not (moves.h, Drops): every drop costs, and is reverted.
  EXPECT_EQ(KeysWithOutcome(nodes, "reverted"),
            (std::set<std::string>{"sys.wrong", "-sys.boost", std::string("-") + kProposedAction}))
      << Describe(nodes);
  EXPECT_EQ(KeysWithOutcome(nodes, "crashed"), std::set<std::string>{"kernel.noop"})
      << Describe(nodes);
  ASSERT_TRUE(status.contains("best") && status["best"].is_object()) << status.dump();
  ASSERT_TRUE(status["best"]["value"].is_number()) << status.dump();
  EXPECT_NEAR(status["best"]["value"].get<double>(), kBestValue, 0.03 * kBestValue)
      << status.dump();
  // No worktree is left: not in git's list, not in the campaign's folder.
  EXPECT_EQ(WorktreeCount(ws), 1);
  std::string wt_dir = ws.repo() + "/.arbor/" + name + "/worktrees";
  if (fs::exists(wt_dir)) {
    EXPECT_TRUE(fs::is_empty(wt_dir)) << wt_dir;
  }
  // The branch points at the incumbent's commit.
  int64_t best = status["best"].value("node", int64_t{0});
  const TreeNode* inc = nullptr;
  for (const auto& n : nodes) {
    if (n.id == best) inc = &n;
  }
  ASSERT_NE(inc, nullptr) << status.dump();
  ProcResult branch = ws.Git({"rev-parse", "arbor/" + name});
  EXPECT_EQ(branch.out, inc->commit + "\n") << branch.Describe();
  // The store survived every kill intact.
  std::string db = ws.repo() + "/.arbor/" + name + "/arbor.db";
  ASSERT_TRUE(fs::exists(db)) << db;
  // The sqlite3 CLI comes with scripts/deps.
  ProcResult check = RunProcess({"sqlite3", db, "PRAGMA integrity_check;"}, ws.root());
  EXPECT_EQ(check.out, "ok\n") << check.Describe();
}

TEST(IntegrationParallel, SameAnswerAsSequentialAndAgentsOverlap) {
  std::map<int, double> best;
  for (int parallel : {1, 3}) {
    SCOPED_TRACE("parallel = " + std::to_string(parallel));
    TempWorkspace ws;
    WriteAgentCampaign(ws, "par", parallel, /*agent_sleep_s=*/1, Actions());
    ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 300);
    ASSERT_EQ(run.exit_code, 0) << run.Describe();
    ExpectFinished(ws, "par");
    best[parallel] = ws.ArborJson({"status", "--json"})["best"].value("value", 0.0);
    // Concurrency, not speed: with K = 3 some two agent runs were at work at the same time;
    // with K = 1 never.
    std::vector<AgentRun> runs = AgentRuns(ws);
    EXPECT_GE(runs.size(), 3u);  // one per agent action, more when re-dispatched
    EXPECT_EQ(AnyOverlap(runs), parallel > 1);
  }
  EXPECT_NEAR(best[1], best[3], 0.03 * best[1]);
}

// Build lanes (docs/lanes.md): with K = 3 two candidates' builds run at the same time, and no
// benchmark run ever overlaps a build or a check (the local executor: a measurement needs the
// machine). Shown without timing: a candidate's build waits for another one to be running
// (lane_scripts.h), and every build, check and benchmark records its [start, end] from the same
// clock.
constexpr char kLaneWrap[] = R"SH(#!/bin/sh
# $1: build | check | bench; the rest: the command. Logs [start, end] to @AUX@/lane-*.
kind=$1; shift
log=@AUX@/lane-$kind-$ARBOR_NODE-$$
start=$(date +%s.%N)
[ "$kind" = build ] && . @AUX@/meet.sh
"$@"; rc=$?
echo "$start $(date +%s.%N)" > "$log"
exit $rc
)SH";

struct Interval {
  std::string kind;
  double start = 0;
  double end = 0;
};

std::vector<Interval> LaneIntervals(const TempWorkspace& ws) {
  std::vector<Interval> out;
  for (const auto& entry : fs::directory_iterator(ws.aux())) {
    std::string name = entry.path().filename().string();
    if (name.rfind("lane-", 0) != 0) continue;
    Interval i;
    i.kind = name.substr(5, name.find('-', 5) - 5);
    std::stringstream in(ReadFile(entry.path().string()));
    in >> i.start >> i.end;
    out.push_back(i);
  }
  return out;
}

std::string ReplaceOnce(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(IntegrationParallel, BuildsOverlapButNeverABenchmark) {
  TempWorkspace ws;
  WriteAgentCampaign(ws, "par", 3, /*agent_sleep_s=*/0.3, Actions());
  std::string wrap = ws.aux() + "/lane.sh";
  std::string script = kLaneWrap;
  for (size_t at; (at = script.find("@AUX@")) != std::string::npos;) {
    script.replace(at, 5, ws.aux());
  }
  WriteFile(wrap, script);
  ASSERT_EQ(chmod(wrap.c_str(), 0755), 0);
  std::string meet = kMeetAnotherBuild;
  for (size_t at; (at = meet.find("@AUX@")) != std::string::npos;) meet.replace(at, 5, ws.aux());
  WriteFile(ws.aux() + "/meet.sh", meet);
  std::string toml = ReadFile(ws.repo() + "/arbor.toml");
  toml = ReplaceOnce(toml, "build = \"cc -O0", "build = \"" + wrap + " build cc -O0");
  toml = ReplaceOnce(toml, "check = \"./bench", "check = \"" + wrap + " check ./bench");
  toml = ReplaceOnce(toml, "bench = \"./bench", "bench = \"" + wrap + " bench ./bench");
  ws.Write("arbor.toml", toml);
  ws.CommitAll();
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 300);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  ExpectFinished(ws, "par");
  EXPECT_TRUE(fs::exists(ws.aux() + "/met")) << "no two candidates' builds ran at once";
  std::vector<Interval> runs = LaneIntervals(ws);
  int builds = 0, benches = 0;
  for (const Interval& b : runs) {
    if (b.kind != "bench") {
      builds += b.kind == "build" ? 1 : 0;
      continue;
    }
    ++benches;
    for (const Interval& o : runs) {
      if (o.kind == "bench") continue;
      EXPECT_FALSE(b.start < o.end && o.start < b.end)
          << "a benchmark [" << b.start << ", " << b.end << "] overlapped a " << o.kind << " ["
          << o.start << ", " << o.end << "]";
    }
  }
  EXPECT_GE(builds, 4);
  EXPECT_GE(benches, 10);
}

// The nodes in flight at the kill are finished after the resume, under their own ids.
void ResumeAndCheck(const TempWorkspace& ws, const std::vector<TreeNode>& at_kill) {
  std::map<int64_t, NodeRecord> before = RecordFinished(ws, at_kill);
  nlohmann::json status = ws.ArborJson({"status", "--json"});
  EXPECT_NE(status.value("state", ""), "finished") << status.dump();
  ProcResult resumed = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 300);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.Describe();
  ExpectFinished(ws, "par");
  ExpectPreserved(before, ws);
  std::vector<TreeNode> after = LoadTree(ws);
  std::map<int64_t, const TreeNode*> by_id;
  for (const auto& n : after) by_id[n.id] = &n;
  for (const auto& n : at_kill) {
    if (IsFinished(n.outcome)) continue;
    ASSERT_TRUE(by_id.count(n.id)) << "node " << n.id << " in flight at the kill disappeared";
    EXPECT_EQ(by_id[n.id]->Key(), n.Key());
  }
}

TEST(IntegrationParallel, KilledWhileAgentsWorkThenResumed) {
  TempWorkspace ws;
  WriteAgentCampaign(ws, "par", 3, /*agent_sleep_s=*/2, Actions());
  auto proc = ws.StartArbor({"run", "arbor.toml", "--quiet"});
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (AgentStarts(ws) < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_GE(AgentStarts(ws), 2) << "no parallel agent runs started";
  proc->Signal(SIGKILL);
  ProcResult killed = proc->Wait(30);
  ASSERT_EQ(killed.signal, SIGKILL) << "the campaign ended before the kill: " << killed.Describe();
  std::vector<TreeNode> at_kill = LoadTree(ws);
  int in_flight = 0;
  for (const auto& n : at_kill) in_flight += IsFinished(n.outcome) ? 0 : 1;
  EXPECT_GE(in_flight, 2) << Describe(at_kill);
  // The agents (scripts the runner's `sh -c` forked, out of reach of its PR_SET_PDEATHSIG) die
  // with the engine too, through the watchdog, within seconds: none may go on writing into a
  // worktree the resumed run re-creates. Each wrote aux/started-<node>-<pid>.
  for (const auto& entry : fs::directory_iterator(ws.aux())) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("started-", 0) != 0) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name.substr(name.rfind('-') + 1)));
    for (int i = 0; i < 200 && ProcessAlive(pid); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_FALSE(ProcessAlive(pid)) << "agent " << name << " outlived the kill -9";
    if (ProcessAlive(pid)) kill(pid, SIGKILL);
  }
  ResumeAndCheck(ws, at_kill);
}

class IntegrationParallelCrashAt : public ::testing::TestWithParam<const char*> {};

TEST_P(IntegrationParallelCrashAt, KilledAtAStoreWriteOfABatchResumes) {
  TempWorkspace ws;
  WriteAgentCampaign(ws, "par", 3, /*agent_sleep_s=*/0.3, Actions());
  ProcResult crashed =
      ws.Arbor({"run", "arbor.toml", "--quiet"}, {{"ARBOR_CRASH_AT", GetParam()}}, 300);
  ASSERT_EQ(crashed.signal, SIGKILL)
      << "expected to die at " << GetParam() << ": " << crashed.Describe();
  std::vector<TreeNode> at_kill = LoadTree(ws);
  ResumeAndCheck(ws, at_kill);
  if (std::string(GetParam()) == "after:kept:1") {
    // The batch's other nodes were implemented on the old incumbent: the resumed run
    // re-dispatches them on the new one.
    int requeued = 0;
    for (const auto& n : at_kill) {
      if (!IsFinished(n.outcome) && HasEvent(ws, n.id, "requeued", "re-dispatched")) ++requeued;
    }
    EXPECT_GE(requeued, 1) << Describe(at_kill);
  }
}

// The batch being opened (baseline = dispatched:1), an in-flight result recorded while the
// first node is measured, and both sides of the first keep.
INSTANTIATE_TEST_SUITE_P(Points, IntegrationParallelCrashAt,
                         ::testing::Values("after:dispatched:3", "after:built:2", "before:kept:1",
                                           "after:kept:1"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (c == ':') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace arbor::integration
