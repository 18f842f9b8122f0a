// SqliteStore and Domain Specialists (schema v3): proposed actions, prompts, agent notes and
// the campaign's LLM usage, and the atomicity of all of them with the rest of a Mutation.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "store/sqlite_store.h"
#include "store/store_testing.h"

namespace arbor {
namespace {

using store_testing::FullNode;
using store_testing::RootNode;
using store_testing::ScratchDir;

ActionSpec Proposed(std::string id, std::string describe) {
  ActionSpec a;
  a.id = std::move(id);
  a.layer = "kernel";
  a.describe = std::move(describe);
  a.apply.kind = ApplySpec::Kind::kAgent;
  a.apply.agent = "kernel";
  a.apply.goal = "tile the K loop";
  a.values = {"32", "64"};
  a.proposed_by = "kernel specialist at node 1";
  return a;
}

class SqliteStoreAgentsTest : public testing::Test {
 protected:
  void SetUp() override {
    auto store = SqliteStore::Open(path_, OpenMode::kReadWrite);
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(*store);
  }
  std::vector<ActionSpec> Actions() {
    auto actions = store_->LoadActions();
    EXPECT_TRUE(actions.ok()) << actions.error().message;
    return actions.ok() ? *actions : std::vector<ActionSpec>{};
  }
  std::vector<Mutation::Prompt> Prompts(NodeId node) {
    auto prompts = store_->LoadPrompts(node);
    EXPECT_TRUE(prompts.ok()) << prompts.error().message;
    return prompts.ok() ? *prompts : std::vector<Mutation::Prompt>{};
  }

