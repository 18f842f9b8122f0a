// Every failed step shows its output (docs/cli.md, `arbor show`; docs/report.md): the live log
// line of the failure, `arbor show N` and `--json`, the --events lines and the HTML report show
// the last lines of the failing command's stdout and stderr with control characters visible,
// scrubbed of secrets, and where the full logs are.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "harness.h"

namespace arbor::integration {
namespace {

namespace fs = std::filesystem;

// A campaign named "fh" whose commands are TOML literal strings (no escaping inside).
std::string Campaign(const std::string& build, const std::string& bench, const std::string& pattern,
                     const std::string& extra = "") {
  return "[campaign]\nname = \"fh\"\nworkspace = \".\"\n\n[target]\nbuild = '''" + build +
         "'''\ncheck = \"true\"\nbench = '''" + bench + "'''\n\n[metric]\nname = \"rate\"\n" +
         "source = '''regex:" + pattern + "'''\n" + extra;
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The --events line of the first event of `kind` about `node`.
nlohmann::json EventLine(const std::string& path, const std::string& kind, int node) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.value("kind", "") == kind && j["node"] == node) return j;
  }
  return nullptr;
}

// The id of the first node with `outcome`, from `arbor tree --format json` (0: none).
int NodeWith(const TempWorkspace& ws, const std::string& outcome) {
  const nlohmann::json tree = ws.ArborJson({"tree", "--format", "json"});  // outlives the loop
  for (const auto& n : tree["nodes"]) {
    if (n.value("outcome", "") == outcome) return n.value("id", 0);
  }
  return 0;
}

// The benchmark draws its progress with \r on stderr and prints its rate after the unit, which
// the pattern expects before it: the baseline's first run gives no metric and the campaign
// stops (exit 6). What the benchmark printed is shown on the log, by `arbor show 1` and in its
// JSON, with the \r visible and the path of the full logs.
TEST(IntegrationFailedRun, ABenchmarkWithoutMetricShowsWhatItPrinted) {
  TempWorkspace ws;
  ws.Write("arbor.toml", Campaign("true",
                                  "printf 'pass 1/3\\rpass 2/3\\rpass 3/3\\n' >&2; "
                                  "echo 'checksum 42'; echo 'rate: 917.9 Melem/s'",
                                  "Melem/s: ([0-9.]+)"));
  ws.CommitAll();
  const std::string events = ws.aux() + "/events.jsonl";
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--events", events}, {}, 120);
  ASSERT_EQ(run.exit_code, 6) << run.Describe();

  nlohmann::json show = ws.ArborJson({"show", "1", "--json"});
  const nlohmann::json& failed = show["failed_run"];
  ASSERT_TRUE(failed.is_object()) << show.dump(2);
  EXPECT_EQ(failed["label"], "bench-0");
  EXPECT_EQ(failed["exit"], "bad_output");
  const std::string dir = failed.value("dir", "");
  const std::string suffix = "/.arbor/fh/runs/n1/bench-0";
  EXPECT_TRUE(dir.size() > suffix.size() && dir.substr(dir.size() - suffix.size()) == suffix)
      << dir;
  EXPECT_EQ(failed["stdout"]["tail"],
            nlohmann::json::array({"checksum 42", "rate: 917.9 Melem/s"}));
  EXPECT_EQ(failed["stderr"]["tail"], nlohmann::json::array({"pass 1/3\\rpass 2/3\\rpass 3/3"}));
  // The full logs are where it says, as the command wrote them.
  EXPECT_EQ(failed["stderr"]["path"], dir + "/stderr");
  EXPECT_EQ(ReadFile(dir + "/stderr"), "pass 1/3\rpass 2/3\rpass 3/3\n");
  EXPECT_EQ(ReadFile(dir + "/stdout"), "checksum 42\nrate: 917.9 Melem/s\n");

  const std::string block = "failed run  bench-0 (bad_output)\n  logs      " + dir + "/stdout, " +
                            dir +
                            "/stderr\n"
                            "  stdout (last 2 lines):\n"
                            "    | checksum 42\n"
                            "    | rate: 917.9 Melem/s\n"
                            "  stderr (last 1 lines):\n"
                            "    | pass 1/3\\rpass 2/3\\rpass 3/3\n";
  ProcResult text = ws.Arbor({"show", "1"});
  ASSERT_EQ(text.exit_code, 0) << text.Describe();
  EXPECT_TRUE(Has(text.out, block)) << text.out;
  EXPECT_FALSE(Has(text.out, "\r")) << "a \\r reached the terminal";

  // The live log (stderr is no TTY here: plain lines) shows the same block under the failure.
  size_t crashed = run.err.find("#1 crashed: ");
  ASSERT_NE(crashed, std::string::npos) << run.err;
  std::string indented;
  for (size_t at = 0, nl; (nl = block.find('\n', at)) != std::string::npos; at = nl + 1) {
    indented += "    " + block.substr(at, nl + 1 - at);
  }
  EXPECT_NE(run.err.find(indented, crashed), std::string::npos) << run.err;
  EXPECT_FALSE(Has(run.err, "\r")) << run.err;
  nlohmann::json line = EventLine(events, "crashed", 1);
  ASSERT_TRUE(line.is_object()) << ReadFile(events);
  EXPECT_EQ(line["failed_run"], failed) << line.dump();
}

