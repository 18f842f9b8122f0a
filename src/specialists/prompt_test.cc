#include "specialists/prompt.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace arbor {
namespace {

namespace fs = std::filesystem;

class PromptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    action_.id = "kernel.tile";
    action_.layer = "kernel";
    action_.category = "kernel";
    action_.targets = {"matmul*"};
    task_.node = 4;
    task_.action = &action_;
    task_.value = "64";
    TaskContext& c = task_.context;
    c.domain = "kernel";
    c.goal = "tile the GEMM loops by {value}";
    c.hardware = "cpu=x86_64 cores=8";
    c.profile = Profile{2.5, {{"softmax", "kernel", 0.1}, {"matmul", "kernel", 0.6}}, {}};
    c.targets = {"matmul 60% (kernel)"};
    c.kept_path = {"#2 flags.o3: +12%"};
    c.lessons = {"[kb 3] tiling beyond 128 spills registers"};
    c.failures = {"#3 kernel.unroll crashed: segfault"};
    c.constraints = {"no changes to the tokenizer"};
  }

  ActionSpec action_;
  Task task_;
};

TEST_F(PromptTest, ImplementHasEverySectionInOrder) {
  ComposedPrompt p = ComposeImplement(task_, "PROTOCOL", "KERNEL SKILL", "Edit files.");
  EXPECT_EQ(p.system, "PROTOCOL\n\nKERNEL SKILL\n");
  std::vector<std::string> order = {"## Task",
                                    "Action: `kernel.tile` with value `64`",
                                    "Layer: kernel",
                                    "Goal: tile the GEMM loops by 64",
                                    "matmul 60%",
                                    "## Hardware",
                                    "## Profile",
                                    "- matmul (kernel): 60%",
                                    "- softmax",
                                    "## Kept path",
                                    "## Lessons from earlier campaigns",
                                    "## Failures — do not repeat",
                                    "## Active constraints",
                                    "- no changes to the tokenizer",
                                    "## Answer format",
                                    "Edit files."};
  size_t at = 0;
  for (const std::string& piece : order) {
    size_t found = p.user.find(piece, at);
    ASSERT_NE(found, std::string::npos) << piece << " after " << at << " in\n" << p.user;
    at = found;
  }
  EXPECT_EQ(p.Text(), "# system\n\n" + p.system + "\n# user\n\n" + p.user);
}

TEST_F(PromptTest, OmitsEmptySectionsAndIsDeterministic) {
  task_.context = TaskContext{};
  task_.value.clear();
  ComposedPrompt p = ComposeImplement(task_, "P", "", "A");
  EXPECT_EQ(p.system, "P\n");
  EXPECT_EQ(p.user,
            "## Task\n\nAction: `kernel.tile`\nLayer: kernel, category: kernel\n\nTargets: "
            "matmul*\n\n## Answer format\n\nA\n");
  EXPECT_EQ(ComposeImplement(task_, "P", "", "A").Text(), p.Text());
}

TEST_F(PromptTest, ProposeListsKnownIdsSortedAndWhatWasTried) {
  ProposeRequest r;
  r.domain = "system";
  r.context = task_.context;
  r.context.goal.clear();
  r.known = {"z.last", "a.first"};
  r.tried = {"a.first kept +5%"};
  r.max_actions = 3;
  ComposedPrompt p = ComposePropose(r, "P", "S", "JSON");
  EXPECT_NE(p.user.find("Propose at most 3 new candidate actions for the `system` domain"),
            std::string::npos);
  EXPECT_NE(p.user.find("a.first, z.last"), std::string::npos);
  size_t tried = p.user.find("## Already tried");
  ASSERT_NE(tried, std::string::npos);
  EXPECT_LT(p.user.find("## Failures"), tried);
  EXPECT_LT(tried, p.user.find("## Active constraints"));
  EXPECT_EQ(p.Text(), ComposePropose(r, "P", "S", "JSON").Text());
}

class SkillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "arbor-skills-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  fs::path root_;
};

TEST_F(SkillTest, CampaignFolderComesFirstAndOverridesTheShippedSkill) {
  Write("campaign/kernel.md", "my kernel rules\n");
  CampaignSpec spec;
  spec.skills_dir = (root_ / "campaign").string();
  std::vector<std::string> dirs = SkillDirs(spec);
  ASSERT_FALSE(dirs.empty());
  EXPECT_EQ(dirs.front(), spec.skills_dir);
  Result<std::string> kernel = LoadSkill(dirs, "kernel");
  ASSERT_TRUE(kernel.ok()) << kernel.error().message;
  EXPECT_EQ(*kernel, "my kernel rules\n");
  // The shipped folder is still searched for what the campaign does not override.
  Result<std::string> protocol = LoadSkill(dirs, "protocol");
  ASSERT_TRUE(protocol.ok()) << protocol.error().message;
  EXPECT_NE(protocol->find("ARBOR_RESULT"), std::string::npos);
}

TEST_F(SkillTest, MissingFoldersAreLeftOutAndAMissingSkillNamesTheFolders) {
  CampaignSpec spec;
  spec.skills_dir = (root_ / "nowhere").string();
  for (const std::string& dir : SkillDirs(spec)) EXPECT_NE(dir, spec.skills_dir);
  Write("a/x.md", "x");
  Write("b/y.md", "y");
  std::vector<std::string> dirs = {(root_ / "a").string(), (root_ / "b").string()};
  EXPECT_EQ(*LoadSkill(dirs, "y"), "y");
  Result<std::string> missing = LoadSkill(dirs, "gpu");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("'gpu.md' not found in " + dirs[0] + ", " + dirs[1]),
            std::string::npos)
      << missing.error().message;
  EXPECT_FALSE(LoadSkill(dirs, "../a/x").ok());
}

}  // namespace
}  // namespace arbor
