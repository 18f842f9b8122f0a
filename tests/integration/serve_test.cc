// [target.serve] end to end (docs/campaign-file.md): a campaign on a server that daemonises
// (double fork, its own session, its working directory left) and whose benchmark drives it over
// HTTP on loopback (serve_target.cc). Every benchmark run must have been answered by the live
// server of its own node and worktree, with no other server of the campaign up; after the
// campaign, a second SIGTERM or a kill -9 mid-benchmark, no process of any server is left
// (found by the marker every one of them carries, ARBOR_SERVE_ID).
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "campaign_checks.h"
#include "harness.h"

namespace arbor::integration {
namespace {

namespace fs = std::filesystem;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Live processes (zombies are dead) whose environment holds an entry starting with `prefix`.
std::set<pid_t> ProcessesWithEnv(const std::string& prefix) {
  std::set<pid_t> out;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const std::string proc = std::string("/proc/") + e->d_name;
    const std::string stat = ReadFile(proc + "/stat");
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z') continue;
    const std::string env = ReadFile(proc + "/environ");
    for (size_t pos = 0; pos < env.size();) {
      size_t end = env.find('\0', pos);
      if (end == std::string::npos) end = env.size();
      if (env.compare(pos, prefix.size(), prefix) == 0) out.insert(std::atoi(e->d_name));
      pos = end + 1;
    }
  }
  closedir(dir);
  return out;
}

// Every process of every server of the campaign in `ws`.
std::set<pid_t> ServerProcesses(const TempWorkspace& ws) {
  return ProcessesWithEnv("ARBOR_SERVE_ID=" + ws.repo() + "/.arbor/");
}

// Waits (up to 15 s: the watchdog works for two) for the campaign's servers to be gone.
std::set<pid_t> ServersLeftAfter(const TempWorkspace& ws) {
  std::set<pid_t> left = ServerProcesses(ws);
  for (int i = 0; i < 150 && !left.empty(); ++i) {
    usleep(100 * 1000);
    left = ServerProcesses(ws);
  }
  for (pid_t p : left) kill(p, SIGKILL);  // not to disturb the tests after this one
  return left;
}

// A campaign on arbor_serve_target: `flags` are added to the server's command line (through
// the state's $SERVE_FLAGS as well), `bench` replaces the plain load run, `actions` is TOML.
std::string Campaign(const std::string& name, const std::string& bench,
                     const std::string& serve_extra, const std::string& actions, int max_nodes) {
  const std::string bin = SERVE_TARGET_BIN;
  return "[campaign]\nname = \"" + name + "\"\nseed = 3\n\n[target]\nbuild = \"true\"\n" +
         "check = \"" + bin + " health --port $ARBOR_PORT\"\n" + "bench = '''" + bench +
         "'''\ntimeout = \"2m\"\n\n[target.serve]\n" + "command = \"" + bin +
         " serve --port $ARBOR_PORT --daemon --worker $SERVE_FLAGS\"\n" + "ready = \"" + bin +
         " health --port $ARBOR_PORT\"\n" + "stop = \"" + bin + " shutdown --port $ARBOR_PORT\"\n" +
         serve_extra +
         "\n[metric]\nname = \"v\"\nsource = \"json:v\"\nrepetitions = 2\n\n"
         "[[metric.guard]]\nname = \"p99_ms\"\nsource = \"json:p99_ms\"\nmax = 60000\n\n"
         "[search]\nmax_nodes = " +
         std::to_string(max_nodes) + "\n\n" + actions;
}

std::string Load() {
  return std::string(SERVE_TARGET_BIN) + " load --port $ARBOR_PORT --requests 3";
}

std::string Action(const std::string& id, double speedup, const std::string& env) {
  return "[[action]]\nid = \"" + id + "\"\nlayer = \"application\"\ncategory = \"" + id +
         "\"\nspeedup = " + std::to_string(speedup) + "\napply = { env = { " + env + " } }\n\n";
}

TEST(IntegrationServe, EveryEvaluationRunsAgainstItsOwnLiveDaemonAndNoneOutlivesTheCampaign) {
  TempWorkspace ws;
  ws.Write(
      "arbor.toml",
      Campaign("served", Load(), "",
               Action("fast", 2.0, "SPEED = \"2\"") + Action("slow", 1.5, "SPEED = \"0.5\""), 3));
  ws.CommitAll();
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 600);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_EQ(ServerProcesses(ws), std::set<pid_t>{}) << "a server outlived the campaign";
  std::vector<TreeNode> nodes = LoadTree(ws);
  ExpectTreeInvariants(nodes);
  const TreeNode* fast = FindKey(nodes, "fast");
  ASSERT_NE(fast, nullptr) << DescribeTree(nodes);
  EXPECT_EQ(fast->outcome, "kept") << DescribeTree(nodes);
  const TreeNode* slow = FindKey(nodes, "slow");
  ASSERT_NE(slow, nullptr) << DescribeTree(nodes);
  EXPECT_EQ(slow->outcome, "reverted") << DescribeTree(nodes);

