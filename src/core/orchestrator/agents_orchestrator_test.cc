// The Orchestrator with domain specialists (src/core/orchestrator/delegation.cc): the context a
// task carries, follow-up proposals, proposal rounds, recorded prompts and usage, and the LLM
// budget.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/testing/scripted_specialist_testing.h"

namespace arbor {
namespace {

using testing::FakeKnowledgeBase;
using testing::TaskRecord;
using toy::AgentRig;
using toy::EnvAction;

bool Contains(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

TEST(AgentsOrchestratorTest, TheTaskCarriesTheContextOfItsNode) {
  AgentRig rig;
  rig.Action("kernel.agent")->apply.goal = "tile the compute loop";
  // A same-category idea that regresses, scored before the agent action.
  rig.spec.actions.push_back(EnvAction("kernel.slow", "SLOW", {"compute"}, 2));
  FakeKnowledgeBase kb;
  KbEntry lesson;
  lesson.uid = "old/5";
  lesson.campaign_uid = "old";
  lesson.campaign = "t";
  lesson.action_id = "kernel.agent";
  lesson.category = "kernel";
  lesson.outcome = "reverted";
  lesson.lesson = "tile by 64 before unrolling";
  lesson.recorded_at = 1e9;
  ASSERT_TRUE(kb.Record({lesson}).ok());
  rig.kb = &kb;
  rig.kb_context.campaign_uid = "now";
  rig.kb_context.now = 1e9;
  rig.kb_context.hardware.cpu_model = "cpu Z";
  rig.kb_context.hardware.cores = 4;
  ASSERT_TRUE(rig.Run().ok());

  std::vector<TaskRecord> tasks = rig.TasksFor("kernel.agent");
  ASSERT_EQ(tasks.size(), 1u);
  const TaskContext& ctx = tasks[0].context;
  const Node* agent = rig.NodeOf("kernel.agent");
  const Node* slow = rig.NodeOf("kernel.slow");
  ASSERT_NE(agent, nullptr);
  ASSERT_NE(slow, nullptr);
  ASSERT_LT(slow->seq, agent->seq) << "the test needs kernel.slow to fail first";
  EXPECT_EQ(ctx.domain, "kernel");
  EXPECT_EQ(ctx.goal, "tile the compute loop");
  EXPECT_EQ(ctx.hardware, rig.kb_context.hardware.Encode());
  // Targets: the compute component (the action's glob) with its share, nothing else.
  ASSERT_TRUE(ctx.profile.has_value());
  ASSERT_EQ(ctx.targets.size(), 1u);
  EXPECT_EQ(ctx.targets[0].rfind("compute ", 0), 0u) << ctx.targets[0];
  EXPECT_NE(ctx.targets[0].find('%'), std::string::npos) << ctx.targets[0];
  // The kept path from the root to the node's parent, root first.
  std::vector<std::string> kept;
  for (NodeId cur = agent->parent; cur != kRootId; cur = rig.store.nodes[cur].parent) {
    if (rig.store.nodes[cur].outcome == Outcome::kKept) {
      kept.insert(kept.begin(), rig.store.nodes[cur].CandidateKey());
    }
  }
  ASSERT_EQ(ctx.kept_path.size(), kept.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    EXPECT_NE(ctx.kept_path[i].find(kept[i]), std::string::npos) << ctx.kept_path[i];
  }
  // The same-category failure with the Critic's diagnosis.
  EXPECT_TRUE(Contains(ctx.failures, "kernel.slow reverted: " + slow->diagnosis))
      << (ctx.failures.empty() ? "" : ctx.failures[0]);
  // Constraints are the Critic's published ones.
  std::vector<std::string> published;
  for (const Event& e : rig.EventsOf("constraint")) published.push_back(e.message);
  EXPECT_FALSE(ctx.constraints.empty());
  for (const std::string& c : ctx.constraints) {
    EXPECT_NE(std::find(published.begin(), published.end(), c), published.end()) << c;
  }
  EXPECT_TRUE(Contains(ctx.lessons, "tile by 64 before unrolling"));
  for (const ActionSpec& a : rig.spec.actions) {
    EXPECT_NE(std::find(tasks[0].known_actions.begin(), tasks[0].known_actions.end(), a.id),
              tasks[0].known_actions.end())
        << a.id;
  }
}

// The agent action is tried first (a large prior) and proposes a follow-up and a duplicate.
void ProposeFollowUps(AgentRig* rig) {
  rig->Action("kernel.agent")->speedup = 5;
  rig->scripted.script = [](const Task& task, SpecialistResult* r) {
    if (task.action->id != "kernel.agent") return;
    r->proposals.push_back(EnvAction("kernel.tile", "TILE", {"compute"}, 4));
    r->proposals.push_back(EnvAction("algo.fast", "OTHER", {"compute"}, 4));
  };
}

TEST(AgentsOrchestratorTest, FollowUpProposalsAreRecordedAndDispatched) {
  AgentRig rig;
  ProposeFollowUps(&rig);
  ASSERT_TRUE(rig.Run().ok());
  const Node* agent = rig.NodeOf("kernel.agent");
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(agent->seq, 1);
  EXPECT_EQ(agent->agent.proposed, std::vector<std::string>{"kernel.tile"});
  auto actions = rig.store.LoadActions().value();
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].id, "kernel.tile");
  EXPECT_NE(actions[0].proposed_by.find("node " + std::to_string(agent->id)), std::string::npos)
      << actions[0].proposed_by;
  auto rejected = rig.EventsOf("proposal_rejected");
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].message.rfind("algo.fast", 0), 0u) << rejected[0].message;
  EXPECT_EQ(rejected[0].node, agent->id);
  const Node* tile = rig.NodeOf("kernel.tile");
  ASSERT_NE(tile, nullptr) << "the proposed action was never dispatched";
  EXPECT_EQ(tile->step, Step::kDone);
  EXPECT_EQ(rig.TasksFor("kernel.tile").size(), 1u);
  // The duplicate did not replace the campaign file's algo.fast.
  EXPECT_EQ(rig.NodeOf("algo.fast")->overlay.count("OTHER"), 0u);
}

