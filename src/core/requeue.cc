// Re-queued ideas: reverted nodes that deserve another try under the incumbent, either because
// the profile moved to their targets (introspection after a keep) or because every candidate
// was tried with budget left and the path changed under them (revisit). Either way the idea
// becomes a pending child of the incumbent that competes in h(a) like any candidate.
#include <algorithm>

#include "core/orchestrator.h"

namespace arbor {

std::vector<Node> Orchestrator::RequeueUnder(const Node& parent,
                                             const std::vector<Requeue>& requeues) {
  std::vector<Node> out;
  NodeId next = tree_.MaxId() + 1;
  for (const Requeue& q : requeues) {
    const Node* from = tree_.Find(q.from);
    Node n;
    n.id = next++;
    n.parent = parent.id;
    n.action_id = from->action_id;
    n.value = q.value ? *q.value : from->value;
    n.category = from->category;
    n.layer = from->layer;
    n.outcome = Outcome::kPending;
    n.step = Step::kNone;
    n.overlay = parent.overlay;
    n.created_s = CampaignTime();
    n.critic.requeued_from = q.from;
    n.diagnosis = "re-queued: " + q.reason;
    out.push_back(n);
  }
  return out;
}

std::vector<Node> Orchestrator::IntrospectAfterKeep(const Node& kept, const Profile& profile) {
  return RequeueUnder(kept, Introspect(tree_, catalog_, kept.id, profile,
                                       [this](NodeId id) { return ProfileAt(id); }));
}

Result<bool> Orchestrator::RevisitWhenExhausted() {
  if (!spec_.search.revisit) return false;
  const Node* inc = tree_.Find(tree_.Incumbent());
  if (inc == nullptr) return false;
  std::vector<Node> nodes = RequeueUnder(*inc, Revisit(tree_, catalog_, inc->id));
  if (nodes.empty()) return false;
  std::vector<Event> events;
  for (const Node& q : nodes) events.push_back(MakeEvent(q.id, "requeued", q.diagnosis));
  Node unchanged = *inc;
  ARBOR_TRY(SaveMany(unchanged, nodes, std::move(events)));
  return true;
}

}  // namespace arbor
