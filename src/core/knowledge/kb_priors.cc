// KbPriors::Compute: one pass over the entries, then one combination per candidate.
//
// Every quantity a prior needs is a weighted sum Σ w·x over entries, so the sums are
// accumulated per (action, value) for exact matches, per action for any match and per
// category, and a candidate's totals are combined from them by linearity:
//   exact + 0.3·(action − exact) + 0.15·(category − this action's entries in the category).
// That keeps the pass linear in entries however many actions share a category (the prior
// computation budget is 5 ms at 100k entries, docs/benchmarks.md).
#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_map>

#include "core/knowledge/kb.h"
#include "core/search/category_stats.h"
#include "util/strings.h"

namespace arbor {
namespace {

constexpr size_t kRefPool = 16;  // strongest entries remembered per action / category

// What one entry says, computed once however many sums it joins.
struct Obs {
  bool has_rho = false;
  double rho = 0;  // ln(implied / assumed speedup)
  bool reached_check = false;
  bool accuracy_failure = false;
  bool counts_for_crash = false;  // infrastructure failures say nothing about the action
  bool crashed = false;
  double cost_s = 0;

  explicit Obs(const KbEntry& e) {
    if (e.implied_speedup && e.prior_speedup > 0) {
      has_rho = true;
      rho = std::log(*e.implied_speedup / e.prior_speedup);
    }
    crashed = e.ParsedOutcome() == Outcome::kCrashed;
    reached_check = !crashed;
    accuracy_failure = e.accuracy_failure;
    counts_for_crash = ParseRcaClass(e.rca) != RcaClass::kInfrastructure;
    cost_s = e.cost_s;
  }
};

struct Acc {
  double w = 0;
  double s_w = 0;    // Σ w over entries with an implied speedup
  double s_rho = 0;  // Σ w·ln(implied / assumed speedup)
  double acc_e = 0, acc_t = 0, crash_e = 0, crash_t = 0;
  double cost_w = 0, cost_sum = 0;

  void Add(const Obs& o, double weight) {
    w += weight;
    if (o.has_rho) {
      s_w += weight;
      s_rho += weight * o.rho;
    }
    AddRepeat(o, weight);
    if (o.cost_s > 0) {
      cost_w += weight;
      cost_sum += weight * o.cost_s;
    }
  }
  // The risk fields only (also the extra weight of a deterministic failure).
  void AddRepeat(const Obs& o, double weight) {
    if (o.reached_check) {
      acc_t += weight;
      if (o.accuracy_failure) acc_e += weight;
    }
    if (o.counts_for_crash) {
      crash_t += weight;
      if (o.crashed) crash_e += weight;
    }
  }
  Acc& Plus(const Acc& o, double k) {
    w += k * o.w;
    s_w += k * o.s_w;
    s_rho += k * o.s_rho;
    acc_e += k * o.acc_e;
    acc_t += k * o.acc_t;
    crash_e += k * o.crash_e;
    crash_t += k * o.crash_t;
    cost_w += k * o.cost_w;
    cost_sum += k * o.cost_sum;
    return *this;
  }
};

struct Ref {
  double base = 0;  // context weight
  const KbEntry* entry = nullptr;
};

// The strongest kRefPool entries seen so far; most entries are turned away by one comparison.
struct RefPool {
  std::vector<Ref> refs;
  double weakest = 0;  // smallest base in a full pool