// A candidate whose build fails: the report's details of that node show the build's stderr and
// where its logs are; `arbor show` shows it too.
TEST(IntegrationFailedRun, AFailedBuildsOutputIsInTheReport) {
  TempWorkspace ws;
  ws.Write("arbor.toml",
           Campaign("test -z \"$BREAK\" || { echo \"cc: error: unknown flag <$BREAK>\" >&2; "
                    "exit 2; }",
                    "echo 'rate: 5'", "rate: ([0-9.]+)",
                    "\n[search]\nmax_nodes = 1\n\n[[action]]\nid = \"broken.flag\"\n"
                    "layer = \"compiler\"\ncategory = \"flags\"\n"
                    "apply = { env = { BREAK = \"-fno-such\" } }\n"));
  ws.CommitAll();
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 300);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const int node = NodeWith(ws, "crashed");
  ASSERT_GT(node, 1) << ws.Arbor({"tree"}).out;

  const std::string report = ws.aux() + "/report.html";
  ProcResult made = ws.Arbor({"report", "arbor.toml", "--out", report});
  ASSERT_EQ(made.exit_code, 0) << made.Describe();
  const std::string html = ReadFile(report);
  const std::string dir_tail = "/.arbor/fh/runs/n" + std::to_string(node) + "/build";
  size_t details = html.find("<details class=\"node-detail\" id=\"node-" + std::to_string(node));
  ASSERT_NE(details, std::string::npos);
  size_t block = html.find("<h4>Failed run build (failed)</h4>", details);
  ASSERT_NE(block, std::string::npos) << html.substr(details, 4000);
  EXPECT_LT(block, html.find("</details>", details));
  EXPECT_NE(html.find(dir_tail + "/stdout, ", block), std::string::npos);
  EXPECT_NE(html.find(dir_tail + "/stderr</div>", block), std::string::npos);
  EXPECT_NE(html.find("<pre>cc: error: unknown flag &lt;-fno-such&gt;</pre>", block),
            std::string::npos)
      << html.substr(block, 2000);
  // The baseline's build succeeded: it has no failed run.
  EXPECT_EQ(html.find("<h4>Failed run"), block);
  EXPECT_EQ(html.find("<h4>Failed run", block + 1), std::string::npos);

  ProcResult show = ws.Arbor({"show", std::to_string(node)});
  EXPECT_TRUE(Has(show.out, "failed run  build (failed)\n")) << show.out;
  EXPECT_TRUE(
      Has(show.out, "  stderr (last 1 lines):\n    | cc: error: unknown flag <-fno-such>\n"))
      << show.out;
  EXPECT_TRUE(ws.ArborJson({"show", "1", "--json"})["failed_run"].is_null());
}

constexpr const char* kTokenEnv = "IT_FAIL_TOKEN";
constexpr const char* kToken = "fail-canary-7f3a9b2c";

// A build that prints a secret (read from a file outside the repository, so the campaign file
// does not hold it) on both streams, then fails: the baseline fails.
std::unique_ptr<TempWorkspace> LeakingBuild() {
  auto ws = std::make_unique<TempWorkspace>();
  WriteFile(ws->aux() + "/token", std::string(kToken) + "\n");
  const std::string token = ws->aux() + "/token";
  ws->Write("arbor.toml",
            Campaign("echo \"token: $(cat '" + token + "')\"; cat '" + token + "' >&2; exit 1",
                     "echo 'rate: 5'", "rate: ([0-9.]+)",
                     "\n[secrets]\nenv = [\"" + std::string(kTokenEnv) + "\"]\n"));
  ws->CommitAll();
  return ws;
}

