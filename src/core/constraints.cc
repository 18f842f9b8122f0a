#include "core/constraints.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "util/strings.h"

namespace arbor {
namespace {

std::optional<double> AsNumber(const std::string& s) {
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

bool OnPath(const Tree& tree, NodeId ancestor, NodeId at) {
  for (const Node* n : tree.Path(at)) {
    if (n->id == ancestor) return true;
  }
  return false;
}

// Nodes some other node already retries (re-queued, revisited or re-tuned): each only once.
std::set<NodeId> RequeuedSources(const Tree& tree) {
  std::set<NodeId> out;
  for (const Node* n : tree.All()) {
    if (n->critic.requeued_from != kNoNode) out.insert(n->critic.requeued_from);
  }
  return out;
}

std::string Percent(double f) { return FormatDouble(f * 100, 3) + "%"; }

}  // namespace

double TargetShare(const Profile& profile, const std::vector<std::string>& targets) {
  if (targets.empty()) return 1.0;
  double share = 0;
  for (const Component& c : profile.components) {
    for (const std::string& t : targets) {
      if (GlobMatch(t, c.name)) {
        share += c.share;
        break;
      }
    }
  }
  return share;
}

std::vector<Constraint> ActiveConstraints(const Tree& tree, const std::vector<NodeId>& publishers,
                                          NodeId at, int64_t last_keep_seq) {
  std::vector<Constraint> out;
  for (NodeId id : publishers) {
    const Node* n = tree.Find(id);
    if (n == nullptr) continue;
    for (const Constraint& c : n->critic.constraints) {
      if (c.until_keep && last_keep_seq > n->seq) continue;
      if (c.scope == ConstraintScope::kSubtree && !OnPath(tree, c.scope_node, at)) continue;
      out.push_back(c);
    }
  }
  return out;
}

std::optional<Constraint> Violated(const std::vector<Constraint>& active, const Candidate& c) {
  for (const Constraint& k : active) {
    switch (k.kind) {
      case ConstraintKind::kForbidAction:
        if (k.action == c.action->id) return k;
        break;
      case ConstraintKind::kForbidCategory:
        if (k.category == c.action->category) return k;
        break;
      case ConstraintKind::kForbidValues: {
        if (k.action != c.action->id) break;
        auto v = AsNumber(c.value);
        if (!v) break;
        if ((!k.min || *v >= *k.min) && (!k.max || *v <= *k.max)) return k;
        break;
      }
    }
  }
  return std::nullopt;
}

std::vector<Constraint> PublishFor(const Tree& tree, const PublishInput& in) {
  std::vector<Constraint> out;
  const Node& n = *in.node;
  Constraint base;
  base.source = n.id;
  base.action = n.action_id;
  std::string why = n.critic.rca + " at " + n.CandidateKey();

  // A parameter value that crashed, hung or ran out of memory: forbid the range beyond it,
  // away from values that ran, campaign-wide (such limits rarely depend on the path).
  auto v = AsNumber(n.value);
  if (v && in.prune_direction && n.outcome == Outcome::kCrashed) {
    std::optional<double> ran_below;
    std::optional<double> ran_above;
    for (const Node* other : tree.All()) {
      if (other->action_id != n.action_id || other->id == n.id) continue;
      if (other->outcome != Outcome::kKept && other->outcome != Outcome::kReverted) continue;
      auto u = AsNumber(other->value);
      if (!u) continue;
      if (*u < *v) ran_below = std::max(ran_below.value_or(*u), *u);
      if (*u > *v) ran_above = std::min(ran_above.value_or(*u), *u);
    }
    Constraint c = base;
    c.kind = ConstraintKind::kForbidValues;
    c.scope = ConstraintScope::kCampaign;
    if (ran_below && !ran_above) {
      c.min = *v;
    } else if (ran_above && !ran_below) {
      c.max = *v;
    } else {
      c.min = *v;
      c.max = *v;
    }
    c.reason = why;
    out.push_back(c);
    return out;
  }
  if (in.missing_dependency) {
    Constraint c = base;
    c.kind = ConstraintKind::kForbidAction;
    c.scope = ConstraintScope::kCampaign;
    c.reason = "missing dependency" + (n.critic.evidence.empty() ? "" : ": " + n.critic.evidence);
    out.push_back(c);
    return out;
  }
  if (in.prune_direction) {
    // For one value of a `values` action the rest of the action stays open (other values
    // may be fine); the value itself is already excluded below its parent.
    if (n.value.empty()) {
      Constraint c = base;
      c.kind = ConstraintKind::kForbidAction;
      c.scope = ConstraintScope::kSubtree;
      c.scope_node = n.parent;
      c.reason = why;
      out.push_back(c);
    }
    // Two accuracy failures in one category and no keep in it: the category breaks accuracy
    // here; pause it until the bottleneck moves.
    if (n.critic.rca == "accuracy" && !n.category.empty()) {
      int failures = 0;
      bool kept = false;
      for (const Node* other : tree.All()) {
        if (other->category != n.category || other->id == n.id) continue;
        kept |= other->outcome == Outcome::kKept;
        failures += other->critic.rca == "accuracy" ? 1 : 0;
      }
      ++failures;  // this node (the tree may still hold its running version)
      if (failures >= 2 && !kept) {
        Constraint cat = base;
        cat.kind = ConstraintKind::kForbidCategory;
        cat.scope = ConstraintScope::kCampaign;
        cat.category = n.category;
        cat.action.clear();
        cat.until_keep = true;
        cat.reason = std::to_string(failures) + " accuracy failures in category " + n.category;
        out.push_back(cat);
      }
    }
  }
  return out;
}

std::vector<Constraint> CircuitBreaker(const Tree& tree, int n, NodeId source) {
  if (n <= 0) return {};
  std::vector<const Node*> evaluated;
  for (const Node* node : tree.All()) {
    if (node->id == kRootId || node->step != Step::kDone) continue;
    if (node->outcome == Outcome::kKept || node->outcome == Outcome::kReverted ||
        node->outcome == Outcome::kCrashed) {
      evaluated.push_back(node);
    }
  }
  if (static_cast<int>(evaluated.size()) < n) return {};
  std::sort(evaluated.begin(), evaluated.end(),
            [](const Node* a, const Node* b) { return a->seq < b->seq; });
  std::set<std::string> categories;
  for (size_t i = evaluated.size() - static_cast<size_t>(n); i < evaluated.size(); ++i) {
    if (evaluated[i]->outcome != Outcome::kCrashed) return {};
    categories.insert(evaluated[i]->category);
  }
  std::vector<Constraint> out;
  for (const std::string& cat : categories) {
    Constraint c;
    c.kind = ConstraintKind::kForbidCategory;
    c.scope = ConstraintScope::kCampaign;
    c.category = cat;
    c.until_keep = true;
    c.source = source;
    c.reason = "circuit breaker: " + std::to_string(n) + " consecutive crashes";
    out.push_back(c);
  }
  return out;
}

std::vector<Requeue> Introspect(const Tree& tree, const Catalog& catalog, NodeId kept,
                                const Profile& now, const ProfileLookup& profile_at) {
  const std::set<NodeId> already = RequeuedSources(tree);
  std::vector<Requeue> out;
  std::vector<const Node*> path = tree.Path(kept);
  for (const Node* ancestor : path) {
    if (ancestor->id == kept) break;
    for (NodeId child_id : tree.Children(ancestor->id)) {
      const Node* x = tree.Find(child_id);
      if (x->outcome != Outcome::kReverted || x->critic.rca != "no_gain") continue;
      if (already.count(x->id)) continue;
      const ActionSpec* action = catalog.FindAction(x->action_id);
      if (action == nullptr || action->targets.empty()) continue;
      std::optional<Profile> then = profile_at(x->parent);
      if (!then) continue;
      double before = TargetShare(*then, action->targets);
      double after = TargetShare(now, action->targets);
      if (after >= std::max(1.5 * before, before + 0.05)) {
        out.push_back({x->id, "its targets' share grew from " + Percent(before) + " to " +
                                  Percent(after) + " since #" + std::to_string(x->id) +
                                  " was reverted"});
      }
    }
  }
  return out;
}

std::vector<Requeue> Revisit(const Tree& tree, const Catalog& catalog, NodeId incumbent) {
  const std::set<NodeId> already = RequeuedSources(tree);
  std::set<std::string> applied = tree.AppliedActions(incumbent);
  std::set<std::string> here;  // tried at the incumbent already (or pending there)
  for (NodeId child : tree.Children(incumbent)) here.insert(tree.Find(child)->CandidateKey());
  std::vector<Requeue> out;
  std::set<std::string> chosen;
  std::vector<const Node*> path = tree.Path(incumbent);
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    for (NodeId child_id : tree.Children(path[i]->id)) {
      const Node* x = tree.Find(child_id);
      if (x->outcome != Outcome::kReverted) continue;
      // Only "no gain": a failure's constraints (accuracy, crashes) already decide where it may
      // be retried, and a retry they forbid would only be pruned.
      if (x->critic.rca != "no_gain") continue;
      if (already.count(x->id) || here.count(x->CandidateKey()) ||
          chosen.count(x->CandidateKey()) || applied.count(x->action_id)) {
        continue;
      }
      const ActionSpec* action = catalog.FindAction(x->action_id);
      if (action == nullptr) continue;
      bool ok = true;
      for (const std::string& r : action->requires_) ok = ok && applied.count(r) > 0;
      for (const std::string& c : action->conflicts) ok = ok && applied.count(c) == 0;
      for (const std::string& a : applied) {  // conflicts are symmetric
        const ActionSpec* kept = catalog.FindAction(a);
        if (kept == nullptr) continue;
        for (const std::string& c : kept->conflicts) ok = ok && c != x->action_id;
      }
      if (!ok) continue;
      // The keeps made since it was tried: what changed under it.
      std::vector<std::string> since;
      for (size_t j = i + 1; j < path.size(); ++j) since.push_back(path[j]->CandidateKey());
      chosen.insert(x->CandidateKey());
      out.push_back({x->id, "every candidate was tried and budget is left; #" +
                                std::to_string(x->id) + " was reverted (" + x->critic.rca +
                                ") before " + Join(since, ", ") + " changed the path"});
    }
  }
  // Re-tune: the other values of parameters kept on the path, from the last keep of each.
  std::map<std::string, const Node*> last_kept;
  for (const Node* n : path) {
    if (n->id != kRootId && n->outcome == Outcome::kKept && !n->value.empty()) {
      last_kept[n->action_id] = n;
    }
  }
  for (const auto& [id, kept] : last_kept) {
    if (already.count(kept->id)) continue;
    const ActionSpec* action = catalog.FindAction(id);
    if (action == nullptr) continue;
    for (const std::string& v : action->values) {
      std::string key = CandidateKey(id, v);
      if (v == kept->value || here.count(key) || chosen.count(key)) continue;
      chosen.insert(key);
      out.push_back({kept->id,
                     "every candidate was tried and budget is left; re-tuning " + id +
                         " (kept at " + kept->value + " in #" + std::to_string(kept->id) +
                         ") on the path as it is now",
                     v});
    }
  }
  return out;
}

}  // namespace arbor
