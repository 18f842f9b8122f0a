// What a target command sees of Arbor's environment (docs/secrets.md, "Target commands"): an
// allowlist of the caller's variables, the campaign's overlay and the node's ARBOR_* variables,
// nothing else. Arbor runs here with API keys and other secrets in its own environment; every
// build, check and benchmark command dumps its environment, and none of them may hold one.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "campaign_checks.h"
#include "harness.h"

namespace arbor::integration {
namespace {

namespace fs = std::filesystem;

// Variables a command may see: CommandTarget's allowlist, the overlay of the campaign and of
// the action, the node's ARBOR_* variables, and what /bin/sh and env(1) add themselves.
const std::set<std::string> kAllowed = {"PATH",
                                        "HOME",
                                        "USER",
                                        "LOGNAME",
                                        "LANG",
                                        "LC_ALL",
                                        "TZ",
                                        "TMPDIR",
                                        "SHELL",
                                        "TERM",
                                        "TARGET_OVERLAY",
                                        "X",
                                        "ARBOR_NODE",
                                        "ARBOR_WORKTREE",
                                        "ARBOR_OUT",
                                        "ARBOR_REPETITION",
                                        "PWD",
                                        "OLDPWD",
                                        "SHLVL",
                                        "_"};

// Secrets in Arbor's own environment, none of them named in [secrets]: they are not scrubbed,
// so a dump would show them if they were passed on.
const EnvMap kArborSecrets = {{"OPENAI_API_KEY", "sk-env-canary-91c2f0"},
                              {"AWS_SECRET_ACCESS_KEY", "aws-env-canary-5d7e3b"},
                              {"GITHUB_TOKEN", "ghp-env-canary-0a8f44"},
                              {"LD_PRELOAD", "/nonexistent/env-canary.so"}};

std::string Dump(const std::string& aux, const std::string& step) {
  return "env > '" + aux + "/env." + step + ".'$ARBOR_NODE.$$";
}

TEST(IntegrationEnvironment, TargetCommandsSeeOnlyTheAllowlistTheOverlayAndTheNode) {
  TempWorkspace ws;
  const std::string aux = ws.aux();
  ws.Write("arbor.toml",
           "[campaign]\nname = \"env\"\nworkspace = \".\"\n\n"
           "[target]\nbuild = \"" +
               Dump(aux, "build") + "\"\ncheck = \"" + Dump(aux, "check") + "\"\nbench = '''" +
               Dump(aux, "bench") +
               "; if [ \"$X\" = 1 ]; then echo '{\"v\": 2}'; else echo '{\"v\": 1}'; fi'''\n"
               "env = { TARGET_OVERLAY = \"o\" }\n\n"
               "[metric]\nname = \"v\"\nsource = \"json:v\"\nrepetitions = 2\n\n"
               "[search]\nmax_nodes = 2\n\n"
               "[[action]]\nid = \"set-x\"\nlayer = \"application\"\ncategory = \"env\"\n"
               "speedup = 2.0\napply = { env = { X = \"1\" } }\n");
  ws.CommitAll();
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, kArborSecrets, 120);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<TreeNode> nodes = LoadTree(ws);
  const TreeNode* set_x = FindKey(nodes, "set-x");
  ASSERT_NE(set_x, nullptr);
  EXPECT_EQ(set_x->outcome, "kept");

  std::map<std::string, int> dumps;
  bool saw_overlay = false;
  bool saw_action_env = false;
  for (const auto& entry : fs::directory_iterator(aux)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("env.", 0) != 0) continue;
    ++dumps[name.substr(4, name.find('.', 4) - 4)];
    std::istringstream lines(ReadFile(entry.path().string()));
    for (std::string line; std::getline(lines, line);) {
      std::string key = line.substr(0, line.find('='));
      EXPECT_TRUE(kAllowed.count(key)) << name << " saw " << key;
      saw_overlay |= line == "TARGET_OVERLAY=o";
      saw_action_env |= line == "X=1";
    }
    std::string text = ReadFile(entry.path().string());
    for (const auto& [key, value] : kArborSecrets) {
      EXPECT_EQ(text.find(value), std::string::npos) << name << " saw the value of " << key;
    }
  }
  // Baseline and set-x: each built and checked, and measured with repetitions.
  EXPECT_GE(dumps["build"], 2);
  EXPECT_GE(dumps["check"], 2);
  EXPECT_GE(dumps["bench"], 4);
  EXPECT_TRUE(saw_overlay) << "the campaign's env overlay never reached a command";
  EXPECT_TRUE(saw_action_env) << "the action's env never reached a command";
}

