#include "core/moves.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "core/constraints.h"  // TargetShare
#include "util/strings.h"

namespace arbor {
namespace {

constexpr std::pair<Move, std::string_view> kMoveNames[] = {{Move::kIntrospect, "introspect"},
                                                            {Move::kCarry, "carry"},
                                                            {Move::kPrerequisite, "prerequisite"},
                                                            {Move::kRevisit, "revisit"},
                                                            {Move::kRetune, "retune"},
                                                            {Move::kRemeasure, "remeasure"},
                                                            {Move::kRetry, "retry"},
                                                            {Move::kPair, "pair"},
                                                            {Move::kDrop, "drop"}};

constexpr std::string_view kMovePrefix = "move:";

std::string Percent(double f) { return FormatDouble(f * 100, 3) + "%"; }

// Whether `n` retries the node it was re-queued from. A pair retries its own side as half of a
// new hypothesis, not the revert itself: it does not count, unless it re-measures a pair.
bool Retries(const Node& n) {
  return n.critic.requeued_from != kNoNode && (!CompanionKey(n) || MoveOf(n) == Move::kRemeasure);
}

// Nodes some other node already retries (re-queued, revisited or re-tuned).
std::set<NodeId> RequeuedSources(const Tree& tree) {
  std::set<NodeId> out;
  for (const Node* n : tree.All()) {
    if (Retries(*n)) out.insert(n->critic.requeued_from);
  }
  return out;
}

// Nodes a child of `at` retries (re-queued from them).
std::set<NodeId> RetriedAt(const Tree& tree, NodeId at) {
  std::set<NodeId> out;
  for (NodeId child : tree.Children(at)) {
    const Node* c = tree.Find(child);
    if (Retries(*c)) out.insert(c->critic.requeued_from);
  }
  return out;
}

// The back-off of every move that retries a candidate which failed before: after n tries it
// waits for 2^(n-1) keeps since the state of its latest try.
bool WaitsForMoreKeeps(int tries, size_t keeps_since) {
  return tries > 0 && keeps_since < (size_t{1} << std::min(tries - 1, 30));
}

// Each candidate's own evaluated tries from states on a path (pairs are not tries of either
// side), and whether one backs off: WaitsForMoreKeeps since the state of its latest try.
class OwnTries {
 public:
  OwnTries(const Tree& tree, const std::vector<const Node*>& path) : last_(path.size() - 1) {
    for (size_t i = 0; i < path.size(); ++i) {
      for (NodeId child_id : tree.Children(path[i]->id)) {
        const Node* x = tree.Find(child_id);
        if (!IsEvaluated(*x) || CompanionKey(*x)) continue;
        Tries& t = tries_[x->CandidateKey()];
        ++t.count;
        t.latest = std::max(t.latest, i);
      }
    }
  }
  bool BacksOff(const std::string& key) const {
    auto it = tries_.find(key);
    return it != tries_.end() && WaitsForMoreKeeps(it->second.count, last_ - it->second.latest);
  }

