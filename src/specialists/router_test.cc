#include "specialists/router.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "exec/runner.h"

namespace arbor {
namespace {

namespace fs = std::filesystem;
using Verdict = SpecialistResult::Status;

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

class RouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "arbor-router-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    repo_ = root_ / "repo";
    Write(repo_ / "a.txt", "alpha\n");
    std::map<std::string, std::string> env = {{"PATH", std::getenv("PATH")}};
    Result<CapturedRun> init = RunCaptured(
        "git init -q && git add -A && git -c user.email=t@example.com -c user.name=t commit "
        "-qm init && git rev-parse HEAD",
        repo_.string(), env);
    ASSERT_TRUE(init.ok() && init->result.ok());
    base_ = init->out.substr(0, 40);
    Write(root_ / "skills" / "kernel.md", "CAMPAIGN KERNEL RULES\n");
    spec_.file = (root_ / "arbor.toml").string();
    spec_.skills_dir = (root_ / "skills").string();
    SpecialistSpec& kernel = spec_.specialists["kernel"];
    kernel.domain = "kernel";
    kernel.backend = SpecialistBackend::kCommand;
    kernel.command = "sh " + (root_ / "agent.sh").string();
    kernel.timeout_s = 20;
    kernel.propose = true;
    SpecialistSpec& gpu = spec_.specialists["gpu"];
    gpu.domain = "gpu";
    gpu.backend = SpecialistBackend::kLlm;
    gpu.propose = true;
    spec_.specialists["idle"].domain = "idle";  // builtin
    options_.log_root = (root_ / "runs").string();
  }
  void TearDown() override { fs::remove_all(root_); }

  Task MakeTask(const ActionSpec& action) {
    Task task;
    task.node = 3;
    task.action = &action;
    task.worktree = repo_.string();
    task.base_commit = base_;
    task.parent_overlay = {{"P", "1"}};
    task.context.goal = action.apply.goal;
    return task;
  }

  static ActionSpec Agent(const std::string& domain) {
    ActionSpec a;
    a.id = domain + ".work";
    a.layer = domain;
    a.apply.kind = ApplySpec::Kind::kAgent;
    a.apply.agent = domain;
    a.apply.goal = "make it fast";
    return a;
  }

  fs::path root_, repo_;
  std::string base_;
  CampaignSpec spec_;
  RouterOptions options_;
};

TEST_F(RouterTest, DeclarativeActionsGoToTheBuiltin) {
  SpecialistRouter router(&spec_, options_);
  ActionSpec env;
  env.id = "env.x";
  env.apply.env = {{"X", "2"}};
  SpecialistResult r = router.Implement(MakeTask(env));
  EXPECT_EQ(r.status, Verdict::kApplied);
  EXPECT_EQ(r.backend, SpecialistBackend::kBuiltin);
  EXPECT_EQ(r.overlay, (EnvOverlay{{"P", "1"}, {"X", "2"}}));
  EXPECT_TRUE(r.prompt.empty());

  for (std::string domain : {"nowhere", "idle"}) {
    ActionSpec agent = Agent(domain);
    SpecialistResult skipped = router.Implement(MakeTask(agent));
    EXPECT_EQ(skipped.status, Verdict::kSkipped);
    EXPECT_NE(skipped.diagnosis.find("[specialists." + domain + "]"), std::string::npos);
  }
}

TEST_F(RouterTest, CommandDomainsGetTheirSkillsAndRun) {
  Write(root_ / "agent.sh", "cat > /dev/null\necho fast >> a.txt\n");
  SpecialistRouter router(&spec_, options_);
  ActionSpec agent = Agent("kernel");
  SpecialistResult r = router.Implement(MakeTask(agent));
  ASSERT_EQ(r.status, Verdict::kApplied) << r.diagnosis;
  EXPECT_EQ(r.backend, SpecialistBackend::kCommand);
  EXPECT_NE(r.prompt.find("CAMPAIGN KERNEL RULES"), std::string::npos);  // the override
  EXPECT_NE(r.prompt.find("# Specialist protocol"), std::string::npos);  // the shipped one
  EXPECT_GT(r.duration_s, 0);
}

TEST_F(RouterTest, LlmDomainsGoThroughTheHook) {
  ActionSpec agent = Agent("gpu");
  {
    SpecialistRouter router(&spec_, options_);
    SpecialistResult r = router.Implement(MakeTask(agent));
    EXPECT_EQ(r.status, Verdict::kSkipped);
    EXPECT_EQ(r.diagnosis, "no LLM backend built in for domain 'gpu'");
    EXPECT_EQ(router.ProposingDomains(), std::vector<std::string>{"kernel"});
  }
  std::string seen_protocol, seen_skill;
  options_.llm_implement = [&](const Task& task, const SpecialistSpec& config,
                               std::string_view protocol, std::string_view skill) {
    seen_protocol = protocol;
    seen_skill = skill;
    SpecialistResult r;
    r.overlay = task.parent_overlay;
    r.summary = "llm " + config.domain;
    return r;
  };
  options_.llm_propose = [](const ProposeRequest& request, const SpecialistSpec&, std::string_view,
                            std::string_view) {
    Proposal p;
    p.diagnosis = "stub " + request.domain;
    return p;
  };
  SpecialistRouter router(&spec_, options_);
  SpecialistResult r = router.Implement(MakeTask(agent));
  EXPECT_EQ(r.status, Verdict::kApplied);
  EXPECT_EQ(r.backend, SpecialistBackend::kLlm);
  EXPECT_EQ(r.summary, "llm gpu");
  EXPECT_NE(seen_protocol.find("# Specialist protocol"), std::string::npos);
  EXPECT_EQ(seen_skill, "");  // no gpu.md anywhere: the protocol alone
  EXPECT_EQ(router.ProposingDomains(), (std::vector<std::string>{"gpu", "kernel"}));
  ProposeRequest request;
  request.domain = "gpu";
  EXPECT_EQ(router.Propose(request).diagnosis, "stub gpu");
}

TEST_F(RouterTest, CommandProposalsRunInFreshScratchFolders) {
  Write(root_ / "agent.sh",
        "cat > /dev/null\necho '[{\"id\": \"k.new\", \"layer\": \"kernel\", \"apply\": "
        "{\"env\": {\"K\": \"1\"}}}]' > \"$ARBOR_RESULT\"\n");
  SpecialistRouter router(&spec_, options_);
  ProposeRequest request;
  request.domain = "kernel";
  for (int round = 1; round <= 2; ++round) {
    Proposal p = router.Propose(request);
    EXPECT_EQ(p.diagnosis, "");
    ASSERT_EQ(p.actions.size(), 1u);
    EXPECT_EQ(p.actions[0].id, "k.new");
    EXPECT_TRUE(
        fs::exists(root_ / "runs" / "propose" / ("kernel-" + std::to_string(round)) / "task.md"));
  }
  request.domain = "idle";
  EXPECT_NE(router.Propose(request).diagnosis.find("can propose"), std::string::npos);
}

}  // namespace
}  // namespace arbor
