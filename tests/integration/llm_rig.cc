#include "llm_rig.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

namespace arbor::integration {
namespace {

constexpr const char* kMain = R"(#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int factor_a(void);
int factor_b(void);
int factor_c(void);
int factor_d(void);

static long EnvFactor(const char* name) {
  const char* v = getenv(name);
  return v != NULL && *v != '\0' ? atol(v) : 2;
}

static unsigned long Kernel(unsigned long n) {
  volatile unsigned long s = 0;
  for (unsigned long i = 0; i < n; ++i) s += i ^ (i >> 3);
  return s;
}

int main(int argc, char** argv) {
  int check = argc > 1 && strcmp(argv[1], "--check") == 0;
  long reps = (long)factor_a() * factor_b() * factor_c() * factor_d() * EnvFactor("WORK_E") *
              EnvFactor("WORK_F");
  unsigned long n = check ? 1000UL : 2000000UL;
  if (reps < 1) {
    fprintf(stderr, "work: no repetitions (%ld)\n", reps);
    return 1;
  }
  unsigned long r = 0;
  for (long k = 0; k < reps; ++k) r = Kernel(n);
  /* The reported time is a model of the work done (1 ns per iteration, +0..4% from the pid so
     repeated runs differ), not a clock: on a shared 2-core machine CPU time varies up to 2x
     with what the other hyperthread runs, and these tests are about the specialists. */
  double s = (double)reps * (double)n * 1e-9 * (1.0 + 0.01 * (double)(getpid() % 5));
  if (check) {
    unsigned long want = 0;
    for (unsigned long i = 0; i < n; ++i) want += i ^ (i >> 3);
    if (r != want) {
      fprintf(stderr, "work: wrong result %lu, expected %lu\n", r, want);
      return 1;
    }
    puts("check ok");
    return 0;
  }
  printf("{\"time_s\": %.6f, \"reps\": %ld}\n", s, reps);
  return 0;
}
)";

}  // namespace

FakeOpenAi::FakeOpenAi(const TempWorkspace& ws, const nlohmann::json& script) {
  std::string script_path = ws.aux() + "/script.json";
  std::string port_file = ws.aux() + "/port";
  log_ = ws.aux() + "/requests.jsonl";
  WriteFile(script_path, script.dump(2));
  server_ =
      std::make_unique<Process>(std::vector<std::string>{FAKE_OPENAI_BIN, "--script", script_path,
                                                         "--port-file", port_file, "--log", log_},
                                ws.aux(), EnvMap{});
  for (int i = 0; i < 500; ++i) {
    std::string port = ReadFile(port_file);
    if (!port.empty() && port.back() == '\n') {
      base_url_ = "http://127.0.0.1:" + port.substr(0, port.size() - 1) + "/v1";
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ADD_FAILURE() << "arbor_fake_openai wrote no port file within 10 s";
}

FakeOpenAi::~FakeOpenAi() = default;  // ~Process kills the server's process group

std::vector<nlohmann::json> FakeOpenAi::Requests() const {
  std::vector<nlohmann::json> out;
  std::stringstream lines(ReadFile(log_));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "bad log line: " << line;
    if (!j.is_discarded()) out.push_back(std::move(j));
  }
  return out;
}

std::string LastUserMessage(const nlohmann::json& request) {
  std::string last;
  const nlohmann::json& body = request.contains("body") ? request["body"] : request;
  if (!body.is_object() || !body.contains("messages")) return last;
  for (const nlohmann::json& m : body["messages"]) {
    if (m.value("role", "") == "user") last = m.value("content", "");
  }
  return last;
}

std::string FactorLine(const std::string& letter, const std::string& body) {
  return "int factor_" + letter + "(void) { return " + body + "; }";
}

void WriteWorkTarget(TempWorkspace* ws) {
  ws->Write("main.c", kMain);
  for (std::string letter : {"a", "b", "c", "d"}) {
    ws->Write(letter + ".c", FactorLine(letter, "2") + "\n");
  }
  ws->Write("README.md", "# work\n\nA toy target for Arbor's LLM integration tests.\n");
  ws->Write(".gitignore", "/work\n/.arbor/\n");
  ws->CommitAll();
}

std::string WorkTargetToml(const std::string& name, const std::string& bench,
                           const std::string& check) {
  return "[campaign]\nname = \"" + name +
         "\"\nworkspace = \".\"\nseed = 1\n\n"
         "[target]\n"
         "build = 'cc -O2 -o work main.c a.c b.c c.c d.c'\n"
         "check = '" +
         check + "'\nbench = '" + bench +
         "'\ntimeout = \"1m\"\nbench_timeout = \"30s\"\n"
         "env = { WORK_E = \"2\", WORK_F = \"2\" }\n\n"
         "[metric]\nname = \"time_s\"\ngoal = \"min\"\n"
         "source = 'regex:\"time_s\": ([0-9.]+)'\nrepetitions = 3\n\n"
         "[search]\nmax_nodes = 40\nmax_time = \"8m\"\nplateau = 40\n\n"
         "[critic]\nmin_effect = 0.3\nmax_cv = 0.5\n\n";
}

std::string LlmSpecialistToml(const std::string& domain, const std::string& base_url,
                              const std::string& key_env, const std::string& extra) {
  return "[specialists." + domain + "]\nbackend = \"llm\"\nmodel = \"fake-model\"\nbase_url = \"" +
         base_url + "\"\napi_key_env = \"" + key_env +
         "\"\ncost_per_1k_prompt = 0.5\ncost_per_1k_completion = 2.0\n" + extra + "\n";
}

std::string AgentActionToml(const std::string& id, const std::string& domain,
                            const std::string& goal) {
  return "[[action]]\nid = \"" + id + "\"\nlayer = \"kernel\"\ncategory = \"" + id +
         "\"\ntargets = []\nspeedup = 2.0\ncost = \"10s\"\n"
         "risk = { accuracy = 0.0, crash = 0.1 }\napply = { agent = \"" +
         domain + "\", goal = \"" + goal + "\" }\n\n";
}

std::string EnvActionToml(const std::string& id, const std::string& var, const std::string& value,
                          double speedup) {
  std::ostringstream out;
  out << "[[action]]\nid = \"" << id << "\"\nlayer = \"system\"\ncategory = \"" << id
      << "\"\ntargets = []\nspeedup = " << speedup
      << "\ncost = \"5s\"\nrisk = { accuracy = 0.0, crash = 0.05 }\napply = { env = { " << var
      << " = \"" << value << "\" } }\n\n";
  return out.str();
}

std::string FactorDiff(const std::string& file, const std::string& new_body) {
  std::string letter = file.substr(0, 1);
  return "diff --git a/" + file + " b/" + file + "\n--- a/" + file + "\n+++ b/" + file +
         "\n@@ -1 +1 @@\n-" + FactorLine(letter, "2") + "\n+" + FactorLine(letter, new_body) + "\n";
}

std::string DiffAnswer(const std::string& diff, const std::string& summary) {
  std::string out = "Here is the change.\n\n```diff\n" + diff + "```\n";
  if (!summary.empty()) {
    out += "\n```json\n" + nlohmann::json({{"summary", summary}, {"confidence", 0.8}}).dump() +
           "\n```\n";
  }
  return out;
}

nlohmann::json Item(const std::string& match, const std::string& content) {
  return {{"match", match},
          {"content", content},
          {"usage", {{"prompt_tokens", 100}, {"completion_tokens", 20}}}};
}

}  // namespace arbor::integration