  // Every benchmark run (the baseline's, both arms of every A/B, the final confirmation) was
  // answered by a live server of its own node and worktree, the only server of the campaign up.
  const std::string runs = ws.repo() + "/.arbor/served/runs";
  int benches = 0;
  std::set<int> server_pids;
  for (const auto& node_dir : fs::directory_iterator(runs)) {
    for (const auto& run_dir : fs::directory_iterator(node_dir.path())) {
      const std::string label = run_dir.path().filename().string();
      if (label.rfind("serve-", 0) == 0) {
        EXPECT_TRUE(Contains(ReadFile(run_dir.path().string() + "/stderr"), "serving on"))
            << "the server's stderr is not in its log: " << run_dir.path();
        continue;
      }
      const std::string out = ReadFile(run_dir.path().string() + "/stdout");
      if (!Contains(out, "\"server\"")) continue;
      ++benches;
      auto j = nlohmann::json::parse(out);
      EXPECT_EQ(j["server"]["node"], j["client_node"]) << run_dir.path() << ": " << out;
      EXPECT_EQ(j["server"]["worktree"], j["client_worktree"]) << run_dir.path() << ": " << out;
      EXPECT_EQ(j["server"]["servers"], 1) << run_dir.path() << ": " << out;
      EXPECT_EQ(node_dir.path().filename().string(), "n" + j["client_node"].get<std::string>());
      server_pids.insert(j["server"]["pid"].get<int>());
    }
  }
  // Baseline 4, each A/B 1 warm-up pair + 2 pairs (+ confirmation), the final confirmation 2.
  EXPECT_GE(benches, 14);
  EXPECT_GE(server_pids.size(), 4u) << "the arms of an A/B restart their servers as they alternate";
  // The graceful stop ran: the servers said they were shutting down.
  int graceful = 0;
  for (const auto& node_dir : fs::directory_iterator(runs)) {
    for (const auto& run_dir : fs::directory_iterator(node_dir.path())) {
      graceful += Contains(ReadFile(run_dir.path().string() + "/stderr"), "shutting down") ? 1 : 0;
    }
  }
  EXPECT_GE(graceful, 4);
}

// A second SIGTERM (or `arbor stop --timeout` running out) while a benchmark talks to the
// server: Arbor leaves at once, and the daemon it started — in no session of Arbor's, re-parented
// to Arbor, working in / — dies with it (the watchdog, by its marker).
void ExpectNoServerLeftAfterASignal(bool second_sigterm) {
  TempWorkspace ws;
  const std::string started = ws.aux() + "/benching";
  ws.Write("arbor.toml", Campaign("stopped", Load() + " && touch '" + started + "' && sleep 3601",
                                  "", Action("fast", 2.0, "SPEED = \"2\""), 2));
  ws.CommitAll();
  auto run = ws.StartArbor({"run", "arbor.toml", "--quiet"});
  for (int i = 0; i < 3000 && access(started.c_str(), F_OK) != 0; ++i) usleep(100 * 1000);
  ASSERT_EQ(access(started.c_str(), F_OK), 0) << "the benchmark never started";
  ASSERT_FALSE(ServerProcesses(ws).empty()) << "no server while the benchmark runs";
  if (second_sigterm) {
    run->Signal(SIGTERM);
    usleep(200 * 1000);
    run->Signal(SIGTERM);
    ProcResult r = run->Wait(120);
    EXPECT_EQ(r.exit_code, 130) << r.Describe();
  } else {
    run->Signal(SIGKILL);
    EXPECT_EQ(run->Wait(60).signal, SIGKILL);
  }
  EXPECT_EQ(ServersLeftAfter(ws), std::set<pid_t>{}) << "a server outlived arbor";
}

TEST(IntegrationServe, ASecondSigtermMidBenchLeavesNoServerProcess) {
  ExpectNoServerLeftAfterASignal(true);
}

