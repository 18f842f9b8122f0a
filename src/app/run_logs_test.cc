#include "app/run_logs.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "app/command_target.h"
#include "store/store_testing.h"
#include "util/strings.h"

namespace arbor {
namespace {

namespace fs = std::filesystem;
using store_testing::ScratchDir;

void Write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// Sets when a run ended, so tests never depend on how fast files are written: the run's `exit`
// when it has one, else its logs.
void EndAt(const std::string& run_dir, int seconds_ago) {
  const auto t = fs::file_time_type::clock::now() - std::chrono::seconds(seconds_ago);
  for (const char* name : {"exit", "stdout", "stderr"}) {
    std::error_code ec;
    if (fs::exists(run_dir + "/" + name)) fs::last_write_time(run_dir + "/" + name, t, ec);
  }
  fs::last_write_time(run_dir, t);
}

// A run folder as CommandTarget leaves it (`exit` "" : as a specialist leaves it, without).
void MakeRun(const std::string& dir, const std::string& out, const std::string& err,
             const std::string& exit, int seconds_ago) {
  Write(dir + "/stdout", out);
  Write(dir + "/stderr", err);
  if (!exit.empty()) Write(dir + "/exit", exit + "\n");
  EndAt(dir, seconds_ago);
}

TEST(LogTail, TheLastLinesWithControlCharactersVisible) {
  ScratchDir dir;
  std::string text;
  for (int i = 1; i <= 30; ++i) text += "line " + std::to_string(i) + "\n";
  text += "pass 1/2\rpass 2/2\r\033[Kdone\n";
  Write(dir.File("log"), text);
  std::vector<std::string> tail = LogTail(dir.File("log"), Scrubber());
  ASSERT_EQ(tail.size(), 10u);
  EXPECT_EQ(tail.front(), "line 22");
  EXPECT_EQ(tail.back(), "pass 1/2\\rpass 2/2\\r\\x1b[Kdone");
  // The byte bound: the first line shown was cut, and says so.
  tail = LogTail(dir.File("log"), Scrubber(), TailBounds{10, 40});
  ASSERT_FALSE(tail.empty());
  EXPECT_EQ(tail.front().rfind("...", 0), 0u) << tail.front();
  EXPECT_EQ(tail.back(), "pass 1/2\\rpass 2/2\\r\\x1b[Kdone");
  EXPECT_TRUE(LogTail(dir.File("missing"), Scrubber()).empty());
  Write(dir.File("empty"), "");
  EXPECT_TRUE(LogTail(dir.File("empty"), Scrubber()).empty());
}

TEST(LogTail, ScrubsSecrets) {
  ScratchDir dir;
  Scrubber scrubber;
  scrubber.Add("TOKEN", "tok-7f3a9b2c1d");
  Write(dir.File("log"), "building\nusing tok-7f3a9b2c1d\n");
  EXPECT_EQ(LogTail(dir.File("log"), scrubber),
            (std::vector<std::string>{"building", "using [redacted:TOKEN]"}));
}

// A secret is never shown in part: neither when the shown window's first byte falls inside it,
// nor when the window read starts inside one and the redactions after it are so much shorter
// than the secrets they replace that the bytes shown reach back to that start.
TEST(LogTail, NoPartOfASecretAtTheWindowsStart) {
  const std::string secret = "Zq7mW2pX9vB4nL6tR8yH3kJ5dF1gS0aQwErTyUiOpAsDfGhJkLzXcVbNm123";
  Scrubber scrubber;
  scrubber.Add("K", secret);
  const size_t skip = scrubber.max_pattern_length();
  const TailBounds bounds{100, 300};
  auto leaks = [&](const std::vector<std::string>& lines) {
    const std::string shown = Join(lines, "\n");
    for (size_t i = 0; i + 8 <= secret.size(); ++i) {
      if (shown.find(secret.substr(i, 8)) != std::string::npos) return true;
    }
    return false;
  };
  ScratchDir dir;
  // The shown window starts k bytes before the end of a secret.
  for (size_t k = 1; k < secret.size(); ++k) {
    Write(dir.File("log"), "head\n" + secret + std::string(bounds.bytes - k, 'x'));
    EXPECT_FALSE(leaks(LogTail(dir.File("log"), scrubber, bounds))) << k;
  }
  // The window read starts k bytes before the end of a secret, and secrets fill the rest.
  std::string secrets;
  int n = 0;
  for (; secrets.size() < 250; ++n) secrets += secret + "\n";
  const size_t shrink = n * (secret.size() - std::string("[redacted:K]").size());
  ASSERT_GT(shrink, skip + 1) << "the redactions must shrink the text past the skipped bytes";
  ASSERT_GT(bounds.bytes + 1 + skip, secrets.size() + secret.size());
  for (size_t k = 1; k < secret.size(); ++k) {
    std::string middle(bounds.bytes + 1 + skip - k - secrets.size(), 'x');
    Write(dir.File("log"), "head\n" + secret + middle + secrets);
    std::vector<std::string> tail = LogTail(dir.File("log"), scrubber, bounds);
    EXPECT_FALSE(leaks(tail)) << k << ": " << Join(tail, "\n");
    EXPECT_EQ(tail.back(), "[redacted:K]") << k;
  }
}

TEST(RecordRunExit, WritesHowTheStepEnded) {
  ScratchDir dir;
  fs::create_directories(dir.File("n2/bench-0"));
  StepResult step;
  step.kind = ExitKind::kBadOutput;
  RecordRunExit(dir.File("n2/bench-0"), step);
  std::ifstream in(dir.File("n2/bench-0/exit"));
  std::string word;
  in >> word;
  EXPECT_EQ(word, "bad_output");
  RecordRunExit(dir.File("n9/none"), step);  // no folder: nothing is created
  EXPECT_FALSE(fs::exists(dir.File("n9")));
  RecordRunExit("", step);
}

TEST(ReadFailedRun, TheNewestRunWhenItFailed) {
  ScratchDir dir;
  const std::string runs = dir.File("runs");
  MakeRun(runs + "/n3/build", "compiled\n", "", "ok", 30);
  MakeRun(runs + "/n3/check", "", "", "ok", 20);
  MakeRun(runs + "/n3/bench-0", "checksum 42\n", "pass 1\rpass 2\n", "bad_output", 10);
  std::optional<FailedRun> run = ReadFailedRun(runs, 3, Outcome::kCrashed, Scrubber());
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->label, "bench-0");
  EXPECT_EQ(run->exit, "bad_output");
  EXPECT_EQ(run->dir, runs + "/n3/bench-0");
  EXPECT_EQ(run->out, std::vector<std::string>{"checksum 42"});
  EXPECT_EQ(run->err, std::vector<std::string>{"pass 1\\rpass 2"});
  // Another node, or none at all.
  EXPECT_FALSE(ReadFailedRun(runs, 4, Outcome::kCrashed, Scrubber()).has_value());
  EXPECT_FALSE(ReadFailedRun(dir.File("nothing"), 3, Outcome::kCrashed, Scrubber()));
}

// A candidate's check failed, then the Critic checked the incumbent again (logged in the
// candidate's folder) and that passed: the candidate's failure is what ended it.
TEST(ReadFailedRun, TheNewestFailureOfACrashedOrRevertedNode) {
  ScratchDir dir;
  const std::string runs = dir.File("runs");
  MakeRun(runs + "/n5/build", "", "", "ok", 40);
  MakeRun(runs + "/n5/check", "", "expected 3, got 4\n", "failed", 30);
  MakeRun(runs + "/n5/check-recheck-1-0", "", "", "ok", 10);
  std::optional<FailedRun> run = ReadFailedRun(runs, 5, Outcome::kReverted, Scrubber());
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->label, "check");
  EXPECT_EQ(run->err, std::vector<std::string>{"expected 3, got 4"});
  // Reverted by its measurement: nothing failed.
  MakeRun(runs + "/n6/build", "", "", "ok", 20);
  MakeRun(runs + "/n6/cand-0", "rate: 5\n", "", "ok", 10);
  EXPECT_FALSE(ReadFailedRun(runs, 6, Outcome::kReverted, Scrubber()).has_value());
}