  ScratchDir dir_;
  std::string path_ = dir_.File("arbor.db");
  std::unique_ptr<SqliteStore> store_;
};

TEST_F(SqliteStoreAgentsTest, ActionsUpsertByIdAndKeepTheirFirstOrder) {
  EXPECT_TRUE(Actions().empty());
  ASSERT_TRUE(store_->Apply({.actions = {Proposed("b", "first"), Proposed("a", "second")}}).ok());
  ASSERT_TRUE(store_->Apply({.actions = {Proposed("c", "third"), Proposed("b", "revised")}}).ok());
  auto actions = Actions();
  ASSERT_EQ(actions.size(), 3u);
  EXPECT_EQ(actions[0].id, "b");
  EXPECT_EQ(actions[0].describe, "revised");
  EXPECT_EQ(actions[1].id, "a");
  EXPECT_EQ(actions[2].id, "c");
  EXPECT_EQ(actions[0].apply.kind, ApplySpec::Kind::kAgent);
  EXPECT_EQ(actions[0].apply.goal, "tile the K loop");
  EXPECT_EQ(actions[0].values, (std::vector<std::string>{"32", "64"}));
  EXPECT_EQ(actions[0].proposed_by, "kernel specialist at node 1");

  // They survive a reopen, read-only included.
  store_.reset();
  auto reader = SqliteStore::Open(path_, OpenMode::kReadOnly);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  auto again = (*reader)->LoadActions();
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->size(), 3u);
  EXPECT_EQ((*again)[2].describe, "third");
}

TEST_F(SqliteStoreAgentsTest, PromptsReplaceOnSameKindAndLoadOrderedByKind) {
  ASSERT_TRUE(store_
                  ->Apply({.nodes = {RootNode(), FullNode(2, kRootId)},
                           .prompts = {{2, "propose:kernel", "what next?"},
                                       {2, "implement", "tile it"},
                                       {kRootId, "propose:io", "root prompt"}}})
                  .ok());
  ASSERT_TRUE(store_->Apply({.prompts = {{2, "implement", "tile it, round 2"}}}).ok());
  auto prompts = Prompts(2);
  ASSERT_EQ(prompts.size(), 2u);
  EXPECT_EQ(prompts[0].node, 2);
  EXPECT_EQ(prompts[0].kind, "implement");
  EXPECT_EQ(prompts[0].text, "tile it, round 2");
  EXPECT_EQ(prompts[1].kind, "propose:kernel");
  EXPECT_EQ(prompts[1].text, "what next?");
  ASSERT_EQ(Prompts(kRootId).size(), 1u);
  EXPECT_TRUE(Prompts(99).empty());
}

TEST_F(SqliteStoreAgentsTest, AgentNoteRoundTripsAndDefaultsToEmpty) {
  Node agent_node = FullNode(2, kRootId);
  agent_node.agent.backend = SpecialistBackend::kLlm;
  agent_node.agent.domain = "kernel";
  agent_node.agent.confidence = 0.8;
  agent_node.agent.rounds = 3;
  agent_node.agent.prompt_tokens = 5000;
  agent_node.agent.completion_tokens = 700;
  agent_node.agent.cost = 0.25;
  agent_node.agent.findings = {"memory-bound"};
  agent_node.agent.questions = {"AVX-512?"};
  agent_node.agent.proposed = {"kernel.prefetch"};
  ASSERT_TRUE(store_->Apply({.nodes = {RootNode(), agent_node}}).ok());
  auto nodes = store_->LoadNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_TRUE((*nodes)[0].agent.empty());
  const AgentNote& got = (*nodes)[1].agent;
  EXPECT_EQ(got.backend, SpecialistBackend::kLlm);
  EXPECT_EQ(got.domain, "kernel");
  EXPECT_EQ(got.confidence, 0.8);
  EXPECT_EQ(got.rounds, 3);
  EXPECT_EQ(got.prompt_tokens, 5000);
  EXPECT_EQ(got.completion_tokens, 700);
  EXPECT_EQ(got.cost, 0.25);
  EXPECT_EQ(got.findings, agent_node.agent.findings);
  EXPECT_EQ(got.questions, agent_node.agent.questions);
  EXPECT_EQ(got.proposed, agent_node.agent.proposed);
}

TEST_F(SqliteStoreAgentsTest, LlmUsageInMetaRoundTrips) {
  CampaignMeta meta{.name = "c"};
  meta.llm_prompt_tokens = 1234567;
  meta.llm_completion_tokens = 89012;
  meta.llm_cost = 3.14159;
  meta.proposed_at = 5;
  ASSERT_TRUE(store_->Apply({.meta = meta}).ok());
  auto got = store_->LoadMeta();
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->llm_prompt_tokens, meta.llm_prompt_tokens);
  EXPECT_EQ((*got)->llm_completion_tokens, meta.llm_completion_tokens);
  EXPECT_EQ((*got)->llm_cost, meta.llm_cost);
  EXPECT_EQ((*got)->proposed_at, meta.proposed_at);
}

// A Mutation that fails for any reason writes none of its actions and prompts.
TEST_F(SqliteStoreAgentsTest, FailedApplyWritesNoActionsOrPrompts) {
  Mutation bad_parent{.nodes = {RootNode(), FullNode(2, 404)},  // no node 404
                      .actions = {Proposed("a", "x")},
                      .prompts = {{kRootId, "implement", "p"}}};
  Mutation bad_prompt{.nodes = {RootNode()},
                      .actions = {Proposed("a", "x")},
                      .prompts = {{kRootId, "implement", "p"}, {77, "implement", "orphan"}}};
  Mutation bad_action{.nodes = {RootNode()},
                      .actions = {Proposed("a", "x"), Proposed("", "no id")},
                      .prompts = {{kRootId, "implement", "p"}}};
  for (const Mutation* m : {&bad_parent, &bad_prompt, &bad_action}) {
    Status s = store_->Apply(*m);
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(Actions().empty()) << s.error().message;
    EXPECT_TRUE(Prompts(kRootId).empty()) << s.error().message;
    auto nodes = store_->LoadNodes();
    ASSERT_TRUE(nodes.ok());
    EXPECT_TRUE(nodes->empty());
  }
  // The connection is usable afterwards, and the same data without the fault goes in whole.
  bad_prompt.prompts.pop_back();
  ASSERT_TRUE(store_->Apply(bad_prompt).ok());
  EXPECT_EQ(Actions().size(), 1u);
  EXPECT_EQ(Prompts(kRootId).size(), 1u);
}

}  // namespace
}  // namespace arbor