TEST(IntegrationServe, AKill9OfArborMidBenchLeavesNoServerProcess) {
  ExpectNoServerLeftAfterASignal(false);
}

// The candidate's server crashes on its third request, in the middle of its warm-up run: the
// node is a runtime crash with the server's own last words, and the campaign goes on.
TEST(IntegrationServe, AServerThatDiesDuringTheBenchIsTheNodesCrashWithItsLog) {
  TempWorkspace ws;
  ws.Write("arbor.toml", Campaign("crash", Load(), "",
                                  Action("crashy", 3.0, "SERVE_FLAGS = \"--crash-after 2\""), 2));
  ws.CommitAll();
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 600);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_EQ(ServerProcesses(ws), std::set<pid_t>{});
  std::vector<TreeNode> nodes = LoadTree(ws);
  const TreeNode* crashy = FindKey(nodes, "crashy");
  ASSERT_NE(crashy, nullptr) << DescribeTree(nodes);
  EXPECT_EQ(crashy->outcome, "crashed") << DescribeTree(nodes);
  EXPECT_TRUE(Contains(crashy->diagnosis, "runtime_crash")) << crashy->diagnosis;
  nlohmann::json show = ws.ArborJson({"show", std::to_string(crashy->id), "--json"});
  const std::string text = show.dump();
  EXPECT_TRUE(Contains(text, "was killed by signal 11 (SIGSEGV) during the bench")) << text;
  EXPECT_TRUE(Contains(text, "Segmentation fault coming after 2 requests")) << text;
}

// A server that never answers `ready`, and one that exits before it is ready: each node says so
// with the server's log, and neither leaves a process behind.
TEST(IntegrationServe, AServerThatIsNeverReadyOrExitsFirstIsDiagnosedWithItsLog) {
  TempWorkspace ws;
  ws.Write("arbor.toml", Campaign("unready", Load(), "ready_timeout = \"8s\"\n",
                                  Action("hang", 3.0, "SERVE_FLAGS = \"--never-ready\"") +
                                      Action("broken", 2.0, "SERVE_FLAGS = \"--exit 3\""),
                                  3));
  ws.CommitAll();
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 600);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_EQ(ServerProcesses(ws), std::set<pid_t>{});
  std::vector<TreeNode> nodes = LoadTree(ws);
  const TreeNode* hang = FindKey(nodes, "hang");
  ASSERT_NE(hang, nullptr) << DescribeTree(nodes);
  EXPECT_NE(hang->outcome, "kept");
  std::string text = ws.ArborJson({"show", std::to_string(hang->id), "--json"}).dump();
  EXPECT_TRUE(Contains(text, "was not ready within 8s")) << text;
  EXPECT_TRUE(Contains(text, "serving on 127.0.0.1")) << "the server's log tail: " << text;
  const TreeNode* broken = FindKey(nodes, "broken");
  ASSERT_NE(broken, nullptr) << DescribeTree(nodes);
  EXPECT_NE(broken->outcome, "kept");
  text = ws.ArborJson({"show", std::to_string(broken->id), "--json"}).dump();
  EXPECT_TRUE(Contains(text, "exited with code 3 before it was ready")) << text;
  EXPECT_TRUE(Contains(text, "exiting with 3 as asked")) << text;
}