 private:
  struct Tries {
    int count = 0;
    size_t latest = 0;  // index in the path
  };
  size_t last_;
  std::map<std::string, Tries> tries_;
};

// What may be re-queued at one node: not tried or pending there, not applied on its path, its
// declared requires met and no declared conflict (either side) on the path.
class Eligibility {
 public:
  // With `without` (a candidate key applied on the path): as if that change were taken out.
  Eligibility(const Tree& tree, const Catalog& catalog, NodeId at, const std::string& without = "")
      : catalog_(catalog), applied_(tree.AppliedActions(at)) {
    for (NodeId child : tree.Children(at)) here_.insert(tree.Find(child)->CandidateKey());
    if (!without.empty()) {
      applied_.erase(without);
      applied_.erase(SplitCandidateKey(without).first);
    }
  }
  // True (and remembered, so a key is taken once) when `key` of `action_id` may run at the node.
  bool Take(const std::string& action_id, const std::string& key) {
    if (here_.count(key) || applied_.count(action_id) || !Fits(action_id)) return false;
    here_.insert(key);
    return true;
  }
  // Whether `action_id` may run on the path, applied together with the action `with` ("" for
  // none: a pair's other side): its declared requires met by the path or `with`, no declared
  // conflict (either side) with the path or `with`.
  bool Fits(const std::string& action_id, const std::string& with = "") const {
    const ActionSpec* action = catalog_.FindAction(action_id);
    if (action == nullptr) return false;
    for (const std::string& r : action->requires_) {
      if (!applied_.count(r) && r != with) return false;
    }
    for (const std::string& c : action->conflicts) {
      if (applied_.count(c) || c == with) return false;
    }
    for (const std::string& a : applied_) {  // conflicts are symmetric
      const ActionSpec* kept = catalog_.FindAction(a);
      if (kept == nullptr) continue;
      for (const std::string& c : kept->conflicts) {
        if (c == action_id) return false;
      }
    }
    return true;
  }
  bool Applied(const std::string& action_id) const { return applied_.count(action_id) > 0; }
  // A re-tune: another value of an action applied on the path (replacing its value).
  bool TakeRetune(const std::string& key) {
    return !applied_.count(key) && here_.insert(key).second;
  }
  // Either: a re-tune when the action is applied on the path with another value, else Take.
  bool TakeAny(const std::string& action_id, const std::string& key) {
    return applied_.count(action_id) ? TakeRetune(key) : Take(action_id, key);
  }

 private:
  const Catalog& catalog_;
  std::set<std::string> applied_;
  std::set<std::string> here_;
};

// The latest finished node of each single candidate (not a pair, drop or swap) tried from a
// state on the path of `incumbent`.
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
      if (x->outcome != Outcome::kReverted || x->critic.rca != "no_gain") continue;
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

std::vector<Requeue> CarryOver(const Tree& tree, const Catalog& catalog, NodeId kept) {
  const Node* k = tree.Find(kept);
  if (k == nullptr) return {};
  Eligibility eligible(tree, catalog, kept);
  std::vector<Requeue> out;
  for (NodeId sibling : tree.Children(k->parent)) {
    const Node* c = tree.Find(sibling);
    if (c->outcome != Outcome::kPending || c->id == kept) continue;
    // A pair or a drop: Pairs and Drops offer it again at the new incumbent.
    if (CompanionKey(*c) || DroppedKey(*c)) continue;
    if (!eligible.TakeAny(c->action_id, c->CandidateKey())) continue;
    out.push_back({c->id,
                   "carried over: it was waiting under #" + std::to_string(k->parent) + " when #" +
                       std::to_string(kept) + " was kept",
                   std::nullopt, Move::kCarry});
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
      if (x->outcome != Outcome::kCrashed || x->critic.rca != "prerequisite") continue;
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
                       t.node->critic.rca + "); " + k->CandidateKey() + " is now on the path" +
                       (t.crashes > 1 ? " (try " + std::to_string(t.crashes + 1) + ", " +
                                            std::to_string(keeps_since) + " keeps after the last)"
                                      : ""),
                   std::nullopt, Move::kPrerequisite});
  }
  return out;
}

