#include "core/search/moves.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "core/search/constraints.h"  // TargetShare
#include "core/search/moves_detail.h"
#include "util/strings.h"

namespace arbor {

namespace moves_detail {

std::string Percent(double f) { return FormatDouble(f * 100, 3) + "%"; }

bool WaitsForMoreKeeps(int tries, size_t keeps_since) {
  return tries > 0 && keeps_since < (size_t{1} << std::min(tries - 1, 30));
}

std::map<std::string, const Node*> LatestSingleTries(const Tree& tree, NodeId incumbent) {
  std::map<std::string, const Node*> latest;
  for (const Node* p : tree.Path(incumbent)) {
    for (NodeId child : tree.Children(p->id)) {
      const Node* x = tree.Find(child);
      if (!IsEvaluated(*x) || CompanionKey(*x) || DroppedKey(*x)) continue;
      const Node*& l = latest[x->CandidateKey()];
      if (l == nullptr || x->seq > l->seq) l = x;
    }
  }
  return latest;
}

std::map<std::string, const Node*> LastKeptValues(const std::vector<const Node*>& path) {
  std::map<std::string, const Node*> last;
  for (const Node* n : path) {
    if (n->id != kRootId && n->outcome == Outcome::kKept && !n->value.empty() && !DroppedKey(*n)) {
      last[n->action_id] = n;
    }
  }
  return last;
}

}  // namespace moves_detail

using moves_detail::Eligibility;
using moves_detail::OwnTries;
using moves_detail::Percent;
using moves_detail::RevertedForNoGain;
using moves_detail::WaitsForMoreKeeps;

namespace {

constexpr std::pair<Move, std::string_view> kMoveNames[] = {{Move::kIntrospect, "introspect"},
                                                            {Move::kCarry, "carry"},
                                                            {Move::kPrerequisite, "prerequisite"},
                                                            {Move::kRevisit, "revisit"},
                                                            {Move::kRetune, "retune"},
                                                            {Move::kRemeasure, "remeasure"},
                                                            {Move::kRetry, "retry"},
                                                            {Move::kPair, "pair"},
                                                            {Move::kDrop, "drop"},
                                                            {Move::kFollowUp, "follow_up"},
                                                            {Move::kFix, "fix"},
                                                            {Move::kStack, "stack"},
                                                            {Move::kRefresh, "refresh"}};

constexpr std::string_view kMovePrefix = "move:";

// Whether `n` retries the node it was re-queued from. A pair (or a follow-up in a branch)
// retries its own side as part of a new hypothesis, not the revert itself: it does not count,
// unless it re-measures one.
bool Retries(const Tree& tree, const Node& n) {
  return n.critic.requeued_from != kNoNode &&
         ((!CompanionKey(n) && !tree.IsBranch(n)) || MoveOf(n) == Move::kRemeasure);
}

// Nodes some other node already retries (re-queued, revisited or re-tuned).
std::set<NodeId> RequeuedSources(const Tree& tree) {
  std::set<NodeId> out;
  for (const Node* n : tree.All()) {
    if (Retries(tree, *n)) out.insert(n->critic.requeued_from);
  }
  return out;
}

// Nodes a node judged against `at` retries (re-queued from them).
std::set<NodeId> RetriedAt(const Tree& tree, NodeId at) {
  std::set<NodeId> out;
  for (const Node* c : tree.Below(at)) {
    if (Retries(tree, *c)) out.insert(c->critic.requeued_from);
  }
  return out;
}

// Whether `x` is a follow-up (Move::kFollowUp), or a node measuring one again.
bool IsFollowUp(const Tree& tree, const Node& x) {
  const Node* n = &x;
  while (n != nullptr && MoveOf(*n) == Move::kRemeasure) n = tree.Find(n->critic.requeued_from);
  return n != nullptr && MoveOf(*n) == Move::kFollowUp;
}

// Where a node measured again goes: a branch node stays in its branch (under its parent).
NodeId InBranch(const Tree& tree, const Node& x) { return tree.IsBranch(x) ? x.parent : kNoNode; }

}  // namespace

std::string RetriedKey(const Tree& tree, const Requeue& q) {
  if (!q.key.empty()) return q.key;
  const Node* from = tree.Find(q.from);
  if (from == nullptr) return "";
  return CandidateKey(from->action_id, q.value.value_or(from->value));
}

std::string_view MoveName(Move m) {
  for (const auto& [move, name] : kMoveNames) {
    if (move == m) return name;
  }
  return "revisit";
}

std::optional<Move> ParseMove(std::string_view s) {
  for (const auto& [move, name] : kMoveNames) {
    if (name == s) return move;
  }
  return std::nullopt;
}

std::string MoveFlag(Move m) { return std::string(kMovePrefix) + std::string(MoveName(m)); }

std::optional<Move> MoveOf(const Node& node) {
  for (const std::string& f : node.critic.flags) {
    if (StartsWith(f, kMovePrefix))
      return ParseMove(std::string_view(f).substr(kMovePrefix.size()));
  }
  return std::nullopt;
}

std::vector<Requeue> Introspect(const Tree& tree, const Catalog& catalog, NodeId kept,
                                const Profile& now, const ProfileLookup& profile_at) {
  const std::set<NodeId> already = RequeuedSources(tree);
  Eligibility eligible(tree, catalog, kept);
  std::vector<Requeue> out;
  for (const Node* ancestor : tree.Path(kept)) {
    if (ancestor->id == kept) break;
    for (NodeId child_id : tree.Children(ancestor->id)) {
      const Node* x = tree.Find(child_id);
      if (x->outcome != Outcome::kReverted || x->critic.rca != RcaClass::kNoGain) continue;
      if (already.count(x->id) || DroppedKey(*x)) continue;
      const ActionSpec* action = catalog.FindAction(x->action_id);
      if (action == nullptr || action->targets.empty()) continue;
      std::optional<Profile> then = profile_at(x->parent);
      if (!then) continue;
      double before = TargetShare(*then, action->targets);
      double after = TargetShare(now, action->targets);
      if (after < std::max(1.5 * before, before + 0.05)) continue;
      if (!eligible.Take(x->action_id, x->CandidateKey())) continue;
      out.push_back({x->id,
                     "its targets' share grew from " + Percent(before) + " to " + Percent(after) +
                         " since #" + std::to_string(x->id) + " was reverted",
                     std::nullopt, Move::kIntrospect});
    }
  }
  return out;
}

std::string ConflictOnPath(const Tree& tree, const Catalog& catalog, const Node& node, NodeId at) {
  const std::optional<std::string> dropped = DroppedKey(node);
  std::set<std::string> applied = tree.AppliedActions(at);
  if (dropped) applied.erase(SplitCandidateKey(*dropped).first);
  const std::vector<std::string> own = AppliedKeys(node);
  for (const std::string& key : own) {
    const ActionSpec* action = catalog.FindAction(SplitCandidateKey(key).first);
    if (action == nullptr) continue;
    for (const std::string& other : applied) {
      if (moves_detail::ConflictsWithAny(catalog, *action, {other}))
        return action->id + " conflicts with " + other;
    }
    // What it requires: on the path or applied by the node itself (a pair's other side).
    for (const std::string& r : action->requires_) {
      if (!applied.count(r) && std::find(own.begin(), own.end(), r) == own.end())
        return action->id + " requires " + r + ", which is not on it";
    }
  }
  return "";
}

std::vector<Requeue> CarryOver(const Tree& tree, const Catalog& catalog, NodeId kept) {
  const Node* k = tree.Find(kept);
  if (k == nullptr) return {};
  Eligibility eligible(tree, catalog, kept);
  std::vector<Requeue> out;
  const NodeId base = tree.BaseOf(kept);  // the old incumbent, also for a kept branch node
  std::set<std::string> drops_waiting;    // changes a waiting drop was to take out
  for (const Node* c : tree.Below(base)) {
    if (c->outcome != Outcome::kPending || c->id == kept) continue;
    if (std::optional<std::string> d = DroppedKey(*c); d && !CompanionKey(*c)) {
      drops_waiting.insert(*d);
    }
    // A pair, a drop, a branch or a refresh: Pairs, Drops and Refreshes offer it again at the
    // new incumbent.
    if (CompanionKey(*c) || DroppedKey(*c) || tree.IsBranch(*c) || IsRefresh(*c)) continue;
    if (!eligible.TakeAny(c->action_id, c->CandidateKey())) continue;
    out.push_back({c->id,
                   "carried over: it was waiting under #" + std::to_string(base) + " when #" +
                       std::to_string(kept) + " was kept",
                   std::nullopt, Move::kCarry});
  }
  // A drop that was waiting (a passenger of a kept pair or group, to be taken back out) moves
  // along as a drop at the new incumbent, when its change can still be taken out there: the
  // last resorts would offer it again only after every other move.
  if (!drops_waiting.empty()) {
    for (Requeue& q : Drops(tree, catalog, kept)) {
      if (!drops_waiting.count(q.key)) continue;
      q.reason = "carried over: the drop of " + q.key + " was waiting under #" +
                 std::to_string(base) + " when #" + std::to_string(kept) + " was kept";
      out.push_back(std::move(q));
    }
  }
  return out;
}

std::vector<Requeue> PrerequisiteRetries(const Tree& tree, const Catalog& catalog, NodeId kept) {
  const Node* k = tree.Find(kept);
  if (k == nullptr) return {};
  Eligibility eligible(tree, catalog, kept);
  // Per candidate: its crashes for a missing prerequisite along the path, and the path index of
  // the state under which the latest one ran.
  struct Tries {
    int crashes = 0;
    size_t last = 0;
    const Node* node = nullptr;
  };
  std::map<std::string, Tries> tries;
  std::vector<std::string> order;
  const std::vector<const Node*> path = tree.Path(kept);  // root .. kept
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    for (NodeId child_id : tree.Children(path[i]->id)) {
      const Node* x = tree.Find(child_id);
      if (x->outcome != Outcome::kCrashed || x->critic.rca != RcaClass::kPrerequisite) continue;
      if (DroppedKey(*x)) continue;
      Tries& t = tries[x->CandidateKey()];
      if (t.crashes++ == 0) order.push_back(x->CandidateKey());
      t.last = i;
      t.node = x;
    }
  }
  std::vector<Requeue> out;
  for (const std::string& key : order) {
    const Tries& t = tries[key];
    // Arbor cannot tell which keep brings the prerequisite. After n failed tries the next waits
    // for 2^(n-1) keeps since the last: a prerequisite that never comes costs log2(keeps)
    // evaluations, not one per keep (which spent 8 of a budget of 30 on one SIGILL).
    const size_t keeps_since = path.size() - 1 - t.last;
    if (WaitsForMoreKeeps(t.crashes, keeps_since)) continue;
    if (!eligible.TakeAny(t.node->action_id, key)) continue;
    out.push_back({t.node->id,
                   "#" + std::to_string(t.node->id) + " lacked a prerequisite (" +
                       std::string(RcaClassName(t.node->critic.rca)) + "); " + k->CandidateKey() +
                       " is now on the path" +
                       (t.crashes > 1 ? " (try " + std::to_string(t.crashes + 1) + ", " +
                                            std::to_string(keeps_since) + " keeps after the last)"
                                      : ""),
                   std::nullopt, Move::kPrerequisite});
  }
  return out;
}

