#include "config/proposal_loader.h"

#include <gtest/gtest.h>

#include <string>

#include "util/strings.h"

namespace arbor {
namespace {

class ProposalLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_.file = "/campaign/arbor.toml";
    ActionSpec base;
    base.id = "flags.o3";
    spec_.actions.push_back(base);
    spec_.specialists["kernel"].domain = "kernel";
  }

  Result<ActionSpec> Parse(const std::string& body) {
    return ParseProposedAction("[[action]]\n" + body, "proposal 1", spec_, {"agent.fuse"});
  }

  std::string Why(const std::string& body) {
    Result<ActionSpec> r = Parse(body);
    return r.ok() ? "accepted" : r.error().message;
  }

  CampaignSpec spec_;
};

TEST_F(ProposalLoaderTest, AcceptsAnEnvActionWithTheFileDefaults) {
  Result<ActionSpec> r = Parse(
      "id = \"omp.threads\"\nlayer = \"system\"\ntargets = [\"matmul\"]\nspeedup = 1.3\n"
      "requires = [\"flags.o3\"]\nconflicts = [\"agent.fuse\"]\n"
      "apply = { env = { OMP_NUM_THREADS = \"{value}\" } }\nvalues = [2, 4]\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->id, "omp.threads");
  EXPECT_EQ(r->category, "omp");
  EXPECT_EQ(r->line, 0);
  EXPECT_TRUE(r->proposed_by.empty());
  EXPECT_FALSE(r->content_hash.empty());
  EXPECT_EQ(r->values, (std::vector<std::string>{"2", "4"}));
  EXPECT_DOUBLE_EQ(r->cost_s, 60);
}

TEST_F(ProposalLoaderTest, AcceptsAnAgentActionOfAConfiguredDomain) {
  Result<ActionSpec> r = Parse(
      "id = \"kernel.tile\"\nlayer = \"kernel\"\napply = { agent = \"kernel\", goal = "
      "\"tile the loop\" }\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->apply.kind, ApplySpec::Kind::kAgent);
}

TEST_F(ProposalLoaderTest, QuotedNewlinesStayEscaped) {
  // Found by tests/fuzz/campaign_fuzz: an id or domain from a model may hold a newline.
  std::string why =
      Why("id = \"a\"\nlayer = \"x\"\napply = { agent = \"g\\npu\", goal = \"g\" }\n");
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  EXPECT_NE(why.find("g\\npu"), std::string::npos) << why;
}

TEST_F(ProposalLoaderTest, RejectsWithOneLineWithoutPositions) {
  EXPECT_EQ(Why("layer = \"x\"\napply = { env = { A = \"1\" } }\n"),
            "proposal 1: missing required key 'id' in [[action]]; expected a unique id like "
            "\"kernel.gemm-tiled\"");
  EXPECT_NE(Why("id = \"a\"\nlayer = 3\napply = { env = { A = \"1\" } }\n").find("action.layer"),
            std::string::npos);
  EXPECT_EQ(Why("id = \"a\"\nlayer = \"x\"\napply = { run = \"rm -rf /\" }\n"),
            "proposal 1: apply kind 'run' is not accepted from a specialist; expected env, "
            "append or agent");
  EXPECT_NE(Why("id = \"a\"\nlayer = \"x\"\napply = { patch = \"/etc/passwd\" }\n").find("patch"),
            std::string::npos);
  EXPECT_EQ(Why("id = \"flags.o3\"\nlayer = \"x\"\napply = { env = { A = \"1\" } }\n"),
            "proposal 1: action id 'flags.o3' is already known; expected a new id");
  EXPECT_EQ(Why("id = \"agent.fuse\"\nlayer = \"x\"\napply = { env = { A = \"1\" } }\n"),
            "proposal 1: action id 'agent.fuse' is already known; expected a new id");
  EXPECT_NE(Why("id = \"a\"\nlayer = \"x\"\nrequires = [\"flags.o2\"]\n"
                "apply = { env = { A = \"1\" } }\n")
                .find("unknown action 'flags.o2'; did you mean 'flags.o3'?"),
            std::string::npos);
  EXPECT_NE(Why("id = \"a\"\nlayer = \"x\"\napply = { agent = \"gpu\", goal = \"g\" }\n")
                .find("agent domain 'gpu'"),
            std::string::npos);
  EXPECT_NE(Why("id = \"a\"\nlayer = \"x\"\nspeedup = -1\napply = { env = { A = \"1\" } }\n")
                .find("action.speedup"),
            std::string::npos);
  for (const std::string& why : {Why("id = \"a\"\nlayer = \"x\"\napply = { env = { A = \"1\" } }\n"
                                     "[[action]]\nid = \"b\"\n"),
                                 Why("id = \"a\" = b\n")}) {
    EXPECT_TRUE(StartsWith(why, "proposal 1: ")) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  }
}

}  // namespace
}  // namespace arbor
