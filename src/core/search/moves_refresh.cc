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
  const std::vector<std::string> fresh = AppliedKeys(*k);  // ids and keys the keep (re)applied
  auto refreshing = [&](const std::string& key) {
    const ActionSpec* a = catalog.FindAction(SplitCandidateKey(key).first);
    return a != nullptr && a->refresh;
  };
  // Per action id: the latest kept node on the path that ran it, and its candidate key.
  std::map<std::string, std::pair<const Node*, std::string>> latest;
  for (const Node* n : tree.Path(kept)) {
    if (n->id == kRootId || n->id == kept || n->outcome != Outcome::kKept) continue;
    // Defensive: only an environment overlay can be dropped today, and `refresh` needs `run`.
    for (const std::string& key : RemovedKeys(*n)) latest.erase(key);
    if (DroppedKey(*n) && !CompanionKey(*n)) continue;  // a drop applies nothing
    std::vector<std::string> keys = CompanionKeys(*n);
    if (!DroppedKey(*n)) keys.push_back(n->CandidateKey());
    for (const std::string& key : keys) {
      if (refreshing(key)) latest[SplitCandidateKey(key).first] = {n, key};
    }
  }
  std::vector<Requeue> out;
  for (const auto& [id, ran] : latest) {
    if (std::find(fresh.begin(), fresh.end(), id) != fresh.end()) continue;
    if (only && !only->count(id)) continue;
    if (running.count(id)) continue;  // re-dispatched onto the keep (parallel.cc)
    Requeue q;
    q.from = ran.first->id;
    q.key = ran.second;
    q.move = Move::kRefresh;
    q.reason = "#" + std::to_string(kept) + " changed the state " + ran.second + " derived its " +
               "files from at #" + std::to_string(ran.first->id) + " (refresh = true): run again";
    out.push_back(std::move(q));
  }
  return out;
}

}  // namespace arbor