namespace {

// The values next to `at`'s in its action's list (the next one first), as re-tunes of `at` on
// top of the keep: those that do not back off and are eligible there. `why` words each.
void OfferNeighbours(const Node& at, const ActionSpec& action, const OwnTries& tries,
                     Eligibility* eligible,
                     const std::function<std::string(const std::string&)>& why,
                     std::vector<Requeue>* out) {
  const auto& vs = action.values;
  const auto v = std::find(vs.begin(), vs.end(), at.value);
  if (v == vs.end()) return;
  auto offer = [&](const std::string& value) {
    const std::string key = CandidateKey(at.action_id, value);
    if (tries.BacksOff(key) || !eligible->TakeRetune(key)) return;
    out->push_back({at.id, why(value), value, Move::kRetune});
  };
  if (v + 1 != vs.end()) offer(*(v + 1));
  if (v != vs.begin()) offer(*(v - 1));
}

}  // namespace

std::vector<Requeue> Neighbours(const Tree& tree, const Catalog& catalog, NodeId kept) {
  const Node* k = tree.Find(kept);
  if (k == nullptr || k->value.empty() || CompanionKey(*k) || DroppedKey(*k)) return {};
  const ActionSpec* action = catalog.FindAction(k->action_id);
  if (action == nullptr) return {};
  Eligibility eligible(tree, catalog, kept);
  const OwnTries tries(tree, tree.Path(kept));
  std::vector<Requeue> out;
  OfferNeighbours(
      *k, *action, tries, &eligible,
      [&](const std::string& v) {
        return k->action_id + "=" + k->value + " was kept in #" + std::to_string(kept) +
               "; its neighbour " + v + " is measured on top (a line search)";
      },
      &out);
  return out;
}