// Any other node shows a failed run only when it is its newest: a kept node whose check failed
// once and passed when run again has none; one whose profile then failed has that.
TEST(ReadFailedRun, OtherNodesOnlyWhenTheNewestRunFailed) {
  ScratchDir dir;
  const std::string runs = dir.File("runs");
  MakeRun(runs + "/n2/check", "", "flaky\n", "failed", 40);
  MakeRun(runs + "/n2/check-rerun", "", "", "ok", 30);
  MakeRun(runs + "/n2/cand-0", "rate: 9\n", "", "ok", 20);
  EXPECT_FALSE(ReadFailedRun(runs, 2, Outcome::kKept, Scrubber()).has_value());
  MakeRun(runs + "/n2/profile", "not json\n", "", "bad_output", 10);
  std::optional<FailedRun> run = ReadFailedRun(runs, 2, Outcome::kKept, Scrubber());
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->label, "profile");
  EXPECT_EQ(run->exit, "bad_output");
}

// A specialist's run records no exit: it is the failure when the node crashed.
TEST(ReadFailedRun, ASpecialistsRunWhenTheNodeCrashed) {
  ScratchDir dir;
  const std::string runs = dir.File("runs");
  MakeRun(runs + "/n7/apply", "", "sed: no such file\n", "", 10);
  std::optional<FailedRun> run = ReadFailedRun(runs, 7, Outcome::kCrashed, Scrubber());
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->label, "apply");
  EXPECT_EQ(run->exit, "");
  EXPECT_EQ(run->err, std::vector<std::string>{"sed: no such file"});
  EXPECT_FALSE(ReadFailedRun(runs, 7, Outcome::kReverted, Scrubber()).has_value());
  // The build after a successful implementation failed: that is the failure.
  MakeRun(runs + "/n8/apply", "", "", "", 20);
  MakeRun(runs + "/n8/build", "", "cc: error\n", "failed", 10);
  EXPECT_EQ(ReadFailedRun(runs, 8, Outcome::kCrashed, Scrubber())->label, "build");
}

