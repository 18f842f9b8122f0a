// `arbor stop` (docs/cli.md): stops a running campaign after its current step (or at once when
// the step outlasts --timeout), and the campaign continues to the same answer afterwards.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include "campaign_checks.h"
#include "harness.h"

namespace arbor::integration {
namespace {

// Whether `pid` is a live process (a zombie, reparented and not yet reaped, is dead).
bool Alive(pid_t pid) {
  std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Runs `arbor stop` until it finds the campaign running (bounded: the run takes the lock
// within moments of starting), then returns its result.
ProcResult StopOnceRunning(const TempWorkspace& ws, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"stop", "arbor.toml"};
  args.insert(args.end(), extra.begin(), extra.end());
  ProcResult r;
  for (int i = 0; i < 1200; ++i) {
    r = ws.Arbor(args, {}, 900);
    if (r.exit_code != 4) break;
    usleep(20 * 1000);
  }
  return r;
}

TEST(IntegrationStop, StopsAfterTheCurrentStepAndTheCampaignContinuesToTheSameAnswer) {
  auto ws = TempWorkspace::Toy();
  ProcResult idle = ws->Arbor({"stop", "arbor.toml"});
  EXPECT_EQ(idle.exit_code, 4) << idle.Describe();
  EXPECT_TRUE(Contains(idle.err, "campaign 'toy' is not running (it has never run")) << idle.err;

  auto run = ws->StartArbor({"run", "arbor.toml", "--quiet"});
  ProcResult stop = StopOnceRunning(*ws);
  ASSERT_EQ(stop.exit_code, 0) << stop.Describe();
  EXPECT_TRUE(Contains(stop.out, "stopped campaign 'toy' (pid " + std::to_string(run->pid()) +
                                     ") after its current step"))
      << stop.out;
  ProcResult stopped = run->Wait(60);
  EXPECT_EQ(stopped.exit_code, 130) << "a stopped run exits as interrupted: " << stopped.Describe();
  nlohmann::json status = ws->ArborJson({"status", "arbor.toml", "--json"});
  EXPECT_EQ(status.value("state", ""), "stopped") << status.dump();

  // The lock file stays, but nothing holds it.
  ProcResult stale = ws->Arbor({"stop", "arbor.toml"});
  EXPECT_EQ(stale.exit_code, 4) << stale.Describe();
  EXPECT_TRUE(Contains(stale.err, "is not running (stale lock ")) << stale.err;

  std::vector<TreeNode> at_stop = LoadTree(*ws);
  std::map<int64_t, NodeRecord> before = RecordFinished(*ws, at_stop);
  ProcResult resumed = ws->Arbor({"resume", "arbor.toml", "--quiet"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.Describe();
  ExpectToyFinished(*ws);
  std::vector<TreeNode> nodes = LoadTree(*ws);
  ExpectTreeInvariants(nodes);
  ExpectPreserved(before, *ws);
  ExpectToyOutcomes(*ws, nodes);
}

// A kill -9 of Arbor in the middle of a benchmark: the benchmark's shell dies with it
// (PR_SET_PDEATHSIG), and so, through the watchdog, do its children — one still a child of the
// shell, one an orphan Arbor had adopted — within a few seconds, before any next run.
TEST(IntegrationStop, AKill9OfArborTakesWhatItsCommandsStartedWithIt) {
  TempWorkspace ws;
  const std::string marker = ws.aux() + "/started";
  ws.Write("bench.sh", "sleep 3211.5 & echo $! > '" + marker +
                           ".child'\n"
                           "(sleep 3212.5 & echo $! > '" +
                           marker +
                           ".orphan')\n"
                           "touch '" +
                           marker + "'; wait\n");
  ws.Write("arbor.toml",
           "[campaign]\nname = \"k9\"\nseed = 1\n"
           "[target]\nbuild = \"true\"\nbench = \"sh bench.sh\"\ntimeout = \"10m\"\n"
           "[metric]\nsource = \"json:v\"\nrepetitions = 3\n[search]\nmax_nodes = 2\n"
           "[[action]]\nid = \"app.fast\"\nlayer = \"application\"\ncategory = \"algo\"\n"
           "speedup = 2.0\napply = { env = { FAST = \"1\" } }\n");
  ws.CommitAll();
  auto run = ws.StartArbor({"run", "arbor.toml", "--quiet"});
  for (int i = 0; i < 3000 && access(marker.c_str(), F_OK) != 0; ++i) usleep(100 * 1000);
  ASSERT_EQ(access(marker.c_str(), F_OK), 0) << "the benchmark never started";
  run->Signal(SIGKILL);
  EXPECT_EQ(run->Wait(60).signal, SIGKILL);
  for (const char* which : {".child", ".orphan"}) {
    const std::string text = ReadFile(marker + which);
    ASSERT_FALSE(text.empty()) << "the benchmark wrote no pid for " << which;
    const pid_t pid = static_cast<pid_t>(std::stol(text));
    auto alive = [pid] { return Alive(pid); };
    for (int i = 0; i < 100 && alive(); ++i) usleep(50 * 1000);
    EXPECT_FALSE(alive()) << "the benchmark's " << which << " " << pid << " outlived arbor";
    if (alive()) kill(pid, SIGKILL);
  }
}

// A step that outlasts --timeout: a second SIGTERM makes the run leave at once, killing the
// step's processes first (nothing Arbor started outlives it), and `arbor run` replays the step
// and reaches the answer of an uninterrupted run.
TEST(IntegrationStop, AStepOutlastingTheTimeoutIsLeftAtOnceAndReplayed) {
  auto write = [](TempWorkspace* ws, const std::string& marker) {
    // The hanging benchmark's own child records its pid next to the marker.
    ws->Write("bench.sh", "if [ -n \"$FAST\" ] && [ ! -e '" + marker + "' ]; then sleep 400 & " +
                              "echo $! > '" + marker + ".pid'; touch '" + marker +
                              "'; wait; fi\n"
                              "v=$((100 + ARBOR_REPETITION % 3)); [ -n \"$FAST\" ] && v=$((v*2))\n"
                              "echo \"{\\\"v\\\": $v}\"\n");
    ws->Write("arbor.toml",
              "[campaign]\nname = \"st\"\nseed = 1\n"
              "[target]\nbuild = \"true\"\nbench = \"sh bench.sh\"\ntimeout = \"10m\"\n"
              "[metric]\nsource = \"json:v\"\nrepetitions = 3\n[search]\nmax_nodes = 6\n"
              "[critic]\nmin_effect = 0.1\n"
              "[[action]]\nid = \"app.fast\"\nlayer = \"application\"\ncategory = \"algo\"\n"
              "speedup = 2.0\napply = { env = { FAST = \"1\" } }\n"
              "[[action]]\nid = \"app.noop\"\nlayer = \"application\"\ncategory = \"algo\"\n"
              "speedup = 1.5\napply = { env = { NOOP = \"1\" } }\n");
    ws->CommitAll();
  };
  TempWorkspace reference;
  std::string ref_marker = reference.aux() + "/hung";
  WriteFile(ref_marker, "");  // never hangs
  write(&reference, ref_marker);
  ProcResult ref = reference.Arbor({"run", "arbor.toml", "--quiet"});
  ASSERT_EQ(ref.exit_code, 0) << ref.Describe();

  TempWorkspace ws;
  std::string marker = ws.aux() + "/hung";
  write(&ws, marker);
  auto run = ws.StartArbor({"run", "arbor.toml", "--quiet"});
  for (int i = 0; i < 3000 && access(marker.c_str(), F_OK) != 0; ++i) usleep(100 * 1000);
  ASSERT_EQ(access(marker.c_str(), F_OK), 0) << "the hanging benchmark never started";
  ProcResult stop = ws.Arbor({"stop", "arbor.toml", "--timeout", "1s"});
  ASSERT_EQ(stop.exit_code, 0) << stop.Describe();
  EXPECT_TRUE(Contains(stop.out, "at once: its current step outlasted 1s")) << stop.out;
  EXPECT_EQ(run->Wait(60).exit_code, 130);
  // The benchmark's `sleep 400` died with the run (at most a moment later: SIGKILL is
  // delivered asynchronously); reparented, it may linger as a zombie, which is dead.
  std::string pid_text = ReadFile(marker + ".pid");
  ASSERT_FALSE(pid_text.empty()) << "the hanging benchmark wrote no pid";
  const pid_t sleeper = static_cast<pid_t>(std::stol(pid_text));
  auto alive = [sleeper] { return Alive(sleeper); };
  for (int i = 0; i < 100 && alive(); ++i) usleep(50 * 1000);
  EXPECT_FALSE(alive()) << "the benchmark's child " << sleeper << " outlived arbor";
  ProcResult resumed = ws.Arbor({"run", "arbor.toml", "--quiet"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.Describe();
  std::vector<TreeNode> expected = LoadTree(reference);
  std::vector<TreeNode> nodes = LoadTree(ws);
  ExpectTreeInvariants(nodes);
  ASSERT_EQ(nodes.size(), expected.size()) << DescribeTree(nodes) << "vs\n"
                                           << DescribeTree(expected);
  for (size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_EQ(nodes[i].Key(), expected[i].Key());
    EXPECT_EQ(nodes[i].outcome, expected[i].outcome) << nodes[i].Key();
  }
  EXPECT_EQ(FindKey(nodes, "app.fast")->outcome, "kept") << DescribeTree(nodes);
}

// Two SIGTERMs in the middle of a benchmark that leaves a tree behind: a child in its process
// group that ignores SIGTERM, and a daemon that double-forked into a session of its own and
// ignores SIGTERM too. The first signal waits for the step (which never ends); the second
// leaves at once, and nothing of that tree may be left once `arbor` has exited: the daemon,
// out of every group and session Arbor tracks, is reached as the adopted child it is. The
// campaign then resumes to its end.
TEST(IntegrationStop, ASecondSigtermMidBenchLeavesNothingOfItsTreeBehind) {
  TempWorkspace ws;
  const std::string mark = ws.aux() + "/hung";
  ws.Write("bench.sh",
           "if [ -n \"$FAST\" ] && [ ! -e '" + mark +
               "' ]; then\n"
               "  (setsid sh -c 'trap \"\" TERM; echo $$ > \"$0\"; exec sleep 3601.5' '" +
               mark +
               ".daemon' &)\n"
               "  trap '' TERM\n"
               "  sleep 3602.5 & echo $! > '" +
               mark +
               ".child'\n"
               "  while [ ! -s '" +
               mark +
               ".daemon' ]; do sleep 0.05; done\n"
               "  touch '" +
               mark +
               "'; wait\n"
               "fi\n"
               "v=$((100 + ARBOR_REPETITION % 3)); [ -n \"$FAST\" ] && v=$((v*2))\n"
               "echo \"{\\\"v\\\": $v}\"\n");
  ws.Write("arbor.toml",
           "[campaign]\nname = \"tt\"\nseed = 1\n"
           "[target]\nbuild = \"true\"\nbench = \"sh bench.sh\"\ntimeout = \"10m\"\n"
           "[metric]\nsource = \"json:v\"\nrepetitions = 3\n[search]\nmax_nodes = 2\n"
           "[critic]\nmin_effect = 0.1\n"
           "[[action]]\nid = \"app.fast\"\nlayer = \"application\"\ncategory = \"algo\"\n"
           "speedup = 2.0\napply = { env = { FAST = \"1\" } }\n");
  ws.CommitAll();
  auto run = ws.StartArbor({"run", "arbor.toml", "--quiet"});
  for (int i = 0; i < 3000 && access(mark.c_str(), F_OK) != 0; ++i) usleep(100 * 1000);
  ASSERT_EQ(access(mark.c_str(), F_OK), 0) << "the hanging benchmark never started";
  run->Signal(SIGTERM);
  usleep(500 * 1000);
  EXPECT_TRUE(Alive(run->pid())) << "the first signal must wait for the step";
  run->Signal(SIGTERM);
  EXPECT_EQ(run->Wait(60).exit_code, 130);
  for (const char* which : {".child", ".daemon"}) {
    const std::string text = ReadFile(mark + which);
    ASSERT_FALSE(text.empty()) << "the benchmark wrote no pid for " << which;
    const pid_t pid = static_cast<pid_t>(std::stol(text));
    for (int i = 0; i < 100 && Alive(pid); ++i) usleep(50 * 1000);
    EXPECT_FALSE(Alive(pid)) << "the benchmark's " << which << " " << pid << " outlived arbor";
    if (Alive(pid)) kill(pid, SIGKILL);
  }
  ProcResult resumed = ws.Arbor({"run", "arbor.toml", "--quiet"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.Describe();
  EXPECT_EQ(FindKey(LoadTree(ws), "app.fast")->outcome, "kept");
}

}  // namespace
}  // namespace arbor::integration