TEST(AgentsOrchestratorTest, ProposedActionsAreCandidatesAgainAfterAResume) {
  AgentRig rig;
  ProposeFollowUps(&rig);
  rig.spec.search.max_nodes = 1;
  ASSERT_TRUE(rig.Run().ok());
  ASSERT_EQ(rig.NodeOf("kernel.tile"), nullptr);
  ASSERT_EQ(rig.store.LoadActions().value().size(), 1u);
  rig.spec.search.max_nodes = 20;
  rig.scripted.script = nullptr;
  ASSERT_TRUE(rig.Run().ok());  // a fresh Orchestrator: the campaign file has no kernel.tile
  const Node* tile = rig.NodeOf("kernel.tile");
  ASSERT_NE(tile, nullptr);
  EXPECT_EQ(tile->step, Step::kDone);
  EXPECT_EQ(rig.EventsOf("proposal").size(), 1u);
}

TEST(AgentsOrchestratorTest, ProposalRoundsRunAfterTheBaselineAndEachKeep) {
  AgentRig rig;
  rig.scripted.domains = {"kernel"};
  int round = 0;
  rig.scripted.propose = [&round](const ProposeRequest& req) {
    Proposal p;
    ++round;
    std::string id = "kernel.p" + std::to_string(round);
    p.actions.push_back(EnvAction(id, "P" + std::to_string(round), {"compute"}, 1.05));
    p.prompt = "propose round " + std::to_string(round) + " for " + req.domain;
    p.usage = AgentUsage{7, 3, 0.5, 1};
    return p;
  };
  ASSERT_TRUE(rig.Run().ok());
  int keeps = 0;
  for (const auto& [id, n] : rig.store.nodes) keeps += n.outcome == Outcome::kKept;
  ASSERT_GT(keeps, 0);
  // After the baseline and after each keep, not on every iteration.
  auto requests = rig.scripted.requests();
  EXPECT_EQ(static_cast<int>(requests.size()), keeps + 1);
  for (const auto& [id, n] : rig.store.nodes) {
    if (n.outcome != Outcome::kKept) continue;
    auto prompts = rig.store.LoadPrompts(id).value();
    ASSERT_EQ(prompts.size(), 1u) << n.CandidateKey();
    EXPECT_EQ(prompts[0].kind, "propose:kernel");
  }
  auto root_prompts = rig.store.LoadPrompts(kRootId).value();
  ASSERT_EQ(root_prompts.size(), 1u);
  EXPECT_EQ(root_prompts[0].kind, "propose:kernel");
  EXPECT_EQ(root_prompts[0].text, "propose round 1 for kernel");
  CampaignMeta meta = *rig.store.LoadMeta().value();
  EXPECT_GE(meta.llm_prompt_tokens, 7 * static_cast<int64_t>(requests.size()));
  Tree tree;
  for (const auto& [id, n] : rig.store.nodes) tree.Upsert(n);
  EXPECT_EQ(meta.proposed_at, tree.Incumbent());
  for (const ProposeRequest& req : requests) {
    EXPECT_EQ(req.domain, "kernel");
    EXPECT_TRUE(req.context.goal.empty());
    EXPECT_NE(std::find(req.known.begin(), req.known.end(), "algo.fast"), req.known.end());
  }
  EXPECT_EQ(rig.store.LoadActions().value().size(), requests.size());
}

