// Re-queued ideas (the rules are in moves.h): after a keep, what the keep supersedes or makes
// possible; when every candidate was tried with budget left, what the path changed under, the
// other values of kept parameters and close calls. Either way the idea becomes a pending child
// that competes in h(a) like any candidate, flagged with its move.
#include <algorithm>
#include <cstdlib>
#include <set>
#include <tuple>

#include "core/orchestrator/orchestrator.h"
#include "core/search/moves.h"
#include "core/search/scoring.h"

namespace arbor {

std::vector<Node> Orchestrator::RequeueUnder(const Node& parent,
                                             const std::vector<Requeue>& requeues) {
  std::vector<Node> out;
  NodeId next = tree_.MaxId() + 1;
  for (const Requeue& q : requeues) {
    const Node* from = tree_.Find(q.from);
    Node n;
    n.id = next++;
    const Node* state = q.under != kNoNode ? tree_.Find(q.under) : &parent;
    n.parent = state->id;
    if (!q.key.empty()) {  // a candidate named by its key (a pair's own side)
      std::tie(n.action_id, n.value) = SplitCandidateKey(q.key);
      const ActionSpec* action = catalog_.FindAction(n.action_id);
      n.category = action != nullptr ? action->category : "";
      n.layer = action != nullptr ? action->layer : "";
    } else {
      n.action_id = from->action_id;
      n.value = q.value ? *q.value : from->value;
      n.category = from->category;
      n.layer = from->layer;
    }
    n.outcome = Outcome::kPending;
    n.step = Step::kNone;
    n.overlay = state->overlay;
    n.created_s = CampaignTime();
    n.critic.requeued_from = q.from;
    n.critic.opened = q.reason;
    n.critic.flags.push_back(MoveFlag(q.move));
    if (q.under != kNoNode) n.critic.flags.push_back(std::string(kBranchFlag));
    if (q.with) n.critic.flags.push_back(CompanionFlag(*q.with));
    for (const std::string& b : q.bundle) n.critic.flags.push_back(CompanionFlag(b));
    // A drop takes its change out rather than applying it.
    if (q.move == Move::kDrop)
      n.critic.flags.push_back(DropFlag(CandidateKey(n.action_id, n.value)));
    // A re-measure runs the same node again: a pair stays a pair, a drop (or swap) a drop.
    if (q.move == Move::kRemeasure && from != nullptr) {
      for (const std::string& with : CompanionKeys(*from)) {
        n.critic.flags.push_back(CompanionFlag(with));
      }
      if (std::optional<std::string> dropped = DroppedKey(*from)) {
        n.critic.flags.push_back(DropFlag(*dropped));
      }
      if (IsGroup(*from)) n.critic.flags.push_back(std::string(kGroupFlag));  // a stack stays one
      if (IsRefresh(*from)) n.critic.flags.push_back(MoveFlag(Move::kRefresh));  // and a refresh
    }
    // A swap is its companion's kind of change: its crashes count against that category.
    if (q.move == Move::kDrop && q.with) {
      if (const ActionSpec* in = catalog_.FindAction(SplitCandidateKey(*q.with).first)) {
        n.category = in->category;
        n.layer = in->layer;
      }
    }
    n.diagnosis = "re-queued: " + q.reason;
    out.push_back(n);
  }
  return out;
}

std::vector<Node> Orchestrator::IntrospectAfterKeep(const Node& kept, const Profile& profile) {
  return RequeueUnder(kept, Introspect(tree_, catalog_, kept.id, profile,
                                       [this](NodeId id) { return ProfileAt(id); }));
}

std::vector<Node> Orchestrator::SupersedePending(NodeId parent, NodeId except,
                                                 const std::string& diagnosis) {
  std::vector<Node> out;
  for (const Node* c : tree_.Below(parent)) {  // its children and branches
    if (c->outcome != Outcome::kPending || c->id == except) continue;
    Node p = *c;
    p.outcome = Outcome::kPruned;
    p.step = Step::kDone;
    p.diagnosis = diagnosis;
    out.push_back(p);
  }
  return out;
}

std::vector<Node> Orchestrator::MovesAtKeep(const Node& kept) {
  std::vector<Requeue> moves = CarryOver(tree_, catalog_, kept.id);
  std::vector<Requeue> retries = PrerequisiteRetries(tree_, catalog_, kept.id);
  moves.insert(moves.end(), retries.begin(), retries.end());
  // What a kept command derived from the old state (a PGO profile) is stale on the new one.
  for (Requeue& q : Refreshes(tree_, catalog_, kept.id)) moves.push_back(std::move(q));
  // A refresh re-ran a change: no value of it moved, so no line search starts there.
  if (spec_.search.revisit && !IsRefresh(kept)) {
    // A neighbour already carried over (a re-tune that waited) is not queued twice.
    std::set<std::string> queued;
    for (const Requeue& q : moves) {
      if (!q.with) queued.insert(RetriedKey(tree_, q));
    }
    for (Requeue& q : Neighbours(tree_, catalog_, kept.id)) {
      if (!queued.count(CandidateKey(kept.action_id, *q.value))) moves.push_back(std::move(q));
    }
    for (Requeue& q : RetunesAtLargeKeep(tree_, catalog_, kept.id)) {
      if (!queued.count(RetriedKey(tree_, q))) moves.push_back(std::move(q));
    }
    // A kept pair: is each side needed? One may be a passenger of the other's gain. (Not a
    // kept swap: the drop of its change was measured, and lost, at the same incumbent.) The
    // same for each change of a kept branch.
    if (CompanionKey(kept) && !DroppedKey(kept) && !IsGroup(kept)) {
      for (Requeue& q : Drops(tree_, catalog_, kept.id, kept.id)) moves.push_back(std::move(q));
    }
    if (tree_.IsBranch(kept)) {
      for (const Node* b : tree_.BranchPath(kept.id)) {
        if (DroppedKey(*b)) continue;
        for (Requeue& q : Drops(tree_, catalog_, kept.id, b->id)) moves.push_back(std::move(q));
      }
    }
    // The kept change's declared alternatives whose subtree is hopeful, swapped in now: the
    // first winner of two is not the better one for that reason (moves.h SubtreeSwaps).
    if (spec_.search.branches && spec_.search.pairs) {
      for (Requeue& q : SubtreeSwaps(tree_, catalog_, kept.id, PromiseAt(kept.id)))
        moves.push_back(std::move(q));
    }
  }
  return RequeueUnder(kept, moves);
}

Promise Orchestrator::PromiseAt(NodeId node) {
  return [profile = ProfileAt(node).value_or(Profile{})](const ActionSpec& a) {
    const double g = ExpectedGain(profile, a.targets, a.speedup);
    return g < 1 ? 1 / (1 - g) : a.speedup;
  };
}

Result<bool> Orchestrator::RevisitWhenExhausted() {
  if (!spec_.search.revisit) return false;
  const Node* inc = tree_.Find(tree_.Incumbent());
  if (inc == nullptr) return false;
  // Pairs first, a few at a time (the next batch sees their results), the most promising
  // first: each costs an evaluation on a hypothesis no single measurement supports, but in the
  // search benchmark a pair found more per evaluation than a revisit or a re-measure did, and
  // putting them before the revisits raised the median gain at budget 100
  // (docs/history/benchmarks-log.md).
  // A pair with a side that is about to be revisited alone gives way to that revisit.
  // First, an alternative a kept change locked out (a declared conflict) that was never
  // measured: no evidence at all stands against it, while every move below re-tries an idea
  // that was measured (docs/search.md, step 3).
  std::vector<Requeue> moves = Swaps(tree_, catalog_, inc->id, /*unmeasured_only=*/true,
                                     /*subtrees=*/spec_.search.branches && spec_.search.pairs);
  const bool unmeasured = !moves.empty();
  // Then a change that failed its check with a group of candidates: one may be its fix (a
  // bisection: a few nodes per change, each of which may keep it).
  bool fixing = false;
  if (!unmeasured && spec_.search.pairs) {
    moves = FixSearch(tree_, catalog_, inc->id);
    fixing = !moves.empty();
  }
  // Then the ideas that measured a gain too small to keep, together: their sum may be one.
  bool stacking = false;
  if (!unmeasured && !fixing && spec_.search.pairs) {
    moves = Stacks(tree_, catalog_, inc->id);
    stacking = !moves.empty();
  }
  const bool held = unmeasured || fixing || stacking;
  if (!held) moves = Revisit(tree_, catalog_, inc->id);
  const Promise promise = PromiseAt(inc->id);
  if (spec_.search.pairs && !held) {
    std::vector<Requeue> led =
        PairsOrTheirSidesAlone(tree_,
                               Pairs(tree_, catalog_, inc->id, kPairBatch, promise,
                                     PairKinds::kHopeful, spec_.search.branches),
                               moves);
    if (!led.empty()) moves = std::move(led);
  }
  if (moves.empty() && critic_) moves = Remeasure(tree_, inc->id, spec_.critic);
  if (moves.empty() && critic_) moves = RemeasureAnswered(tree_, inc->id);
  // The last resort, so that a budget the user gave is spent: what the rules above held back.
  if (moves.empty()) moves = Revisit(tree_, catalog_, inc->id, /*back_off=*/false);
  if (moves.empty() && spec_.search.pairs) {
    moves = Pairs(tree_, catalog_, inc->id, kPairBatch, promise, PairKinds::kEvery,
                  spec_.search.branches);
  }
  if (moves.empty() && critic_) moves = RemeasureAnswered(tree_, inc->id, LastLooks::kAnswered);
  // Then each change kept on the path, taken back out: the keeps since may have made it cost;
  // then swapped for a candidate it locked out (a declared alternative, a crash together).
  if (moves.empty()) moves = Drops(tree_, catalog_, inc->id);
  if (moves.empty()) moves = Swaps(tree_, catalog_, inc->id);
  if (moves.empty() && spec_.search.pairs) {
    moves = Pairs(tree_, catalog_, inc->id, kPairBatch, promise, PairKinds::kRetunes,
                  spec_.search.branches);
  }
  // At last, each keep verified again: its drop, measured clearly slower, at 2×, 4×, 8×.
  if (moves.empty() && critic_) moves = RemeasureAnswered(tree_, inc->id, LastLooks::kKeepsToo);
  // Then the follow-ups no promise supports: untested combinations on the frontier's states.
  if (moves.empty() && spec_.search.pairs && spec_.search.branches) {
    moves = Pairs(tree_, catalog_, inc->id, kPairBatch, promise, PairKinds::kFollowUps, true);
  }
  // At the very last, the closest calls at the incumbent measured again, beyond 8×, as long as a
  // look at twice the repetitions fits in the time left (docs/search.md, step 10).
  if (moves.empty() && critic_) {
    int depth = kMaxSequentialRemeasures;
    const Node* root = tree_.Find(kRootId);
    const double bench_s =
        root != nullptr ? root->cost_s / (2.0 * std::max(1, spec_.metric.repetitions)) : 0;
    const double left = spec_.search.max_time_s - CampaignTime();
    while (depth > kMaxRemeasures && 2.0 * (Repetitions() << depth) * bench_s > left) --depth;
    // A look at the deepest fits: the decisions are looked at again there as long as the budget
    // of nodes lasts (each look an independent verdict at a bounded cost).
    if (depth == kMaxSequentialRemeasures) depth = kUnboundedDepth;
    moves = RemeasureClosest(tree_, inc->id, spec_.critic.min_effect, depth);
  }
  std::vector<Node> nodes = RequeueUnder(*inc, moves);
  // Never the same node twice: a move the rules offer again while its node still waits (one no
  // rule counts as tried) would otherwise queue copies without end instead of evaluating.
  std::erase_if(nodes, [&](const Node& q) {
    for (NodeId sibling : tree_.Children(q.parent)) {
      const Node* s = tree_.Find(sibling);
      if (s->outcome == Outcome::kPending && s->CandidateKey() == q.CandidateKey() &&
          s->critic.flags == q.critic.flags) {
        return true;
      }
    }
    return false;
  });
  if (nodes.empty()) return false;
  std::vector<Event> events;
  for (const Node& q : nodes) events.push_back(MakeEvent(q.id, "requeued", q.diagnosis));
  Node unchanged = *inc;
  ARBOR_TRY(SaveMany(unchanged, nodes, std::move(events)));
  return true;
}

}  // namespace arbor
