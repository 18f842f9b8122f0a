#include "core/candidates.h"

#include <algorithm>
#include <utility>

#include "util/strings.h"

namespace arbor {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

Catalog::Catalog(const std::vector<ActionSpec>& actions) : actions_(&actions) {
  for (const ActionSpec& a : actions) {
    if (a.values.empty()) {
      all_.push_back(Candidate{&a, "", CandidateKey(a.id, "")});
      continue;
    }
    for (const std::string& v : a.values) all_.push_back(Candidate{&a, v, CandidateKey(a.id, v)});
  }
}

const ActionSpec* Catalog::FindAction(const std::string& id) const {
  for (const ActionSpec& a : *actions_) {
    if (a.id == id) return &a;
  }
  return nullptr;
}

void Catalog::Classify(const Tree& tree, NodeId node, std::vector<Candidate>* applicable,
                       std::vector<Exclusion>* excluded) const {
  const std::set<std::string> applied = tree.AppliedActions(node);
  const std::set<std::string> tried = tree.TriedAlongPath(node);
  // Kept actions on the path in path order, so a reverse conflict names the earliest one.
  std::vector<const ActionSpec*> path_actions;
  for (const Node* n : tree.Path(node)) {
    if (n->id == kRootId || n->outcome != Outcome::kKept) continue;
    if (const ActionSpec* a = FindAction(n->action_id)) path_actions.push_back(a);
  }

  for (const Candidate& c : all_) {
    const ActionSpec& a = *c.action;
    std::string reason;
    if (applied.count(a.id) > 0) {
      reason = "already applied on the path";
    } else if (tried.count(c.key) > 0) {
      reason = "already tried from this state or an ancestor";
    } else {
      for (const std::string& r : a.requires_) {
        if (applied.count(r) == 0) {
          reason = "requires " + r;
          break;
        }
      }
    }
    if (reason.empty()) {
      for (const std::string& x : a.conflicts) {
        if (applied.count(x) > 0) {
          reason = "conflicts with " + x;
          break;
        }
      }
    }
    if (reason.empty()) {
      // Conflicts are symmetric: declaring them on either side is enough.
      for (const ActionSpec* p : path_actions) {
        if (Contains(p->conflicts, a.id)) {
          reason = "conflicts with " + p->id;
          break;
        }
      }
    }
    if (reason.empty()) {
      if (applicable != nullptr) applicable->push_back(c);
    } else if (excluded != nullptr) {
      excluded->push_back(Exclusion{c, std::move(reason)});
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
