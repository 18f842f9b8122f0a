// Fix searches: a change that failed its check, applied with a group of candidates at once, so
// that the one that fixes it is found by bisection (docs/search.md, step 3).

#include <algorithm>
#include <map>
#include <set>

#include "core/search/moves.h"
#include "core/search/moves_detail.h"

namespace arbor {

using moves_detail::Conflict;
using moves_detail::Eligibility;
using moves_detail::RevertedForNoGain;

namespace {

// What the single tries from states on the path say about each candidate.
struct SingleRecord {
  const Node* broken = nullptr;  // its latest try that failed its check on accuracy
  bool ran = false;              // a try ran, passed its check and was measured
  bool failed = false;           // a try crashed, or failed its check or a guard
};

// The failure a fix search looks for the fix of. (A crash for a missing prerequisite searched
// the same way, its enabler bisected out of a group, was measured and not taken: neutral to
// slightly worse on the generated landscapes than the pairs of step 4, which already pair a
// SIGILL with each candidate; docs/history/benchmarks-log.md.)
bool Fixable(const Node& x) {
  return x.outcome == Outcome::kReverted && x.critic.rca == RcaClass::kAccuracy;
}

std::map<std::string, SingleRecord> SingleRecords(const Tree& tree,
                                                  const std::vector<const Node*>& path) {
  std::map<std::string, SingleRecord> out;
  for (const Node* p : path) {
    for (NodeId child : tree.Children(p->id)) {
      const Node* x = tree.Find(child);
      if (!IsEvaluated(*x) || CompanionKey(*x) || DroppedKey(*x)) continue;
      SingleRecord& r = out[x->CandidateKey()];
      if (x->outcome == Outcome::kKept || RevertedForNoGain(*x)) {
        r.ran = true;
      } else if (x->outcome == Outcome::kCrashed || x->outcome == Outcome::kReverted) {
        r.failed = true;
        if (Fixable(*x) && (r.broken == nullptr || x->seq > r.broken->seq)) r.broken = x;
      }
    }
  }
  return out;
}

// Where the bisection for one change stands, read from the groups already measured with it.
struct Bisection {
  std::vector<std::string> left;  // the candidates that may still hold its fix, in pool order
  bool found_in_group = false;    // a group passed the check: the fix is among `left`
  size_t cap = SIZE_MAX;          // a group that crashed: the next is at most half its size
  int rounds = 0;                 // fix-search nodes measured
  bool waiting = false;           // one is pending or running
  std::set<std::set<std::string>> measured;  // every group measured with it
};

Bisection Read(const Tree& tree, const std::vector<const Node*>& path, const Node& broken,
               std::vector<std::string> pool) {
  const std::string key = broken.CandidateKey();
  Bisection b;
  b.left = std::move(pool);
  auto keep_only = [&](const std::set<std::string>& s, bool inside) {
    std::erase_if(b.left, [&](const std::string& k) { return s.count(k) != 0 ? !inside : inside; });
  };
  std::vector<const Node*> tried;  // groups (and pairs) with the change, in evaluation order
  for (const Node* p : path) {
    for (NodeId child : tree.Children(p->id)) {
      const Node* x = tree.Find(child);
      if (x->CandidateKey() != key || DroppedKey(*x) || CompanionKeys(*x).empty()) continue;
      if (x->outcome == Outcome::kPending || x->step != Step::kDone) {
        b.waiting |= MoveOf(*x) == Move::kFix;
        continue;
      }
      if (IsEvaluated(*x)) tried.push_back(x);
    }
  }
  std::sort(tried.begin(), tried.end(),
            [](const Node* a, const Node* c) { return a->seq < c->seq; });
  for (const Node* x : tried) {
    const std::vector<std::string> with = CompanionKeys(*x);
    const std::set<std::string> group(with.begin(), with.end());
    b.measured.insert(group);
    if (MoveOf(*x) == Move::kFix) ++b.rounds;
    if (x->outcome == Outcome::kKept || RevertedForNoGain(*x) || HasFlag(*x, kProbeFlag)) {
      keep_only(group, true);
      b.found_in_group = true;
    } else if (Fixable(*x)) {
      keep_only(group, false);  // none of them fixes it (one fix, not two together)
    } else if (x->outcome == Outcome::kCrashed && x->critic.rca != RcaClass::kInfrastructure) {
      if (group.size() == 1) {
        keep_only(group, false);  // the two together crash: no fix
      } else {
        b.cap = std::min(b.cap, group.size() / 2);
      }
    }
  }
  return b;
}

}  // namespace

bool IsFixGroup(const Node& node) {
  return MoveOf(node) == Move::kFix && CompanionKeys(node).size() > 1;
}

std::vector<Requeue> FixSearch(const Tree& tree, const Catalog& catalog, NodeId incumbent) {
  const std::vector<const Node*> path = tree.Path(incumbent);
  const Eligibility eligible(tree, catalog, incumbent);
  const std::map<std::string, SingleRecord> singles = SingleRecords(tree, path);
  // The changes to fix: failed their check on accuracy, never passed it alone since, and still
  // fit the path; the most promising first.
  std::vector<const Node*> broken;
  for (const auto& [key, r] : singles) {
    if (r.broken == nullptr || r.ran) continue;
    const std::string id = r.broken->action_id;
    if (!eligible.Applied(id) && eligible.Fits(id)) broken.push_back(r.broken);
  }
  auto prior = [&](const Node* n) {
    const ActionSpec* a = catalog.FindAction(n->action_id);
    return a != nullptr ? a->speedup : 1.0;
  };
  std::stable_sort(broken.begin(), broken.end(),
                   [&](const Node* a, const Node* b) { return prior(a) > prior(b); });
  std::vector<Requeue> out;
  for (const Node* t : broken) {
    const ActionSpec* trap = catalog.FindAction(t->action_id);
    // The candidates that may fix it: each ran alone on the path without failing, is not
    // applied there and fits the path with it; one value of each action, no two in conflict.
    std::vector<std::string> pool;
    std::set<std::string> ids;
    for (const auto& [key, r] : singles) {
      const std::string id = SplitCandidateKey(key).first;
      if (!r.ran || r.failed || id == t->action_id || ids.count(id) || eligible.Applied(id) ||
          // Fits: its requires met and no conflict of its own with the path or the change;
          // the change's own conflicts with it are the change's to say.
          !eligible.Fits(id, t->action_id) || Conflict(*trap, id)) {
        continue;
      }
      const ActionSpec* a = catalog.FindAction(id);
      if (a == nullptr || moves_detail::ConflictsWithAny(catalog, *a, ids)) continue;
      ids.insert(id);
      pool.push_back(key);
    }
    const std::string key = t->CandidateKey();
    Bisection b = Read(tree, path, *t, std::move(pool));
    if (b.waiting || b.left.empty() || b.rounds >= kMaxFixRounds) continue;
    size_t size = b.left.size();
    if (b.found_in_group && size > 1) size /= 2;  // bisect the group that holds the fix
    size = std::min(size, b.cap);
    const std::vector<std::string> group(b.left.begin(), b.left.begin() + size);
    if (b.measured.count(std::set<std::string>(group.begin(), group.end()))) continue;
    Requeue q;
    q.from = t->id;
    q.move = Move::kFix;
    q.with = group.front();
    q.bundle.assign(group.begin() + 1, group.end());
    q.reason = "a fix search for " + key + " (#" + std::to_string(t->id) +
               " failed its check): with " + std::to_string(group.size()) + " of " +
               std::to_string(b.left.size()) + " candidates" +
               (b.found_in_group ? " that hold its fix (a group passed)" : " that may fix it") +
               ", round " + std::to_string(b.rounds + 1);
    out.push_back(std::move(q));
  }
  return out;
}

}  // namespace arbor
