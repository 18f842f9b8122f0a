// Internal to core/'s moves (moves.cc, moves_pairs.cc, moves_drops.cc): the rules they share
// about what a path already tried and what may still run on it. Not an interface of core.
#pragma once

#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/search/moves.h"

namespace arbor::moves_detail {

std::string Percent(double f);

// Reverted with no gain to show: no gain, or a gain that was not confirmed (a no gain that
// first measured as one). Every move that re-tries an idea asks this.
inline bool RevertedForNoGain(const Node& x) {
  return x.outcome == Outcome::kReverted &&
         (x.critic.rca == RcaClass::kNoGain || x.critic.rca == RcaClass::kNotConfirmed);
}

// The back-off of every move that retries a candidate which failed before: after n tries it
// waits for 2^(n-1) keeps since the state of its latest try.
bool WaitsForMoreKeeps(int tries, size_t keeps_since);

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
      : Eligibility(tree, catalog, at, tree.AppliedActions(at), without) {}
  // At the state of `at` whatever its outcome (Tree::StateKeys): a follow-up on top of it.
  static Eligibility OfState(const Tree& tree, const Catalog& catalog, NodeId at) {
    return Eligibility(tree, catalog, at, tree.StateKeys(at), "");
  }
  Eligibility(const Tree& tree, const Catalog& catalog, NodeId at, std::set<std::string> applied,
              const std::string& without)
      : catalog_(catalog), applied_(std::move(applied)) {
    // A group is no try of its own candidate: that idea alone may still be revisited here.
    for (NodeId child : tree.Children(at)) {
      const Node* x = tree.Find(child);
      if (!IsGroup(*x)) here_.insert(x->CandidateKey());
    }
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

// Whether `a` declares a conflict with the action `b`.
inline bool Conflict(const ActionSpec& a, const std::string& b) {
  return std::find(a.conflicts.begin(), a.conflicts.end(), b) != a.conflicts.end();
}
// Whether `action` and any of `ids` declare a conflict (either side): a group of candidates
// applied together (a fix search's, a stack) holds no two alternatives.
inline bool ConflictsWithAny(const Catalog& catalog, const ActionSpec& action,
                             const std::set<std::string>& ids) {
  return std::any_of(ids.begin(), ids.end(), [&](const std::string& other) {
    const ActionSpec* o = catalog.FindAction(other);
    return Conflict(action, other) || (o != nullptr && Conflict(*o, action.id));
  });
}

// The latest finished node of each single candidate (not a pair, drop or swap) tried from a
// state on the path of `incumbent`.
std::map<std::string, const Node*> LatestSingleTries(const Tree& tree, NodeId incumbent);

// The last keep of each parameter (an action with values) on `path`, by action id; not a drop
// or a swap, whose own candidate is the change it took out.
std::map<std::string, const Node*> LastKeptValues(const std::vector<const Node*>& path);

}  // namespace arbor::moves_detail
