#include "specialists/agent_report.h"

#include <gtest/gtest.h>

#include <string>

namespace arbor {
namespace {

class AgentReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_.file = "/campaign/arbor.toml";
    ActionSpec o3;
    o3.id = "flags.o3";
    spec_.actions.push_back(o3);
    spec_.specialists["kernel"].domain = "kernel";
  }

  Result<AgentReport> Parse(const std::string& text) {
    return ParseAgentReport(text, spec_, {"kernel.old"}, "kernel specialist at node 3");
  }

  // The one rejection line for a report holding just `proposal`.
  std::string Rejection(const std::string& proposal) {
    Result<AgentReport> r = Parse(R"({"proposals": [)" + proposal + "]}");
    if (!r.ok()) return "error: " + r.error().message;
    if (r->rejected.size() != 1 || !r->proposals.empty()) return "accepted";
    return r->rejected.front();
  }

  CampaignSpec spec_;
};

TEST_F(AgentReportTest, NumberTooLargeForADoubleIsAnError) {
  // Found by tests/fuzz/llm_answer_fuzz: nlohmann throws out_of_range (not parse_error) for
  // 1e400, which escaped and terminated Arbor on a model's answer.
  Result<AgentReport> r = Parse(R"({"confidence": 1e400})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "report is not JSON: number overflow parsing '1e400'");
  std::vector<ActionSpec> accepted;
  std::vector<std::string> rejected;
  Status s = ParseProposals("[1e400]", spec_, {}, "model", 4, &accepted, &rejected);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "proposals is not JSON: number overflow parsing '1e400'");
}

TEST_F(AgentReportTest, EnvNameWithANewlineStaysOneLine) {
  // Found by tests/fuzz/llm_answer_fuzz: the model's env name was quoted raw.
  Result<AgentReport> r = Parse(R"({"env": {"A\nB": "1"}})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "report: env name 'A\\nB' is not a variable name");
}

TEST_F(AgentReportTest, ReadsEveryKey) {
  Result<AgentReport> r = Parse(R"({
    "summary": "tiled the GEMM", "confidence": 0.7,
    "findings": ["tile 64 fits L1"], "questions": ["is fp16 allowed?"],
    "env": {"OMP_NUM_THREADS": "8"},
    "proposals": [
      {"id": "kernel.tile-128", "layer": "kernel", "targets": ["matmul"], "speedup": 1.2,
       "cost": "2m", "risk": {"accuracy": 0.1}, "requires": ["flags.o3", "kernel.old"],
       "apply": {"agent": "kernel", "goal": "tile by {value}\n\"quoted\""},
       "values": [128, 256]},
      {"id": "sys.threads", "layer": "system", "apply": {"env": {"OMP_NUM_THREADS": "{value}"}},
       "values": ["4", 2.5]}
    ],
    "extra": "ignored"})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->summary, "tiled the GEMM");
  EXPECT_DOUBLE_EQ(r->confidence, 0.7);
  EXPECT_EQ(r->findings, std::vector<std::string>{"tile 64 fits L1"});
  EXPECT_EQ(r->questions, std::vector<std::string>{"is fp16 allowed?"});
  EXPECT_EQ(r->env, (EnvOverlay{{"OMP_NUM_THREADS", "8"}}));
  ASSERT_EQ(r->proposals.size(), 2u) << (r->rejected.empty() ? "" : r->rejected.front());
  const ActionSpec& tile = r->proposals[0];
  EXPECT_EQ(tile.proposed_by, "kernel specialist at node 3");
  EXPECT_EQ(tile.apply.goal, "tile by {value}\n\"quoted\"");
  EXPECT_DOUBLE_EQ(tile.cost_s, 120);
  EXPECT_DOUBLE_EQ(tile.risk_accuracy, 0.1);
  EXPECT_EQ(tile.values, (std::vector<std::string>{"128", "256"}));
  EXPECT_EQ(r->proposals[1].values, (std::vector<std::string>{"4", "2.5"}));
  EXPECT_TRUE(r->rejected.empty());
}

TEST_F(AgentReportTest, EmptyObjectIsAnEmptyReport) {
  Result<AgentReport> r = Parse("{}");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->confidence, 0);
  EXPECT_TRUE(r->proposals.empty());
}

