#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "report/sample_tree_testing.h"
#include "report/views.h"

namespace arbor {
namespace {

struct ShowInputs {
  Node node = report_testing::SampleTree()[1];  // #2 compiler.O2, kept
  std::vector<Sample> samples;
  std::optional<Profile> profile;
  std::vector<Event> events;
};

ShowInputs SampleInputs() {
  ShowInputs in;
  in.samples = {{2, "self", 1, 1510, {}},
                {2, "parent", 0, 1000, {}},
                {2, "self", 0, 1490, {{"p99_ms", 12.5}}}};
  in.profile = Profile{1.84,
                       {{"sampling", "application", 0.05},
                        {"matmul.qkv", "kernel", 0.41},
                        {"attention", "kernel", 0.22}}};
  in.events = {{11, 2, "kept", "kept: +50.0%", R"({"p": 0.01})", 40.5},
               {10, 2, "dispatched", "dispatched compiler.O2", "not json", 10.0}};
  return in;
}

TEST(ShowJsonTest, Shape) {
  ShowInputs in = SampleInputs();
  nlohmann::json show = ShowJson(in.node, in.samples, in.profile, in.events);
  nlohmann::json expected = nlohmann::json::parse(R"({
      "id": 2, "parent": 1, "action": "compiler.O2", "values": null,
      "candidate": "compiler.O2", "category": "flags", "layer": "compiler",
      "outcome": "kept", "step": "done", "seq": 1, "commit": "c2",
      "overlay": {"CXXFLAGS": "-O2"},
      "score": {"g": 0.25, "c": 30.0, "c_norm": 0.5, "r_acc": 0.0, "r_crash": 0.01,
                "m_gap": 1.0, "bonus": 0.125, "exploit": 0.5, "h": 0.75,
                "speedup": 0.0, "kb": []},
      "metric": 1500.0, "gain": 0.5, "diagnosis": "", "summary": "set -O2",
      "critic": {"p_value": null, "ci_low": null, "ci_high": null, "confirmed": false,
                 "rca": "", "evidence": "", "suggestion": "", "requeued_from": null,
                 "flags": [], "opened": null},
      "constraints": [],
      "created_s": 0.0, "finished_s": 0.0, "cost_s": 30.0,
      "samples": [{"arm": "parent", "rep": 0, "value": 1000.0, "extra": {}},
                  {"arm": "self", "rep": 0, "value": 1490.0, "extra": {"p99_ms": 12.5}},
                  {"arm": "self", "rep": 1, "value": 1510.0, "extra": {}}],
      "profile": {"total_s": 1.84, "components": [
          {"name": "matmul.qkv", "layer": "kernel", "share": 0.41, "percent": 41.0},
          {"name": "attention", "layer": "kernel", "share": 0.22, "percent": 22.0},
          {"name": "sampling", "layer": "application", "share": 0.05, "percent": 5.0}]},
      "events": [
          {"id": 10, "t": 10.0, "kind": "dispatched", "message": "dispatched compiler.O2",
           "data": "not json"},
          {"id": 11, "t": 40.5, "kind": "kept", "message": "kept: +50.0%",
           "data": {"p": 0.01}}],
      "ran_on": [], "failed_run": null})");
  // Percent is share * 100 in floating point; compare those separately.
  for (auto& c : show["profile"]["components"])
    c["percent"] = std::round(c["percent"].get<double>());
  EXPECT_EQ(show, expected) << show.dump(2);
}

TEST(ShowTest, CriticVerdictRootCauseAndConstraintsAreShown) {
  Node n = report_testing::SampleTree()[1];
  n.critic.rca = RcaClass::kRuntimeCrash;
  n.critic.evidence = "Segmentation fault";
  n.critic.suggestion = "prune";
  n.critic.ci_low = 1.1;
  n.critic.ci_high = 1.3;
  n.critic.confirmed = true;
  Constraint c;
  c.kind = ConstraintKind::kForbidValues;
  c.scope = ConstraintScope::kCampaign;
  c.action = "threads";
  c.min = 8;
  c.reason = "runtime_crash at threads[8]";
  c.source = n.id;
  n.critic.constraints.push_back(c);
  std::string text = ShowText(n, {}, std::nullopt, {});
  EXPECT_NE(text.find("root cause runtime_crash"), std::string::npos) << text;
  EXPECT_NE(text.find("evidence  Segmentation fault"), std::string::npos) << text;
  EXPECT_NE(text.find("95% CI ×1.1–×1.3 (confirmed)"), std::string::npos) << text;
  EXPECT_NE(text.find("forbid threads values >= 8 (campaign)"), std::string::npos) << text;
  nlohmann::json j = ShowJson(n, {}, std::nullopt, {});
  EXPECT_EQ(j["critic"]["rca"], "runtime_crash");
  EXPECT_EQ(j["critic"]["ci_low"], 1.1);
  ASSERT_EQ(j["constraints"].size(), 1u);
  EXPECT_EQ(j["constraints"][0]["kind"], "forbid_values");
  EXPECT_EQ(j["constraints"][0]["min"], 8.0);
}

TEST(ShowTest, AgentNoteIsShownWhenPresent) {
  Node n = report_testing::SampleTree()[1];
  EXPECT_EQ(ShowText(n, {}, std::nullopt, {}).find("agent"), std::string::npos);
  EXPECT_FALSE(ShowJson(n, {}, std::nullopt, {}).contains("agent"));

  n.agent.backend = SpecialistBackend::kLlm;
  n.agent.domain = "kernel";
  n.agent.confidence = 0.8;
  n.agent.rounds = 2;
  n.agent.prompt_tokens = 5120;
  n.agent.completion_tokens = 830;
  n.agent.cost = 0.0123;
  n.agent.findings = {"the GEMM is memory-bound"};
  n.agent.questions = {"may it use AVX-512?"};
  n.agent.proposed = {"kernel.prefetch", "kernel.tile-k"};
  std::string text = ShowText(n, {}, std::nullopt, {});
  for (const char* part :
       {"  agent     llm/kernel  confidence 0.8  rounds 2\n",
        "  llm       5120 + 830 tokens, cost 0.0123\n", "  finding   the GEMM is memory-bound\n",
        "  question  may it use AVX-512?\n", "  proposed  kernel.prefetch, kernel.tile-k\n"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n---\n" << text;
  }
  nlohmann::json j = ShowJson(n, {}, std::nullopt, {});
  EXPECT_EQ(j["agent"]["backend"], "llm");
  EXPECT_EQ(j["agent"]["completion_tokens"], 830);
  EXPECT_EQ(j["agent"]["proposed"].size(), 2u);

  AgentNote command;  // a command backend reports no tokens: no llm line
  command.backend = SpecialistBackend::kCommand;
  command.domain = "io";
  n.agent = command;
  text = ShowText(n, {}, std::nullopt, {});
  EXPECT_NE(text.find("  agent     command/io\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("  llm "), std::string::npos) << text;
}

TEST(ShowJsonTest, RootWithoutProfileOrScore) {
  Node root = report_testing::SampleTree()[0];
  nlohmann::json show = ShowJson(root, {}, std::nullopt, {});
  EXPECT_TRUE(show["parent"].is_null());
  EXPECT_TRUE(show["score"].is_null());
  EXPECT_TRUE(show["profile"].is_null());
  EXPECT_EQ(show["samples"], nlohmann::json::array());
  EXPECT_EQ(show["events"], nlohmann::json::array());
}

TEST(ShowTextTest, ListsEverything) {
  ShowInputs in = SampleInputs();
  std::string text = ShowText(in.node, in.samples, in.profile, in.events);
  EXPECT_EQ(text.rfind("#2 compiler.O2  kept\n", 0), 0u) << text;
  for (const char* part :
       {"  parent    #1\n", "  layer     compiler/flags\n", "  step      done  (seq 1)\n",
        "  commit    c2\n", "  overlay   CXXFLAGS=-O2\n", "  metric    1500  gain +50.0%\n",
        "  cost      30s\n", "  score     h = 0.75\n",
        "g        0.25      expected gain (Amdahl)\n", "r_crash  0.01      crash risk\n",
        "  summary   set -O2\n", "samples (3)\n", "  parent  rep 0  1000\n",
        "  self  rep 0  1490  p99_ms=12.5\n", "profile (total 1.84s)\n",
        " 41.0%  matmul.qkv  [kernel]\n", "events (2)\n",
        "  10s      dispatched  dispatched compiler.O2\n", "  40.5s    kept  kept: +50.0%\n"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n---\n" << text;
  }
  EXPECT_LT(text.find("matmul.qkv"), text.find("attention"));
  EXPECT_LT(text.find("attention"), text.find("sampling"));
  EXPECT_LT(text.find("dispatched"), text.find("kept:"));
}

TEST(ShowTextTest, DiagnosisOfFailedNode) {
  Node crashed = report_testing::SampleTree()[2];
  std::string text = ShowText(crashed, {}, std::nullopt, {});
  EXPECT_NE(text.find("  diagnosis build failed: error: \"v4sf\""), std::string::npos) << text;
  EXPECT_NE(text.find("samples (0)\n"), std::string::npos);
  EXPECT_EQ(text.find("profile"), std::string::npos);
}

// The output of the run that failed: its label and exit, where the full logs are, and the
// tails as the reader made them (shown as given: escaped already), in text and JSON.
TEST(ShowTest, FailedRunShowsItsTailsAndWhereTheLogsAre) {
  Node crashed = report_testing::SampleTree()[2];
  FailedRun run{"bench-0",
                "/w/.arbor/c/runs/n3/bench-0",
                "bad_output",
                {"checksum 42"},
                {"\\rpass 1/2\\rpass 2/2", "done"}};
  std::string text = ShowText(crashed, {}, std::nullopt, {}, &run);
  EXPECT_NE(text.find("failed run  bench-0 (bad_output)\n"
                      "  logs      /w/.arbor/c/runs/n3/bench-0/stdout, "
                      "/w/.arbor/c/runs/n3/bench-0/stderr\n"
                      "  stdout (last 1 lines):\n"
                      "    | checksum 42\n"
                      "  stderr (last 2 lines):\n"
                      "    | \\rpass 1/2\\rpass 2/2\n"
                      "    | done\n"),
            std::string::npos)
      << text;
  EXPECT_LT(text.find("diagnosis"), text.find("failed run"));
  EXPECT_LT(text.find("failed run"), text.find("samples (0)"));
  EXPECT_EQ(ShowText(crashed, {}, std::nullopt, {}).find("failed run"), std::string::npos);

  nlohmann::json show = ShowJson(crashed, {}, std::nullopt, {}, &run);
  EXPECT_EQ(show["failed_run"], nlohmann::json::parse(R"({
      "label": "bench-0", "exit": "bad_output", "dir": "/w/.arbor/c/runs/n3/bench-0",
      "stdout": {"path": "/w/.arbor/c/runs/n3/bench-0/stdout", "tail": ["checksum 42"]},
      "stderr": {"path": "/w/.arbor/c/runs/n3/bench-0/stderr",
                 "tail": ["\\rpass 1/2\\rpass 2/2", "done"]}})"))
      << show["failed_run"].dump();
  // A specialist's run records no exit: "exit" is null, and the text names no exit.
  run.exit.clear();
  run.out.clear();
  EXPECT_TRUE(ShowJson(crashed, {}, std::nullopt, {}, &run)["failed_run"]["exit"].is_null());
  std::string apply = ShowText(crashed, {}, std::nullopt, {}, &run);
  EXPECT_NE(apply.find("failed run  bench-0\n"), std::string::npos) << apply;
  EXPECT_NE(apply.find("  stdout: (empty)\n"), std::string::npos) << apply;
}

// Where a node's runs went, from its "job" events (a cluster executor), in show and show --json.
TEST(ShowTest, RanOnListsTheHostsOfItsJobs) {
  ShowInputs in = SampleInputs();
  auto job = [](int64_t id, const std::string& label, const std::string& job,
                const std::string& host) {
    return Event{id,
                 2,
                 "job",
                 label + " ran as slurm job " + job,
                 R"({"label":")" + label + R"(","executor":"slurm","job":")" + job +
                     R"(","host":")" + host + R"(","exit":"ok","infrastructure":false})",
                 static_cast<double>(id)};
  };
  in.events.push_back(job(20, "build", "40", "cn1"));
  in.events.push_back(job(21, "base-0", "45.0", "cn7"));
  in.events.push_back(job(22, "cand-0", "45.1", "cn7"));
  in.events.push_back(Event{23, 2, "job", "old event", R"({"label":"check","job":"39"})", 23});
  std::string text = ShowText(in.node, in.samples, in.profile, in.events);
  EXPECT_NE(text.find("  ran on    cn1: 1 run in Slurm job(s) 40\n"
                      "  ran on    cn7: 2 runs in Slurm job(s) 45.0, 45.1\n"
                      "  ran on    (host not recorded): 1 run in job(s) 39\n"),
            std::string::npos)
      << text;
  nlohmann::json show = ShowJson(in.node, in.samples, in.profile, in.events);
  ASSERT_EQ(show["ran_on"].size(), 4u) << show["ran_on"].dump();
  EXPECT_EQ(show["ran_on"][1], nlohmann::json::parse(R"({"label": "base-0", "executor": "slurm",
      "job": "45.0", "host": "cn7"})"));
  EXPECT_EQ(show["ran_on"][3]["host"], "");
}

}  // namespace
}  // namespace arbor
