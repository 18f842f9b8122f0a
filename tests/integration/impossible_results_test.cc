// Impossible results end to end (issue 30): the real binary on a target whose actions make
// the benchmark exit 0 but print a broken number — 1e308, a negative throughput, a rate from
// a timer that read ~0 s, Infinity, NaN — and one real +20% change. Only the real change may
// be kept; each broken one must carry the right diagnosis (bad_output for values no benchmark
// prints, anomaly for gains no profile, prior or knowledge base explains), and status and the
// report must list the anomalies. Read back through the CLI's JSON only.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "campaign_checks.h"
#include "harness.h"

namespace arbor::integration {
namespace {

constexpr char kBenchHead[] =
    R"(/* A benchmark that exits 0 whatever it prints: computed, not timed. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

)";

constexpr char kBenchMain[] = R"(int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "--check") == 0) return 0;
  long call = NextCall();
  double u = (double)(SplitMix((uint64_t)call * 7919u + 17u) >> 11) / 9007199254740992.0;
  double ops = 100 * Env("SPEED", 1) * (1 + 0.01 * (2 * u - 1)); /* +-1% noise */
  double seconds = Env("ZERO_TIME", 0) != 0 ? 1e-9 : 1;         /* a timer that read ~0 s */
  if (Env("HUGE", 0) != 0) {
    printf("{\"ops\": 1e308}\n");                               /* an overflowed counter */
  } else if (Env("NEGATIVE", 0) != 0) {
    printf("{\"ops\": -5}\n");
  } else if (Env("INFINITE", 0) != 0) {
    printf("warming up\n{\"ops\": Infinity}\n");                /* Python's json.dumps */
  } else if (Env("NOT_A_NUMBER", 0) != 0) {
    printf("{\"ops\": %f}\n", (double)NAN);                     /* printf's "nan" */
  } else {
    printf("{\"ops\": %.4f}\n", ops / seconds);
  }
  return 0;
}
)";

std::string Action(const std::string& id, const std::string& env, int cost_s) {
  return "\n[[action]]\nid = \"" + id + "\"\nlayer = \"application\"\ncost = \"" +
         std::to_string(cost_s) + "s\"\napply = { env = { " + env + " } }\n";
}

std::string Campaign(const TempWorkspace& ws) {
  return "[campaign]\nname = \"impossible\"\nworkspace = \".\"\nseed = 1\n\n"
         "[target]\nbuild = \"cc -O0 -o bench bench.c\"\ncheck = \"./bench --check\"\n"
         "bench = \"./bench\"\ntimeout = \"1m\"\nenv = { COUNTER = \"" +
         ws.aux() + "/calls\" }\n\n" +
         "[metric]\nname = \"ops\"\ngoal = \"max\"\nsource = \"json:ops\"\nrepetitions = 5\n\n"
         "[search]\nmax_nodes = 12\nrevisit = false\n" +
         // Every action keeps the default prior (×1.1 on the whole program): the plausible bound
         // is ×2. The real change is the most expensive, so it comes last, after every broken
         // one had its chance to become the incumbent it would be measured against.
         Action("broken.huge", "HUGE = \"1\"", 1) +
         Action("broken.negative", "NEGATIVE = \"1\"", 2) +
         Action("broken.zero-time", "ZERO_TIME = \"1\"", 3) +
         Action("broken.infinite", "INFINITE = \"1\"", 4) +
         Action("broken.nan", "NOT_A_NUMBER = \"1\"", 5) +
         Action("real.faster", "SPEED = \"1.2\"", 60);
}

nlohmann::json Show(const TempWorkspace& ws, int64_t id) {
  return ws.ArborJson({"show", std::to_string(id), "--json"});
}

TEST(IntegrationImpossibleResults, OnlyTheRealChangeIsKeptAndEachBrokenOneIsDiagnosed) {
  auto ws = std::make_unique<TempWorkspace>();
  ws->Write("bench.c", std::string(kBenchHead) + kComputedTargetHelpersC + kBenchMain);
  ws->Write("arbor.toml", Campaign(*ws));
  ws->CommitAll();
  ProcResult run = ws->Arbor({"run", "arbor.toml", "--quiet"}, {}, 300);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<TreeNode> nodes = LoadTree(*ws);
  ExpectTreeInvariants(nodes);
  SCOPED_TRACE(DescribeTree(nodes));

  EXPECT_EQ(KeysWithOutcome(nodes, "kept"), std::set<std::string>{"real.faster"});
  const TreeNode* real = FindKey(nodes, "real.faster");
  ASSERT_NE(real, nullptr);
  EXPECT_EQ(real->parent, 1);  // measured against the baseline, not against a broken number

  struct Expected {
    const char* key;
    const char* outcome;
    const char* rca;
    const char* text;  // in the diagnosis
  };
  const Expected expected[] = {
      {"broken.huge", "reverted", "anomaly", "beyond the plausible ×2"},
      {"broken.zero-time", "reverted", "anomaly", "beyond the plausible ×2"},
      {"broken.negative", "crashed", "bad_output", "value -5 is negative"},
      {"broken.infinite", "crashed", "bad_output", "holds a non-finite number (Infinity)"},
      {"broken.nan", "crashed", "bad_output", "holds a non-finite number (nan)"},
  };
  std::set<int64_t> anomalies;
  for (const Expected& e : expected) {
    SCOPED_TRACE(e.key);
    const TreeNode* n = FindKey(nodes, e.key);
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->outcome, e.outcome) << n->diagnosis;
    EXPECT_NE(n->diagnosis.find(e.text), std::string::npos) << n->diagnosis;
    nlohmann::json show = Show(*ws, n->id);
    EXPECT_EQ(show["critic"].value("rca", ""), e.rca) << show.dump();
    if (std::string(e.rca) == "anomaly") {
      anomalies.insert(n->id);
      EXPECT_TRUE(HasEvent(*ws, n->id, "anomaly", "re-running the check and the benchmark"));
      EXPECT_TRUE(HasEvent(*ws, n->id, "anomaly", "re-run: check passed"));
      // Reproduced by the fresh run, but orders of magnitude beyond any bound a real change has.
      EXPECT_NE(n->diagnosis.find("not kept without evidence (reproduced, but more than"),
                std::string::npos)
          << n->diagnosis;
    }
  }

  nlohmann::json status = ws->ArborJson({"status", "--json"});
  std::set<int64_t> listed;
  for (const auto& a : status["anomalies"]) listed.insert(a.value("node", int64_t{0}));
  EXPECT_EQ(listed, anomalies) << status.dump();
  ProcResult text = ws->Arbor({"status"});
  EXPECT_NE(text.out.find("anomalies 2"), std::string::npos) << text.out;

  const std::string report = ws->aux() + "/report.html";
  ProcResult made = ws->Arbor({"report", "arbor.toml", "--out", report});
  ASSERT_EQ(made.exit_code, 0) << made.Describe();
  std::string html = ReadFile(report);
  EXPECT_NE(html.find("<h2>Anomalies</h2>"), std::string::npos);
  for (int64_t id : anomalies) {
    EXPECT_NE(html.find("class=\"anomaly-row\" data-node=\"" + std::to_string(id) + "\""),
              std::string::npos)
        << id;
  }
}

}  // namespace
}  // namespace arbor::integration