std::vector<Requeue> Neighbours(const Tree& tree, const Catalog& catalog, NodeId kept) {
  const Node* k = tree.Find(kept);
  if (k == nullptr || k->value.empty() || CompanionKey(*k) || DroppedKey(*k)) return {};
  const ActionSpec* action = catalog.FindAction(k->action_id);
  if (action == nullptr) return {};
  const auto at = std::find(action->values.begin(), action->values.end(), k->value);
  if (at == action->values.end()) return {};
  Eligibility eligible(tree, catalog, kept);
  const OwnTries tries(tree, tree.Path(kept));
  std::vector<Requeue> out;
  auto offer = [&](const std::string& v) {
    const std::string key = CandidateKey(k->action_id, v);
    if (tries.BacksOff(key) || !eligible.TakeRetune(key)) return;
    out.push_back({kept,
                   k->action_id + "=" + k->value + " was kept in #" + std::to_string(kept) +
                       "; its neighbour " + v + " is measured on top (a line search)",
                   v, Move::kRetune});
  };
  if (at + 1 != action->values.end()) offer(*(at + 1));
  if (at != action->values.begin()) offer(*(at - 1));
  return out;
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
      const bool no_gain = x->outcome == Outcome::kReverted &&
                           (x->critic.rca == "no_gain" || x->critic.rca == "not_confirmed");
      const bool prerequisite = x->outcome == Outcome::kCrashed && x->critic.rca == "prerequisite";
      if ((!no_gain && !prerequisite) || DroppedKey(*x)) continue;  // Drops re-offers a drop
      if (backed_off(x->CandidateKey())) continue;
      if (!eligible.Take(x->action_id, x->CandidateKey())) continue;
      // The keeps made since it was tried: what changed under it.
      std::vector<std::string> since;
      for (size_t j = i + 1; j < path.size(); ++j) since.push_back(path[j]->CandidateKey());
      out.push_back({x->id,
                     "every candidate was tried at #" + std::to_string(incumbent) +
                         " and budget is left; #" + std::to_string(x->id) + " was " +
                         (no_gain ? "reverted (" + x->critic.rca + ")"
                                  : std::string("blocked (prerequisite)")) +
                         " before " + Join(since, ", ") + " changed the path",
                     std::nullopt, Move::kRevisit});
    }
  }
  // Re-tune: the other values of parameters kept on the path, from the last keep of each.
  std::map<std::string, const Node*> last_kept;
  for (const Node* n : path) {
    // Not a drop or swap: its own candidate is the change it took out.
    if (n->id != kRootId && n->outcome == Outcome::kKept && !n->value.empty() && !DroppedKey(*n)) {
      last_kept[n->action_id] = n;
    }
  }
  for (const auto& [id, kept] : last_kept) {
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
  for (const Node* n = &node;
       n != nullptr && MoveOf(*n) == Move::kRemeasure && depth <= kMaxRemeasures;
       n = tree.Find(n->critic.requeued_from)) {
    ++depth;
  }
  return depth;
}

std::vector<Requeue> Remeasure(const Tree& tree, NodeId incumbent, const CriticSpec& critic) {
  const std::vector<NodeId>& children = tree.Children(incumbent);
  const std::set<NodeId> retried = RetriedAt(tree, incumbent);
  // The inconclusive reverts at the incumbent not yet measured again, closest first. A revert
  // the gate answered (a gain significantly below min_effect) is not among them: more runs
  // would not change it. Only a verdict that ran out of evidence is.
  std::vector<const Node*> open;
  for (NodeId child : children) {
    const Node* x = tree.Find(child);
    if (x->outcome != Outcome::kReverted || x->critic.rca != "no_gain") continue;
    if (RemeasureDepth(tree, *x) >= kMaxRemeasures || retried.count(x->id)) continue;
    if (HasFlag(*x, "inconclusive")) open.push_back(x);
  }
  std::stable_sort(open.begin(), open.end(), [](const Node* a, const Node* b) {
    return a->critic.p_value.value_or(1) < b->critic.p_value.value_or(1);
  });
  auto again = [&](const Node& x) {
    return "; measured again with " + std::to_string(2 << RemeasureDepth(tree, x)) +
           "× the repetitions";
  };
  std::vector<Requeue> out;
  for (const Node* x : open) {
    if (!x->gain || *x->gain < critic.min_effect / 2) continue;
    if (!x->critic.p_value || *x->critic.p_value > kCloseCallP) continue;
    out.push_back({x->id,
                   "a close call: " + Percent(*x->gain) +
                       " at p=" + FormatDouble(*x->critic.p_value, 3) + again(*x),
                   std::nullopt, Move::kRemeasure});
  }
  if (!out.empty()) return out;
  // No close call left: a second look at every other inconclusive revert, closest first. A
  // budget the user gave is spent, and more repetitions are the one thing that can still turn
  // such a revert around once every candidate and close call was measured at this incumbent.
  for (const Node* x : open) {
    out.push_back({x->id,
                   "a second look (nothing closer is left at #" + std::to_string(incumbent) +
                       "): " + (x->gain ? Percent(*x->gain) : std::string("no gain")) +
                       (x->critic.p_value ? " at p=" + FormatDouble(*x->critic.p_value, 3) : "") +
                       again(*x),
                   std::nullopt, Move::kRemeasure});
  }
  return out;
}

