// Test helpers for the LLM specialist's tests only: scripted chat replies, a Target whose
// build and check fail on marker text, and a fixture with a temporary git repository.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "exec/runner.h"
#include "specialists/llm_answer.h"
#include "specialists/llm_specialist.h"

namespace arbor::llm_testing {

namespace fs = std::filesystem;
using llm::ChatError;
using llm::ChatMessage;
using llm::ChatReply;
using Verdict = SpecialistResult::Status;

inline std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

inline ChatReply Answer(std::string content, int64_t prompt_tokens = 100,
                        int64_t completion_tokens = 50) {
  ChatReply r;
  r.ok = true;
  r.content = std::move(content);
  r.usage = {prompt_tokens, completion_tokens};
  r.attempts = 1;
  return r;
}

inline ChatReply Failure(ChatError::Kind kind, std::string message) {
  ChatReply r;
  r.error.kind = kind;
  r.error.message = std::move(message);
  r.usage = {10, 0};
  return r;
}

inline std::string DiffBlock(const std::string& diff) { return "```diff\n" + diff + "```\n"; }

// a.txt's "beta" line replaced by `line`.
inline std::string EditA(const std::string& line) {
  return "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+" + line + "\n gamma\n";
}

// Replies from a queue, recording every conversation it was sent.
struct ScriptedChat {
  std::deque<ChatReply> replies;
  std::vector<std::vector<ChatMessage>> calls;
  std::vector<int> answer_caps;  // the max_answer_tokens of each call
  ChatFn Fn() {
    return [this](const std::vector<ChatMessage>& messages, int max_answer_tokens) {
      calls.push_back(messages);
      answer_caps.push_back(max_answer_tokens);
      if (replies.empty()) return Failure(ChatError::Kind::kTransport, "script exhausted");
      ChatReply r = replies.front();
      replies.pop_front();
      return r;
    };
  }
};

// Builds fail while a.txt says BROKEN, checks while it says WRONG.
class MarkerTarget : public Target {
 public:
  StepResult Build(const RunContext& ctx) override {
    contexts.push_back(ctx);
    StepResult r;
    if (Slurp(fs::path(ctx.worktree) / "a.txt").find("BROKEN") != std::string::npos) {
      r.kind = ExitKind::kFailed;
      r.exit_code = 2;
      r.detail = "exit code 2";
      r.tail = "compiling a.txt\na.txt:2: error: BROKEN is not a word\n";
    }
    return r;
  }
  Measurement Check(const RunContext& ctx) override {
    contexts.push_back(ctx);
    Measurement m;
    if (Slurp(fs::path(ctx.worktree) / "a.txt").find("WRONG") != std::string::npos) {
      m.step.kind = ExitKind::kFailed;
      m.step.detail = "exit code 1";
      m.step.tail = "expected beta, got WRONG";
    }
    return m;
  }
  Measurement Bench(const RunContext&) override { return {}; }
  ProfileResult Profile(const RunContext&) override { return {}; }

  std::vector<RunContext> contexts;
};

class LlmSpecialistTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl =
        std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/arbor-llm-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    repo_ = root_ / "repo";
    fs::create_directories(repo_);
    Write(repo_ / "a.txt", "alpha\nbeta\ngamma\n");
    Write(repo_ / "b.txt", "one\ntwo\n");
    Sh("git init -q && git add -A && git -c user.email=t@example.com -c "
       "user.name=t "
       "commit -qm init");
    base_commit_ = Trim(Sh("git rev-parse HEAD"));
    spec_.target.build_timeout_s = 30;
    config_.domain = "kernel";
    config_.backend = SpecialistBackend::kLlm;
    config_.model = "test-model";
    config_.max_rounds = 3;
    action_.id = "kernel.fuse";
    action_.layer = "kernel";
    action_.apply.kind = ApplySpec::Kind::kAgent;
    action_.apply.agent = "kernel";
    action_.apply.goal = "Uppercase beta\nso the kernel runs faster";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  std::string Sh(const std::string& command) {
    std::map<std::string, std::string> env = {{"PATH", std::getenv("PATH")}};
    Result<CapturedRun> r = RunCaptured(command, repo_.string(), env);
    EXPECT_TRUE(r.ok() && r->result.ok()) << command << ": " << (r.ok() ? r->err : "");
    return r.ok() ? r->out : "";
  }

  static std::string Trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }

  Task MakeTask() {
    Task task;
    task.node = 7;
    task.action = &action_;
    task.worktree = repo_.string();
    task.base_commit = base_commit_;
    task.parent_overlay = {{"P", "parent"}};
    task.base_env = {{"B", "base"}, {"P", "base-p"}};
    task.context.domain = "kernel";
    task.context.goal = action_.apply.goal;
    task.known_actions = {"kernel.fuse"};
    return task;
  }

  SpecialistResult Implement(Target* target) {
    LlmSpecialist specialist(&spec_, &config_, target, chat_.Fn());
    return specialist.Implement(MakeTask(), "PROTOCOL", "SKILL");
  }

  // The last message of the n-th conversation sent (0-based).
  std::string LastSent(size_t n) const {
    return n < chat_.calls.size() && !chat_.calls[n].empty() ? chat_.calls[n].back().content : "";
  }

  std::string A() const { return Slurp(repo_ / "a.txt"); }

  fs::path root_;
  fs::path repo_;
  std::string base_commit_;
  CampaignSpec spec_;
  SpecialistSpec config_;
  ActionSpec action_;
  ScriptedChat chat_;
  MarkerTarget target_;
};

}  // namespace arbor::llm_testing
