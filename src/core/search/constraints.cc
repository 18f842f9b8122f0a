#include "core/search/constraints.h"

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
  std::string why = std::string(RcaClassName(n.critic.rca)) + " at " + n.CandidateKey();

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
  if (in.await_prerequisite) {
    // One value of a `values` action is excluded below its parent by the tree already; a
    // plain action is blocked everywhere until the path changes (the next keep), when the
    // moves re-queue it (moves.h, PrerequisiteRetries).
    if (n.value.empty()) {
      Constraint c = base;
      c.kind = ConstraintKind::kForbidAction;
      c.scope = ConstraintScope::kCampaign;
      c.until_keep = true;
      c.reason = "missing prerequisite" +
                 (n.critic.evidence.empty()
                      ? std::string()
                      : ": " + n.critic.evidence.substr(0, n.critic.evidence.find('\n'))) +
                 "; retried once the path changes";
      out.push_back(c);
    }
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
      c.scope_node = tree.IsBranch(n) ? tree.BaseOf(n.id) : n.parent;  // a branch: its base
      c.reason = why;
      out.push_back(c);
    }
    // Two accuracy failures in one category and no keep in it: the category breaks accuracy
    // here; pause it until the bottleneck moves.
    // A pair (moves.h) that fails is one expected outcome of its hypothesis, not evidence
    // about the category: pairs neither publish nor count towards this.
    // Nor do drops (a drop runs without its change).
    // Nor do branch nodes (their state holds their branch's changes too).
    auto single = [&tree](const Node& x) {
      return !CompanionKey(x) && !DroppedKey(x) && !tree.IsBranch(x);
    };
    if (n.critic.rca == RcaClass::kAccuracy && !n.category.empty() && single(n)) {
      int failures = 0;
      bool kept = false;
      for (const Node* other : tree.All()) {
        if (other->category != n.category || other->id == n.id || !single(*other)) continue;
        kept |= other->outcome == Outcome::kKept;
        failures += other->critic.rca == RcaClass::kAccuracy ? 1 : 0;
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

std::vector<Constraint> WithoutBansOf(const std::vector<Constraint>& active,
                                      const std::vector<std::string>& ids) {
  std::vector<Constraint> out;
  for (const Constraint& c : active) {
    const bool named = c.kind != ConstraintKind::kForbidCategory &&
                       std::find(ids.begin(), ids.end(), c.action) != ids.end();
    if (!named) out.push_back(c);
  }
  return out;
}

std::vector<Constraint> CircuitBreaker(const Tree& tree, int n, NodeId source) {
  if (n <= 0) return {};
  std::vector<const Node*> evaluated;
  for (const Node* node : tree.All()) {
    // `source` is the node being finished: its outcome is set, its step not yet kDone.
    if (node->id == kRootId || (node->step != Step::kDone && node->id != source)) continue;
    if (node->outcome == Outcome::kKept || node->outcome == Outcome::kReverted ||
        node->outcome == Outcome::kCrashed) {
      evaluated.push_back(node);
    }
  }
  if (static_cast<int>(evaluated.size()) < n) return {};
  std::sort(evaluated.begin(), evaluated.end(),
            [](const Node* a, const Node* b) { return a->seq < b->seq; });
  std::set<std::string> categories;
  std::vector<std::string> ids;
  for (size_t i = evaluated.size() - static_cast<size_t>(n); i < evaluated.size(); ++i) {
    if (evaluated[i]->outcome != Outcome::kCrashed) return {};
    categories.insert(evaluated[i]->category);
    ids.push_back("#" + std::to_string(evaluated[i]->id));
  }
  std::vector<Constraint> out;
  for (const std::string& cat : categories) {
    Constraint c;
    c.kind = ConstraintKind::kForbidCategory;
    c.scope = ConstraintScope::kCampaign;
    c.category = cat;
    c.until_keep = true;
    c.source = source;
    c.reason = "circuit breaker: " + std::to_string(n) + " consecutive crashes (" +
               Join(ids, ", ") + "); category " + (cat.empty() ? "(none)" : cat) +
               " paused until the next keep";
    out.push_back(c);
  }
  return out;
}

}  // namespace arbor