bool MayStillPay(const Node& revert) {
  if (revert.critic.ci_high) return *revert.critic.ci_high > 1;
  return revert.gain && *revert.gain > -kFarBelow;
}

std::vector<Requeue> RemeasureAnswered(const Tree& tree, NodeId incumbent, LastLooks which) {
  const std::set<NodeId> retried = RetriedAt(tree, incumbent);
  std::vector<const Node*> open;
  for (NodeId child : tree.Children(incumbent)) {
    const Node* x = tree.Find(child);
    if (x->outcome != Outcome::kReverted) continue;
    if (x->critic.rca != "no_gain" && x->critic.rca != "not_confirmed") continue;
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
             "; measured again with " + std::to_string(2 << RemeasureDepth(tree, *x)) +
             "× the repetitions",
         std::nullopt, Move::kRemeasure});
  }
  return out;
}

std::vector<Requeue> Pairs(const Tree& tree, const Catalog& catalog, NodeId incumbent, int limit,
                           const Promise& promise, PairKinds kinds) {
  const bool hopeful_only = kinds == PairKinds::kHopeful;
  const std::set<std::string> tried_here = tree.TriedAlongPath(incumbent);
  using Unordered = std::pair<std::string, std::string>;
  auto unordered = [](std::string a, std::string b) {
    if (b < a) std::swap(a, b);
    return Unordered{std::move(a), std::move(b)};
  };
  // Pairs tried, running or waiting on the path; and how many pairs each side lost in.
  std::set<Unordered> pairs_tried;
  std::map<std::string, int> pairs_lost;
  for (const Node* p : tree.Path(incumbent)) {
    for (NodeId child : tree.Children(p->id)) {
      const Node* x = tree.Find(child);
      std::optional<std::string> with = CompanionKey(*x);
      // Run, running or waiting, or vetoed here; not one superseded while it waited under an
      // earlier incumbent (it never ran: Pairs offers it again).
      if (with && (x->outcome != Outcome::kPruned || p->id == incumbent)) {
        pairs_tried.insert(unordered(x->CandidateKey(), *with));
      }
      // Lost: measured, no gain (a pair that broke accuracy says nothing of its speed).
      if (with && x->outcome == Outcome::kReverted && !DroppedKey(*x) &&
          (x->critic.rca == "no_gain" || x->critic.rca == "not_confirmed")) {
        ++pairs_lost[x->CandidateKey()];
        ++pairs_lost[*with];
      }
    }
  }
  const std::map<std::string, const Node*> latest = LatestSingleTries(tree, incumbent);
  // One side may run with the other: not applied, and it fits the path with the other.
  const Eligibility eligible(tree, catalog, incumbent);
  auto fits = [&](const std::string& id, const std::string& other) {
    return id != other && !eligible.Applied(id) && eligible.Fits(id, other);
  };
  std::vector<Requeue> out;
  // With `retune`, the own side may be another value of a parameter applied on the path.
  auto take = [&](const std::string& own, NodeId from, const std::string& with,
                  const std::string& why, bool retune = false) {
    const std::string own_id = SplitCandidateKey(own).first;
    const std::string with_id = SplitCandidateKey(with).first;
    const bool own_fits =
        retune && eligible.Applied(own_id)
            ? own_id != with_id && !eligible.Applied(own) && eligible.Fits(own_id, with_id)
            : fits(own_id, with_id);
    if (static_cast<int>(out.size()) >= limit || !own_fits || !fits(with_id, own_id) ||
        !pairs_tried.insert(unordered(own, with)).second) {
      return;
    }
    Requeue q;
    q.from = from;
    q.key = own;
    q.with = with;
    q.move = Move::kPair;
    q.reason = "a pair (" + with + " + " + own + "): " + why;
    out.push_back(std::move(q));
  };
  auto gain_of = [](const Node* n) { return n->gain.value_or(-1.0); };
  // The speedup the node's action promised (≥ 0), and what the node measured. A promise that
  // k pairs with the side in them did not deliver counts for 2^-k of its gain: a prior can be
  // wrong, and one wrong ×2 otherwise leads every batch of pairs with partner after partner (on
  // one generated landscape 12 of the last 40 evaluations, while an idea that had become worth
  // +36% on the path waited behind them).
  auto promised = [&](const Node* n) {
    const ActionSpec* a = catalog.FindAction(n->action_id);
    if (a == nullptr) return 1.0;
    const double s = std::max(0.0, promise ? promise(*a) : a->speedup);
    auto lost = pairs_lost.find(n->CandidateKey());
    return lost == pairs_lost.end() || s <= 1 ? s : 1 + (s - 1) / (1 << std::min(lost->second, 30));
  };
  auto measured = [&](const Node* n) { return std::max(0.0, 1 + gain_of(n)); };
  std::vector<const Node*> no_gain, accuracy, lacking;
  for (const auto& [key, n] : latest) {
    if (n->outcome == Outcome::kCrashed && n->critic.rca == "prerequisite") lacking.push_back(n);
    if (n->outcome != Outcome::kReverted) continue;
    if (n->critic.rca == "no_gain" || n->critic.rca == "not_confirmed") no_gain.push_back(n);
    if (n->critic.rca == "accuracy") accuracy.push_back(n);
  }
  auto by_seq = [](const Node* a, const Node* b) { return a->seq < b->seq; };
  std::sort(accuracy.begin(), accuracy.end(), by_seq);
  std::sort(lacking.begin(), lacking.end(), by_seq);
  std::sort(no_gain.begin(), no_gain.end(), by_seq);
  std::stable_sort(no_gain.begin(), no_gain.end(),
                   [&](const Node* a, const Node* b) { return gain_of(a) > gain_of(b); });

  if (kinds != PairKinds::kRetunes) {
    // 1. Declared requires that one more candidate completes.
    for (const Candidate& c : catalog.All()) {
      if (tried_here.count(c.key) || eligible.Applied(c.action->id)) continue;
      std::vector<std::string> missing;
      for (const std::string& r : c.action->requires_) {
        if (!eligible.Applied(r)) missing.push_back(r);
      }
      if (missing.size() != 1) continue;
      const ActionSpec* need = catalog.FindAction(missing[0]);
      if (need == nullptr || !need->values.empty()) continue;  // which value is not declared
      take(c.key, kNoNode, need->id,
           c.key + " requires " + need->id + ", which is not on the path: tried together");
    }
    // 2. An accuracy failure with something that costs a little.
    for (const Node* x : accuracy) {
      for (const Node* f : no_gain) {
        // The fix costs more than x promises.
        if (hopeful_only && promised(x) * measured(f) <= 1) continue;
        take(x->CandidateKey(), x->id, f->CandidateKey(),
             "#" + std::to_string(x->id) + " broke accuracy alone; with #" + std::to_string(f->id) +
                 " (" + Percent(gain_of(f)) + " alone) it may not");
      }
    }
    // 2b. A crash for a missing prerequisite (SIGILL) with each idea reverted for no gain: the
    // prerequisite may be a change that pays nothing alone, so no keep ever brings it. Its own
    // side may be another value of a parameter on the path (avx512 where sse4 was kept).
    for (const Node* x : lacking) {
      for (const Node* f : no_gain) {
        if (hopeful_only && promised(x) * measured(f) <= 1) continue;
        take(x->CandidateKey(), x->id, f->CandidateKey(),
             "#" + std::to_string(x->id) + " lacked a prerequisite alone; #" +
                 std::to_string(f->id) + " (" + Percent(gain_of(f)) + " alone) may be it",
             /*retune=*/true);
      }
    }
    // 3. Two near-neutral ideas, the highest optimistic speedup first; the side on top (the
    // node's own candidate) is the one whose promise makes it.
    struct Two {
      const Node* own;
      const Node* with;
      double speedup;
    };
    std::vector<Two> twos;
    for (size_t i = 0; i < no_gain.size(); ++i) {
      for (size_t j = i + 1; j < no_gain.size(); ++j) {
        const Node* a = no_gain[i];
        const Node* b = no_gain[j];
        const double a_delivers = promised(a) * measured(b);
        const double b_delivers = promised(b) * measured(a);
        if (hopeful_only && std::max(a_delivers, b_delivers) <= 1) continue;
        twos.push_back(b_delivers > a_delivers ? Two{b, a, b_delivers} : Two{a, b, a_delivers});
      }
    }
    std::stable_sort(twos.begin(), twos.end(),
                     [](const Two& x, const Two& y) { return x.speedup > y.speedup; });
    for (const Two& t : twos) {
      if (static_cast<int>(out.size()) >= limit) break;
      take(t.own->CandidateKey(), t.own->id, t.with->CandidateKey(),
           "#" + std::to_string(t.own->id) + " (" + Percent(gain_of(t.own)) + ", promised " +
               Percent(promised(t.own) - 1) + ") and #" + std::to_string(t.with->id) + " (" +
               Percent(gain_of(t.with)) + ") gained nothing alone; an interaction may");
    }
  }
  if (kinds != PairKinds::kRetunes) return out;
  // 4. PairKinds::kRetunes: another value of a parameter kept on the path with each idea
  // reverted for no gain, the values next to the kept one first. A parameter's best value can
  // move with a change that did not pay at the value kept (a thread count and an allocator).
  std::map<std::string, const Node*> kept_values;
  for (const Node* n : tree.Path(incumbent)) {
    if (n->id != kRootId && n->outcome == Outcome::kKept && !n->value.empty() && !DroppedKey(*n)) {
      kept_values[n->action_id] = n;
    }
  }
  for (const auto& [id, kept] : kept_values) {
    const ActionSpec* action = catalog.FindAction(id);
    if (action == nullptr) continue;
    const auto& vs = action->values;
    const auto at = std::find(vs.begin(), vs.end(), kept->value) - vs.begin();
    std::vector<std::string> by_distance(vs.begin(), vs.end());
    std::stable_sort(by_distance.begin(), by_distance.end(), [&](const auto& a, const auto& b) {
      auto distance = [&](const std::string& v) {
        const auto i = std::find(vs.begin(), vs.end(), v) - vs.begin();
        return i > at ? 2 * (i - at) - 1 : 2 * (at - i);  // the next one first, then the one before
      };
      return distance(a) < distance(b);
    });
    for (const std::string& v : by_distance) {
      if (v == kept->value) continue;
      for (const Node* f : no_gain) {
        take(CandidateKey(id, v), kept->id, f->CandidateKey(),
             id + "=" + v + " (kept at " + kept->value + " in #" + std::to_string(kept->id) +
                 ") with #" + std::to_string(f->id) + " (" + Percent(gain_of(f)) +
                 " alone): the best value may move with it",
             /*retune=*/true);
      }
    }
  }
  return out;
}

