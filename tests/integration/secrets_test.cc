// Secrets end to end (docs/secrets.md). First, a campaign with LLM specialists whose API key and a
// second [secrets] variable are canaries. The target's commands print both canaries plainly,
// base64, hex, URL-encoded and inside JSON, on stdout and stderr; the fake model echoes them
// in its reports, an HTTP error and a proposal. Afterwards no form of either may appear in
// anything Arbor keeps or shows: the state folder (SQLite db and WAL, runs/ logs), the
// knowledge base, the HTML report, `arbor kb export`, tree/status/show output, every recorded
// prompt, the events file, git history, and the request bodies the model server received.
// The key must still have reached the server, in the Authorization header only. Second, a
// coding-agent CLI that prints its key and a [secrets] value into every file it writes.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <map>

#include "harness.h"
#include "llm_rig.h"

namespace arbor::integration {
namespace {

namespace fs = std::filesystem;

constexpr const char* kKeyEnv = "IT_SECRET_API_KEY";
constexpr const char* kKey = "sk-canary-7f3a9b2c1d";
constexpr const char* kTokenEnv = "IT_TARGET_TOKEN";
constexpr const char* kToken = "tok:c4n4ry/5e6d+4c3b=\"2a";

std::string Base64(const std::string& in) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned v = (static_cast<unsigned char>(in[i]) << 16) |
                 (static_cast<unsigned char>(in[i + 1]) << 8) |
                 static_cast<unsigned char>(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(v >> s) & 63];
  }
  if (i < in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string Hex(const std::string& in, const char* digits) {
  std::string out;
  for (unsigned char c : in) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string UrlEncode(const std::string& in) {
  std::string out;
  for (unsigned char c : in) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += Hex(std::string(1, static_cast<char>(c)), "0123456789ABCDEF");
    }
  }
  return out;
}

std::string JsonEscaped(const std::string& in) {
  std::string quoted = nlohmann::json(in).dump();
  return quoted.substr(1, quoted.size() - 2);
}

// The forms of a secret this test looks for, by name.
std::map<std::string, std::string> Forms(const std::string& secret) {
  return {{"plain", secret},
          {"base64", Base64(secret)},
          {"hex", Hex(secret, "0123456789abcdef")},
          {"HEX", Hex(secret, "0123456789ABCDEF")},
          {"url-encoded", UrlEncode(secret)},
          {"json-escaped", JsonEscaped(secret)}};
}

// What the target prints: every form of both canaries, one per line, plus a JSON document.
std::string LeakText() {
  std::string out;
  for (const char* secret : {kKey, kToken}) {
    for (const auto& [name, form] : Forms(secret)) out += "leak " + name + ": " + form + "\n";
    out += nlohmann::json({{"token", secret}}).dump() + "\n";
  }
  return out;
}

// Both canaries in prose, as a model that echoes what it saw would write them.
std::string Echo() {
  return std::string("key ") + kKey + ", token " + kToken + " (" + Base64(kToken) + ")";
}

nlohmann::json Script() {
  nlohmann::json report = {{"summary", "lowered factor_a; " + Echo()},
                           {"confidence", 0.7},
                           {"findings", {"finding " + Echo()}},
                           {"questions", {"question " + Echo()}}};
  nlohmann::json s = nlohmann::json::array();
  s.push_back(Item("MARK-ECHO", "```diff\n" + FactorDiff("a.c", "1") + "```\n```json\n" +
                                    report.dump() + "\n```\n"));
  s.push_back({{"match", "MARK-REJECT"},
               {"status", 401},
               {"content", "Incorrect API key provided: " + Echo()}});
  nlohmann::json proposal = {{{"id", "env.proposed-f"},
                              {"layer", "system"},
                              {"category", "proposed"},
                              {"describe", "Set WORK_F=1; " + Echo()},
                              {"speedup", 2.0},
                              {"apply", {{"env", {{"WORK_F", "1"}}}}}}};
  const char* propose = "Answer with only a JSON array of new candidate actions";
  s.push_back(Item(propose, proposal.dump()));
  for (int i = 0; i < 8; ++i) s.push_back(Item(propose, "[]"));
  return s;
}

std::string Campaign(const TempWorkspace& ws, const std::string& base_url) {
  std::string leak = ws.aux() + "/leak.txt";
  std::string bench = "./work --bench; cat " + leak + "; cat " + leak + " >&2";
  std::string check = "./work --check && cat " + leak + " && if [ -n \"$WORK_BREAK\" ]; then cat " +
                      leak + " >&2; exit 1; fi";
  std::string t = WorkTargetToml("secrets", bench, check);
  t += LlmSpecialistToml("kernel", base_url, kKeyEnv, "retries = 0\nmax_rounds = 1");
  t += LlmSpecialistToml("planner", base_url, kKeyEnv, "retries = 0\npropose = true");
  t += std::string("[secrets]\nenv = [\"") + kTokenEnv + "\"]\n\n";
  t += EnvActionToml("env.e", "WORK_E", "1", 2.0);
  t += EnvActionToml("env.leaky-check", "WORK_BREAK", "1", 1.5);
  t += AgentActionToml("agent.echo", "kernel", "MARK-ECHO: make factor_a in a.c return 1");
  t += AgentActionToml("agent.reject", "kernel", "MARK-REJECT: anything");
  return t;
}

// Every text Arbor keeps or shows, by where it came from.
class Sources {
 public:
  void Add(const std::string& where, std::string text) { texts_[where] = std::move(text); }
  void AddTree(const std::string& root) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      if (it->is_regular_file()) Add(it->path().string(), ReadFile(it->path().string()));
    }
  }
  size_t size() const { return texts_.size(); }
  // Where any form of `secret` (named `name`) occurs: "source: form" lines.
  std::string Leaks(const std::string& secret) const {
    std::string out;
    for (const auto& [where, text] : texts_) {
      for (const auto& [form_name, form] : Forms(secret)) {
        if (text.find(form) != std::string::npos) out += "  " + where + ": " + form_name + "\n";
      }
    }
    return out;
  }
  bool AnyContains(const std::string& needle) const {
    for (const auto& [where, text] : texts_) {
      if (text.find(needle) != std::string::npos) return true;
    }
    return false;
  }

 private:
  std::map<std::string, std::string> texts_;
};