// The served example (examples/tinyserve/serve.toml) in a short form: its real build, its
// daemonising tinyserve --serve and tsload over loopback. Every benchmark run was answered
// in full, the p99 guard held on every sample of every node that was kept, and nothing of any
// server is left.
TEST(IntegrationServe, TheServedTinyserveExampleRunsItsShortForm) {
  TempWorkspace ws;
  for (const auto& entry : fs::directory_iterator(TINYSERVE_DIR)) {
    const std::string name = entry.path().filename().string();
    if (name == ".arbor" || name.rfind("build", 0) == 0) continue;  // a local run's state
    fs::copy(entry.path(), fs::path(ws.repo()) / name, fs::copy_options::recursive);
  }
  std::string toml = ReadFile(ws.repo() + "/serve.toml");
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"--requests 24", "--requests 8"}, {"repetitions = 5", "repetitions = 3"}}) {
    const size_t at = toml.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    toml.replace(at, from.size(), to);
  }
  ws.Write("serve.toml", toml);
  ws.CommitAll();
  ProcResult run =
      ws.Arbor({"run", "serve.toml", "--quiet", "--max-nodes", "2", "--max-time", "30s"}, {}, 900);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_EQ(ServerProcesses(ws), std::set<pid_t>{}) << "a server outlived the campaign";
  std::vector<TreeNode> nodes = ParseTree(ws.ArborJson({"tree", "serve.toml", "--format", "json"}));
  ExpectTreeInvariants(nodes);
  int evaluated = 0;
  for (const TreeNode& n : nodes) {
    if (!IsFinished(n.outcome)) continue;
    ++evaluated;
    if (n.outcome != "kept" && n.outcome != "baseline") continue;
    nlohmann::json show = ws.ArborJson({"show", std::to_string(n.id), "serve.toml", "--json"});
    for (const auto& s : show["samples"]) {
      if (!s["extra"].contains("p99_ms")) continue;
      EXPECT_LE(s["extra"]["p99_ms"].get<double>(), 1000.0) << "#" << n.id << " " << s.dump();
    }
  }
  EXPECT_GE(evaluated, 2) << DescribeTree(nodes);
  int benches = 0;
  const std::string runs = ws.repo() + "/.arbor/tinyserve-http/runs";
  for (const auto& node_dir : fs::directory_iterator(runs)) {
    for (const auto& run_dir : fs::directory_iterator(node_dir.path())) {
      const std::string out = ReadFile(run_dir.path().string() + "/stdout");
      if (!Contains(out, "\"throughput\"")) continue;
      ++benches;
      nlohmann::json j = nlohmann::json::parse(out);
      EXPECT_EQ(j["work"]["requests"], 8) << run_dir.path();
      EXPECT_GT(j["throughput"]["tok_per_s"].get<double>(), 0) << run_dir.path();
    }
  }
  EXPECT_GE(benches, 6) << "the baseline's runs, at least";
}

// `arbor try` runs the check and benchmarks against the server as a campaign does, and stops
// it; a secret the server prints (passed to it by name through pass_env) is scrubbed from its
// log.
TEST(IntegrationServe, TryUsesAndStopsTheServerAndTheServersLogIsScrubbed) {
  TempWorkspace ws;
  const std::string pids = ws.aux() + "/server-pids";
  const std::string bin = SERVE_TARGET_BIN;
  ws.Write("arbor.toml",
           "[campaign]\nname = \"scrub\"\n\n[target]\nbuild = \"true\"\n"
           "check = \"" +
               bin +
               " health --port $ARBOR_PORT\"\n"
               "bench = \"" +
               Load() +
               "\"\npass_env = [\"SERVE_CANARY\"]\n\n"
               "[target.serve]\ncommand = '''echo \"token $SERVE_CANARY\" >&2; echo $$ >> '" +
               pids + "'; exec " + bin +
               " serve --port $ARBOR_PORT'''\n\n"
               "[metric]\nname = \"v\"\nsource = \"json:v\"\nrepetitions = 2\n\n"
               "[secrets]\nenv = [\"SERVE_CANARY\"]\n\n[search]\nmax_nodes = 1\n\n" +
               Action("fast", 2.0, "SPEED = \"2\""));
  ws.CommitAll();
  const EnvMap secret = {{"SERVE_CANARY", "canary-serve-5e1f0c"}};
  ProcResult tried = ws.Arbor({"try", "arbor.toml"}, secret, 300);
  ASSERT_EQ(tried.exit_code, 0) << tried.Describe();
  EXPECT_TRUE(Contains(tried.out, "ready: a campaign can start")) << tried.out;
  std::string started = ReadFile(pids);
  ASSERT_FALSE(started.empty()) << "try started no server";
  EXPECT_EQ(started.find('\n'), started.size() - 1) << "one server for the check and the runs";
  const pid_t tried_server = static_cast<pid_t>(std::stol(started));
  EXPECT_FALSE(ProcessAlive(tried_server)) << "try left its server running";

  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, secret, 300);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_EQ(ServerProcesses(ws), std::set<pid_t>{});
  int logs = 0;
  for (const auto& f : fs::recursive_directory_iterator(ws.repo() + "/.arbor/scrub/runs")) {
    if (!f.is_regular_file()) continue;
    const std::string text = ReadFile(f.path().string());
    EXPECT_FALSE(Contains(text, "canary-serve-5e1f0c")) << f.path();
    if (Contains(text, "token [redacted:SERVE_CANARY]")) ++logs;
  }
  EXPECT_GE(logs, 2) << "the servers' stderr, scrubbed";
}

}  // namespace
}  // namespace arbor::integration