std::vector<Requeue> PairsOrTheirSidesAlone(const Tree& tree, const std::vector<Requeue>& pairs,
                                            const std::vector<Requeue>& revisits) {
  std::map<std::string, const Requeue*> alone;
  for (const Requeue& r : revisits) alone.emplace(RetriedKey(tree, r), &r);
  std::set<std::string> sent;
  std::vector<Requeue> out;
  for (const Requeue& q : pairs) {
    bool gives_way = false;
    for (const std::string& side : {q.key, q.with.value_or("")}) {
      auto it = alone.find(side);
      if (it == alone.end()) continue;
      gives_way = true;
      if (sent.insert(side).second) out.push_back(*it->second);
    }
    if (!gives_way) out.push_back(q);
  }
  return out;
}

namespace {

// The variables a change sets or appends to.
std::set<std::string> Variables(const ActionSpec& a) {
  std::set<std::string> vars;
  for (const auto& [var, value] : a.apply.env) vars.insert(var);
  for (const auto& [var, value] : a.apply.append) vars.insert(var);
  return vars;
}

// The variables a change sets when it is an environment overlay alone, else nullopt.
std::optional<std::set<std::string>> OverlayVariables(const ActionSpec& a) {
  if (a.apply.kind != ApplySpec::Kind::kEnv && a.apply.kind != ApplySpec::Kind::kAppend) {
    return std::nullopt;
  }
  return Variables(a);
}

// The kept node on the path of `at` that applied `key` (and no later drop took out), or null.
const Node* KeptWith(const Tree& tree, NodeId at, const std::string& key) {
  const Node* by = nullptr;
  for (const Node* n : tree.Path(at)) {
    if (n->id == kRootId || n->outcome != Outcome::kKept) continue;
    for (const std::string& k : AppliedKeys(*n)) {
      if (k == key) by = n;
    }
    for (const std::string& k : RemovedKeys(*n)) {
      if (k == key) by = nullptr;
    }
  }
  return by;
}

// A change kept on the path that could be taken back out: the node that kept it and its key.
struct Droppable {
  const Node* kept;
  std::string key;
};

// The changes on the path of `incumbent` a drop may take out, the latest keep first: an
// environment overlay alone, whose variables no other applied change sets, that no applied
// change requires. With `of`, only the changes that node applied.
std::vector<Droppable> DroppableChanges(const Tree& tree, const Catalog& catalog, NodeId incumbent,
                                        NodeId of) {
  const std::set<std::string> applied = tree.AppliedActions(incumbent);
  // How many applied changes set each variable, and what they require.
  std::map<std::string, int> setters;
  std::set<std::string> required;
  for (const std::string& id : applied) {
    const ActionSpec* a = catalog.FindAction(id);  // a parameter's "id[value]" is not an id
    if (a == nullptr) continue;
    for (const std::string& var : Variables(*a)) ++setters[var];
    required.insert(a->requires_.begin(), a->requires_.end());
  }
  std::vector<const Node*> path = tree.Path(incumbent);
  std::reverse(path.begin(), path.end());  // the latest keep first
  std::vector<Droppable> out;
  for (const Node* k : path) {
    if (k->id == kRootId || k->outcome != Outcome::kKept || (of != kNoNode && k->id != of)) {
      continue;
    }
    const std::vector<std::string> keys = AppliedKeys(*k);  // {id, key} and a companion's
    for (size_t i = 0; i + 1 < keys.size(); i += 2) {
      const std::string& id = keys[i];
      const std::string& key = keys[i + 1];
      if (!applied.count(key) || required.count(id)) continue;
      const ActionSpec* a = catalog.FindAction(id);
      std::optional<std::set<std::string>> vars = a ? OverlayVariables(*a) : std::nullopt;
      if (!vars || std::any_of(vars->begin(), vars->end(),
                               [&](const std::string& v) { return setters[v] > 1; })) {
        continue;
      }
      out.push_back({k, key});
    }
  }
  return out;
}

}  // namespace

