// Refreshes: a kept change whose command derives files from the state it ran on, re-run once
// later keeps changed that state (docs/search.md, "Refreshes").

#include <algorithm>
#include <map>
#include <utility>

#include "core/search/moves.h"

namespace arbor {

std::vector<Requeue> Refreshes(const Tree& tree, const Catalog& catalog, NodeId kept) {
  const Node* k = tree.Find(kept);
  if (k == nullptr || MoveOf(*k) == Move::kRefresh) return {};
  const std::vector<std::string> fresh = AppliedKeys(*k);  // ids and keys the keep (re)applied
  auto refreshing = [&](const std::string& key) {
    const ActionSpec* a = catalog.FindAction(SplitCandidateKey(key).first);
    return a != nullptr && a->refresh;
  };
  // Per action id: the latest kept node on the path that ran it, and its candidate key.
  std::map<std::string, std::pair<const Node*, std::string>> latest;
  for (const Node* n : tree.Path(kept)) {
    if (n->id == kRootId || n->id == kept || n->outcome != Outcome::kKept) continue;
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
