// Choosing the next node, around the pure choice (Selector, core/search/selector.h): the
// profile a candidate is scored against (ProfileAt, from the store), re-profiling when the
// search plateaus, recording the candidates the published constraints rule out
// (PruneViolations), and opening the chosen one as a pending node with its score on record
// (Open). The loop that calls them is in orchestrator.cc.
#include <algorithm>
#include <set>

#include "core/orchestrator/orchestrator.h"
#include "util/duration.h"
#include "util/strings.h"

namespace arbor {
namespace {

std::string Percent(double fraction) { return FormatDouble(fraction * 100, 3) + "%"; }

// The node's identity as the candidate it runs.
void AssignCandidate(const Candidate& c, Node* n) {
  n->action_id = c.action->id;
  n->value = c.value;
  n->category = c.action->category;
  n->layer = c.action->layer;
}

}  // namespace

std::optional<Profile> Orchestrator::ProfileAt(NodeId id) {
  for (NodeId cur = id; cur != kNoNode;) {
    auto it = profiles_.find(cur);
    if (it != profiles_.end()) return it->second;
    const Node* n = tree_.Find(cur);
    if (n == nullptr) break;
    if (n->outcome == Outcome::kKept || n->outcome == Outcome::kBaseline) {
      auto p = ports_.store->LoadProfile(cur);
      if (p.ok() && p->has_value()) {
        profiles_[cur] = **p;
        return **p;
      }
    }
    cur = n->parent;
  }
  return std::nullopt;
}

std::vector<ScoredCandidate> Orchestrator::ScoreCandidates() {
  // The profile is the one input that needs the store: the rest of the choice is pure.
  return Selection().Score(ProfileAt(tree_.Incumbent()));
}

Status Orchestrator::ReprofileOnPlateau() {
  // On a plateau the exploration weight doubles (Selector::Score); the incumbent is also
  // profiled once more, since a profile taken right after a keep can be stale (warm-up,
  // drift) and a fresh one may reveal targets worth trying.
  if (!critic_ || !spec_.search.reprofile || tree_.TrailingNonKept() != spec_.search.plateau) {
    return {};
  }
  Node inc = *tree_.Find(tree_.Incumbent());
  const std::string kFlag = "plateau_reprofiled";
  auto& flags = inc.critic.flags;
  if (std::find(flags.begin(), flags.end(), kFlag) != flags.end()) return {};
  flags.push_back(kFlag);
  if (!cursor_.IsBuilt(inc.id)) {
    if (cursor_.IsBase(inc.id)) {  // the same worktree path: let the base arm rebuild later
      ARBOR_TRY(ports_.workspace->Release(inc.id));
      cursor_.BaseReleased();
    }
    auto wt = ports_.workspace->Prepare(inc.id, inc.commit);
    if (!wt.ok()) return wt.error();
    cursor_.Prepared(inc.id, *wt);
    StepResult r = ports_.target->Build(Context(inc, "build-replateau"));
    if (!r.ok())
      return Save(inc, {MakeEvent(inc.id, "reprofiled",
                                  "plateau: the incumbent did not rebuild (" + DescribeStep(r) +
                                      "); keeping its profile")});
    cursor_.Built(inc.id);
  }
  ProfileResult r = ports_.target->Profile(Context(inc, "profile-plateau"));
  std::optional<Profile> profile;
  std::string message = "plateau after " + std::to_string(spec_.search.plateau) +
                        " nodes without a keep: exploration doubled; ";
  if (r.step.ok() && r.profile) {
    profile = r.profile;
    message += "re-profiled the incumbent";
  } else if (r.step.ok()) {
    message += "no profile command: actions stay scored against the whole program";
  } else {
    message += "re-profiling failed (" + DescribeStep(r.step) + "); keeping the last profile";
  }
  ARBOR_TRY(Save(inc, {MakeEvent(inc.id, "reprofiled", message)}, {}, profile));
  cursor_.ForgetCurrent();
  return ports_.workspace->Release(inc.id);
}

Status Orchestrator::PruneViolations(const std::vector<ScoredCandidate>& scored,
                                     std::vector<ScoredCandidate>* allowed) {
  NodeId inc = tree_.Incumbent();
  std::vector<Constraint> active;
  if (spec_.critic.constraints) active = ActiveConstraints(tree_, publishers_, inc, last_keep_seq_);
  // The knowledge base vetoes replays: this very change failed deterministically at this very
  // operating point on this hardware and workload (another operating point re-opens it).
  std::string here = kb_priors_.has_replays() ? PathHash(tree_.Path(inc)) : "";
  if (active.empty() && here.empty()) {
    *allowed = scored;
    return {};
  }
  std::set<std::string> recorded;  // pruned children of the incumbent already on record
  for (NodeId child : tree_.Children(inc)) {
    const Node* c = tree_.Find(child);
    if (c->outcome == Outcome::kPruned) recorded.insert(c->CandidateKey());
  }
  // A pair's (or a branch's) hypothesis is that together the changes behave otherwise: a ban
  // one of them earned alone does not veto it.
  auto together = [&](const Node& n) {
    std::vector<std::string> keys;
    for (const Node* b : tree_.BranchPath(n.id)) {
      for (std::string& k : AppliedKeys(*b)) keys.push_back(std::move(k));
    }
    return keys;
  };
  Mutation m;
  NodeId next = tree_.MaxId() + 1;
  for (const ScoredCandidate& s : scored) {
    const Node* pending = s.pending != kNoNode ? tree_.Find(s.pending) : nullptr;
    // A drop applies nothing: no constraint on its change, and no replay, concerns it.
    if (pending != nullptr && DroppedKey(*pending)) {
      allowed->push_back(s);
      continue;
    }
    const bool composite =
        pending != nullptr && (CompanionKey(*pending) || tree_.IsBranch(*pending));
    auto violated =
        Violated(composite ? WithoutBansOf(active, together(*pending)) : active, s.candidate);
    const KbReplay* replay = here.empty() ? nullptr : kb_priors_.Replay(s.candidate.key, here);
    if (!violated && replay == nullptr) {
      allowed->push_back(s);
      continue;
    }
    if (recorded.count(s.candidate.key)) continue;
    // The Critic vetoes the dispatch: recorded once per incumbent, with the rule that fired.
    Node n;
    n.id = s.pending != kNoNode ? s.pending : next++;
    n.parent = inc;
    AssignCandidate(s.candidate, &n);
    n.outcome = Outcome::kPruned;
    n.step = Step::kDone;
    n.score = s.terms;
    n.created_s = n.finished_s = CampaignTime();
    n.diagnosis = violated ? "pruned: " + DescribeConstraint(*violated)
                           : "pruned: known from the knowledge base (entry #" +
                                 std::to_string(replay->id) + ", " + replay->what +
                                 " of this same change at this same point, same hardware and "
                                 "workload)";
    m.nodes.push_back(n);
    m.events.push_back(MakeEvent(n.id, "vetoed", n.CandidateKey() + ": " + n.diagnosis));
  }
  if (m.nodes.empty()) return {};
  meta_.elapsed_s = CampaignTime();
  m.meta = meta_;
  ARBOR_TRY(ports_.store->Apply(m));
  saved_meta_ = meta_;
  for (const Node& n : m.nodes) tree_.Upsert(n);
  if (ports_.sink) {
    for (const auto& e : m.events) ports_.sink->OnEvent(e);
  }
  return {};
}

Result<NodeId> Orchestrator::Open(const ScoredCandidate& chosen) {
  // A re-queued node opens where it waits: under the incumbent, or in a branch.
  NodeId parent =
      chosen.pending != kNoNode ? tree_.Find(chosen.pending)->parent : tree_.Incumbent();
  Node n;
  if (chosen.pending != kNoNode) n = *tree_.Find(chosen.pending);
  n.id = chosen.pending != kNoNode ? chosen.pending : tree_.MaxId() + 1;
  n.parent = parent;
  AssignCandidate(chosen.candidate, &n);
  n.outcome = Outcome::kRunning;
  n.step = Step::kApply;
  n.seq = meta_.next_seq++;
  n.score = chosen.terms;
  if (chosen.pending == kNoNode) n.created_s = CampaignTime();
  n.overlay = tree_.Find(parent)->overlay;
  const ScoreTerms& t = chosen.terms;
  std::string why =
      "h=" + FormatDouble(t.h, 3) + " (g=" + Percent(t.g) + ", c=" + FormatDuration(t.c) +
      ", r_acc=" + FormatDouble(t.r_acc, 2) + ", r_crash=" + FormatDouble(t.r_crash, 2) +
      ", m_gap=" + FormatDouble(t.m_gap, 3) + ", bonus=" + FormatDouble(t.bonus, 3) +
      (t.measured < 1 ? ", measured alone before x" + FormatDouble(t.measured, 3) : "") + ")";
  ARBOR_TRY(Save(n, {MakeEvent(n.id, "proposed", n.CandidateKey() + ": " + why),
                     MakeEvent(n.id, "dispatched", "on top of node " + std::to_string(parent))}));
  return n.id;
}

}  // namespace arbor
