// The Orchestrator's side of the Domain Specialists (ARBOR.md "The agents"): the context a
// specialist is built with, proposal rounds, follow-up proposals, and the LLM budget.
#include <algorithm>
#include <set>

#include "core/orchestrator/orchestrator.h"
#include "core/search/constraints.h"
#include "util/strings.h"

namespace arbor {
namespace {

constexpr int kLessons = 5;               // knowledge-base entries in a prompt
constexpr int kFailures = 8;              // similar failures in a prompt
constexpr size_t kRecentFailures = 1000;  // the most recent failures searched for them
constexpr int kComponents = 8;            // profile components listed besides the targeted ones

std::string Pct(double fraction) { return FormatDouble(fraction * 100, 3) + "%"; }

bool Targets(const ActionSpec& action, const Component& c) {
  for (const std::string& glob : action.targets) {
    if (GlobMatch(glob, c.name)) return true;
  }
  return false;
}

std::string DescribeKept(const Node& n) {
  std::string line = "#" + std::to_string(n.id) + " " + n.CandidateKey();
  if (n.gain) line += " (" + std::string(*n.gain >= 0 ? "+" : "") + Pct(*n.gain) + ")";
  if (!n.summary.empty()) line += ": " + n.summary;
  return line;
}

}  // namespace

bool Orchestrator::LlmBudgetSpent() const {
  const LlmBudget& b = spec_.llm;
  int64_t tokens = meta_.llm_prompt_tokens + meta_.llm_completion_tokens;
  return llm_over_budget_ || (b.max_tokens > 0 && tokens >= b.max_tokens) ||
         (b.max_cost > 0 && meta_.llm_cost >= b.max_cost);
}

void Orchestrator::AddUsage(const AgentUsage& usage) {
  meta_.llm_prompt_tokens += usage.prompt_tokens;
  meta_.llm_completion_tokens += usage.completion_tokens;
  meta_.llm_cost += usage.cost;
  llm_over_budget_ = llm_over_budget_ || usage.over_budget;
}

std::vector<std::string> Orchestrator::KnownActions() const {
  std::vector<std::string> ids;
  ids.reserve(actions_.size());
  for (const ActionSpec& a : actions_) ids.push_back(a.id);
  return ids;
}

TaskContext Orchestrator::BuildContext(NodeId at, const ActionSpec* action,
                                       const std::string& value, const std::string& domain) {
  TaskContext ctx;
  ctx.domain = domain;
  if (action != nullptr) {
    ctx.goal = action->apply.kind == ApplySpec::Kind::kAgent && !action->apply.goal.empty()
                   ? action->apply.goal
                   : action->describe;
  }
  ctx.hardware = ports_.kb_context.hardware.Encode();
  ctx.profile = ProfileAt(at);
  if (ctx.profile) {
    std::vector<Component> components = ctx.profile->components;
    std::stable_sort(components.begin(), components.end(),
                     [](const Component& a, const Component& b) { return a.share > b.share; });
    int listed = 0;
    for (const Component& c : components) {
      bool targeted = action != nullptr && Targets(*action, c);
      if (!targeted && listed >= kComponents) continue;
      if (targeted) {
        ctx.targets.push_back(c.name + " " + Pct(c.share) +
                              (c.layer.empty() ? "" : " (" + c.layer + ")"));
      }
      ++listed;
    }
  }
  for (const Node* n : tree_.Path(at)) {
    if (n->id != kRootId && n->outcome == Outcome::kKept) ctx.kept_path.push_back(DescribeKept(*n));
  }
  if (action != nullptr) {
    for (const KbEntry& e :
         RelevantEntries(kb_entries_, *action, value, KnowledgeContext(), kLessons)) {
      ctx.lessons.push_back("[kb " + std::to_string(e.id) + "] " + e.lesson);
    }
  }
  // Failures of the same action or category among the last kRecentFailures in the tree,
  // newest first: what not to repeat, with the Critic's diagnosis. Bounded, so a task costs the
  // same in a 100k-node campaign as in a small one (docs/benchmarks.md, engine overhead).
  for (const Node* n : tree_.RecentNonKept(kRecentFailures)) {
    if (static_cast<int>(ctx.failures.size()) >= kFailures) break;
    if (n->outcome != Outcome::kCrashed && n->outcome != Outcome::kReverted) continue;
    bool similar = action == nullptr
                       ? n->category == domain || n->layer == domain
                       : n->action_id == action->id || n->category == action->category;
    if (!similar) continue;
    std::string line = "#" + std::to_string(n->id) + " " + n->CandidateKey() + " " +
                       std::string(OutcomeName(n->outcome)) + ": " + n->diagnosis;
    if (!n->critic.suggestion.empty()) line += " (suggestion: " + n->critic.suggestion + ")";
    ctx.failures.push_back(line);
  }
  for (const Constraint& c : ActiveConstraints(tree_, publishers_, at, last_keep_seq_)) {
    ctx.constraints.push_back(DescribeConstraint(c));
  }
  return ctx;
}

std::vector<std::string> Orchestrator::AcceptProposals(std::vector<ActionSpec> proposed,
                                                       const std::string& by, NodeId node,
                                                       std::vector<Event>* events,
                                                       std::vector<ActionSpec>* accepted) {
  std::set<std::string> known;
  for (const ActionSpec& a : actions_) known.insert(a.id);
  std::vector<std::string> ids;
  for (ActionSpec& a : proposed) {
    if (a.proposed_by.empty()) a.proposed_by = by;
    // The same node proposing it again (re-dispatched, or its stale result was recorded too)
    // is not a duplicate: whether its first proposal was recorded depends on thread timing.
    const ActionSpec* existing = catalog_.FindAction(a.id);
    if (existing != nullptr && existing->proposed_by == a.proposed_by) {
      ids.push_back(a.id);
      continue;
    }
    if (!known.insert(a.id).second) {
      events->push_back(
          MakeEvent(node, "proposal_rejected", a.id + ": an action with this id already exists"));
      continue;
    }
    events->push_back(MakeEvent(
        node, "proposal",
        a.id + " (" + a.layer + "/" + a.category + ", proposed by " + a.proposed_by + ")"));
    ids.push_back(a.id);
    accepted->push_back(std::move(a));
  }
  return ids;
}

void Orchestrator::TakeProposals(Node* node, std::vector<ActionSpec> proposals) {
  if (proposals.empty()) return;
  const ActionSpec* action = catalog_.FindAction(node->action_id);
  std::string by = (action != nullptr ? action->apply.agent : "") + " specialist at node " +
                   std::to_string(node->id);
  for (const std::string& id :
       AcceptProposals(std::move(proposals), by, node->id, &pending_events_, &pending_actions_)) {
    std::vector<std::string>& ids = node->agent.proposed;
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
}

void Orchestrator::AddActions(const std::vector<ActionSpec>& actions) {
  if (actions.empty()) return;
  for (const ActionSpec& a : actions) actions_.push_back(a);
  catalog_ = Catalog(actions_);
}

Status Orchestrator::ProposeRound() {
  NodeId inc = tree_.Incumbent();
  if (meta_.proposed_at == inc) return {};
  std::vector<std::string> domains = ports_.specialist->ProposingDomains();
  if (domains.empty()) return {};
  Mutation m;
  std::vector<ActionSpec> accepted;
  for (const std::string& domain : domains) {
    auto it = spec_.specialists.find(domain);
    bool llm = it != spec_.specialists.end() && it->second.backend == SpecialistBackend::kLlm;
    if (llm && LlmBudgetSpent()) continue;
    ProposeRequest req;
    req.domain = domain;
    req.context = BuildContext(inc, nullptr, "", domain);
    req.known = KnownActions();
    for (const Node* n : tree_.All()) {
      if (n->id == kRootId || !IsFinished(n->outcome)) continue;
      req.tried.push_back(n->CandidateKey() + " " + std::string(OutcomeName(n->outcome)) +
                          (n->gain ? " " + Pct(*n->gain) : ""));
    }
    if (it != spec_.specialists.end()) req.max_actions = it->second.max_proposals;
    Proposal p = ports_.specialist->Propose(req);
    AddUsage(p.usage);
    if (!p.prompt.empty()) m.prompts.push_back({inc, "propose:" + domain, p.prompt});
    for (const std::string& r : p.rejected) {
      m.events.push_back(MakeEvent(inc, "proposal_rejected", domain + ": " + r));
    }
    if (!p.diagnosis.empty()) {
      m.events.push_back(MakeEvent(inc, "proposal_failed", domain + ": " + p.diagnosis));
    }
    std::string by = domain + " specialist at node " + std::to_string(inc);
    std::vector<ActionSpec> mine;
    AcceptProposals(std::move(p.actions), by, inc, &m.events, &mine);
    for (ActionSpec& a : mine) accepted.push_back(std::move(a));
  }
  meta_.proposed_at = inc;
  m.actions = accepted;
  meta_.elapsed_s = CampaignTime();
  m.meta = meta_;
  ARBOR_TRY(ports_.store->Apply(m));
  saved_meta_ = meta_;
  AddActions(accepted);
  if (ports_.sink) {
    for (const Event& e : m.events) ports_.sink->OnEvent(e);
  }
  return {};
}

Status Orchestrator::ReportLlmBudget() {
  if (llm_budget_reported_) return {};
  llm_budget_reported_ = true;
  Mutation m;
  m.events.push_back(MakeEvent(
      kNoNode, "llm_budget",
      "LLM budget spent (" + std::to_string(meta_.llm_prompt_tokens + meta_.llm_completion_tokens) +
          " tokens, cost " + FormatDouble(meta_.llm_cost, 4) +
          "): actions of LLM specialists are no longer dispatched"));
  ARBOR_TRY(ports_.store->Apply(m));
  if (ports_.sink) ports_.sink->OnEvent(m.events.back());
  return {};
}

Status Orchestrator::LoadProposedActions() {
  // Actions specialists proposed earlier in this campaign (the campaign file's win on a clash:
  // the user may have adopted one under the same id).
  ARBOR_TRY_ASSIGN(auto proposed, ports_.store->LoadActions());
  std::set<std::string> known;
  for (const ActionSpec& a : actions_) known.insert(a.id);
  std::vector<ActionSpec> added;
  for (ActionSpec& a : proposed) {
    if (known.insert(a.id).second) added.push_back(std::move(a));
  }
  AddActions(added);
  return {};
}

}  // namespace arbor