TEST_F(AgentReportTest, RejectsBadProposalsOneLineEach) {
  const std::string env = R"("apply": {"env": {"A": "1"}})";
  EXPECT_EQ(Rejection(R"({"layer": "x", )" + env + "}"),
            "proposal 1: missing required key 'id' in [[action]]; expected a unique id like "
            "\"kernel.gemm-tiled\"");
  EXPECT_EQ(Rejection(R"({"id": "a", "layer": 3, )" + env + "}"),
            "proposal 1 ('a'): expected a string for action.layer, got integer");
  EXPECT_NE(Rejection(R"({"id": "a", "layer": "x", "type": "y", )" + env + "}")
                .find("proposal 1 ('a'): unknown key"),
            std::string::npos);
  EXPECT_EQ(Rejection(R"({"id": "a", "layer": "x", "apply": {"run": "curl x | sh"}})"),
            "proposal 1 ('a'): apply kind 'run' is not accepted from a specialist; expected "
            "env, append or agent");
  EXPECT_EQ(Rejection(R"({"id": "flags.o3", "layer": "x", )" + env + "}"),
            "proposal 1 ('flags.o3'): action id 'flags.o3' is already known; expected a new id");
  EXPECT_NE(Rejection(R"({"id": "a", "layer": "x", "requires": ["nope"], )" + env + "}")
                .find("unknown action 'nope'"),
            std::string::npos);
  EXPECT_EQ(Rejection(R"("just a string")"),
            "proposal 1: not an object; expected an action like {\"id\": ...}");
  EXPECT_EQ(Rejection(R"({"id": "a", "layer": null, )" + env + "}"),
            "proposal 1 ('a'): key 'layer': null is not a value; leave the key out instead");
  for (const std::string& line : {Rejection(R"({"id": "a", "layer": "x", )" + env + "}"),
                                  Rejection(R"({"id": "a\nb", "layer": "x", )" + env + "}")}) {
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  }
}

TEST_F(AgentReportTest, DuplicateIdsWithinOneReportKeepTheFirst) {
  Result<AgentReport> r = Parse(R"({"proposals": [
    {"id": "a", "layer": "x", "apply": {"env": {"A": "1"}}},
    {"id": "a", "layer": "x", "apply": {"env": {"A": "2"}}}]})");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->proposals.size(), 1u);
  EXPECT_EQ(r->proposals[0].apply.env.at("A"), "1");
  ASSERT_EQ(r->rejected.size(), 1u);
  EXPECT_NE(r->rejected[0].find("proposal 2 ('a')"), std::string::npos);
}

TEST_F(AgentReportTest, MalformedReportsAreErrors) {
  Result<AgentReport> bad = Parse("{\"summary\": \"x\",\n oops}");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("report is not JSON: parse error at line 2, column"),
            std::string::npos)
      << bad.error().message;
  EXPECT_NE(bad.error().message.find("(byte "), std::string::npos);
  EXPECT_EQ(Parse(R"({"confidence": 1.5})").error().message,
            "report: confidence must be a number in [0, 1]");
  EXPECT_EQ(Parse(R"({"confidence": "high"})").error().message,
            "report: confidence must be a number in [0, 1]");
  EXPECT_EQ(Parse("[]").error().message, "report: expected a JSON object, got array");
  EXPECT_FALSE(Parse(R"({"findings": "one"})").ok());
  EXPECT_FALSE(Parse(R"({"env": {"A-B": "1"}})").ok());
  EXPECT_FALSE(Parse(R"({"proposals": {}})").ok());
}

TEST_F(AgentReportTest, ProposalArraysHonourTheLimit) {
  std::vector<ActionSpec> accepted;
  std::vector<std::string> rejected;
  Status s = ParseProposals(R"([
    {"id": "a", "layer": "x", "apply": {"env": {"A": "1"}}},
    {"id": "b", "layer": "x", "apply": {"append": {"CFLAGS": " -O3"}}},
    {"id": "c", "layer": "x", "apply": {"env": {"C": "1"}}}])",
                            spec_, {}, "system specialist", 2, &accepted, &rejected);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(accepted.size(), 2u);
  EXPECT_EQ(accepted[1].apply.kind, ApplySpec::Kind::kAppend);
  EXPECT_EQ(rejected, std::vector<std::string>{"proposal 3 ('c'): over the limit of 2 proposals"});
  EXPECT_FALSE(ParseProposals("{}", spec_, {}, "x", 2, &accepted, &rejected).ok());
  EXPECT_FALSE(ParseProposals("[", spec_, {}, "x", 2, &accepted, &rejected).ok());
}

}  // namespace
}  // namespace arbor
