// Shared setup of the LLM integration tests (llm_campaign_test.cc, secrets_test.cc): the
// scripted OpenAI-compatible server (`arbor_fake_openai`) as a child process, a small C target
// whose speed depends on files an agent can edit and on environment variables, and builders
// for the model's answers.
//
// The target, `work`, runs one kernel WORK_REPS times, WORK_REPS being the product of six
// factors of 2: factor_a() .. factor_d() (one per file a.c .. d.c, which agents edit) and the
// environment variables WORK_E and WORK_F (which env actions set). Each factor lowered to 1
// halves the work, and `time_s` is a model of the work (1 ns per kernel iteration, +0..4%
// varying by pid), not a clock reading: measured CPU time on a loaded 2-core machine varies up
// to 2x and made the Critic (rightly) refuse wins, so the outcomes here do not depend on the
// machine's speed. The measurement itself is tested on real timings by the toy campaigns. The
// kernel's result does not depend on the factors, so `./work --check` stays correct while
// `./work --bench` gets "faster".
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness.h"

namespace arbor::integration {

// arbor_fake_openai on a free loopback port, with `script` as its items; killed on destruction.
class FakeOpenAi {
 public:
  FakeOpenAi(const TempWorkspace& ws, const nlohmann::json& script);
  ~FakeOpenAi();
  FakeOpenAi(const FakeOpenAi&) = delete;
  FakeOpenAi& operator=(const FakeOpenAi&) = delete;

  // "http://127.0.0.1:PORT/v1", or "" when the server did not start (a test failure is added).
  const std::string& base_url() const { return base_url_; }
  const std::string& log_path() const { return log_; }
  // The request log, one JSON object per request: {n, path, authorization, body, item}.
  std::vector<nlohmann::json> Requests() const;

 private:
  std::unique_ptr<Process> server_;
  std::string log_;
  std::string base_url_;
};

// The last message with role "user" in a logged request's body ("" when none).
std::string LastUserMessage(const nlohmann::json& request);

// Writes main.c, a.c .. d.c and README.md into ws->repo() and commits them.
void WriteWorkTarget(TempWorkspace* ws);

// The [campaign], [target], [metric], [search] and [critic] sections for the work target.
// The metric is read with regex:"time_s": ... so a bench may print other lines too.
inline constexpr const char* kBench = "./work --bench";
inline constexpr const char* kCheck = "./work --check";
std::string WorkTargetToml(const std::string& name, const std::string& bench = kBench,
                           const std::string& check = kCheck);

// A [specialists.<domain>] section for an llm backend at `base_url`; `extra` holds more keys.
std::string LlmSpecialistToml(const std::string& domain, const std::string& base_url,
                              const std::string& key_env, const std::string& extra);

// An [[action]] asking `domain` for `goal`.
std::string AgentActionToml(const std::string& id, const std::string& domain,
                            const std::string& goal);
// An [[action]] setting one environment variable.
std::string EnvActionToml(const std::string& id, const std::string& var, const std::string& value,
                          double speedup);

// A unified diff replacing the one line of `file` (a.c .. d.c) by `new_line`.
std::string FactorDiff(const std::string& file, const std::string& new_body);
// The one line of a.c .. d.c: "int factor_a(void) { return 2; }" for ("a", "2").
std::string FactorLine(const std::string& letter, const std::string& body);
// An answer: prose, a ```diff block, and a ```json report with `summary` (when not empty).
std::string DiffAnswer(const std::string& diff, const std::string& summary);
// A script item answering requests whose last user message contains `match`.
nlohmann::json Item(const std::string& match, const std::string& content);

}  // namespace arbor::integration