// [target] pass_env: the variables it names, and those its globs match unless they look like a
// credential, reach every command — the server of [target.serve] too — and nothing else does.
// The server is ready when its port accepts (no `ready` command).
TEST(IntegrationEnvironment, PassEnvReachesEveryCommandAndTheServerButNoSecretByGlob) {
  TempWorkspace ws;
  const std::string aux = ws.aux();
  const std::string bin = SERVE_TARGET_BIN;
  ws.Write("arbor.toml",
           "[campaign]\nname = \"pass\"\nworkspace = \".\"\n\n"
           "[target]\nbuild = \"" +
               Dump(aux, "build") + "\"\ncheck = \"" + Dump(aux, "check") + "\"\nbench = '''" +
               Dump(aux, "bench") + "; " + bin +
               " load --port $ARBOR_PORT'''\n"
               "pass_env = [\"CUDA_VISIBLE_DEVICES\", \"MY_*\"]\n\n"
               "[target.serve]\ncommand = '''" +
               Dump(aux, "serve") + "; exec " + bin +
               " serve --port $ARBOR_PORT'''\n\n"
               "[metric]\nname = \"v\"\nsource = \"json:v\"\nrepetitions = 2\n\n"
               "[search]\nmax_nodes = 2\n\n"
               "[[action]]\nid = \"fast\"\nlayer = \"application\"\ncategory = \"env\"\n"
               "speedup = 2.0\napply = { env = { SPEED = \"2\" } }\n");
  ws.CommitAll();
  const EnvMap arbor_env = {{"CUDA_VISIBLE_DEVICES", "3"},
                            {"MY_FLAG", "on"},
                            {"MY_API_TOKEN", "tok-env-canary-77a1"},
                            {"OTHER_VAR", "not-passed"}};
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, arbor_env, 300);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<TreeNode> nodes = LoadTree(ws);
  const TreeNode* fast = FindKey(nodes, "fast");
  ASSERT_NE(fast, nullptr) << DescribeTree(nodes);
  EXPECT_EQ(fast->outcome, "kept") << DescribeTree(nodes);
  std::map<std::string, int> dumps;
  for (const auto& entry : fs::directory_iterator(aux)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("env.", 0) != 0) continue;
    const std::string step = name.substr(4, name.find('.', 4) - 4);
    ++dumps[step];
    const std::string text = "\n" + ReadFile(entry.path().string());
    EXPECT_NE(text.find("\nCUDA_VISIBLE_DEVICES=3\n"), std::string::npos) << name;
    EXPECT_NE(text.find("\nMY_FLAG=on\n"), std::string::npos) << name;
    EXPECT_EQ(text.find("MY_API_TOKEN"), std::string::npos) << name << " saw a credential";
    EXPECT_EQ(text.find("OTHER_VAR"), std::string::npos) << name;
    const bool port = text.find("\nARBOR_PORT=") != std::string::npos;
    EXPECT_EQ(port, step != "build") << name << ": ARBOR_PORT is for the server and its users";
  }
  EXPECT_GE(dumps["build"], 2);
  EXPECT_GE(dumps["serve"], 2);
  EXPECT_GE(dumps["bench"], 4);
}

