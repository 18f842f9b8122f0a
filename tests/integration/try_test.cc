// `arbor try` (docs/first-hour.md): the campaign's commands run once on the unmodified workspace,
// what they printed shown with control characters visible, the metric of each benchmark run or
// the parser's error with the text it read, and nothing stored anywhere.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "harness.h"

namespace arbor::integration {
namespace {

namespace fs = std::filesystem;

// A campaign whose commands are given as TOML literal strings (no escaping inside).
std::string Campaign(const std::string& build, const std::string& check, const std::string& bench,
                     const std::string& pattern, const std::string& extra = "") {
  return "[campaign]\nname = \"try\"\nworkspace = \".\"\n\n[target]\nbuild = '''" + build +
         "'''\ncheck = '''" + check + "'''\nbench = '''" + bench + "'''\n" + extra +
         "\n[metric]\nname = \"tps\"\nsource = '''regex:" + pattern + "'''\n";
}

// Commits `toml` as arbor.toml in `ws` and runs `arbor try` with `args`.
ProcResult Try(TempWorkspace& ws, const std::string& toml, const std::vector<std::string>& args) {
  ws.Write("arbor.toml", toml);
  ws.CommitAll();
  std::vector<std::string> argv = {"try"};
  argv.insert(argv.end(), args.begin(), args.end());
  return ws.Arbor(argv, {}, 60);
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The benchmark draws a progress bar with \r on stderr and prints its rate on stdout; each
// run's value is read, and the progress shows as the characters "\r".
TEST(IntegrationTry, PrintsEachRunsMetricAndShowsCarriageReturns) {
  TempWorkspace ws;
  const std::string profile =
      "profile = '''echo '{\"components\": [{\"name\": \"matmul\", \"layer\": \"kernel\", "
      "\"share\": 0.6}, {\"name\": \"io\", \"layer\": \"application\", \"share\": 0.3}]}' '''\n";
  ProcResult r =
      Try(ws,
          Campaign("echo compiled", "true",
                   "printf 'bench 10%%\\rbench 100%%\\n' >&2; echo \"rate: 4$ARBOR_REPETITION\"",
                   "rate: ([0-9.]+)", profile) +
              "\n[[action]]\nid = \"tile\"\nlayer = \"kernel\"\ncategory = \"env\"\n"
              "targets = [\"matmul\", \"attention\"]\napply = { env = { TILE = \"8\" } }\n",
          {});
  EXPECT_EQ(r.exit_code, 0) << r.Describe() << r.out;
  EXPECT_TRUE(Has(r.out, "metric tps = 41")) << r.out;
  EXPECT_TRUE(Has(r.out, "metric tps = 42")) << r.out;
  EXPECT_TRUE(Has(r.out, "metric tps = 43")) << r.out;
  EXPECT_TRUE(Has(r.out, "| bench 10%\\rbench 100%")) << r.out;
  EXPECT_TRUE(Has(r.out, "| compiled")) << r.out;
  EXPECT_TRUE(Has(r.out, "noise over 3 of 3 runs: median tps 42")) << r.out;
  EXPECT_TRUE(Has(r.out, "matmul  kernel  60%")) << r.out;
  EXPECT_TRUE(Has(r.out, "tile: matmul, attention (not in the profile)")) << r.out;
  EXPECT_TRUE(Has(r.out, "ready: a campaign can start")) << r.out;

  ProcResult two = ws.Arbor({"try", "arbor.toml", "--runs", "2"}, {}, 60);
  EXPECT_EQ(two.exit_code, 0) << two.Describe();
  EXPECT_TRUE(Has(two.out, "noise over 2 of 2 runs")) << two.out;
  EXPECT_FALSE(Has(two.out, "metric tps = 43")) << two.out;
}

// The rate is only on a \r progress line the pattern does not match, and on stderr: no metric,
// so the target is not ready; the parser's error and the text it read are shown.
TEST(IntegrationTry, AMetricThatDoesNotMatchShowsTheTextItTried) {
  TempWorkspace ws;
  ProcResult r = Try(ws,
                     Campaign("true", "true",
                              "printf 'run 1/2\\rrun 2/2\\rdone, rate=42\\n'; "
                              "echo 'tok/s: 42' >&2",
                              "tok/s: ([0-9.]+)"),
                     {"--runs", "1"});
  EXPECT_EQ(r.exit_code, 6) << r.Describe() << r.out;
  EXPECT_TRUE(Has(r.out, "no metric: metric")) << r.out;
  EXPECT_TRUE(Has(r.out, "read from: stdout")) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "text it tried to match (last 1 lines):\n    | run 1/2\\rrun 2/2\\rdone, "
                  "rate=42\n"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "hint: stderr holds a match (42)")) << r.out;
  EXPECT_TRUE(Has(r.out, "not ready: benchmark run 1 gave no metric")) << r.out;
}

TEST(IntegrationTry, AFailingCheckShowsItsStderrAndIsNotReady) {
  TempWorkspace ws;
  ProcResult r = Try(
      ws,
      Campaign("true", "echo 'expected 3, got 4' >&2; exit 1", "echo 'rate: 5'", "rate: ([0-9.]+)"),
      {"--runs", "1"});
  EXPECT_EQ(r.exit_code, 6) << r.Describe() << r.out;
  EXPECT_TRUE(Has(r.out, "== check: echo 'expected 3, got 4' >&2; exit 1\n  exit 1 after"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "| expected 3, got 4")) << r.out;
  EXPECT_TRUE(Has(r.out, "not ready: the check failed")) << r.out;
}

// The build writes into its working directory, as builds do: that is a checkout outside the
// workspace, so the workspace stays clean, and no state, commit, branch or worktree remains.
TEST(IntegrationTry, StoresNothing) {
  TempWorkspace ws;
  ProcResult r = Try(
      ws,
      Campaign("echo obj > built.o; pwd", "test -f built.o", "echo 'rate: 5'", "rate: ([0-9]+)"),
      {"--runs", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe() << r.out;
  EXPECT_FALSE(fs::exists(ws.repo() + "/.arbor")) << r.out;
  EXPECT_FALSE(fs::exists(ws.repo() + "/built.o"));
  EXPECT_EQ(ws.Git({"status", "--porcelain", "--untracked-files=all"}).out, "");
  EXPECT_EQ(ws.Git({"rev-list", "--count", "--all"}).out, "1\n");
  EXPECT_EQ(ws.Git({"branch", "--list", "arbor/*"}).out, "");
  ProcResult worktrees = ws.Git({"worktree", "list", "--porcelain"});
  EXPECT_EQ(worktrees.out.find("worktree "), worktrees.out.rfind("worktree ")) << worktrees.out;
}

// A secret's value (a [secrets] env variable of Arbor's environment) that a command prints, or
// that its command line holds, is shown redacted, as in every log a campaign keeps.
TEST(IntegrationTry, ScrubsSecretsFromWhatItShows) {
  TempWorkspace ws;
  const std::string secret = "try-canary-7f3a91";
  ws.Write("arbor.toml", Campaign("echo building with " + secret + " >&2", "true", "echo 'rate: 5'",
                                  "rate: ([0-9]+)") +
                             "\n[secrets]\nenv = [\"TRY_TOKEN\"]\n");
  ws.CommitAll();
  ProcResult r = ws.Arbor({"try", "--runs", "1"}, {{"TRY_TOKEN", secret}}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.Describe() << r.out;
  EXPECT_FALSE(Has(r.out, secret)) << r.out;
  EXPECT_TRUE(Has(r.out, "| building with [redacted:TRY_TOKEN]")) << r.out;
}

// A malformed campaign file is the same configuration error, at the same line and column, as
// `arbor run` gives.
TEST(IntegrationTry, AMalformedCampaignFileIsTheErrorRunGives) {
  TempWorkspace ws;
  ProcResult t = Try(ws, "[campaign]\nname = \"try\"\n[target\nbench = \"true\"\n", {});
  ProcResult r = ws.Arbor({"run", "--quiet"}, {}, 60);
  EXPECT_EQ(t.exit_code, 3) << t.Describe();
  EXPECT_EQ(t.err, r.err);
  EXPECT_TRUE(Has(t.err, "arbor.toml:3:")) << t.err;
  EXPECT_FALSE(fs::exists(ws.repo() + "/.arbor"));
}

}  // namespace
}  // namespace arbor::integration
