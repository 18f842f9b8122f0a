// arbor_fake_openai as a process, driven by the real ChatClient: the port file, the script
// (order, match, Retry-After, raw bodies, delays, exhaustion), the request log and SIGTERM.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "llm/chat_client.h"

extern char** environ;

namespace arbor::llm {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class FakeOpenAiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("arbor_fake_openai_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    setenv("ARBOR_FAKE_OPENAI_TEST_KEY", "sk-fake-1", 1);
  }
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    fs::remove_all(dir_);
  }

  // Starts the server on `script`; returns its status when it exits at once (bad usage).
  void Start(const std::string& script) {
    std::ofstream(dir_ / "script.json") << script;
    std::vector<std::string> args = {
        FAKE_OPENAI_BIN,          "--script", (dir_ / "script.json").string(), "--port-file",
        (dir_ / "port").string(), "--log",    (dir_ / "log.jsonl").string()};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ASSERT_EQ(posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ), 0);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!fs::exists(dir_ / "port") && std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        exit_status_ = status;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_TRUE(fs::exists(dir_ / "port")) << "no port file";
    port_ = std::stoi(Slurp(dir_ / "port"));
  }

  // `sig`, then the exit status (or -1 when it has not exited within `within_s`).
  int Stop(double within_s, int sig = SIGTERM) {
    kill(pid_, sig);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(within_s);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }

  ChatReply Ask(const std::string& user, int retries = 0, double timeout_s = 10) {
    ChatOptions o;
    o.base_url = "http://127.0.0.1:" + std::to_string(port_) + "/v1";
    o.model = "fake-model";
    o.api_key_env = "ARBOR_FAKE_OPENAI_TEST_KEY";
    o.retries = retries;
    o.timeout_s = timeout_s;
    ChatClient client(o, [this](double s) { sleeps_.push_back(s); });
    return client.Complete({{"system", "you optimise"}, {"user", user}});
  }

  std::vector<json> LogLines() {
    std::vector<json> lines;
    std::ifstream in(dir_ / "log.jsonl");
    for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
    return lines;
  }

  fs::path dir_;
  pid_t pid_ = -1;
  int port_ = 0;
  int exit_status_ = -1;
  std::vector<double> sleeps_;
};

TEST_F(FakeOpenAiTest, AnswersFromTheScriptAndLogsEveryRequest) {
  Start(R"([
    {"content": "first", "usage": {"prompt_tokens": 3, "completion_tokens": 1}},
    {"match": "task B", "content": "for B"},
    {"status": 429, "retry_after": 2, "content": "slow down"},
    {"content": "after the wait"},
    {"raw_body": "{not json"}
  ])");
  ASSERT_GT(port_, 0);

  ChatReply b = Ask("please do task B");  // matched, although it is not next in order
  ASSERT_TRUE(b.ok) << b.error.message;
  EXPECT_EQ(b.content, "for B");
  ChatReply a = Ask("task A");
  ASSERT_TRUE(a.ok) << a.error.message;
  EXPECT_EQ(a.content, "first");
  EXPECT_EQ(a.usage.prompt_tokens, 3);
  ChatReply retried = Ask("task A", /*retries=*/1);
  ASSERT_TRUE(retried.ok) << retried.error.message;
  EXPECT_EQ(retried.content, "after the wait");
  EXPECT_EQ(sleeps_, std::vector<double>{2});
  ChatReply raw = Ask("task A");
  EXPECT_EQ(raw.error.kind, ChatError::Kind::kMalformed);
  ChatReply exhausted = Ask("task A");
  EXPECT_EQ(exhausted.error.http_status, 500);
  EXPECT_NE(exhausted.error.message.find("script exhausted"), std::string::npos);

  std::vector<json> log = LogLines();
  ASSERT_EQ(log.size(), 6u);
  for (const json& line : log) {
    EXPECT_EQ(line["path"], "/v1/chat/completions");
    EXPECT_EQ(line["authorization"], "Bearer sk-fake-1");
    EXPECT_EQ(line["body"]["model"], "fake-model");
    EXPECT_EQ(line["body"]["messages"][0]["content"], "you optimise");
  }
  EXPECT_EQ(log[0]["body"]["messages"][1]["content"], "please do task B");
  EXPECT_EQ(log[0]["item"], 1);
  EXPECT_EQ(log[1]["item"], 0);
  EXPECT_TRUE(log[5]["item"].is_null());

  EXPECT_EQ(Stop(5), 0);  // exited with status 0
}

TEST_F(FakeOpenAiTest, DelayOutlastsTheClientTimeoutAndSigtermCutsItShort) {
  Start(R"([{"delay_s": 30, "content": "late"}])");
  ASSERT_GT(port_, 0);
  ChatReply reply = Ask("anything", /*retries=*/0, /*timeout_s=*/0.5);
  EXPECT_EQ(reply.error.kind, ChatError::Kind::kTimeout);
  int status = Stop(5);
  ASSERT_NE(status, -1) << "still running 5 s after SIGTERM";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST_F(FakeOpenAiTest, SigintStopsItEvenWhenStartedWithSigintIgnored) {
  // What a shell does to a background job (`arbor_fake_openai ... &`).
  auto* previous = signal(SIGINT, SIG_IGN);
  Start("[]");
  signal(SIGINT, previous);
  ASSERT_GT(port_, 0);
  int status = Stop(5, SIGINT);
  ASSERT_NE(status, -1) << "still running 5 s after SIGINT";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST_F(FakeOpenAiTest, AScriptThatIsNotAnArrayIsRefused) {
  Start(R"({"content": "not a list"})");
  EXPECT_EQ(pid_, -1);
  EXPECT_TRUE(WIFEXITED(exit_status_) && WEXITSTATUS(exit_status_) == 2) << exit_status_;
  EXPECT_FALSE(fs::exists(dir_ / "port"));
}

}  // namespace
}  // namespace arbor::llm