std::vector<Requeue> RetunesAtLargeKeep(const Tree& tree, const Catalog& catalog, NodeId kept) {
  const Node* k = tree.Find(kept);
  if (k == nullptr || !k->gain || *k->gain < kLargeKeep) return {};
  const std::vector<const Node*> path = tree.Path(kept);
  Eligibility eligible(tree, catalog, kept);
  const OwnTries tries(tree, path);
  std::vector<Requeue> out;
  for (const auto& entry : moves_detail::LastKeptValues(path)) {
    const Node* at = entry.second;
    // Its own value: Neighbours; a parameter a later drop or swap took out: none.
    if (at->id == kept || !eligible.Applied(entry.first)) continue;
    const ActionSpec* action = catalog.FindAction(entry.first);
    if (action == nullptr) continue;
    OfferNeighbours(
        *at, *action, tries, &eligible,
        [&](const std::string& v) {
          return "#" + std::to_string(kept) + " gained " + Percent(*k->gain) + "; " +
                 at->action_id + "=" + at->value + " was kept before it in #" +
                 std::to_string(at->id) + ", so its neighbour " + v + " is measured again on top";
        },
        &out);
  }
  return out;
}

std::vector<Requeue> LineStep(const Tree& tree, const Catalog& catalog, NodeId incumbent,
                              const Node& reverted) {
  if (!RevertedForNoGain(reverted) || MoveOf(reverted) != Move::kRetune || CompanionKey(reverted) ||
      DroppedKey(reverted) || tree.IsBranch(reverted)) {
    return {};
  }
  // Measured clearly slower (its 95% interval below 1): the line ends there.
  if (reverted.critic.ci_high && *reverted.critic.ci_high < 1) return {};
  const std::vector<const Node*> path = tree.Path(incumbent);
  const auto kept_values = moves_detail::LastKeptValues(path);
  auto kept_it = kept_values.find(reverted.action_id);
  const ActionSpec* action = catalog.FindAction(reverted.action_id);
  if (kept_it == kept_values.end() || action == nullptr) return {};
  const Node* kept = kept_it->second;
  const auto& vs = action->values;
  const std::ptrdiff_t n = std::ssize(vs);
  const std::ptrdiff_t k = std::find(vs.begin(), vs.end(), kept->value) - vs.begin();
  const std::ptrdiff_t r = std::find(vs.begin(), vs.end(), reverted.value) - vs.begin();
  if (k == n || r == n || k == r) return {};
  const std::ptrdiff_t next = r + (r > k ? 1 : -1);
  if (next < 0 || next >= n) return {};
  const std::string key = CandidateKey(reverted.action_id, vs[next]);
  Eligibility eligible(tree, catalog, incumbent);
  if (OwnTries(tree, path).BacksOff(key) || !eligible.TakeRetune(key)) return {};
  return {{kept->id,
           reverted.action_id + "=" + kept->value + " is kept (#" + std::to_string(kept->id) +
               "); #" + std::to_string(reverted.id) + " measured " + reverted.value + " at " +
               Percent(reverted.gain.value_or(0)) + ", no clear loss: the line search goes on to " +
               vs[next],
           vs[next], Move::kRetune}};
}

