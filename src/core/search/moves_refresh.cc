// Refreshes: a kept change whose command derives files from the state it ran on, run again
// once later keeps changed that state (docs/search.md, step 2, "refreshes").

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "core/search/moves.h"

namespace arbor {

bool IsRefresh(const Node& node) { return HasFlag(node, MoveFlag(Move::kRefresh)); }

std::vector<KeptRefresh> KeptRefreshes(const Tree& tree, const Catalog& catalog, NodeId state) {
  auto refreshing = [&](const std::string& key) {
    const ActionSpec* a = catalog.FindAction(SplitCandidateKey(key).first);
    return a != nullptr && a->refresh;
  };
  std::vector<KeptRefresh> out;  // per action id, the latest node that ran it
  auto forget = [&](const std::string& id) {
    out.erase(
        std::remove_if(out.begin(), out.end(),
                       [&](const KeptRefresh& r) { return SplitCandidateKey(r.key).first == id; }),
        out.end());
  };
  for (const Node* n : tree.StateNodes(state)) {
    // Defensive: only an environment overlay can be dropped today, and `refresh` needs `run`.
    for (const std::string& key : RemovedKeys(*n)) forget(SplitCandidateKey(key).first);
    std::vector<std::string> keys = CompanionKeys(*n);
    if (!DroppedKey(*n)) keys.push_back(n->CandidateKey());
    for (const std::string& key : RerunKeys(*n)) keys.push_back(key);
    for (const std::string& key : keys) {
      if (!refreshing(key)) continue;
      forget(SplitCandidateKey(key).first);
      out.push_back({n->id, key});
    }
  }
  return out;
}

std::vector<std::string> RefreshesToRun(const Tree& tree, const Catalog& catalog,
                                        const Node& node) {
  if (node.parent == kNoNode) return {};
  std::vector<std::string> own = AppliedKeys(node);  // (re)run by the node itself
  for (std::string& k : RemovedKeys(node)) own.push_back(std::move(k));  // or taken out
  std::vector<std::string> out;
  for (const KeptRefresh& r : KeptRefreshes(tree, catalog, node.parent)) {
    const std::string id = SplitCandidateKey(r.key).first;
    if (std::find(own.begin(), own.end(), id) == own.end()) out.push_back(r.key);
  }
  return out;
}

std::vector<Requeue> Refreshes(const Tree& tree, const Catalog& catalog, NodeId kept) {
  const Node* k = tree.Find(kept);
  if (k == nullptr) return {};
  // Refreshes waiting or running beside the keep, under the old incumbent.
  std::set<std::string> waiting;
  std::set<std::string> running;
  for (const Node* c : tree.Below(tree.BaseOf(kept))) {
    if (c->id == kept || !IsRefresh(*c)) continue;
    if (c->outcome == Outcome::kPending) waiting.insert(c->action_id);
    if (c->outcome == Outcome::kRunning) running.insert(c->action_id);
  }
  // At the keep of a refresh, only the other refreshes that were waiting: offering every one
  // again would let two such actions refresh each other without end.
  const std::optional<std::set<std::string>> only =
      IsRefresh(*k) ? std::optional<std::set<std::string>>(waiting) : std::nullopt;
  // Ids and keys the keep (re)applied, or ran again on top of its change: fresh.
  std::vector<std::string> fresh = AppliedKeys(*k);
  for (const std::string& key : RerunKeys(*k)) fresh.push_back(SplitCandidateKey(key).first);
  std::vector<Requeue> out;
  for (const KeptRefresh& ran : KeptRefreshes(tree, catalog, kept)) {
    const std::string id = SplitCandidateKey(ran.key).first;
    if (std::find(fresh.begin(), fresh.end(), id) != fresh.end()) continue;  // kept's own too
    if (only && !only->count(id)) continue;
    if (running.count(id)) continue;  // re-dispatched onto the keep (parallel.cc)
    Requeue q;
    q.from = ran.node;
    q.key = ran.key;
    q.move = Move::kRefresh;
    q.reason = "#" + std::to_string(kept) + " changed the state " + ran.key + " derived its " +
               "files from at #" + std::to_string(ran.node) + " (refresh = true): run again";
    out.push_back(std::move(q));
  }
  return out;
}

}  // namespace arbor
