// Drops and swaps: a kept change taken back out, or replaced by a candidate it locked out
// (docs/search.md, step 8).

#include <map>
#include <optional>
#include <set>

#include "core/search/moves.h"
#include "core/search/moves_detail.h"

namespace arbor {

using moves_detail::Eligibility;
using moves_detail::LatestSingleTries;

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

std::vector<Requeue> Swaps(const Tree& tree, const Catalog& catalog, NodeId incumbent,
                           bool unmeasured_only, bool subtrees) {
  const std::vector<Droppable> droppable = DroppableChanges(tree, catalog, incumbent, kNoNode);
  if (droppable.empty()) return {};
  // The candidates some evaluated node applied (alone, as a side of a pair or a swap).
  std::set<std::string> measured;
  std::map<std::string, int> swaps_of;  // evaluated swaps that put each candidate in
  if (unmeasured_only) {
    for (const Node* n : tree.All()) {
      if (!IsEvaluated(*n)) continue;
      measured.insert(n->CandidateKey());
      std::optional<std::string> with = CompanionKey(*n);
      if (with) measured.insert(*with);
      if (with && DroppedKey(*n) && MoveOf(*n) == Move::kDrop) ++swaps_of[*with];  // no re-measure
    }
  }
  // With `subtrees`: an alternative measured, but not what only runs with it.
  auto subtree_unexplored = [&](const Candidate& alternative) {
    return subtrees && swaps_of[alternative.key] < kMaxSubtreeSwaps &&
           !UnmeasuredDependents(tree, catalog, alternative.action->id).empty();
  };
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
    if (unmeasured_only && measured.count(c.key) && !subtree_unexplored(c)) continue;
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
  if (unmeasured_only) return out;
  // 2. A candidate whose latest try from a state on the path crashed at run time with the
  // change on the path: the crash may be theirs together.
  for (const auto& [key, x] : LatestSingleTries(tree, incumbent)) {
    if (x->outcome != Outcome::kCrashed || x->critic.rca != RcaClass::kRuntimeCrash) continue;
    const std::set<std::string> then = tree.AppliedActions(x->parent);
    for (const Droppable& d : droppable) {
      if (!then.count(d.key)) continue;
      take(key, d, x->id,
           "#" + std::to_string(x->id) + " crashed with it on the path; without it, it may not");
    }
  }
  return out;
}

std::vector<const Candidate*> UnmeasuredDependents(const Tree& tree, const Catalog& catalog,
                                                   const std::string& action_id) {
  std::vector<const Candidate*> dependents;
  for (const Candidate& d : catalog.All()) {
    const auto& r = d.action->requires_;
    if (std::find(r.begin(), r.end(), action_id) != r.end()) dependents.push_back(&d);
  }
  if (dependents.empty()) return {};
  std::set<std::string> measured;
  for (const Node* n : tree.All()) {
    if (!IsEvaluated(*n)) continue;
    measured.insert(n->CandidateKey());
    for (const std::string& with : CompanionKeys(*n)) measured.insert(with);
  }
  std::erase_if(dependents, [&](const Candidate* d) { return measured.count(d->key) > 0; });
  return dependents;
}

std::vector<Requeue> SubtreeSwaps(const Tree& tree, const Catalog& catalog, NodeId kept,
                                  const Promise& promise) {
  const Node* k = tree.Find(kept);
  if (k == nullptr) return {};
  auto promised = [&](const ActionSpec& a) { return promise ? promise(a) : a.speedup; };
  const double kept_measured = 1 + std::max(0.0, k->gain.value_or(0.0));
  std::vector<Requeue> out;
  for (Requeue& q : Swaps(tree, catalog, kept, /*unmeasured_only=*/true, /*subtrees=*/true)) {
    // Only the alternatives of the change just kept, and only with a hopeful subtree.
    if (SplitCandidateKey(q.key).first != k->action_id || !q.with) continue;
    const ActionSpec* alternative = catalog.FindAction(SplitCandidateKey(*q.with).first);
    if (alternative == nullptr) continue;
    double best = 0;
    for (const Candidate* d : UnmeasuredDependents(tree, catalog, alternative->id)) {
      best = std::max(best, promised(*d->action));
    }
    const double hope = promised(*alternative) * best / kept_measured;
    if (hope <= 1) continue;
    q.reason = "a swap (" + *q.with + " in place of " + q.key + ", kept at #" +
               std::to_string(kept) + "): the alternative's subtree (what requires it, never " +
               "measured) promises " + moves_detail::Percent(hope - 1) + " over it";
    out.push_back(std::move(q));
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