TEST(ReadLogs, TheNewestRunsOldestFirstAsVisibleTails) {
  ScratchDir dir;
  const std::string runs = dir.File("runs");
  Scrubber scrubber;
  scrubber.Add("TOKEN", "tok-7f3a9b2c1d");
  MakeRun(runs + "/n2/build", "built\n", "", "ok", 50);
  MakeRun(runs + "/n2/check", "ok\n", "", "ok", 40);
  MakeRun(runs + "/n2/bench-0", "a\rb\n", "", "ok", 30);
  MakeRun(runs + "/n2/bench-1", "c\n", "tok-7f3a9b2c1d\n", "ok", 20);
  MakeRun(runs + "/n2/bench-2", "", "  \n", "ok", 10);
  std::vector<LogExcerpt> logs = ReadLogs(runs, 2, scrubber);
  ASSERT_EQ(logs.size(), 4u);
  EXPECT_EQ(logs[0].label, "check");
  EXPECT_EQ(logs[1].label, "bench-0");
  EXPECT_EQ(logs[1].text, "a\\rb");
  EXPECT_EQ(logs[2].label, "bench-1");
  EXPECT_EQ(logs[2].stream, "stdout");
  EXPECT_EQ(logs[3].stream, "stderr");
  EXPECT_EQ(logs[3].text, "[redacted:TOKEN]");
}

// CommandTarget records each step's final exit, a metric the benchmark did not print included.
TEST(CommandTargetExit, RecordedOnceTheResultIsFinal) {
  ScratchDir dir;
  CampaignSpec spec;
  spec.target.build = "echo 'cc: error' >&2; exit 2";
  spec.target.bench = "printf 'run 1\\rrun 2\\n' >&2; echo 'rate 5'";
  spec.metric.source = MetricSource{MetricSource::Kind::kRegex, "tok/s: ([0-9]+)", "regex:"};
  CommandTarget target(&spec, dir.File("runs"));
  RunContext ctx{.node = 4, .worktree = dir.File(""), .label = "build"};
  EXPECT_EQ(target.Build(ctx).kind, ExitKind::kFailed);
  std::optional<FailedRun> run = ReadFailedRun(dir.File("runs"), 4, Outcome::kCrashed, Scrubber());
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->label, "build");
  EXPECT_EQ(run->exit, "failed");
  EXPECT_EQ(run->err, std::vector<std::string>{"cc: error"});

  ctx.node = 5;
  ctx.label = "bench-0";
  EXPECT_EQ(target.Bench(ctx).step.kind, ExitKind::kBadOutput);
  run = ReadFailedRun(dir.File("runs"), 5, Outcome::kCrashed, Scrubber());
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->exit, "bad_output");
  EXPECT_EQ(run->out, std::vector<std::string>{"rate 5"});
  EXPECT_EQ(run->err, std::vector<std::string>{"run 1\\rrun 2"});
}

}  // namespace
}  // namespace arbor