std::vector<Requeue> Revisit(const Tree& tree, const Catalog& catalog, NodeId incumbent,
                             bool back_off) {
  Eligibility eligible(tree, catalog, incumbent);
  std::vector<Requeue> out;
  std::vector<const Node*> path = tree.Path(incumbent);
  // A candidate tried n times from states on the path is tried again once 2^(n-1) keeps
  // followed its latest try (after every keep at first, then ever more rarely), so that duds
  // are not re-run at every keep while pairs and the rest wait.
  const OwnTries tries(tree, path);
  auto backed_off = [&](const std::string& key) { return back_off && tries.BacksOff(key); };
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    for (NodeId child_id : tree.Children(path[i]->id)) {
      const Node* x = tree.Find(child_id);
      // No gain, or a missing prerequisite; other failures' constraints decide where they may
      // run again, and a retry they forbid would only be pruned.
      // A revert that was not confirmed is a no gain that first measured as one.
      const bool no_gain = RevertedForNoGain(*x);
      const bool prerequisite =
          x->outcome == Outcome::kCrashed && x->critic.rca == RcaClass::kPrerequisite;
      if ((!no_gain && !prerequisite) || DroppedKey(*x)) continue;  // Drops re-offers a drop
      if (backed_off(x->CandidateKey())) continue;
      if (!eligible.Take(x->action_id, x->CandidateKey())) continue;
      // The keeps made since it was tried: what changed under it.
      std::vector<std::string> since;
      for (size_t j = i + 1; j < path.size(); ++j) since.push_back(path[j]->CandidateKey());
      out.push_back({x->id,
                     "every candidate was tried at #" + std::to_string(incumbent) +
                         " and budget is left; #" + std::to_string(x->id) + " was " +
                         (no_gain ? "reverted (" + std::string(RcaClassName(x->critic.rca)) + ")"
                                  : std::string("blocked (prerequisite)")) +
                         " before " + Join(since, ", ") + " changed the path",
                     std::nullopt, Move::kRevisit});
    }
  }
  // Re-tune: the other values of parameters kept on the path, from the last keep of each.
  for (const auto& [id, kept] : moves_detail::LastKeptValues(path)) {
    const ActionSpec* action = catalog.FindAction(id);
    if (action == nullptr) continue;
    for (const std::string& v : action->values) {
      if (v == kept->value || backed_off(CandidateKey(id, v)) ||
          !eligible.TakeRetune(CandidateKey(id, v))) {
        continue;
      }
      out.push_back({kept->id,
                     "every candidate was tried at #" + std::to_string(incumbent) +
                         " and budget is left; re-tuning " + id + " (kept at " + kept->value +
                         " in #" + std::to_string(kept->id) + ") on the path as it is now",
                     v, Move::kRetune});
    }
  }
  return out;
}