TEST(AgentsOrchestratorTest, AResumeDoesNotAskAgainForTheSameIncumbent) {
  AgentRig rig;
  rig.Action("kernel.agent")->speedup = 5;  // first, and not kept
  rig.scripted.domains = {"kernel"};
  rig.scripted.propose = [](const ProposeRequest&) {
    Proposal p;
    p.prompt = "propose";
    return p;
  };
  rig.spec.search.max_nodes = 1;
  ASSERT_TRUE(rig.Run().ok());
  ASSERT_EQ(rig.scripted.requests().size(), 1u);
  ASSERT_NE(rig.NodeOf("kernel.agent")->outcome, Outcome::kKept);
  EXPECT_EQ(rig.store.LoadMeta().value()->proposed_at, kRootId);
  rig.spec.search.max_nodes = 2;
  ASSERT_TRUE(rig.Run().ok());
  EXPECT_EQ(rig.scripted.requests().size(), 1u);
  EXPECT_EQ(rig.store.nodes.size(), 3u);
}

TEST(AgentsOrchestratorTest, PromptsAgentNotesAndUsageAreRecorded) {
  AgentRig rig;
  rig.scripted.script = [](const Task& task, SpecialistResult* r) {
    if (task.action->id != "kernel.agent") return;
    r->confidence = 0.7;
    r->findings = {"the loop is memory bound"};
    r->questions = {"may I change the data layout?"};
    r->usage = AgentUsage{100, 50, 1.5, 2};
  };
  ASSERT_TRUE(rig.Run().ok());
  const Node* agent = rig.NodeOf("kernel.agent");
  ASSERT_NE(agent, nullptr);
  auto prompts = rig.store.LoadPrompts(agent->id).value();
  ASSERT_EQ(prompts.size(), 1u);
  EXPECT_EQ(prompts[0].kind, "implement");
  EXPECT_EQ(prompts[0].text, "implement kernel.agent for node " + std::to_string(agent->id));
  EXPECT_EQ(agent->agent.backend, SpecialistBackend::kLlm);
  EXPECT_EQ(agent->agent.domain, "kernel");
  EXPECT_DOUBLE_EQ(agent->agent.confidence, 0.7);
  EXPECT_EQ(agent->agent.rounds, 2);
  EXPECT_EQ(agent->agent.prompt_tokens, 100);
  EXPECT_EQ(agent->agent.completion_tokens, 50);
  EXPECT_DOUBLE_EQ(agent->agent.cost, 1.5);
  EXPECT_EQ(agent->agent.findings, std::vector<std::string>{"the loop is memory bound"});
  EXPECT_EQ(agent->agent.questions, std::vector<std::string>{"may I change the data layout?"});
  for (const auto& [id, n] : rig.store.nodes) {
    if (id != agent->id) {
      EXPECT_TRUE(n.agent.empty()) << n.CandidateKey();
      EXPECT_TRUE(rig.store.LoadPrompts(id).value().empty()) << n.CandidateKey();
    }
  }
  CampaignMeta meta = *rig.store.LoadMeta().value();
  EXPECT_EQ(meta.llm_prompt_tokens, 100);
  EXPECT_EQ(meta.llm_completion_tokens, 50);
  EXPECT_DOUBLE_EQ(meta.llm_cost, 1.5);
}

