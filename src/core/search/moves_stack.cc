// Stacks: ideas whose gain measured too small to keep, applied together so that the gate can see
// their sum (docs/search.md, step 3).

#include <algorithm>
#include <set>

#include "core/search/moves.h"
#include "core/search/moves_detail.h"

namespace arbor {

using moves_detail::Eligibility;
using moves_detail::RevertedForNoGain;

bool IsGroup(const Node& node) {
  return IsFixGroup(node) || MoveOf(node) == Move::kStack || HasFlag(node, kGroupFlag);
}

namespace {

// The ideas a stack may hold at `incumbent`, the best measured first.
std::vector<const Node*> Pool(const Tree& tree, const Catalog& catalog, NodeId incumbent) {
  const Eligibility eligible(tree, catalog, incumbent);
  std::vector<const Node*> small;
  for (const auto& [key, x] : moves_detail::LatestSingleTries(tree, incumbent)) {
    if (!RevertedForNoGain(*x) || !x->gain || *x->gain <= 0) continue;
    if (eligible.Applied(x->action_id) || !eligible.Fits(x->action_id)) continue;
    small.push_back(x);
  }
  std::stable_sort(small.begin(), small.end(),
                   [](const Node* a, const Node* b) { return *a->gain > *b->gain; });
  std::vector<const Node*> pool;
  std::set<std::string> ids;
  for (const Node* x : small) {
    const ActionSpec* a = catalog.FindAction(x->action_id);
    if (a == nullptr || ids.count(x->action_id)) continue;  // one value of each action
    // A requires another idea of the stack would meet is not met on the path: Fits said no.
    if (moves_detail::ConflictsWithAny(catalog, *a, ids)) continue;
    ids.insert(x->action_id);
    pool.push_back(x);
  }
  return pool;
}

}  // namespace

std::vector<Requeue> Stacks(const Tree& tree, const Catalog& catalog, NodeId incumbent) {
  // The stacks measured at this incumbent: one at a time, each the better half of the last.
  int rounds = 0;
  size_t last_size = SIZE_MAX;
  int64_t last_seq = -1;
  std::set<std::set<std::string>> measured;
  for (NodeId child : tree.Children(incumbent)) {
    const Node* x = tree.Find(child);
    if (MoveOf(*x) != Move::kStack) continue;
    if (x->outcome == Outcome::kPending || x->step != Step::kDone) return {};
    // A lost run says nothing about the stack: it is offered again, and no round is spent.
    if (x->critic.rca == RcaClass::kInfrastructure) continue;
    std::vector<std::string> keys = CompanionKeys(*x);
    keys.push_back(x->CandidateKey());
    measured.insert(std::set<std::string>(keys.begin(), keys.end()));
    ++rounds;
    if (x->seq > last_seq) last_seq = x->seq, last_size = keys.size();
  }
  if (rounds >= kMaxStackRounds) return {};
  const std::vector<const Node*> pool = Pool(tree, catalog, incumbent);
  size_t size = std::min(pool.size(), kMaxStackSize);
  if (rounds > 0) size = std::min(size, last_size / 2);
  if (size < 2) return {};
  std::vector<std::string> keys;
  for (size_t i = 0; i < size; ++i) keys.push_back(pool[i]->CandidateKey());
  if (measured.count(std::set<std::string>(keys.begin(), keys.end()))) return {};
  Requeue q;
  q.from = pool.front()->id;
  q.move = Move::kStack;
  q.with = keys[1];
  q.bundle.assign(keys.begin() + 2, keys.end());
  double product = 1;
  for (size_t i = 0; i < size; ++i) product *= 1 + *pool[i]->gain;
  q.reason = "a stack of " + std::to_string(size) + " ideas that each measured a gain too small " +
             "to keep (" + moves_detail::Percent(product - 1) + " together, as measured), round " +
             std::to_string(rounds + 1);
  return {q};
}

}  // namespace arbor
