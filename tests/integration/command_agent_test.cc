// The command backend end to end (docs/specialists.md): `agent` actions routed to a shell script
// that plays a coding-agent CLI, mixed with declarative actions. One agent edit is kept, one
// agent exits 3, one creates a symlink (refused by the patch policy), one changes nothing; the
// kept agent's report carries findings and a proposal, which is tried. What the agent read on
// stdin is exactly what `arbor show N --prompt` prints.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "agent_campaign.h"
#include "campaign_checks.h"
#include "harness.h"

namespace arbor::integration {
namespace {

std::string Describe(const std::vector<TreeNode>& nodes) {
  std::string out;
  for (const auto& n : nodes) {
    out += "  #" + std::to_string(n.id) + " <- #" + std::to_string(n.parent) + " " + n.Key() +
           ": " + n.outcome + " " + n.diagnosis + "\n";
  }
  return out;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(IntegrationCommandAgent, OutcomesReportsProposalsAndPrompts) {
  TempWorkspace ws;
  WriteAgentCampaign(
      ws, "agents", /*parallel=*/1, /*agent_sleep_s=*/0,
      AgentAction("kernel.good", "double-speed", 2.0) + AgentAction("kernel.exit3", "exit3", 1.9) +
          AgentAction("kernel.symlink", "symlink", 1.8) + AgentAction("kernel.noop", "noop", 1.7) +
          EnvAction("sys.boost", "BOOST = \"1.5\"", 1.5) +
          EnvAction("sys.wrong", "WRONG = \"1\"", 1.4));
  ProcResult run = ws.Arbor({"run", "arbor.toml", "--quiet"}, {}, 300);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  nlohmann::json status = ws.ArborJson({"status", "--json"});
  EXPECT_EQ(status.value("state", ""), "finished") << status.dump();
  std::vector<TreeNode> nodes = LoadTree(ws);
  ExpectTreeInvariants(nodes);
  std::string tree = Describe(nodes);

  // The agent's edit, the declarative win and the agent's proposal are kept.
  EXPECT_EQ(KeysWithOutcome(nodes, "kept"),
            (std::set<std::string>{"kernel.good", "sys.boost", kProposedAction}))
      << tree;
  // With the budget left, each kept environment change is taken back out once (a drop, reverted);
  // the agent's patch is not (moves.h, Drops).
  EXPECT_EQ(KeysWithOutcome(nodes, "reverted"),
            (std::set<std::string>{"sys.wrong", "-sys.boost", std::string("-") + kProposedAction}))
      << tree;
  EXPECT_EQ(KeysWithOutcome(nodes, "crashed"),
            (std::set<std::string>{"kernel.exit3", "kernel.symlink", "kernel.noop"}))
      << tree;
  struct Expected {
    const char* key;
    std::vector<std::string> parts;
  };
  for (const Expected& e : std::vector<Expected>{
           {"kernel.exit3", {"agent exited with code 3", "cannot vectorise: no SIMD unit found"}},
           {"kernel.symlink", {"patch policy", "etc-link"}},
           {"kernel.noop", {"changed nothing"}}}) {
    const TreeNode* n = FindKey(nodes, e.key);
    ASSERT_NE(n, nullptr) << e.key << " never ran\n" << tree;
    for (const std::string& part : e.parts) {
      EXPECT_TRUE(Contains(n->diagnosis, part)) << e.key << ": " << n->diagnosis;
    }
  }

  // The kept agent's report is on its node: confidence, findings, questions, the proposal.
  const TreeNode* good = FindKey(nodes, "kernel.good");
  ASSERT_NE(good, nullptr) << tree;
  nlohmann::json show = ws.ArborJson({"show", std::to_string(good->id), "--json"});
  ASSERT_TRUE(show.contains("agent") && show["agent"].is_object()) << show.dump();
  const nlohmann::json& agent = show["agent"];
  EXPECT_EQ(agent.value("backend", ""), "command") << agent.dump();
  EXPECT_EQ(agent.value("domain", ""), "kernel") << agent.dump();
  EXPECT_DOUBLE_EQ(agent.value("confidence", 0.0), 0.8) << agent.dump();
  EXPECT_EQ(agent["findings"], nlohmann::json::array({kAgentFinding})) << agent.dump();
  EXPECT_EQ(agent["questions"].size(), 1u) << agent.dump();
  EXPECT_TRUE(Contains(agent["proposed"].dump(), kProposedAction)) << agent.dump();
  EXPECT_EQ(show.value("summary", ""), "agent kernel: doubled SPEED in speed.h") << show.dump();

  // The proposal entered the search as an action and ran below the agent's keep.
  const TreeNode* proposed = FindKey(nodes, kProposedAction);
  ASSERT_NE(proposed, nullptr) << kProposedAction << " was never tried\n" << tree;
  std::vector<int64_t> up = Ancestors(nodes, proposed->id);
  EXPECT_NE(std::find(up.begin(), up.end(), good->id), up.end()) << tree;

  // The findings reach the knowledge base's lesson for the node.
  ProcResult exported = ws.Arbor({"kb", "export"});
  ASSERT_EQ(exported.exit_code, 0) << exported.Describe();
  EXPECT_TRUE(Contains(exported.out, std::string("Findings: ") + kAgentFinding)) << exported.out;

  // What every agent read on stdin is, byte for byte, the prompt recorded with its node.
  int compared = 0;
  for (const auto& n : nodes) {
    if (n.action.rfind("kernel.", 0) != 0) continue;
    std::string seen = ReadFile(ws.aux() + "/seen-" + std::to_string(n.id) + ".md");
    ASSERT_FALSE(seen.empty()) << "the agent of node " << n.id << " read no prompt";
    EXPECT_TRUE(Contains(seen, "Goal: MARK=")) << seen;
    ProcResult prompt = ws.Arbor({"show", std::to_string(n.id), "--prompt"});
    ASSERT_EQ(prompt.exit_code, 0) << prompt.Describe();
    EXPECT_EQ(prompt.out, seen) << "node " << n.id << " (" << n.Key() << ")";
    ++compared;
  }
  EXPECT_EQ(compared, 4) << tree;

  // The branch carries the kept edit, and nothing of the refused symlink.
  ProcResult speed = ws.Git({"show", "arbor/agents:speed.h"});
  EXPECT_TRUE(Contains(speed.out, "SPEED 2.0")) << speed.Describe();
  EXPECT_NE(ws.Git({"show", "arbor/agents:etc-link"}).exit_code, 0);
  EXPECT_EQ(WorktreeCount(ws), 1);
  EXPECT_EQ(ws.Git({"status", "--porcelain"}).out, "") << "arbor dirtied the workspace";
}

// A relative agent command ("./agent.sh", committed next to the campaign file) works in a
// proposal round too, which runs in a scratch folder: the program resolves against the campaign
// file's folder. The proposed action enters the search and is kept (TOY_ALGO=fast, ~25x).
TEST(IntegrationCommandAgent, ARelativeCommandRunsInProposalRounds) {
  auto ws = TempWorkspace::Toy();
  ws->Write(
      "agent.sh",
      "#!/bin/sh\n"
      "[ \"$ARBOR_MODE\" = propose ] || exit 3\n"
      "cat > \"$ARBOR_RESULT\" <<'EOF'\n"
      "[{\"id\": \"sys.proposed-fast\", \"layer\": \"system\", \"category\": \"proposed\",\n"
      "  \"speedup\": 50, \"cost\": \"1s\", \"apply\": {\"env\": {\"TOY_ALGO\": \"fast\"}}}]\n"
      "EOF\n");
  ASSERT_EQ(chmod((ws->repo() + "/agent.sh").c_str(), 0755), 0);
  ws->Write("arbor.toml", ReadFile(ws->repo() + "/arbor.toml") +
                              "\n[specialists.system]\nbackend = \"command\"\n"
                              "command = \"./agent.sh\"\npropose = true\nmax_proposals = 1\n");
  ws->CommitAll();
  ProcResult run = ws->Arbor({"run", "arbor.toml", "--quiet", "--max-nodes", "3"}, {}, 300);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::vector<TreeNode> nodes = LoadTree(*ws);
  const TreeNode* proposed = FindKey(nodes, "sys.proposed-fast");
  ASSERT_NE(proposed, nullptr) << "the proposal round failed\n" << Describe(nodes);
  EXPECT_EQ(proposed->outcome, "kept") << Describe(nodes);
}

}  // namespace
}  // namespace arbor::integration