int RemeasureDepth(const Tree& tree, const Node& node) {
  int depth = 0;
  // A node is requeued from an earlier one (a smaller id): the chain ends.
  for (const Node* n = &node; n != nullptr && MoveOf(*n) == Move::kRemeasure;
       n = n->critic.requeued_from < n->id ? tree.Find(n->critic.requeued_from) : nullptr) {
    ++depth;
  }
  return depth;
}

int RemeasureScale(const Tree& tree, const Node& node) {
  return std::min(RemeasureDepth(tree, node), kMaxSequentialRemeasures);
}

namespace {

// The repetitions (× the campaign's) of the look that measures `node` again.
int NextLook(const Tree& tree, const Node& node) {
  return 1 << std::min(RemeasureDepth(tree, node) + 1, kMaxSequentialRemeasures);
}

}  // namespace

std::vector<Requeue> Remeasure(const Tree& tree, NodeId incumbent, const CriticSpec& critic) {
  const std::set<NodeId> retried = RetriedAt(tree, incumbent);
  // The inconclusive reverts at the incumbent (its branches' too) not yet measured again,
  // closest first. A revert the gate answered (a gain significantly below min_effect) is not
  // among them: more runs would not change it. Only a verdict that ran out of evidence is.
  std::vector<const Node*> open;
  for (const Node* x : tree.Below(incumbent)) {
    if (x->outcome != Outcome::kReverted || x->critic.rca != RcaClass::kNoGain) continue;
    if (RemeasureDepth(tree, *x) >= kMaxRemeasures || retried.count(x->id)) continue;
    if (HasFlag(*x, "inconclusive")) open.push_back(x);
  }
  std::stable_sort(open.begin(), open.end(), [](const Node* a, const Node* b) {
    return a->critic.p_value.value_or(1) < b->critic.p_value.value_or(1);
  });
  auto again = [&](const Node& x) {
    return "; measured again with " + std::to_string(NextLook(tree, x)) + "× the repetitions";
  };
  std::vector<Requeue> out;
  for (const Node* x : open) {
    if (!x->gain || *x->gain < critic.min_effect / 2) continue;
    if (!x->critic.p_value || *x->critic.p_value > kCloseCallP) continue;
    out.push_back({x->id,
                   "a close call: " + Percent(*x->gain) +
                       " at p=" + FormatDouble(*x->critic.p_value, 3) + again(*x),
                   std::nullopt, Move::kRemeasure});
    out.back().under = InBranch(tree, *x);
  }
  if (!out.empty()) return out;
  // No close call left: a second look at every other inconclusive revert, closest first. A
  // budget the user gave is spent, and more repetitions are the one thing that can still turn
  // such a revert around once every candidate and close call was measured at this incumbent.
  // Not a follow-up's (a speculative hypothesis): only its close calls are measured again.
  for (const Node* x : open) {
    if (IsFollowUp(tree, *x)) continue;
    out.push_back({x->id,
                   "a second look (nothing closer is left at #" + std::to_string(incumbent) +
                       "): " + (x->gain ? Percent(*x->gain) : std::string("no gain")) +
                       (x->critic.p_value ? " at p=" + FormatDouble(*x->critic.p_value, 3) : "") +
                       again(*x),
                   std::nullopt, Move::kRemeasure});
    out.back().under = InBranch(tree, *x);
  }
  return out;
}

