// Un-keeping an anomalous incumbent (docs/critic.md, "Plausibility"). A keep can rest on a
// broken reading that the plausibility bound did not catch (say an intermittent timer fault
// within the bound, or a gain trusted with [critic] trust_large_gains). Every later A/B
// re-measures the incumbent as its base arm: when that re-measurement disagrees with the value
// the incumbent was kept at by an order of magnitude (kUnkeepFactor), one of the two readings
// is broken, and every verdict since compared candidates against it. So the incumbent is
// un-kept (outcome reverted, flags `unkept` and `anomaly`), the campaign branch moves back to
// its parent, and every candidate measured on top of it (reverted for no gain, not confirmed,
// inflation or an anomaly, and the one being measured now) is re-queued under the restored
// incumbent, where it is compared with an honest number. recheck.cc is the model: the same
// recording order (stored first, branch moved second) and the same knowledge-base correction
// (the `unkept` flag makes knowledge.cc record it).
#include <algorithm>

#include "core/critic/plausibility.h"
#include "core/orchestrator/orchestrator.h"
#include "util/strings.h"

namespace arbor {
namespace {

// Finished children whose verdict compared them with the incumbent's numbers.
bool MeasuredAgainstParent(const Node& n) {
  if (n.outcome != Outcome::kReverted) return false;
  static constexpr RcaClass kRcas[] = {RcaClass::kNoGain, RcaClass::kNotConfirmed,
                                       RcaClass::kInflation, RcaClass::kAnomaly};
  return std::find(std::begin(kRcas), std::end(kRcas), n.critic.rca) != std::end(kRcas);
}

}  // namespace

Status Orchestrator::UnkeepAnomalousIncumbent(NodeId incumbent, double now, Node* node) {
  const Node* inc = tree_.Find(incumbent);
  const Node* back = inc != nullptr ? tree_.Find(inc->parent) : nullptr;
  if (inc == nullptr || back == nullptr || inc->outcome != Outcome::kKept || !inc->metric) {
    return {};
  }
  const std::string i = "#" + std::to_string(inc->id);
  const std::string b = "#" + std::to_string(back->id);
  Node u = *inc;
  u.outcome = Outcome::kReverted;
  for (const char* flag : {"unkept", "anomaly"}) {
    if (std::find(u.critic.flags.begin(), u.critic.flags.end(), flag) == u.critic.flags.end()) {
      u.critic.flags.push_back(flag);
    }
  }
  u.critic.rca = RcaClass::kAnomaly;
  u.diagnosis = "un-kept: anomaly: kept at " + FormatDouble(*inc->metric) + ", re-measured at " +
                FormatDouble(now) + " (×" + FormatDouble(now / *inc->metric, 4) +
                (node != nullptr ? ") as the base of #" + std::to_string(node->id) : ")") +
                ", more than ×" + FormatDouble(kUnkeepFactor) +
                " apart: one reading is broken; the campaign continues from " + b;

  std::vector<Node> changed{u};
  std::vector<Requeue> requeues;
  const std::string why = "measured against " + i + ", un-kept as an anomaly";
  for (NodeId child : tree_.Children(inc->id)) {
    const Node* q = tree_.Find(child);
    if (node != nullptr && q->id == node->id) continue;
    if (q->outcome == Outcome::kPending) {
      Node p = *q;
      p.outcome = Outcome::kPruned;
      p.step = Step::kDone;
      p.diagnosis = "superseded: the incumbent moved back to " + b;
      changed.push_back(p);
    } else if (MeasuredAgainstParent(*q)) {
      requeues.push_back(Requeue{q->id, why, std::nullopt});
    }
  }
  std::vector<Event> events{MakeEvent(u.id, "anomaly", u.diagnosis),
                            MakeEvent(u.id, "unkept", u.diagnosis)};
  if (node != nullptr) {
    node->outcome = Outcome::kReverted;
    node->step = Step::kDone;
    node->finished_s = CampaignTime();
    node->critic.rca = RcaClass::kAnomalousIncumbent;
    node->diagnosis = "not judged: its base " + i + " re-measured at " + FormatDouble(now) +
                      " against the " + FormatDouble(*inc->metric) + " it was kept at; " + i +
                      " is un-kept and this idea re-queued under " + b;
    requeues.push_back(Requeue{node->id, why, std::nullopt});
    events.push_back(MakeEvent(node->id, "reverted", node->diagnosis));
  }
  for (Node& q : RequeueUnder(*back, requeues)) {
    events.push_back(MakeEvent(q.id, "requeued", q.diagnosis));
    changed.push_back(std::move(q));
  }
  const std::string back_to = back->commit;
  if (node != nullptr) {
    ARBOR_TRY(SaveMany(*node, changed, std::move(events)));
    stats_.Observe(*node);
  } else {
    std::vector<Node> others(changed.begin() + 1, changed.end());
    ARBOR_TRY(SaveMany(u, others, std::move(events)));
  }
  // Recorded first, moved second: if the process dies in between, Reconcile() promotes the
  // incumbent (now `back`) on start.
  return MoveBranchBack(back_to, node);
}

Status Orchestrator::MoveBranchBack(const std::string& commit, const Node* judged) {
  if (cursor_.base() != kNoNode) {
    ARBOR_TRY(ports_.workspace->Release(cursor_.base()));
    cursor_.BaseReleased();
  }
  if (judged != nullptr) {
    ARBOR_TRY(ports_.workspace->Release(judged->id));
  } else if (cursor_.current() != kNoNode) {
    ARBOR_TRY(ports_.workspace->Release(cursor_.current()));
  }
  cursor_.ForgetCurrent();
  return ports_.workspace->Promote(commit);
}

}  // namespace arbor
