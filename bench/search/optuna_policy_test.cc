#include "bench/search/optuna_policy.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench/search/line_process.h"

namespace arbor::search {
namespace {

using nlohmann::json;

const char* const kPython = OptunaPolicy::kDefaultPython;

// True when this process has no child left, running or unreaped.
bool NoChildren() { return waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD; }

std::string WriteScript(const std::string& name, const std::string& text) {
  std::string path = testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// Importing optuna takes most of a second: asked once.
bool HaveOptuna() {
  static const bool have = OptunaPolicy::Available(kPython);
  return have;
}

#define SKIP_WITHOUT_OPTUNA() \
  if (!HaveOptuna()) GTEST_SKIP() << "python3-optuna is not installed for " << kPython

// Drives the bridge alone through a real process; answers each configuration with the number of
// actions on. Returns the configuration lines, or an empty list on a protocol failure.
std::vector<std::string> Drive(uint64_t seed, int trials, int* exit_code) {
  auto started = LineProcess::Start({kPython, OptunaPolicy::DefaultScript()});
  EXPECT_TRUE(started.ok());
  if (!started.ok()) return {};
  LineProcess& p = **started;
  json header = {{"seed", seed},
                 {"trials", trials},
                 {"space",
                  {{{"id", "kernel.simd"}, {"choices", {"off", "on"}}},
                   {{"id", "kernel.tile"}, {"choices", {"off", "8", "16"}}}}}};
  EXPECT_TRUE(p.WriteLine(header.dump()).ok());
  std::vector<std::string> lines;
  for (int i = 0; i < trials; ++i) {
    auto line = p.ReadLine(60);
    EXPECT_TRUE(line.ok() && line->has_value());
    if (!line.ok() || !line->has_value()) return {};
    json config = json::parse(**line).at("config");
    lines.push_back(**line);
    EXPECT_TRUE(p.WriteLine(json{{"value", 100.0 + 10.0 * config.size()}}.dump()).ok());
  }
  auto code = p.Finish(10);
  EXPECT_TRUE(code.ok());
  *exit_code = code.ok() ? *code : -1;
  return lines;
}

TEST(OptunaBridgeTest, ProposesOneConfigPerTrialAndExits) {
  SKIP_WITHOUT_OPTUNA();
  int code = -1;
  std::vector<std::string> lines = Drive(5, 12, &code);
  ASSERT_EQ(lines.size(), 12u);
  EXPECT_EQ(code, 0);
  for (const std::string& line : lines) {
    json config = json::parse(line).at("config");
    for (const auto& [id, value] : config.items()) {
      EXPECT_TRUE(id == "kernel.simd" || id == "kernel.tile") << line;
      EXPECT_NE(value, "off") << line;  // off actions are left out
    }
  }
}

TEST(OptunaBridgeTest, TheSameSeedGivesTheSameConfigs) {
  SKIP_WITHOUT_OPTUNA();
  int code = -1;
  EXPECT_EQ(Drive(9, 15, &code), Drive(9, 15, &code));
}

TEST(OptunaBridgeTest, AMalformedAnswerExitsTwoWithAMessage) {
  SKIP_WITHOUT_OPTUNA();
  auto p = LineProcess::Start({kPython, OptunaPolicy::DefaultScript()});
  ASSERT_TRUE(p.ok());
  json header = {
      {"seed", 1}, {"trials", 3}, {"space", {{{"id", "a"}, {"choices", {"off", "on"}}}}}};
  ASSERT_TRUE((*p)->WriteLine(header.dump()).ok());
  auto line = (*p)->ReadLine(60);
  ASSERT_TRUE(line.ok() && line->has_value());
  ASSERT_TRUE((*p)->WriteLine(R"({"valeu": 3})").ok());
  auto code = (*p)->Finish(10);
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 2);
  EXPECT_NE((*p)->LastStderrLine().find("unknown key 'valeu'"), std::string::npos)
      << (*p)->stderr_tail();
}

// Two components; `fast` is a clear win (3x on everything), `boom` always crashes, the others
// are small or harmful.
Landscape Easy() {
  Landscape l;
  l.name = "easy";
  l.repetitions = 3;
  l.noise.cv = 0.02;
  l.components = {{"kernel", "code", 0.7}, {"io", "system", 0.3}};
  auto action = [](const std::string& id, Effects effects) {
    LandscapeAction a;
    a.id = id;
    a.layer = "code";
    a.effects = std::move(effects);
    return a;
  };
  LandscapeAction boom = action("boom", {{"kernel", 1.5}});
  boom.crash_rate = 1;
  LandscapeAction tile = action("tile", {});
  tile.values = {{"8", {{"kernel", 1.1}}, 0, 0}, {"16", {{"kernel", 0.8}}, 0, 0}};
  l.actions = {action("fast", {{"*", 3.0}}), action("small", {{"io", 1.1}}), boom, tile,
               action("slow", {{"kernel", 0.7}})};
  return l;
}

TEST(OptunaPolicyTest, FindsTheDominantWinAndCountsCrashes) {
  SKIP_WITHOUT_OPTUNA();
  Landscape l = Easy();
  OptunaPolicy policy;
  EXPECT_EQ(policy.name(), "optuna-tpe");
  RunResult r = policy.Run(l, 42, 25);
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.states.size(), 25u);
  EXPECT_GT(r.crashes, 0);
  EXPECT_EQ(r.accuracy_failures, 0);
  EXPECT_GT(r.runs, 25u);
  EXPECT_GT(l.TrueValue(r.states.back()), 2.5 * l.TrueValue({}));
  for (const Config& s : r.states) EXPECT_FALSE(s.contains("boom"));
  EXPECT_TRUE(NoChildren());
}

TEST(OptunaPolicyTest, IsDeterministicInTheSeed) {
  SKIP_WITHOUT_OPTUNA();
  Landscape l = Easy();
  OptunaPolicy policy;
  RunResult a = policy.Run(l, 7, 15);
  RunResult b = policy.Run(l, 7, 15);
  ASSERT_EQ(a.error, "");
  EXPECT_EQ(a.states, b.states);
  EXPECT_EQ(a.crashes, b.crashes);
  EXPECT_EQ(a.runs, b.runs);
}

TEST(OptunaPolicyTest, AMissingScriptIsAnErrorWithTheChildsMessage) {
  SKIP_WITHOUT_OPTUNA();
  OptunaPolicy policy(kPython, "/nonexistent/optuna_bridge.py");
  RunResult r = policy.Run(Easy(), 1, 5);
  EXPECT_TRUE(r.states.empty());
  EXPECT_NE(r.error.find("exit status 2"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("No such file"), std::string::npos) << r.error;
  EXPECT_TRUE(NoChildren());
}

TEST(OptunaPolicyTest, AnInterpreterThatCannotStartIsAnError) {
  OptunaPolicy policy("/nonexistent/python3", "bridge.py");
  RunResult r = policy.Run(Easy(), 1, 5);
  EXPECT_NE(r.error.find("cannot start /nonexistent/python3"), std::string::npos) << r.error;
  EXPECT_TRUE(NoChildren());
}

TEST(OptunaPolicyTest, AFailingInterpreterIsAnError) {
  OptunaPolicy policy("/bin/sh", WriteScript("fail.sh", "echo 'bridge broke' >&2; exit 3\n"));
  RunResult r = policy.Run(Easy(), 1, 5);
  EXPECT_NE(r.error.find("exit status 3"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("stderr: bridge broke"), std::string::npos) << r.error;
  EXPECT_TRUE(NoChildren());
}

TEST(OptunaPolicyTest, ASilentBridgeTimesOutAndIsKilled) {
  // `exec` keeps the sleep in the child's own process, so killing it leaves nothing behind.
  OptunaPolicy policy("/bin/sh", WriteScript("hang.sh", "read header; exec sleep 60\n"), 0.3);
  auto start = std::chrono::steady_clock::now();
  RunResult r = policy.Run(Easy(), 1, 5);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(r.error.find("no line from the child within"), std::string::npos) << r.error;
  EXPECT_LT(took, 5);
  EXPECT_TRUE(NoChildren());
}

TEST(OptunaPolicyTest, AnUnknownActionFromTheBridgeIsAnError) {
  OptunaPolicy policy("/bin/sh", WriteScript("unknown.sh",
                                             "read header\n"
                                             "echo '{\"config\": {\"nope\": \"on\"}}'\n"
                                             "cat >/dev/null\n"));
  RunResult r = policy.Run(Easy(), 1, 5);
  EXPECT_NE(r.error.find("unknown action: nope"), std::string::npos) << r.error;
  EXPECT_TRUE(NoChildren());
}

TEST(OptunaPolicyTest, AvailableChecksTheImport) {
  EXPECT_FALSE(OptunaPolicy::Available("/nonexistent/python3"));
  EXPECT_FALSE(OptunaPolicy::Available("/bin/false"));
}

}  // namespace
}  // namespace arbor::search