bool MayStillPay(const Node& revert) {
  if (revert.critic.ci_high) return *revert.critic.ci_high > 1;
  return revert.gain && *revert.gain > -kFarBelow;
}

std::map<std::string, double> MeasuredSlowdowns(const Tree& tree, NodeId incumbent, Goal goal) {
  std::map<std::string, double> out;
  for (const auto& [key, x] : moves_detail::LatestSingleTries(tree, incumbent)) {
    // A branch node's gain is its whole branch's, not its own idea's.
    if (IsGroup(*x) || tree.IsBranch(*x) || !RevertedForNoGain(*x) || !x->gain || MayStillPay(*x)) {
      continue;
    }
    // The gain is relative to the parent's median, of time or of throughput (gate.h); the
    // interval and the median are different statistics, so a median above it counts as 1.
    out[key] = std::max(0.0, SpeedupOfGain(std::min(*x->gain, 0.0), goal));
  }
  return out;
}

std::vector<Requeue> RemeasureAnswered(const Tree& tree, NodeId incumbent, LastLooks which) {
  const std::set<NodeId> retried = RetriedAt(tree, incumbent);
  std::vector<const Node*> open;
  for (const Node* x : tree.Below(incumbent)) {
    if (!RevertedForNoGain(*x)) continue;
    // A follow-up is a speculative hypothesis of three or more changes: its close calls are
    // measured again (Remeasure), its answers are not.
    if (IsFollowUp(tree, *x)) continue;
    if (RemeasureDepth(tree, *x) >= kMaxRemeasures || retried.count(x->id)) continue;
    // A drop measured clearly slower is an answer: its change pays its way (until nothing but
    // verifying the keeps is left).
    const bool settled = which == LastLooks::kMayPay ||
                         (which == LastLooks::kAnswered && DroppedKey(*x).has_value());
    if (settled && !MayStillPay(*x)) continue;
    open.push_back(x);
  }
  std::stable_sort(open.begin(), open.end(), [](const Node* a, const Node* b) {
    return a->gain.value_or(-1) > b->gain.value_or(-1);
  });
  std::vector<Requeue> out;
  for (const Node* x : open) {
    out.push_back(
        {x->id,
         "a last look (nothing else is left at #" + std::to_string(incumbent) +
             " and budget is): " + (x->gain ? Percent(*x->gain) : std::string("no gain")) +
             "; measured again with " + std::to_string(NextLook(tree, *x)) + "× the repetitions",
         std::nullopt, Move::kRemeasure});
    out.back().under = InBranch(tree, *x);
  }
  return out;
}

