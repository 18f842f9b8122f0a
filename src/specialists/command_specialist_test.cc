#include "specialists/command_specialist.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "exec/runner.h"

namespace arbor {
namespace {

namespace fs = std::filesystem;
using Verdict = SpecialistResult::Status;

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// A git repository with one committed file, a runs folder and an agent script per test.
class CommandSpecialistTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "arbor-agent-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    repo_ = root_ / "repo";
    Write(repo_ / "a.txt", "alpha\n");
    Sh("git init -q && git add -A && git -c user.email=t@example.com -c user.name=t "
       "commit -qm init");
    base_ = Trim(Sh("git rev-parse HEAD"));
    spec_.file = (root_ / "arbor.toml").string();
    ActionSpec o3;
    o3.id = "flags.o3";
    spec_.actions.push_back(o3);
    spec_.specialists["kernel"].domain = "kernel";
    config_.domain = "kernel";
    config_.backend = SpecialistBackend::kCommand;
    config_.command = "sh " + (root_ / "agent.sh").string();
    config_.timeout_s = 20;
    action_.id = "kernel.tile";
    action_.layer = "kernel";
    action_.apply.kind = ApplySpec::Kind::kAgent;
    action_.apply.agent = "kernel";
    action_.apply.goal = "tile the loop\nin detail";
  }
  void TearDown() override { fs::remove_all(root_); }

  static std::string Trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }

  std::string Sh(const std::string& command) {
    std::map<std::string, std::string> env = {{"PATH", std::getenv("PATH")}};
    Result<CapturedRun> r = RunCaptured(command, repo_.string(), env);
    EXPECT_TRUE(r.ok() && r->result.ok()) << command << ": " << (r.ok() ? r->err : "");
    return r.ok() ? r->out : "";
  }

  SpecialistResult Run(const std::string& script) {
    Write(root_ / "agent.sh", script);
    Task task;
    task.node = 7;
    task.action = &action_;
    task.worktree = repo_.string();
    task.base_commit = base_;
    task.parent_overlay = {{"KEEP", "1"}};
    task.context.domain = "kernel";
    task.context.goal = action_.apply.goal;
    task.known_actions = {"flags.o3", "kernel.tile"};
    CommandSpecialist agent(&spec_, &config_, (root_ / "runs").string());
    return agent.Implement(task, "PROTOCOL", "KERNEL SKILL");
  }

  fs::path root_, repo_;
  std::string base_;
  CampaignSpec spec_;
  SpecialistSpec config_;
  ActionSpec action_;
};

TEST_F(CommandSpecialistTest, AgentEditsTheWorktreeWithThePromptOnStdin) {
  config_.api_key_env = "AGENT_KEY";
  setenv("AGENT_KEY", "sk-test", 1);
  setenv("LEAKED", "engine-only", 1);
  SpecialistResult r =
      Run("cmp -s - \"$ARBOR_TASK\" || exit 9\n"
          "[ \"$ARBOR_NODE\" = 7 ] && [ \"$ARBOR_WORKTREE\" = \"$PWD\" ] || exit 8\n"
          "[ -n \"$ARBOR_RESULT\" ] && [ ! -e \"$ARBOR_RESULT\" ] || exit 7\n"
          "[ \"$AGENT_KEY\" = sk-test ] && [ -z \"$LEAKED\" ] || exit 6\n"
          "echo tiled >> a.txt\n");
  ASSERT_EQ(r.status, Verdict::kApplied) << r.diagnosis;
  EXPECT_EQ(Slurp(repo_ / "a.txt"), "alpha\ntiled\n");
  EXPECT_EQ(r.backend, SpecialistBackend::kCommand);
  EXPECT_EQ(r.summary, "agent kernel: tile the loop");
  EXPECT_EQ(r.overlay, (EnvOverlay{{"KEEP", "1"}}));
  EXPECT_NE(r.prompt.find("PROTOCOL"), std::string::npos);
  EXPECT_NE(r.prompt.find("Action: `kernel.tile`"), std::string::npos);
  EXPECT_EQ(Slurp(root_ / "runs" / "n7" / "agent" / "task.md"), r.prompt);
  EXPECT_GT(r.duration_s, 0);
}

TEST_F(CommandSpecialistTest, ReportFillsTheResult) {
  SpecialistResult r = Run(R"(echo x > new.txt
cat > "$ARBOR_RESULT" <<'JSON'
{"summary": "tiled by 64\nmore", "confidence": 0.8, "findings": ["L1 fits 64"],
 "questions": ["fp16?"], "env": {"TILE": "64"},
 "proposals": [
   {"id": "kernel.tile-128", "layer": "kernel", "requires": ["flags.o3"],
    "apply": {"agent": "kernel", "goal": "try 128"}},
   {"id": "evil", "layer": "x", "apply": {"run": "rm -rf ~"}}]}
JSON
)");
  ASSERT_EQ(r.status, Verdict::kApplied) << r.diagnosis;
  EXPECT_EQ(r.summary, "agent kernel: tiled by 64 (1 proposal dropped)");
  EXPECT_DOUBLE_EQ(r.confidence, 0.8);
  EXPECT_EQ(r.findings, std::vector<std::string>{"L1 fits 64"});
  EXPECT_EQ(r.questions, std::vector<std::string>{"fp16?"});
  EXPECT_EQ(r.overlay, (EnvOverlay{{"KEEP", "1"}, {"TILE", "64"}}));
  ASSERT_EQ(r.proposals.size(), 1u);
  EXPECT_EQ(r.proposals[0].id, "kernel.tile-128");
  EXPECT_EQ(r.proposals[0].proposed_by, "kernel specialist at node 7");
}