std::vector<Requeue> Drops(const Tree& tree, const Catalog& catalog, NodeId incumbent, NodeId of) {
  std::set<std::string> dropped_here;  // tried or waiting at the incumbent (not a swap)
  for (NodeId child : tree.Children(incumbent)) {
    const Node* c = tree.Find(child);
    std::optional<std::string> k = DroppedKey(*c);
    if (k && !CompanionKey(*c)) dropped_here.insert(*k);
  }
  std::vector<Requeue> out;
  for (const Droppable& d : DroppableChanges(tree, catalog, incumbent, of)) {
    if (dropped_here.count(d.key)) continue;
    Requeue q;
    q.from = d.kept->id;
    q.key = d.key;
    q.move = Move::kDrop;
    q.reason = "taken back out: " + d.key + " was kept at #" + std::to_string(d.kept->id) +
               (d.kept->id == incumbent ? " with a companion that may pay alone"
                                        : "; the keeps since may have made it cost");
    out.push_back(std::move(q));
  }
  return out;
}

std::vector<Requeue> Swaps(const Tree& tree, const Catalog& catalog, NodeId incumbent) {
  const std::vector<Droppable> droppable = DroppableChanges(tree, catalog, incumbent, kNoNode);
  if (droppable.empty()) return {};
  std::set<std::pair<std::string, std::string>> tried;  // {taken out, put in} at the incumbent
  for (NodeId child : tree.Children(incumbent)) {
    const Node* c = tree.Find(child);
    std::optional<std::string> out = DroppedKey(*c);
    std::optional<std::string> in = CompanionKey(*c);
    if (out && in) tried.insert({*out, *in});
  }
  std::map<std::string, Eligibility> without;  // each change's: the path without it
  for (const Droppable& d : droppable) without.try_emplace(d.key, tree, catalog, incumbent, d.key);
  // A swap kept on the path is not undone by the swap back: that comparison was made.
  std::set<std::pair<std::string, std::string>> made;  // {put in, taken out}
  for (const Node* p : tree.Path(incumbent)) {
    std::optional<std::string> out = DroppedKey(*p);
    std::optional<std::string> in = CompanionKey(*p);
    if (p->outcome == Outcome::kKept && out && in) made.insert({*in, *out});
  }
  // One swap per change at a time (the next batch sees its result): two alternatives for one
  // change in one parallel batch would land on each other once the first is kept.
  std::set<std::string> swapped;
  std::vector<Requeue> out;
  auto take = [&](const std::string& in, const Droppable& d, NodeId from, const std::string& why) {
    const std::string in_id = SplitCandidateKey(in).first;
    if (in_id == SplitCandidateKey(d.key).first) return;  // another value: a re-tune's work
    const Eligibility& e = without.at(d.key);
    if (swapped.count(d.key) || made.count({d.key, in}) || e.Applied(in_id) || !e.Fits(in_id) ||
        !tried.insert({d.key, in}).second) {
      return;
    }
    swapped.insert(d.key);
    Requeue q;
    q.from = from;
    q.key = d.key;
    q.with = in;
    q.move = Move::kDrop;
    q.reason = "a swap (" + in + " in place of " + d.key + ", kept at #" +
               std::to_string(d.kept->id) + "): " + why;
    out.push_back(std::move(q));
  };
  // 1. Declared alternatives: a candidate that conflicts with a change kept on the path.
  for (const Candidate& c : catalog.All()) {
    for (const Droppable& d : droppable) {
      const ActionSpec* kept = catalog.FindAction(SplitCandidateKey(d.key).first);
      if (kept == nullptr) continue;
      const auto& mine = c.action->conflicts;
      if (std::find(mine.begin(), mine.end(), kept->id) != mine.end() ||
          std::find(kept->conflicts.begin(), kept->conflicts.end(), c.action->id) !=
              kept->conflicts.end()) {
        take(c.key, d, d.kept->id, c.key + " conflicts with it: the alternative, measured");
      }
    }
  }
  // 2. A candidate whose latest try from a state on the path crashed at run time with the
  // change on the path: the crash may be theirs together.
  for (const auto& [key, x] : LatestSingleTries(tree, incumbent)) {
    if (x->outcome != Outcome::kCrashed || x->critic.rca != "runtime_crash") continue;
    const std::set<std::string> then = tree.AppliedActions(x->parent);
    for (const Droppable& d : droppable) {
      if (!then.count(d.key)) continue;
      take(key, d, x->id,
           "#" + std::to_string(x->id) + " crashed with it on the path; without it, it may not");
    }
  }
  return out;
}

EnvOverlay OverlayWithout(const Tree& tree, const Catalog& catalog, NodeId at,
                          const std::string& key) {
  const Node* node = tree.Find(at);
  EnvOverlay out = node != nullptr ? node->overlay : EnvOverlay{};
  const Node* by = KeptWith(tree, at, key);
  const ActionSpec* a = catalog.FindAction(SplitCandidateKey(key).first);
  const Node* before = by != nullptr ? tree.Find(by->parent) : nullptr;
  std::optional<std::set<std::string>> vars = a ? OverlayVariables(*a) : std::nullopt;
  if (before == nullptr || !vars) return out;
  for (const std::string& var : *vars) {
    auto it = before->overlay.find(var);
    if (it != before->overlay.end()) {
      out[var] = it->second;
    } else {
      out.erase(var);
    }
  }
  return out;
}

}  // namespace arbor