TEST(IntegrationSecrets, NoFormOfASecretSurvivesACampaign) {
  auto start = std::chrono::steady_clock::now();
  TempWorkspace ws;
  WriteWorkTarget(&ws);
  WriteFile(ws.aux() + "/leak.txt", LeakText());
  FakeOpenAi server(ws, Script());
  ASSERT_FALSE(server.base_url().empty());
  ws.Write("arbor.toml", Campaign(ws, server.base_url()));
  ws.CommitAll();

  EnvMap env = {{kKeyEnv, kKey}, {kTokenEnv, kToken}, {"ARBOR_LLM_BACKOFF_S", "0.05"}};
  std::string events = ws.aux() + "/events.jsonl";
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--events", events}, env, 600);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();

  Sources sources;
  sources.Add("run stdout", run.out);
  sources.Add("run stderr", run.err);
  sources.Add("events file", ReadFile(events));
  sources.AddTree(ws.repo() + "/.arbor");
  for (const auto& entry : fs::directory_iterator(ws.root())) {
    if (entry.is_regular_file()) sources.Add(entry.path().string(), ReadFile(entry.path()));
  }
  std::string report = ws.aux() + "/report.html";
  ProcResult html = ws.Arbor({"report", "arbor.toml", "--out", report});
  EXPECT_EQ(html.exit_code, 0) << html.Describe();
  sources.Add("report.html", ReadFile(report));
  std::string exported = ws.aux() + "/kb.jsonl";
  ProcResult kb = ws.Arbor({"kb", "export", "--out", exported});
  EXPECT_EQ(kb.exit_code, 0) << kb.Describe();
  sources.Add("kb export", ReadFile(exported));
  sources.Add("status", ws.Arbor({"status", "arbor.toml"}).out);
  sources.Add("status --json", ws.Arbor({"status", "arbor.toml", "--json"}).out);
  nlohmann::json tree = ws.ArborJson({"tree", "arbor.toml", "--format", "json"});
  sources.Add("tree --format json", tree.dump());
  sources.Add("tree", ws.Arbor({"tree", "arbor.toml"}).out);
  int prompts = 0;
  for (const auto& n : tree["nodes"]) {
    std::string id = std::to_string(n["id"].get<int64_t>());
    sources.Add("show " + id, ws.Arbor({"show", id}).out);
    sources.Add("show " + id + " --json", ws.Arbor({"show", id, "--json"}).out);
    ProcResult prompt = ws.Arbor({"show", id, "--prompt"});
    prompts += prompt.exit_code == 0;
    sources.Add("show " + id + " --prompt", prompt.out + prompt.err);
  }
  sources.Add("git log", ws.Git({"log", "--all", "-p", "--format=%H %s%n%b"}).out);
  int with_key = 0;
  for (nlohmann::json r : server.Requests()) {
    with_key += r["authorization"] == std::string("Bearer ") + kKey;
    r.erase("authorization");
    sources.Add("model request " + std::to_string(r["n"].get<int>()), r.dump());
  }

  // The campaign did what the leaks need: the agent, the 401, the proposal and the failed
  // check (an accuracy failure: reverted) all happened, and the target's logs were scrubbed rather
  // than never written.
  std::map<std::string, std::string> outcomes;
  for (const auto& n : tree["nodes"]) outcomes[n["action"]] = n["outcome"];
  EXPECT_EQ(outcomes["agent.echo"], "kept") << tree.dump(2);
  EXPECT_EQ(outcomes["agent.reject"], "crashed") << tree.dump(2);
  EXPECT_EQ(outcomes["env.leaky-check"], "reverted") << tree.dump(2);
  EXPECT_TRUE(outcomes.count("env.proposed-f")) << tree.dump(2);
  EXPECT_GE(prompts, 3) << "the agents' and the proposal rounds' prompts";
  EXPECT_TRUE(sources.AnyContains(std::string("[redacted:") + kTokenEnv + "]"));
  EXPECT_TRUE(sources.AnyContains(std::string("[redacted:") + kKeyEnv + "]"));
  EXPECT_GE(sources.size(), 20u);

  EXPECT_GE(with_key, 3) << "the key never reached the server: the test would prove nothing";
  EXPECT_EQ(sources.Leaks(kKey), "") << "the API key leaked into:\n" << sources.Leaks(kKey);
  EXPECT_EQ(sources.Leaks(kToken), "") << "the token leaked into:\n" << sources.Leaks(kToken);
  std::fprintf(stderr, "secrets campaign: %zu sources, %.1f s\n", sources.size(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

// A coding agent (backend = "command") that prints its API key and a [secrets] value on stdout
// and stderr, writes them into its report, into a note beside it and into its proposals: no
// file under .arbor/ (the agent's runs/n<id>/agent/ and runs/propose/ folders included), no
// byte of the knowledge base or of the report, and no commit may hold either; the redactions
// show that the output was scrubbed, not lost.
TEST(IntegrationSecrets, ACodingAgentsOutputLeavesNoSecretInAnyFileArborWrites) {
  constexpr const char* kAgentKeyEnv = "IT_AGENT_KEY";
  constexpr const char* kAgentKey = "sk-agent-canary-7f3a9b";
  constexpr const char* kAgentTokenEnv = "IT_AGENT_TOKEN";
  constexpr const char* kAgentToken = "tok-agent-canary-5e6d4c";
  TempWorkspace ws;
  const std::string agent = ws.aux() + "/agent.sh";
  WriteFile(agent, std::string("#!/bin/sh\ncat > /dev/null\ntok='") + kAgentToken + "'\n" +
                       R"(echo "working with key $IT_AGENT_KEY and token $tok"
echo "debug: key=$IT_AGENT_KEY token=$tok" >&2
echo "notes: $IT_AGENT_KEY $tok" > "$(dirname "$ARBOR_RESULT")/notes.txt"
if [ "$ARBOR_MODE" = propose ]; then
  cat > "$ARBOR_RESULT" <<EOF
{"summary": "proposing with $IT_AGENT_KEY",
 "proposals": [{"id": "sys.k", "layer": "system", "category": "k", "describe": "uses $tok",
                "speedup": 1.2, "apply": {"env": {"K": "1"}}}]}
EOF
  exit 0
fi
echo 200 > speed
cat > "$ARBOR_RESULT" <<EOF
{"summary": "doubled the speed; key $IT_AGENT_KEY", "findings": ["token $tok works"],
 "questions": ["rotate $IT_AGENT_KEY?"], "confidence": 0.5}
EOF
)");
  ASSERT_EQ(chmod(agent.c_str(), 0755), 0);
  ws.Write("speed", "100\n");
  ws.Write("arbor.toml",
           std::string(
               "[campaign]\nname = \"agentsec\"\nseed = 1\n\n"
               "[target]\nbuild = \"true\"\n"
               "bench = '''printf '{\"v\": %s}\\n' $(($(cat speed) + ARBOR_REPETITION % 3))'''\n\n"
               "[metric]\nsource = \"json:v\"\nrepetitions = 2\n\n"
               "[search]\nmax_nodes = 3\n\n[critic]\nmin_effect = 0.05\n\n"
               "[specialists.kernel]\nbackend = \"command\"\ncommand = \"") +
               agent + "\"\napi_key_env = \"" + kAgentKeyEnv + "\"\npropose = true\n\n" +
               "[secrets]\nenv = [\"" + kAgentTokenEnv + "\"]\n\n" +
               "[[action]]\nid = \"kernel.fast\"\nlayer = \"kernel\"\ncategory = \"fast\"\n"
               "speedup = 2.0\napply = { agent = \"kernel\", goal = \"make it fast\" }\n");
  ws.CommitAll();
  const EnvMap env = {{kAgentKeyEnv, kAgentKey}, {kAgentTokenEnv, kAgentToken}};
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, env, 300);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const std::string report = ws.aux() + "/report.html";
  ProcResult html = ws.Arbor({"report", "arbor.toml", "--out", report}, env);
  ASSERT_EQ(html.exit_code, 0) << html.Describe();

  Sources sources;
  sources.AddTree(ws.repo() + "/.arbor");
  for (const char* suffix : {"", "-wal", "-shm"}) {
    sources.Add(std::string("kb.db") + suffix, ReadFile(ws.root() + "/kb.db" + suffix));
  }
  sources.Add("report.html", ReadFile(report));
  sources.Add("git log", ws.Git({"log", "--all", "-p", "--format=%H %s%n%b"}).out);
  // The agent ran in both modes and left its files where the test looks.
  bool implement = false;
  bool propose = false;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(ws.repo() + "/.arbor/agentsec/runs", ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().filename() != "notes.txt") continue;
    const std::string path = it->path().string();
    implement = implement || path.find("/agent/notes.txt") != std::string::npos;
    propose = propose || path.find("/propose/") != std::string::npos;
  }
  EXPECT_TRUE(implement) << "no runs/n<id>/agent/ folder with the agent's files";
  EXPECT_TRUE(propose) << "no runs/propose/ folder with the agent's files";
  nlohmann::json tree = ws.ArborJson({"tree", "arbor.toml", "--format", "json"});
  std::map<std::string, std::string> outcomes;
  for (const auto& n : tree["nodes"]) outcomes[n["action"]] = n["outcome"];
  EXPECT_EQ(outcomes["kernel.fast"], "kept") << tree.dump(2);
  EXPECT_TRUE(outcomes.count("sys.k")) << "the proposal was not taken: " << tree.dump(2);

  EXPECT_TRUE(sources.AnyContains(std::string("[redacted:") + kAgentKeyEnv + "]"));
  EXPECT_TRUE(sources.AnyContains(std::string("[redacted:") + kAgentTokenEnv + "]"));
  EXPECT_EQ(sources.Leaks(kAgentKey), "") << "the agent's key leaked into:\n"
                                          << sources.Leaks(kAgentKey);
  EXPECT_EQ(sources.Leaks(kAgentToken), "") << "the [secrets] value leaked into:\n"
                                            << sources.Leaks(kAgentToken);
}

}  // namespace
}  // namespace arbor::integration