double CallDistance(const Node& revert, double min_effect) {
  const std::optional<double>& lo = revert.critic.ci_low;
  const std::optional<double>& hi = revert.critic.ci_high;
  if (!lo || !hi || *lo <= 0 || *hi <= *lo || !revert.gain || *revert.gain <= -1) {
    return std::numeric_limits<double>::infinity();
  }
  const double se = (std::log(*hi) - std::log(*lo)) / (2 * 1.96);
  return std::abs(std::log1p(*revert.gain) - std::log1p(min_effect)) / se;
}

std::vector<Requeue> RemeasureClosest(const Tree& tree, NodeId incumbent, double min_effect,
                                      int max_depth, int limit) {
  const std::set<NodeId> retried = RetriedAt(tree, incumbent);
  struct Call {
    double distance;
    const Node* x;
    int beyond;  // looks beyond 64× so far
  };
  std::vector<Call> open;
  bool undecided = false;
  for (const Node* x : tree.Below(incumbent)) {
    if (!RevertedForNoGain(*x)) continue;
    if (IsFollowUp(tree, *x)) continue;
    const int depth = RemeasureDepth(tree, *x);
    if (depth >= max_depth || retried.count(x->id)) continue;
    // A call without an interval of some width (a noise-free benchmark measures a point) is
    // settled for good: measuring it again gives the same point.
    const double distance = CallDistance(*x, min_effect);
    if (!std::isfinite(distance)) continue;
    undecided |= distance <= kUndecidedDistance;
    open.push_back({distance, x, std::max(0, depth - kMaxSequentialRemeasures)});
  }
  // While a call is undecided (its 95% interval holds the threshold a keep needs), only the
  // undecided are measured again. Then, so that a budget the user gave is spent, the settled
  // ones are verified: each look halves the variance of an answer the rest of the campaign
  // stands on (an outlier or drift can make a settled call wrong).
  if (undecided) {
    std::erase_if(open, [](const Call& c) { return c.distance > kUndecidedDistance; });
  }
  // The closest call first, then the best measured. Beyond 64× (each look there an independent
  // verdict at the same depth) the calls take turns: the one with the fewest such looks first.
  std::stable_sort(open.begin(), open.end(), [](const Call& a, const Call& b) {
    if (a.beyond != b.beyond) return a.beyond < b.beyond;
    if (a.distance != b.distance) return a.distance < b.distance;
    return *a.x->gain > *b.x->gain;
  });
  if (static_cast<int>(open.size()) > limit) open.resize(std::max(0, limit));
  std::vector<Requeue> out;
  for (const auto& [distance, x, beyond] : open) {
    out.push_back({x->id,
                   std::string(undecided ? "the closest call left at #"
                                         : "a settled call verified again at #") +
                       std::to_string(incumbent) + " (every other move is spent" +
                       (undecided ? "" : ", budget is left") + "): " + Percent(*x->gain) + ", " +
                       FormatDouble(distance, 2) + " standard errors from the +" +
                       FormatDouble(min_effect * 100, 3) + "% a keep needs" +
                       "; measured again with " + std::to_string(NextLook(tree, *x)) +
                       "× the repetitions",
                   std::nullopt, Move::kRemeasure});
    out.back().under = InBranch(tree, *x);
  }
  return out;
}

}  // namespace arbor