// A repository that ignores `*.env` (a common rule): the environment-only keep of -O2 still
// reaches the branch, with arbor-best.env in its commit, and the user's checkout stays clean.
TEST(IntegrationEnvironment, TheBestEnvReachesTheBranchWhenTheRepositoryIgnoresEnvFiles) {
  auto ws = TempWorkspace::Toy();
  ws->Write(".gitignore", ReadFile(ws->repo() + "/.gitignore") + "*.env\n");
  ws->CommitAll();
  ProcResult run = ws->Arbor({"run", "arbor.toml", "--quiet", "--max-nodes", "1"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<TreeNode> nodes = LoadTree(*ws);
  ASSERT_EQ(nodes.size(), 2u);
  ASSERT_EQ(nodes[1].outcome, "kept") << nodes[1].Key();
  ProcResult env = ws->Git({"show", "arbor/toy:arbor-best.env"});
  ASSERT_EQ(env.exit_code, 0) << env.Describe();
  EXPECT_NE(env.out.find("export CFLAGS='-O0 -O2'"), std::string::npos) << env.out;
  ProcResult head = ws->Git({"rev-parse", "arbor/toy"});
  EXPECT_EQ(head.out, nodes[1].commit + "\n");
  EXPECT_EQ(ws->Git({"status", "--porcelain"}).out, "");
}

// A patch that writes a file the repository's .gitignore matches (`*.env`, a common rule):
// the benchmark measured it, so the kept commit holds it too (git add -f), and its node says
// so with a warning. The branch tip holds both the patch's file and arbor-best.env of the
// environment keep after it, and the user's checkout stays clean. Without the forced add the
// patch's file would be measured, then missing from the branch and from every later node.
TEST(IntegrationEnvironment, AnIgnoredFileAPatchWritesReachesTheBranchWithAWarning) {
  TempWorkspace ws;
  ws.Write(".gitignore", "*.env\nbuild/\n");
  ws.Write("bench.sh",
           "v=100; [ -f tuning.env ] && v=200; [ -n \"$BOOST\" ] && v=$((v * 3 / 2))\n"
           "echo \"{\\\"v\\\": $((v + ARBOR_REPETITION % 3))}\"\n");
  ws.Write("patches/tune.diff",
           "diff --git a/tuning.env b/tuning.env\nnew file mode 100644\n--- /dev/null\n"
           "+++ b/tuning.env\n@@ -0,0 +1 @@\n+FAST=1\n");
  ws.Write("arbor.toml",
           "[campaign]\nname = \"ign\"\nseed = 1\n\n"
           "[target]\nbuild = \"true\"\nbench = \"sh bench.sh\"\n\n"
           "[metric]\nsource = \"json:v\"\nrepetitions = 3\n\n"
           "[search]\nmax_nodes = 2\n\n[critic]\nmin_effect = 0.1\n\n"
           "[[action]]\nid = \"app.tune\"\nlayer = \"application\"\ncategory = \"tune\"\n"
           "speedup = 2.0\napply = { patch = \"patches/tune.diff\" }\n\n"
           "[[action]]\nid = \"sys.boost\"\nlayer = \"system\"\ncategory = \"boost\"\n"
           "speedup = 1.5\napply = { env = { BOOST = \"1\" } }\n");
  ws.CommitAll();
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<TreeNode> nodes = LoadTree(ws);
  const TreeNode* tune = FindKey(nodes, "app.tune");
  const TreeNode* boost = FindKey(nodes, "sys.boost");
  ASSERT_NE(tune, nullptr);
  ASSERT_NE(boost, nullptr);
  EXPECT_EQ(tune->outcome, "kept") << tune->diagnosis;
  EXPECT_EQ(boost->outcome, "kept") << boost->diagnosis;
  ProcResult show = ws.Arbor({"show", std::to_string(tune->id)});
  EXPECT_NE(show.out.find("warning: the repository ignores tuning.env"), std::string::npos)
      << show.out;
  ProcResult file = ws.Git({"show", "arbor/ign:tuning.env"});
  ASSERT_EQ(file.exit_code, 0) << "the patch's file is not on the branch: " << file.Describe();
  EXPECT_EQ(file.out, "FAST=1\n");
  ProcResult env = ws.Git({"show", "arbor/ign:arbor-best.env"});
  ASSERT_EQ(env.exit_code, 0) << env.Describe();
  EXPECT_NE(env.out.find("export BOOST='1'"), std::string::npos) << env.out;
  const TreeNode* last = boost->parent == tune->id ? boost : tune;  // the later keep
  EXPECT_EQ(ws.Git({"rev-parse", "arbor/ign"}).out, last->commit + "\n");
  EXPECT_EQ(ws.Git({"status", "--porcelain"}).out, "");
}

// A pair end to end: `fast` (+50%) breaks the check unless `fix` (-3% alone) is on too. The
// real binary tries each alone (one fails its check, one gains nothing), then the pair as one
// node (the fix search's, with the only candidate that ran: moves.h FixSearch): the builtin
// specialist applies both in one worktree, the check passes (14 times: its side failed
// before), the gate keeps it, and the branch's arbor-best.env holds both.
TEST(IntegrationEnvironment, APairOfActionsIsAppliedMeasuredAndKeptAsOneChange) {
  TempWorkspace ws;
  ws.Write(
      "arbor.toml",
      "[campaign]\nname = \"pair\"\nworkspace = \".\"\n\n"
      "[target]\nbuild = \"true\"\n"
      "check = '[ \"$FAST\" != 1 ] || [ \"$FIX\" = 1 ]'\n"
      "bench = '''awk -v f=\"$FAST\" -v x=\"$FIX\" 'BEGIN { v = 100; "
      "if (f == 1) v *= 1.5; if (x == 1) v *= 0.97; printf \"{\\\"v\\\": %.3f}\\n\", v }' '''\n\n"
      "[metric]\nname = \"v\"\nsource = \"json:v\"\nrepetitions = 2\n\n"
      "[search]\nmax_nodes = 3\n\n"
      "[[action]]\nid = \"fast\"\nlayer = \"application\"\ncategory = \"fast\"\n"
      "speedup = 2.0\napply = { env = { FAST = \"1\" } }\n\n"
      "[[action]]\nid = \"fix\"\nlayer = \"application\"\ncategory = \"fix\"\n"
      "speedup = 1.05\napply = { env = { FIX = \"1\" } }\n");
  ws.CommitAll();
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 180);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<TreeNode> nodes = LoadTree(ws);
  const TreeNode* pair = nullptr;
  for (const TreeNode& n : nodes) {
    if (std::count(n.flags.begin(), n.flags.end(), "move:pair") ||
        std::count(n.flags.begin(), n.flags.end(), "move:fix")) {
      pair = &n;
    }
  }
  ASSERT_NE(pair, nullptr) << run.Describe();
  EXPECT_EQ(pair->outcome, "kept") << pair->diagnosis;
  // The companion is the pair's parent when its side ran at the incumbent (a branch under it),
  // else a "with:" flag; either way TreeNode::with names it.
  EXPECT_EQ(pair->with, pair->action == "fast" ? "fix" : "fast") << pair->Key();
  ProcResult env = ws.Git({"show", "arbor/pair:arbor-best.env"});
  ASSERT_EQ(env.exit_code, 0) << env.Describe();
  EXPECT_NE(env.out.find("FAST"), std::string::npos) << env.out;
  EXPECT_NE(env.out.find("FIX"), std::string::npos) << env.out;
  EXPECT_EQ(ws.Git({"rev-parse", "arbor/pair"}).out, pair->commit + "\n");
  ProcResult log = ws.Git({"log", "-1", "--format=%s", "arbor/pair"});
  EXPECT_NE(log.out.find(" + "), std::string::npos) << log.out;  // names both
}

// A drop end to end: `cheap` pays +20% alone but costs 20% once `win` (x2) is on (an
// antagonistic pair). The real binary keeps cheap, then win on top; with budget left it takes
// each kept change back out: without cheap it gains, and that drop is kept; without win it
// loses. The branch's arbor-best.env holds WIN and no CHEAP, and `show` names the drop.
TEST(IntegrationEnvironment, AKeptChangeThatLaterKeepsMadeCostlyIsDropped) {
  TempWorkspace ws;
  ws.Write("arbor.toml",
           "[campaign]\nname = \"drop\"\nworkspace = \".\"\n\n"
           "[target]\nbuild = \"true\"\n"
           "bench = '''awk -v c=\"$CHEAP\" -v w=\"$WIN\" 'BEGIN { v = 100; "
           "if (w == 1) v *= 2; if (c == 1) v *= (w == 1 ? 0.8 : 1.2); "
           "printf \"{\\\"v\\\": %.3f}\\n\", v }' '''\n\n"
           "[metric]\nname = \"v\"\nsource = \"json:v\"\nrepetitions = 2\n\n"
           "[search]\nmax_nodes = 4\n\n"
           "[[action]]\nid = \"cheap\"\nlayer = \"application\"\ncategory = \"cheap\"\n"
           "speedup = 1.5\napply = { env = { CHEAP = \"1\" } }\n\n"
           "[[action]]\nid = \"win\"\nlayer = \"application\"\ncategory = \"win\"\n"
           "speedup = 1.2\napply = { env = { WIN = \"1\" } }\n");
  ws.CommitAll();
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 180);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<TreeNode> nodes = LoadTree(ws);
  const TreeNode* drop = FindKey(nodes, "-cheap");
  ASSERT_NE(drop, nullptr) << DescribeTree(nodes);
  EXPECT_EQ(drop->outcome, "kept") << DescribeTree(nodes);
  EXPECT_TRUE(HasFlag(*drop, "move:drop")) << drop->Key();
  EXPECT_TRUE(HasFlag(*drop, "without:cheap")) << drop->Key();
  // Taking win out (under the new incumbent, too) loses: reverted.
  EXPECT_EQ(KeysWithOutcome(nodes, "reverted"), std::set<std::string>{"-win"})
      << DescribeTree(nodes);
  ProcResult env = ws.Git({"show", "arbor/drop:arbor-best.env"});
  ASSERT_EQ(env.exit_code, 0) << env.Describe();
  EXPECT_NE(env.out.find("WIN"), std::string::npos) << env.out;
  EXPECT_EQ(env.out.find("CHEAP"), std::string::npos) << env.out;
  EXPECT_EQ(ws.Git({"rev-parse", "arbor/drop"}).out, drop->commit + "\n");
  nlohmann::json status = ws.ArborJson({"status", "--json"});
  EXPECT_EQ(status["best"].value("node", int64_t{0}), drop->id) << status.dump();
  // -win and -cheap at #3; -win again under the drop once it was kept.
  EXPECT_EQ(status["moves"].value("drop", 0), 3) << status.dump();
  ProcResult show = ws.Arbor({"show", std::to_string(drop->id)});
  EXPECT_NE(show.out.find("-cheap"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("took cheap back out"), std::string::npos) << show.out;
}

// A swap end to end: `first` (+10%) and `alt` (+30%) are declared alternatives (`conflicts`);
// first's prior is higher, so it runs first and is kept, which locks alt out. With budget left,
// alt, which nobody measured, is tried in first's place as one node before any other move:
// kept. The branch's arbor-best.env holds ALT and no FIRST; it is never swapped back.
TEST(IntegrationEnvironment, AnAlternativeTheFirstWinnerLockedOutIsSwappedIn) {
  TempWorkspace ws;
  ws.Write("arbor.toml",
           "[campaign]\nname = \"swap\"\nworkspace = \".\"\n\n"
           "[target]\nbuild = \"true\"\n"
           "bench = '''awk -v f=\"$FIRST\" -v a=\"$ALT\" 'BEGIN { v = 100; "
           "if (f == 1) v *= 1.1; if (a == 1) v *= 1.3; "
           "printf \"{\\\"v\\\": %.3f}\\n\", v }' '''\n\n"
           "[metric]\nname = \"v\"\nsource = \"json:v\"\nrepetitions = 2\n\n"
           "[search]\nmax_nodes = 8\n\n"
           "[[action]]\nid = \"first\"\nlayer = \"application\"\ncategory = \"alloc\"\n"
           "speedup = 1.5\napply = { env = { FIRST = \"1\" } }\n\n"
           "[[action]]\nid = \"alt\"\nlayer = \"application\"\ncategory = \"alloc\"\n"
           "speedup = 1.2\nconflicts = [\"first\"]\napply = { env = { ALT = \"1\" } }\n");
  ws.CommitAll();
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 180);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<TreeNode> nodes = LoadTree(ws);
  const TreeNode* swap = nullptr;
  for (const TreeNode& n : nodes) {
    if (HasFlag(n, "without:first") && HasFlag(n, "with:alt")) swap = &n;
  }
  ASSERT_NE(swap, nullptr) << DescribeTree(nodes);
  EXPECT_EQ(swap->outcome, "kept") << DescribeTree(nodes);
  EXPECT_TRUE(HasFlag(*swap, "move:drop")) << swap->Key();
  // first alone is kept before; alt never ran alone (the conflict rules it out on first's path).
  EXPECT_EQ(KeysWithOutcome(nodes, "kept"), (std::set<std::string>{"first", "alt+-first"}))
      << DescribeTree(nodes);
  // Under the swap, alt taken out loses; first is not swapped back in (that was measured).
  EXPECT_EQ(KeysWithOutcome(nodes, "reverted"), std::set<std::string>{"-alt"})
      << DescribeTree(nodes);
  // The root, first, the swap (the move right after first's keep: first was never taken out
  // alone), -alt, and -alt again at 2x, 4x, 8x the repetitions (the keep verified, nothing else
  // being left; a noise-free benchmark measures points, which are not verified beyond that).
  EXPECT_EQ(nodes[2].id, swap->id) << DescribeTree(nodes);
  EXPECT_EQ(nodes.size(), 4u + 3u) << DescribeTree(nodes);
  EXPECT_EQ(FindKey(nodes, "alt"), nullptr) << DescribeTree(nodes);
  ProcResult env = ws.Git({"show", "arbor/swap:arbor-best.env"});
  ASSERT_EQ(env.exit_code, 0) << env.Describe();
  EXPECT_NE(env.out.find("ALT"), std::string::npos) << env.out;
  EXPECT_EQ(env.out.find("FIRST"), std::string::npos) << env.out;
  EXPECT_EQ(ws.Git({"rev-parse", "arbor/swap"}).out, swap->commit + "\n");
  nlohmann::json status = ws.ArborJson({"status", "--json"});
  EXPECT_EQ(status["best"].value("node", int64_t{0}), swap->id) << status.dump();
  ProcResult show = ws.Arbor({"show", std::to_string(swap->id)});
  EXPECT_NE(show.out.find("took first back out"), std::string::npos) << show.out;
}

}  // namespace
}  // namespace arbor::integration
