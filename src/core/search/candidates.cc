#include "core/search/candidates.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "util/strings.h"

namespace arbor {
Catalog::Catalog(const std::vector<ActionSpec>& actions) {
  for (const ActionSpec& a : actions) {
    const size_t begin = all_.size();
    if (a.values.empty()) {
      all_.push_back(Candidate{&a, "", CandidateKey(a.id, "")});
    } else {
      for (const std::string& v : a.values) {
        all_.push_back(Candidate{&a, v, CandidateKey(a.id, v)});
      }
    }
    ranges_.push_back(ActionRange{&a, begin, all_.size()});
    by_id_.emplace(a.id, &a);  // the first action with an id wins, as a linear search would
  }
  by_key_.reserve(all_.size());
  for (size_t i = 0; i < all_.size(); ++i) by_key_[all_[i].key].push_back(i);
}

const ActionSpec* Catalog::FindAction(const std::string& id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second;
}

void Catalog::CountTried(const std::string& key, int delta) const {
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return;  // not (or no longer) in the campaign file
  for (size_t i : it->second) {
    int& count = cache_.tried_count[i];
    count += delta;
    const uint64_t bit = uint64_t{1} << (i % 64);
    if (count > 0) {
      cache_.tried_bits[i / 64] |= bit;
    } else {
      cache_.tried_bits[i / 64] &= ~bit;
    }
  }
}

void Catalog::Extend(const Tree& tree, const Node& n) const {
  cache_.on_path.insert(n.id);
  cache_.node = n.id;
  if (n.id != kRootId && n.outcome == Outcome::kKept) {
    const std::vector<std::string> keys = AppliedKeys(n);  // {id, key} and a companion's
    for (const std::string& k : keys) ++cache_.applied[k];
    for (size_t i = 0; i < keys.size(); i += 2) {
      if (const ActionSpec* a = FindAction(keys[i])) {
        for (const std::string& x : a->conflicts) cache_.conflicted_by.emplace(x, a->id);
      }
    }
    const std::vector<std::string> removed = RemovedKeys(n);  // a kept drop: {id, key}
    for (const std::string& k : removed) {
      auto it = cache_.applied.find(k);
      if (it != cache_.applied.end() && --it->second <= 0) cache_.applied.erase(it);
    }
    if (!removed.empty()) {  // its conflicts go; another applied action's may name them still
      for (auto it = cache_.conflicted_by.begin(); it != cache_.conflicted_by.end();) {
        it = it->second == removed[0] ? cache_.conflicted_by.erase(it) : std::next(it);
      }
      for (const auto& [k, count] : cache_.applied) {
        if (const ActionSpec* a = FindAction(k)) {
          for (const std::string& x : a->conflicts) cache_.conflicted_by.emplace(x, a->id);
        }
      }
    }
    cache_.verdicts_valid = false;
  }
  for (NodeId child : tree.Children(n.id)) {
    const Node* c = tree.Find(child);
    if (c->outcome != Outcome::kPruned) CountTried(c->CandidateKey(), +1);
  }
}

void Catalog::Rebuild(const Tree& tree, NodeId node) const {
  cache_ = PathCache{};
  cache_.tried_count.assign(all_.size(), 0);
  cache_.tried_bits.assign((all_.size() + 63) / 64, 0);
  const std::vector<const Node*> path = tree.Path(node);
  for (const Node* n : path) Extend(tree, *n);
  cache_.node = node;
  cache_.pos = tree.Changes().size();
  // A node not (yet) in the tree has an empty path now but may get one: do not keep it.
  cache_.tree_uid = path.empty() ? 0 : tree.uid();
}

void Catalog::Sync(const Tree& tree, NodeId node) const {
  const std::vector<TreeChange>& changes = tree.Changes();
  if (cache_.tree_uid != tree.uid() || cache_.pos > changes.size()) return Rebuild(tree, node);
  // Catch up with the tree over the cached path.
  for (size_t i = cache_.pos; i < changes.size(); ++i) {
    const TreeChange& c = changes[i];
    if (cache_.on_path.count(c.node) > 0 &&
        (c.old_parent != c.new_parent || c.old_kept != c.new_kept || c.old_key != c.new_key)) {
      return Rebuild(tree, node);  // the path itself changed
    }
    if (c.old_tried && cache_.on_path.count(c.old_parent) > 0) CountTried(c.old_key, -1);
    if (c.new_tried && cache_.on_path.count(c.new_parent) > 0) CountTried(c.new_key, +1);
  }
  cache_.pos = changes.size();
  if (node == cache_.node) return;
  // The incumbent moved down: extend the path, or rebuild when `node` is elsewhere.
  std::vector<const Node*> below;
  const Node* n = tree.Find(node);
  for (; n != nullptr && n->id != cache_.node; n = tree.Find(n->parent)) {
    below.push_back(n);
    if (below.size() > tree.size()) break;  // a cycle: Rebuild's Path reports it
  }
  if (n == nullptr || n->id != cache_.node) return Rebuild(tree, node);
  for (auto it = below.rbegin(); it != below.rend(); ++it) Extend(tree, **it);
}

void Catalog::ComputeVerdicts() const {
  cache_.action_applied.assign(ranges_.size(), 0);
  cache_.action_reason.assign(ranges_.size(), std::string());
  auto applied = [&](const std::string& s) { return cache_.applied.count(s) > 0; };
  for (size_t r = 0; r < ranges_.size(); ++r) {
    const ActionSpec& a = *ranges_[r].action;
    if (applied(a.id)) {
      cache_.action_applied[r] = 1;
      continue;
    }
    std::string& reason = cache_.action_reason[r];
    for (const std::string& req : a.requires_) {
      if (!applied(req)) {
        reason = "requires " + req;
        break;
      }
    }
    if (reason.empty()) {
      for (const std::string& x : a.conflicts) {
        if (applied(x)) {
          reason = "conflicts with " + x;
          break;
        }
      }
    }
    if (reason.empty()) {
      // Conflicts are symmetric: declaring them on either side is enough. The earliest kept
      // action on the path is named.
      auto it = cache_.conflicted_by.find(a.id);
      if (it != cache_.conflicted_by.end()) reason = "conflicts with " + it->second;
    }
  }
  cache_.verdicts_valid = true;
}

void Catalog::Classify(const Tree& tree, NodeId node, std::vector<Candidate>* applicable,
                       std::vector<Exclusion>* excluded) const {
  Sync(tree, node);
  if (!cache_.verdicts_valid) ComputeVerdicts();
  const std::vector<uint64_t>& bits = cache_.tried_bits;
  for (size_t r = 0; r < ranges_.size(); ++r) {
    const ActionRange& range = ranges_[r];
    const bool action_applied = cache_.action_applied[r] != 0;
    const std::string& action_reason = cache_.action_reason[r];
    if (excluded == nullptr) {
      if (action_applied || !action_reason.empty() || applicable == nullptr) continue;
      // The untried candidates of this action: the clear bits of [begin, end).
      for (size_t i = range.begin; i < range.end;) {
        const size_t word = i / 64;
        uint64_t clear = ~bits[word] >> (i % 64);
        const size_t span = std::min<size_t>(64 - i % 64, range.end - i);
        if (span < 64) clear &= (uint64_t{1} << span) - 1;
        while (clear != 0) {
          const int skip = __builtin_ctzll(clear);
          applicable->push_back(all_[i + static_cast<size_t>(skip)]);
          clear &= clear - 1;
        }
        i += span;
      }
      continue;
    }
    for (size_t i = range.begin; i < range.end; ++i) {
      const Candidate& c = all_[i];
      std::string reason;
      if (action_applied) {
        reason = "already applied on the path";
      } else if (cache_.tried_count[i] > 0) {
        reason = "already tried from this state or an ancestor";
      } else {
        reason = action_reason;
      }
      if (reason.empty()) {
        if (applicable != nullptr) applicable->push_back(c);
      } else {
        excluded->push_back(Exclusion{c, std::move(reason)});
      }
    }
  }
}

ApplySpec SubstituteValue(const ApplySpec& apply, const std::string& value) {
  constexpr std::string_view kPlaceholder = "{value}";
  ApplySpec out = apply;
  for (auto& [name, v] : out.env) v = ReplaceAll(v, kPlaceholder, value);
  for (auto& [name, v] : out.append) v = ReplaceAll(v, kPlaceholder, value);
  out.patch = ReplaceAll(out.patch, kPlaceholder, value);
  out.run = ReplaceAll(out.run, kPlaceholder, value);
  out.goal = ReplaceAll(out.goal, kPlaceholder, value);
  return out;
}

}  // namespace arbor
