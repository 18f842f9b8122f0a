// LLM specialists end to end: the real arbor binary, git, SQLite and HTTP on loopback to the
// scripted arbor_fake_openai. One campaign mixes builtin env actions with agent actions whose
// goals carry unique markers (MARK-...), so the server's `match` routes each task's answers:
// a good diff, a diff that fails to build and its fix, a malformed and an empty answer each
// followed by a good one, a 429 then success, a timeout, two hostile patches, and a proposal
// round that adds an env action. Outcomes come from `arbor tree/show/status`; what the model
// was sent comes from the server's request log.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <set>

#include "harness.h"
#include "llm_rig.h"

namespace arbor::integration {
namespace {

namespace fs = std::filesystem;

constexpr const char* kKeyEnv = "IT_LLM_API_KEY";
constexpr const char* kKey = "sk-it-llm-campaign-4242";
constexpr const char* kProposeMarker = "Answer with only a JSON array of new candidate actions";

nlohmann::json Script() {
  nlohmann::json s = nlohmann::json::array();
  // 1. A good diff: factor_a 2 -> 1, a 2x win.
  s.push_back(Item("MARK-GOOD", DiffAnswer(FactorDiff("a.c", "1"), "factor_a lowered to 1")));
  // 2. A diff that does not build, then its fix once the build error is fed back.
  s.push_back(Item("MARK-FIXUP", DiffAnswer(FactorDiff("b.c", "undeclared_zq7b"), "")));
  s.push_back(Item("undeclared_zq7b", DiffAnswer(FactorDiff("b.c", "1"), "factor_b fixed")));
  // 3. A body that is not JSON, then a good answer.
  nlohmann::json malformed = {{"match", "MARK-MALFORMED"}, {"raw_body", "{oops"}};
  s.push_back(malformed);
  s.push_back(Item("your answer was malformed",
                   DiffAnswer(FactorDiff("c.c", "1"), "factor_c after a malformed answer")));
  // 4. An empty answer, then a neutral whole-file change (README only).
  s.push_back(Item("MARK-EMPTY", ""));
  s.push_back(Item("your answer was empty",
                   "```file:README.md\n# work\n\nDocumented by the model.\n```\n"
                   "```json\n{\"summary\": \"README reworded\", \"confidence\": 0.1}\n```\n"));
  // 5. HTTP 429 (Retry-After: 0), then success on the client's retry.
  s.push_back(
      {{"match", "MARK-RATELIMIT"}, {"status", 429}, {"retry_after", 0}, {"content", "slow down"}});
  s.push_back(Item("MARK-RATELIMIT", DiffAnswer(FactorDiff("d.c", "1"), "factor_d after a 429")));
  // 6. An answer slower than the domain's 1 s timeout (retries = 0).
  nlohmann::json slow = Item("MARK-TIMEOUT", DiffAnswer(FactorDiff("a.c", "1"), "too late"));
  slow["delay_s"] = 4;
  s.push_back(slow);
  // 7. Hostile patches: out of the worktree, and into .git.
  s.push_back(Item("MARK-ESCAPE",
                   "```diff\ndiff --git a/../../../outside-pwned.txt b/../../../outside-pwned.txt\n"
                   "new file mode 100644\n--- /dev/null\n+++ b/../../../outside-pwned.txt\n"
                   "@@ -0,0 +1 @@\n+pwned\n```\n"));
  s.push_back(Item("MARK-GITDIR",
                   "```file:.git/config\n[core]\n\tfsmonitor = touch fsmonitor-pwned\n```\n"));
  // 8. Proposal rounds (after the baseline and after each keep): one env action, then none.
  s.push_back(Item(kProposeMarker,
                   R"([{"id": "env.proposed-f", "layer": "system", "category": "proposed",
  "describe": "Set WORK_F=1", "targets": [], "speedup": 2.0, "cost": "5s",
  "apply": {"env": {"WORK_F": "1"}}}])"));
  for (int i = 0; i < 12; ++i) s.push_back(Item(kProposeMarker, "[]"));
  return s;
}

std::string Campaign(const std::string& base_url) {
  std::string t = WorkTargetToml("llm");
  t += LlmSpecialistToml("kernel", base_url, kKeyEnv,
                         "timeout = \"20s\"\nretries = 2\nmax_rounds = 2\n"
                         "allow = [\"*.c\", \"README.md\"]");
  t +=
      LlmSpecialistToml("slow", base_url, kKeyEnv, "timeout = \"1s\"\nretries = 0\nmax_rounds = 1");
  t += LlmSpecialistToml("planner", base_url, kKeyEnv,
                         "timeout = \"20s\"\nretries = 0\npropose = true\nmax_proposals = 2");
  t += "[llm]\nmax_tokens = 1000000\nmax_cost = 100.0\n\n";
  t += EnvActionToml("env.e", "WORK_E", "1", 2.0);
  t += EnvActionToml("env.noop", "WORK_NOTE", "1", 1.2);
  t += AgentActionToml("agent.good", "kernel", "MARK-GOOD: make factor_a in a.c return 1");
  t += AgentActionToml("agent.fixup", "kernel", "MARK-FIXUP: make factor_b in b.c return 1");
  t += AgentActionToml("agent.malformed", "kernel", "MARK-MALFORMED: lower factor_c in c.c");
  t += AgentActionToml("agent.empty", "kernel", "MARK-EMPTY: document the program");
  t += AgentActionToml("agent.ratelimited", "kernel", "MARK-RATELIMIT: lower factor_d in d.c");
  t += AgentActionToml("agent.timeout", "slow", "MARK-TIMEOUT: answer too slowly");
  t += AgentActionToml("agent.escape", "kernel", "MARK-ESCAPE: write outside the tree");
  t += AgentActionToml("agent.gitdir", "kernel", "MARK-GITDIR: write into .git");
  return t;
}

std::map<std::string, nlohmann::json> ByAction(const nlohmann::json& tree) {
  std::map<std::string, nlohmann::json> out;
  for (const auto& n : tree["nodes"]) {
    int64_t seq = n["seq"].get<int64_t>();
    std::string action = n["action"].get<std::string>();
    // The first dispatch of each action: a later one would be a re-queue under a new incumbent.
    if (seq > 0 && (!out.count(action) || out[action]["seq"].get<int64_t>() > seq)) {
      out[action] = n;
    }
  }
  return out;
}

std::string Id(const nlohmann::json& node) { return std::to_string(node["id"].get<int64_t>()); }

// Requests whose last user message contains `text`.
int CountRequests(const std::vector<nlohmann::json>& log, const std::string& text) {
  int n = 0;
  for (const auto& r : log) n += LastUserMessage(r).find(text) != std::string::npos;
  return n;
}

bool AnyFileNamed(const std::string& root, const std::string& name) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it->path().filename() == name) return true;
  }
  return false;
}