TEST(AgentsOrchestratorTest, ASpentLlmBudgetStopsLlmActionsButNotBuiltinOnes) {
  AgentRig rig;
  rig.spec.actions.clear();
  for (std::string id : {"ka.one", "kb.two", "kc.three"}) {
    ActionSpec a = EnvAction(id, "X_" + id.substr(0, 2), {"compute"}, 6);
    a.apply.kind = ApplySpec::Kind::kAgent;
    a.apply.agent = "kernel";
    rig.spec.actions.push_back(a);
  }
  rig.spec.actions.push_back(EnvAction("algo.fast", "FAST", {"compute"}, 1.5));
  rig.spec.specialists["kernel"].backend = SpecialistBackend::kLlm;
  rig.spec.llm.max_tokens = 100;
  rig.scripted.script = [](const Task&, SpecialistResult* r) {
    if (r->backend == SpecialistBackend::kLlm) r->usage = AgentUsage{40, 20, 0, 1};
  };
  ASSERT_TRUE(rig.Run().ok());
  auto agent_tasks = rig.scripted.tasks();
  int llm = 0;
  for (const TaskRecord& t : agent_tasks) llm += t.action_id != "algo.fast";
  EXPECT_EQ(llm, 2);  // 60 tokens after the first, 120 >= 100 after the second
  EXPECT_EQ(rig.EventsOf("llm_budget").size(), 1u);
  ASSERT_NE(rig.NodeOf("algo.fast"), nullptr);
  EXPECT_EQ(rig.NodeOf("algo.fast")->outcome, Outcome::kKept);
  EXPECT_EQ(rig.store.nodes.size(), 4u);
  EXPECT_EQ(rig.store.LoadMeta().value()->stop_reason, StopReason::kExhausted);
}

// A specialist that did not send a request because it could exceed what is left of the
// budget (usage.over_budget) ends LLM dispatch at once, though the tokens spent are under the
// cap: no further LLM task is dispatched, builtin ones go on.
TEST(AgentsOrchestratorTest, ARequestRefusedForTheBudgetStopsLlmActions) {
  AgentRig rig;
  rig.spec.actions.clear();
  for (std::string id : {"ka.one", "kb.two", "kc.three"}) {
    ActionSpec a = EnvAction(id, "X_" + id.substr(0, 2), {"compute"}, 6);
    a.apply.kind = ApplySpec::Kind::kAgent;
    a.apply.agent = "kernel";
    rig.spec.actions.push_back(a);
  }
  rig.spec.actions.push_back(EnvAction("algo.fast", "FAST", {"compute"}, 1.5));
  rig.spec.specialists["kernel"].backend = SpecialistBackend::kLlm;
  rig.spec.llm.max_tokens = 1000000;
  rig.scripted.script = [](const Task&, SpecialistResult* r) {
    if (r->backend != SpecialistBackend::kLlm) return;
    r->usage = AgentUsage{40, 20, 0, 1};
    r->usage.over_budget = true;
    r->status = SpecialistResult::Status::kSkipped;
    r->diagnosis = "llm: [llm] budget: not sent";
  };
  ASSERT_TRUE(rig.Run().ok());
  int llm = 0;
  for (const TaskRecord& t : rig.scripted.tasks()) llm += t.action_id != "algo.fast";
  EXPECT_EQ(llm, 1);
  EXPECT_EQ(rig.EventsOf("llm_budget").size(), 1u);
  ASSERT_NE(rig.NodeOf("algo.fast"), nullptr);
  EXPECT_EQ(rig.NodeOf("algo.fast")->outcome, Outcome::kKept);
}

}  // namespace
}  // namespace arbor