// Everything shown about the failed run, with the secret in Arbor's environment.
std::string Shown(TempWorkspace& ws) {
  const EnvMap env{{kTokenEnv, kToken}};
  ProcResult text = ws.Arbor({"show", "1"}, env);
  EXPECT_EQ(text.exit_code, 0) << text.Describe();
  ProcResult json = ws.Arbor({"show", "1", "--json"}, env);
  EXPECT_EQ(json.exit_code, 0) << json.Describe();
  const std::string report = ws.aux() + "/report.html";
  ProcResult made = ws.Arbor({"report", "arbor.toml", "--out", report}, env);
  EXPECT_EQ(made.exit_code, 0) << made.Describe();
  return text.out + "\n" + json.out + "\n" + ReadFile(report);
}

// The secret printed by the failing command is shown redacted everywhere: the campaign
// scrubbed its logs as the command ended, and the views scrub what they read from them once
// more, so logs written while the secret was not in Arbor's environment are shown clean too.
TEST(IntegrationFailedRun, ASecretPrintedByAFailingCommandIsScrubbed) {
  auto ws = LeakingBuild();
  ProcResult run = ws->Arbor({"run", "arbor.toml"}, {{kTokenEnv, kToken}}, 120);
  ASSERT_EQ(run.exit_code, 6) << run.Describe();
  EXPECT_FALSE(Has(run.err, kToken)) << run.err;
  EXPECT_TRUE(Has(run.err, "| token: [redacted:IT_FAIL_TOKEN]")) << run.err;
  std::string shown = Shown(*ws);
  EXPECT_FALSE(Has(shown, kToken)) << shown;
  EXPECT_TRUE(Has(shown, "    | token: [redacted:IT_FAIL_TOKEN]\n")) << shown;
  EXPECT_TRUE(Has(shown, "\"tail\":[\"[redacted:IT_FAIL_TOKEN]\"]")) << shown;
  EXPECT_TRUE(Has(shown, "<pre>token: [redacted:IT_FAIL_TOKEN]</pre>")) << shown;

  // Run without the secret in the environment: its logs keep it (nothing could know it),
  // and the views, run with it, still never show it.
  auto unscrubbed = LeakingBuild();
  ProcResult plain = unscrubbed->Arbor({"run", "arbor.toml"}, {}, 120);
  ASSERT_EQ(plain.exit_code, 6) << plain.Describe();
  bool on_disk = false;
  for (const auto& f : fs::recursive_directory_iterator(unscrubbed->repo() + "/.arbor/fh/runs")) {
    on_disk |= f.is_regular_file() && Has(ReadFile(f.path().string()), kToken);
  }
  ASSERT_TRUE(on_disk) << "the logs of a run without the secret hold it";
  // What the store recorded then (the diagnosis quotes the output) is as it was written
  // (docs/secrets.md); what is read from the logs is scrubbed now.
  const EnvMap env{{kTokenEnv, kToken}};
  ProcResult text = unscrubbed->Arbor({"show", "1"}, env);
  const size_t block = text.out.find("failed run  build (failed)\n");
  ASSERT_NE(block, std::string::npos) << text.out;
  const std::string failed_text = text.out.substr(block, text.out.find("samples (") - block);
  EXPECT_FALSE(Has(failed_text, kToken)) << failed_text;
  EXPECT_TRUE(Has(failed_text, "    | token: [redacted:IT_FAIL_TOKEN]\n")) << failed_text;
  ProcResult json = unscrubbed->Arbor({"show", "1", "--json"}, env);
  const nlohmann::json failed = nlohmann::json::parse(json.out)["failed_run"];
  EXPECT_FALSE(Has(failed.dump(), kToken)) << failed.dump();
  EXPECT_EQ(failed["stderr"]["tail"], nlohmann::json::array({"[redacted:IT_FAIL_TOKEN]"}));
  const std::string report = unscrubbed->aux() + "/report.html";
  ASSERT_EQ(unscrubbed->Arbor({"report", "arbor.toml", "--out", report}, env).exit_code, 0);
  const std::string html = ReadFile(report);
  const size_t logs = html.find("<h4>Failed run build (failed)</h4>");
  ASSERT_NE(logs, std::string::npos);
  const std::string logs_html = html.substr(logs, html.find("</details>", logs) - logs);
  EXPECT_FALSE(Has(logs_html, kToken)) << logs_html;
  EXPECT_TRUE(Has(logs_html, "<pre>token: [redacted:IT_FAIL_TOKEN]</pre>")) << logs_html;
}

}  // namespace
}  // namespace arbor::integration