  void Offer(Ref r) {
    if (refs.size() == kRefPool && r.base <= weakest) return;
    if (refs.size() < kRefPool) {
      refs.push_back(r);
    } else {
      *std::min_element(refs.begin(), refs.end(),
                        [](const Ref& a, const Ref& b) { return a.base < b.base; }) = r;
    }
    if (refs.size() == kRefPool) {
      weakest = std::min_element(refs.begin(), refs.end(), [](const Ref& a, const Ref& b) {
                  return a.base < b.base;
                })->base;
    }
  }
};

struct ActionAcc {
  const ActionSpec* action = nullptr;
  std::vector<std::string> values;  // {""} for an action without values
  std::vector<Acc> exact;           // per value
  std::vector<Acc> repeats;         // per value: extra weight of deterministic failures
  Acc any;                          // every entry of the action id, unscaled
  Acc in_category;                  // those of them filed under the action's category
  RefPool refs;
};

struct CategoryAcc {
  Acc all;
  RefPool refs;
};

std::string Similarity(const char* what, double s) {
  if (s >= 0.999) return std::string("same ") + what;
  return std::string(what) + " " + FormatDouble(s * 100, 2) + "% alike";
}

std::string Summary(const KbEntry& e, const ActionSpec& action, const std::string& value,
                    const KbContext& context) {
  std::string s;
  if (e.action_id != action.id) {
    s = "same category: " + e.CandidateKey() + " ";
  } else if (e.value != value) {
    s = "other value: " + e.CandidateKey() + " ";
  } else if (e.content_hash != action.content_hash) {
    s = "earlier version: ";
  }
  s += e.outcome;
  if (e.accuracy_failure) s += " (accuracy)";
  if (e.ParsedOutcome() == Outcome::kCrashed && !e.rca.empty()) s += " (" + e.rca + ")";
  if (e.gain)
    s += " " + std::string(*e.gain >= 0 ? "+" : "") + FormatDouble(*e.gain * 100, 3) + "%";
  if (e.ci_low && e.ci_high) {
    s += " (×" + FormatDouble(*e.ci_low, 3) + "–" + FormatDouble(*e.ci_high, 3) + ")";
  }
  s += " · " + Similarity("hardware", HardwareSimilarity(e.hardware, context.hardware)) + " · " +
       Similarity("workload", WorkloadSimilarity(e.workload, context.workload));
  if (!e.controlled) s += " · uncontrolled";
  if (!e.conflict.empty()) s += " · in conflict";
  s += " · " + e.campaign + " #" + std::to_string(e.node);
  return s;
}

}  // namespace

KbPriors KbPriors::Compute(const std::vector<KbEntry>& entries,
                           const std::vector<ActionSpec>& actions, const KbContext& context) {
  std::vector<ActionAcc> by_action(actions.size());
  std::unordered_map<std::string_view, size_t> action_index;
  std::unordered_map<std::string_view, CategoryAcc> by_category;
  for (size_t i = 0; i < actions.size(); ++i) {
    ActionAcc& a = by_action[i];
    a.action = &actions[i];
    a.values = actions[i].values.empty() ? std::vector<std::string>{""} : actions[i].values;
    a.exact.resize(a.values.size());
    a.repeats.resize(a.values.size());
    action_index.emplace(actions[i].id, i);
    by_category.try_emplace(actions[i].category);
  }
  KbPriors out;
  // Consecutive entries mostly share their signatures: remember the last similarity computed.
  const KbEntry* last = nullptr;
  double last_sim = 0;
  double signature_sim = 0;
  std::vector<double> by_signature;  // similarity by KbEntry::signature, -1 = not computed
  double last_time = -1, last_standing = 0;
  bool last_controlled = false, last_unconflicted = false;
  for (const KbEntry& e : entries) {
    auto cat = by_category.find(e.category);
    auto act = action_index.find(e.action_id);
    if (cat == by_category.end() && act == action_index.end()) continue;
    if (!context.campaign_uid.empty() && e.campaign_uid == context.campaign_uid) continue;
    if (e.signature > 0) {
      auto index = static_cast<size_t>(e.signature);
      if (index >= by_signature.size()) by_signature.resize(index + 1, -1);
      if (by_signature[index] < 0) {
        by_signature[index] = WorkloadSimilarity(e.workload, context.workload) *
                              HardwareSimilarity(e.hardware, context.hardware);
      }
      signature_sim = by_signature[index];
    } else if (last != nullptr && last->workload == e.workload && last->hardware == e.hardware) {
      signature_sim = last_sim;
    } else {
      signature_sim = WorkloadSimilarity(e.workload, context.workload) *
                      HardwareSimilarity(e.hardware, context.hardware);
      last = &e;
      last_sim = signature_sim;
    }
    if (e.superseded_by != 0) continue;
    // Entries of one campaign share their recording time: the age factor is reused.
    if (e.recorded_at != last_time || e.controlled != last_controlled ||
        e.conflict.empty() != last_unconflicted) {
      last_time = e.recorded_at;
      last_controlled = e.controlled;
      last_unconflicted = e.conflict.empty();
      last_standing = EntryStanding(e, context.now);
    }
    double base = signature_sim * last_standing;
    if (base <= 0) continue;
    const Obs o(e);
    if (cat != by_category.end()) {
      cat->second.all.Add(o, base);
      cat->second.refs.Offer({base, &e});
    }
    if (act == action_index.end()) continue;
    ActionAcc& a = by_action[act->second];
    a.any.Add(o, base);
    if (e.category == a.action->category) a.in_category.Add(o, base);
    a.refs.Offer({base, &e});
    if (e.content_hash != a.action->content_hash) continue;
    bool deterministic = IsDeterministicFailure(e);
    for (size_t v = 0; v < a.values.size(); ++v) {
      if (a.values[v] != e.value) continue;
      a.exact[v].Add(o, base);
      if (deterministic) a.repeats[v].AddRepeat(o, base * (kKbDeterministicFactor - 1));
    }
    if (signature_sim >= 1 && e.conflict.empty() && deterministic) {
      std::string what = e.accuracy_failure ? "accuracy failure" : "crashed (" + e.rca + ")";
      out.replays_.try_emplace({e.CandidateKey(), e.path_hash}, KbReplay{e.path_hash, e.id, what});
    }
  }

  for (const ActionAcc& a : by_action) {
    const ActionSpec& action = *a.action;
    const CategoryAcc& cat = by_category[action.category];
    Acc others = cat.all;
    others.Plus(a.in_category, -1);
    for (size_t v = 0; v < a.values.size(); ++v) {
      Acc own = a.exact[v];
      own.Plus(a.any, kKbLevelSameAction).Plus(a.exact[v], -kKbLevelSameAction);
      Acc total = own;
      total.Plus(others, kKbLevelSameCategory).Plus(a.repeats[v], 1);
      if (total.w <= 1e-12) continue;
      KbPrior p;
      // In units of the action's own prior strength (kPriorStrength observations = 1 entry of
      // kKbObservationWeight): the declared speedup weighs as much as one exact entry.
      double k0 = kPriorStrength / kKbObservationWeight;
      p.speedup = action.speedup * std::exp(total.s_rho / (k0 + total.s_w));
      // Cost is learned from this action's own history only: other actions cost what they cost.
      p.cost_s = (action.cost_s * k0 + own.cost_sum) / (k0 + own.cost_w);
      p.acc_events = kKbObservationWeight * total.acc_e;
      p.acc_trials = kKbObservationWeight * total.acc_t;
      p.crash_events = kKbObservationWeight * total.crash_e;
      p.crash_trials = kKbObservationWeight * total.crash_t;
      p.category_weight = total.w;
      const std::string& value = a.values[v];
      std::vector<std::pair<double, const KbEntry*>> refs;
      for (const Ref& r : a.refs.refs) {
        double level = r.entry->value == value && r.entry->content_hash == action.content_hash
                           ? 1
                           : kKbLevelSameAction;
        refs.emplace_back(level * r.base, r.entry);
      }
      for (const Ref& r : cat.refs.refs) {
        if (r.entry->action_id != action.id) {
          refs.emplace_back(kKbLevelSameCategory * r.base, r.entry);
        }
      }
      std::stable_sort(refs.begin(), refs.end(),
                       [](const auto& x, const auto& y) { return x.first > y.first; });
      for (const auto& [w, e] : refs) {
        if (static_cast<int>(p.refs.size()) >= kKbMaxRefs) break;
        p.refs.push_back(KbRef{e->uid, e->id, w, Summary(*e, action, value, context)});
      }
      out.by_key_.emplace(CandidateKey(action.id, value), std::move(p));
    }
  }
  return out;
}

bool IsDeterministicFailure(const KbEntry& e) {
  if (e.accuracy_failure) return true;
  if (e.ParsedOutcome() != Outcome::kCrashed) return false;
  switch (ParseRcaClass(e.rca).value_or(RcaClass::kUnknown)) {
    case RcaClass::kRuntimeCrash:
    case RcaClass::kBuildError:
    case RcaClass::kAccuracy:
    case RcaClass::kDependency:
      return true;
    default:
      return false;
  }
}

const KbReplay* KbPriors::Replay(const std::string& candidate_key,
                                 const std::string& path_hash) const {
  auto it = replays_.find({candidate_key, path_hash});
  return it == replays_.end() ? nullptr : &it->second;
}

const KbPrior* KbPriors::Find(const std::string& candidate_key) const {
  auto it = by_key_.find(candidate_key);
  return it == by_key_.end() ? nullptr : &it->second;
}

}  // namespace arbor