TEST_F(CommandSpecialistTest, AnEnvOnlyReportIsAChange) {
  SpecialistResult r = Run("echo '{\"env\": {\"OMP_NUM_THREADS\": \"4\"}}' > \"$ARBOR_RESULT\"\n");
  ASSERT_EQ(r.status, Verdict::kApplied) << r.diagnosis;
  EXPECT_EQ(r.overlay.at("OMP_NUM_THREADS"), "4");
}

TEST_F(CommandSpecialistTest, FailuresAreOneLineDiagnoses) {
  SpecialistResult exited = Run("echo first >&2\necho 'no GPU found' >&2\nexit 3\n");
  EXPECT_EQ(exited.status, Verdict::kFailed);
  EXPECT_EQ(exited.diagnosis, "agent exited with code 3 — no GPU found");

  SpecialistResult nothing = Run("true\n");
  EXPECT_EQ(nothing.status, Verdict::kFailed);
  EXPECT_EQ(nothing.diagnosis, "the agent changed nothing");

  SpecialistResult link = Run("ln -s /etc/passwd passwd\n");
  EXPECT_EQ(link.status, Verdict::kFailed);
  EXPECT_EQ(link.diagnosis.rfind("patch policy: symlink", 0), 0u) << link.diagnosis;
  fs::remove(repo_ / "passwd");

  SpecialistResult bad = Run("echo y >> a.txt\necho '{\"confidence\": 3}' > \"$ARBOR_RESULT\"\n");
  EXPECT_EQ(bad.status, Verdict::kFailed);
  EXPECT_EQ(bad.diagnosis, "agent report: report: confidence must be a number in [0, 1]");
  Sh("git checkout -q -- .");

  SpecialistResult garbled = Run("echo y >> a.txt\necho '{oops' > \"$ARBOR_RESULT\"\n");
  EXPECT_EQ(garbled.status, Verdict::kFailed);
  EXPECT_NE(garbled.diagnosis.find("report is not JSON: parse error at line 1"), std::string::npos)
      << garbled.diagnosis;
  Sh("git checkout -q -- .");

  SpecialistResult committed =
      Run("echo y >> a.txt\ngit -c user.email=a@b -c user.name=a commit -qam agent\n");
  EXPECT_EQ(committed.status, Verdict::kFailed);
  EXPECT_NE(committed.diagnosis.find("the agent committed"), std::string::npos)
      << committed.diagnosis;
}

TEST_F(CommandSpecialistTest, AHangingAgentTimesOut) {
  config_.timeout_s = 0.5;
  SpecialistResult r = Run("echo y >> a.txt\nsleep 37.25\n");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.diagnosis.rfind("agent timed out after", 0), 0u) << r.diagnosis;
  EXPECT_LT(r.duration_s, 15);
}

TEST_F(CommandSpecialistTest, ProposeReadsTheReportInAScratchFolder) {
  Write(root_ / "agent.sh", R"([ "$ARBOR_MODE" = propose ] || exit 5
cat > /dev/null
cat > "$ARBOR_RESULT" <<'JSON'
{"proposals": [
  {"id": "sys.threads", "layer": "system", "apply": {"env": {"OMP_NUM_THREADS": "{value}"}},
   "values": [2, 4]},
  {"id": "flags.o3", "layer": "x", "apply": {"env": {"A": "1"}}},
  {"id": "sys.arena", "layer": "system", "apply": {"env": {"MALLOC_ARENA_MAX": "2"}}}]}
JSON
)");
  config_.max_proposals = 1;
  ProposeRequest request;
  request.domain = "system";
  request.known = {"flags.o3"};
  request.max_actions = 4;
  CommandSpecialist agent(&spec_, &config_, (root_ / "runs").string());
  std::string scratch = (root_ / "runs" / "propose" / "system-1").string();
  Proposal p = agent.Propose(request, "P", "S", scratch);
  EXPECT_EQ(p.diagnosis, "");
  ASSERT_EQ(p.actions.size(), 1u);
  EXPECT_EQ(p.actions[0].id, "sys.threads");
  EXPECT_EQ(p.rejected.size(), 2u);
  EXPECT_NE(p.prompt.find("Propose at most 1 new"), std::string::npos);
  EXPECT_TRUE(fs::exists(fs::path(scratch) / "task.md"));

  Write(root_ / "agent.sh", "true\n");
  EXPECT_EQ(agent.Propose(request, "P", "S", scratch).diagnosis,
            "the agent wrote no report to $ARBOR_RESULT");
}

}  // namespace
}  // namespace arbor