TEST(IntegrationLlm, AgentActionsThroughTheFakeServer) {
  auto start = std::chrono::steady_clock::now();
  TempWorkspace ws;
  WriteWorkTarget(&ws);
  FakeOpenAi server(ws, Script());
  ASSERT_FALSE(server.base_url().empty());
  ws.Write("arbor.toml", Campaign(server.base_url()));
  ws.CommitAll();

  EnvMap env = {{kKeyEnv, kKey}, {"ARBOR_LLM_BACKOFF_S", "0.05"}};
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, env, 600);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  nlohmann::json tree = ws.ArborJson({"tree", "arbor.toml", "--format", "json"});
  std::map<std::string, nlohmann::json> nodes = ByAction(tree);
  std::vector<nlohmann::json> log = server.Requests();
  std::string all = tree.dump(2);
  for (const char* id :
       {"env.e", "env.noop", "agent.good", "agent.fixup", "agent.malformed", "agent.empty",
        "agent.ratelimited", "agent.timeout", "agent.escape", "agent.gitdir", "env.proposed-f"}) {
    ASSERT_TRUE(nodes.count(id)) << id << " was never dispatched:\n" << all;
  }

  // The kept set: exactly the 2x wins, whichever way their answer arrived (the target's time
  // is a model of its work, so a win is a win on a loaded machine too).
  const std::set<std::string> wins = {"env.e",           "agent.good",        "agent.fixup",
                                      "agent.malformed", "agent.ratelimited", "env.proposed-f"};
  std::set<std::string> kept;
  for (const auto& n : tree["nodes"]) {
    if (n["outcome"] == "kept") kept.insert(n["action"].get<std::string>());
  }
  EXPECT_EQ(kept, wins) << all;

  // 2. The build error went back to the model, and the second round's answer was applied.
  EXPECT_EQ(nodes["agent.fixup"]["agent"]["rounds"], 2) << nodes["agent.fixup"].dump(2);
  EXPECT_EQ(CountRequests(log, "undeclared_zq7b"), 1);
  for (const auto& r : log) {
    std::string last = LastUserMessage(r);
    if (last.find("undeclared_zq7b") == std::string::npos) continue;
    EXPECT_NE(last.find("the build failed"), std::string::npos) << last;
  }
  // 3 and 4: a malformed or empty answer costs a round, not the task.
  EXPECT_EQ(nodes["agent.malformed"]["agent"]["rounds"], 2);
  EXPECT_EQ(CountRequests(log, "your answer was malformed: response is not JSON"), 1);
  EXPECT_EQ(nodes["agent.empty"]["outcome"], "reverted") << nodes["agent.empty"].dump(2);
  EXPECT_EQ(CountRequests(log, "your answer was empty"), 1);
  // 5. The 429 was retried by the client: two requests, one round.
  EXPECT_EQ(CountRequests(log, "MARK-RATELIMIT"), 2);
  EXPECT_EQ(nodes["agent.ratelimited"]["agent"]["rounds"], 1);
  // 6. The timeout fails the node and says so.
  const nlohmann::json& timeout = nodes["agent.timeout"];
  EXPECT_EQ(timeout["outcome"], "crashed") << timeout.dump(2);
  EXPECT_NE(timeout["diagnosis"].get<std::string>().find("within 1 s"), std::string::npos)
      << timeout.dump(2);
  // 7. Hostile patches never reach git or the file system.
  for (const char* id : {"agent.escape", "agent.gitdir"}) {
    EXPECT_EQ(nodes[id]["outcome"], "crashed") << nodes[id].dump(2);
    EXPECT_NE(nodes[id]["diagnosis"].get<std::string>().find("patch policy"), std::string::npos)
        << nodes[id].dump(2);
  }
  EXPECT_NE(nodes["agent.escape"]["diagnosis"].get<std::string>().find("path-traversal"),
            std::string::npos);
  EXPECT_NE(nodes["agent.gitdir"]["diagnosis"].get<std::string>().find("git-dir"),
            std::string::npos);
  EXPECT_FALSE(AnyFileNamed(ws.root(), "outside-pwned.txt"));
  EXPECT_FALSE(fs::exists(ws.root() + "/../outside-pwned.txt"));
  EXPECT_FALSE(AnyFileNamed(ws.root(), "fsmonitor-pwned"));
  EXPECT_EQ(ReadFile(ws.repo() + "/.git/config").find("fsmonitor"), std::string::npos);

  // 8. The proposal: recorded as an event of the node it was proposed at, then dispatched.
  bool proposal_seen = false;
  for (const auto& n : tree["nodes"]) {
    nlohmann::json show = ws.ArborJson({"show", Id(n), "--json"});
    for (const auto& e : show["events"]) {
      if (e["kind"] == "proposal" &&
          e["message"].get<std::string>().find("env.proposed-f") != std::string::npos) {
        proposal_seen = true;
        EXPECT_NE(e["message"].get<std::string>().find("proposed by planner specialist"),
                  std::string::npos)
            << e.dump();
      }
    }
  }
  EXPECT_TRUE(proposal_seen);
  EXPECT_GE(CountRequests(log, kProposeMarker), 2) << "after the baseline and after a keep";

  // Tokens and cost: on the node and in the campaign's totals.
  nlohmann::json good = ws.ArborJson({"show", Id(nodes["agent.good"]), "--json"});
  ASSERT_TRUE(good.contains("agent")) << good.dump(2);
  EXPECT_EQ(good["agent"]["backend"], "llm");
  EXPECT_EQ(good["agent"]["domain"], "kernel");
  EXPECT_EQ(good["agent"]["prompt_tokens"], 100);
  EXPECT_EQ(good["agent"]["completion_tokens"], 20);
  EXPECT_NEAR(good["agent"]["cost"].get<double>(), 0.05 + 0.04, 1e-9);
  ProcResult status = ws.Arbor({"status", "arbor.toml"});
  EXPECT_NE(status.out.find("llm "), std::string::npos) << status.out;
  EXPECT_NE(status.out.find(" tokens, cost "), std::string::npos) << status.out;

  // The recorded prompts: the goal, the domain's skill, the kept path, the fed-back error.
  ProcResult prompt = ws.Arbor({"show", Id(nodes["agent.good"]), "--prompt"});
  EXPECT_EQ(prompt.exit_code, 0) << prompt.Describe();
  EXPECT_NE(prompt.out.find("MARK-GOOD: make factor_a"), std::string::npos) << prompt.out;
  EXPECT_NE(prompt.out.find("# Kernel specialist"), std::string::npos) << prompt.out;
  ProcResult fixup = ws.Arbor({"show", Id(nodes["agent.fixup"]), "--prompt"});
  EXPECT_NE(fixup.out.find("MARK-FIXUP"), std::string::npos) << fixup.out;
  EXPECT_NE(fixup.out.find("# user (round 2)"), std::string::npos) << fixup.out;
  EXPECT_NE(fixup.out.find("undeclared_zq7b"), std::string::npos) << fixup.out;
  bool kept_path_seen = false;
  for (const auto& [id, n] : nodes) {
    if (id.rfind("agent.", 0) != 0) continue;
    ProcResult p = ws.Arbor({"show", Id(n), "--prompt"});
    kept_path_seen = kept_path_seen || p.out.find("## Kept path") != std::string::npos;
  }
  EXPECT_TRUE(kept_path_seen) << "no agent after a keep was told the kept path";

  // The key went out in the Authorization header of every request, and only there.
  ASSERT_FALSE(log.empty());
  for (const auto& r : log) {
    EXPECT_EQ(r["authorization"], std::string("Bearer ") + kKey) << r.dump();
    EXPECT_EQ(r["body"].dump().find(kKey), std::string::npos);
  }
  std::fprintf(stderr, "llm campaign: %zu requests, %.1f s\n", log.size(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

// [llm] max_tokens is a hard cap (specialists/llm_budget.h): a request whose worst case (its
// prompt's bytes, its answer's max_tokens) does not fit what is left is never sent. Each
// answer reports 5,000 tokens against a budget of 12,000; one agent needs one round, the other
// two (its first diff does not build). Checking the budget only before each dispatch, as Arbor
// did, sends three requests (15,000 tokens); now what the server was asked for, and what the
// campaign recorded, stay within 12,000, every request carries an answer cap within what was
// left, and the refused task is skipped, not crashed.
TEST(IntegrationLlm, TheTokenBudgetIsAHardCap) {
  TempWorkspace ws;
  WriteWorkTarget(&ws);
  const nlohmann::json usage = {{"prompt_tokens", 4500}, {"completion_tokens", 500}};
  nlohmann::json script = nlohmann::json::array();
  script.push_back(Item("MARK-ONE", DiffAnswer(FactorDiff("a.c", "1"), "factor_a lowered")));
  script.push_back(Item("MARK-TWO", DiffAnswer(FactorDiff("b.c", "undeclared_zq7b"), "")));
  script.push_back(Item("undeclared_zq7b", DiffAnswer(FactorDiff("b.c", "1"), "factor_b fixed")));
  for (auto& item : script) item["usage"] = usage;
  FakeOpenAi server(ws, script);
  ASSERT_FALSE(server.base_url().empty());
  constexpr int64_t kBudget = 12000;
  // A domain without a skill file: the prompt is the protocol and the task, ~5-8 KB.
  std::string t = WorkTargetToml("budget");
  t += LlmSpecialistToml("coder", server.base_url(), kKeyEnv,
                         "timeout = \"20s\"\nretries = 0\nmax_rounds = 2");
  t += "[llm]\nmax_tokens = " + std::to_string(kBudget) + "\n\n";
  t += EnvActionToml("env.e", "WORK_E", "1", 1.5);
  t += AgentActionToml("agent.one", "coder", "MARK-ONE: make factor_a in a.c return 1");
  t += AgentActionToml("agent.two", "coder", "MARK-TWO: make factor_b in b.c return 1");
  ws.Write("arbor.toml", t);
  ws.CommitAll();

  const std::string events = ws.aux() + "/events.jsonl";
  ProcResult run =
      ws.Arbor({"run", "arbor.toml", "--quiet", "--events", events}, {{kKeyEnv, kKey}}, 600);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<nlohmann::json> log = server.Requests();
  ASSERT_GE(log.size(), 1u) << "no request fit the budget: the test would prove nothing";
  int64_t asked = 0;  // what the server reported for the requests it received
  for (const auto& r : log) {
    const nlohmann::json& body = r["body"];
    int64_t prompt_bytes = 0;
    for (const auto& m : body["messages"]) {
      prompt_bytes += static_cast<int64_t>(m["role"].get<std::string>().size() +
                                           m["content"].get<std::string>().size());
    }
    ASSERT_TRUE(body.contains("max_tokens")) << "an answer without a cap: " << body.dump();
    // Its worst case fitted what was left when it was sent.
    EXPECT_LE(prompt_bytes + body["max_tokens"].get<int64_t>(), kBudget - asked) << r.dump();
    ASSERT_TRUE(r["item"].is_number()) << "a request the script did not answer: " << r.dump();
    const nlohmann::json& used = script[r["item"].get<size_t>()]["usage"];
    asked += used["prompt_tokens"].get<int64_t>() + used["completion_tokens"].get<int64_t>();
  }
  EXPECT_LE(asked, kBudget);
  EXPECT_LT(log.size(), 3u) << "the third request could not fit: it must not have been sent";
  nlohmann::json status = ws.ArborJson({"status", "arbor.toml", "--json"});
  const int64_t spent = status["llm"]["prompt_tokens"].get<int64_t>() +
                        status["llm"]["completion_tokens"].get<int64_t>();
  EXPECT_EQ(spent, asked) << status.dump();
  EXPECT_LE(spent, kBudget);

  // The task whose request was refused is skipped, saying why; LLM dispatch then stopped.
  nlohmann::json tree = ws.ArborJson({"tree", "arbor.toml", "--format", "json"});
  int refused = 0;
  for (const auto& n : tree["nodes"]) {
    const std::string diagnosis = n.value("diagnosis", "");
    if (diagnosis.find("[llm] budget") == std::string::npos) continue;
    ++refused;
    EXPECT_EQ(n["outcome"], "skipped") << n.dump(2);
    EXPECT_NE(diagnosis.find("not sent"), std::string::npos) << diagnosis;
  }
  EXPECT_EQ(refused, 1) << tree.dump(2);
  EXPECT_NE(ReadFile(events).find("\"llm_budget\""), std::string::npos)
      << "the campaign said the budget is spent";
}

}  // namespace
}  // namespace arbor::integration
