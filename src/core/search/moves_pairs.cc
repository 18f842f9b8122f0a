// Pairs: two candidates applied as one node (docs/search.md, steps 4 and 9).

#include <algorithm>
#include <map>
#include <set>

#include "core/search/moves.h"
#include "core/search/moves_detail.h"
#include "core/tree/frontier.h"
#include "util/strings.h"

namespace arbor {

using moves_detail::Eligibility;
using moves_detail::LatestSingleTries;
using moves_detail::Percent;

namespace {

// A candidate whose declared requires the path does not meet, never tried on it: a state that
// applies what it requires unlocks it (a follow-up of that state).
bool LockedOnPath(const Candidate& c, const std::set<std::string>& tried_here,
                  const Eligibility& on_path) {
  const auto& r = c.action->requires_;
  return !tried_here.count(c.key) && !on_path.Applied(c.action->id) &&
         std::any_of(r.begin(), r.end(),
                     [&](const std::string& id) { return !on_path.Applied(id); });
}

Requeue UnlockedFollowUp(const Candidate& c, const Node& state) {
  Requeue q;
  q.key = c.key;
  q.under = state.id;
  q.move = Move::kFollowUp;
  q.reason = "a follow-up of #" + std::to_string(state.id) + " (" + state.CandidateKey() + ", " +
             Percent(state.gain.value_or(-1.0)) + "): " + c.key +
             " requires what its state applies (" + Join(c.action->requires_, ", ") +
             "), never tried on the path";
  return q;
}

}  // namespace

std::optional<std::string> PairedWith(const Tree& tree, const Node& node) {
  const std::vector<std::string> companions = CompanionKeys(node);
  if (companions.size() > 1) return std::nullopt;  // a bundle (Move::kFix) is no pair
  if (!companions.empty()) return companions.front();
  if (!tree.IsBranch(node)) return std::nullopt;
  const std::vector<const Node*> branch = tree.BranchPath(node.id);
  if (branch.size() != 2 || CompanionKey(*branch[0]) || DroppedKey(*branch[0])) {
    return std::nullopt;
  }
  return branch[0]->CandidateKey();
}

std::vector<Requeue> Pairs(const Tree& tree, const Catalog& catalog, NodeId incumbent, int limit,
                           const Promise& promise, PairKinds kinds, bool branches) {
  const bool hopeful_only = kinds == PairKinds::kHopeful;
  const std::set<std::string> tried_here = tree.TriedAlongPath(incumbent);
  using Unordered = std::pair<std::string, std::string>;
  auto unordered = [](std::string a, std::string b) {
    if (b < a) std::swap(a, b);
    return Unordered{std::move(a), std::move(b)};
  };
  // Pairs tried, running or waiting on the path; and how many pairs each side lost in.
  std::set<Unordered> pairs_tried;
  std::map<std::string, int> pairs_lost;
  for (const Node* p : tree.Path(incumbent)) {
    for (const Node* x : tree.Below(p->id)) {  // its children, and pairs opened as branches
      std::optional<std::string> with = PairedWith(tree, *x);
      // Run, running or waiting, or vetoed here; not one superseded while it waited under an
      // earlier incumbent (it never ran: Pairs offers it again).
      if (with && (x->outcome != Outcome::kPruned || p->id == incumbent)) {
        pairs_tried.insert(unordered(x->CandidateKey(), *with));
      }
      // Lost: measured, no gain (a pair that broke accuracy says nothing of its speed).
      if (with && !DroppedKey(*x) && moves_detail::RevertedForNoGain(*x)) {
        ++pairs_lost[x->CandidateKey()];
        ++pairs_lost[*with];
      }
    }
  }
  const std::map<std::string, const Node*> latest = LatestSingleTries(tree, incumbent);
  // One side may run with the other: not applied, and it fits the path with the other.
  const Eligibility eligible(tree, catalog, incumbent);
  auto fits = [&](const std::string& id, const std::string& other) {
    return id != other && !eligible.Applied(id) && eligible.Fits(id, other);
  };
  std::vector<Requeue> out;
  // A pair whose other side (or, failing that, whose own side) ran at the incumbent and may be
  // built on is opened under that node: a branch that reuses its state.
  auto at_incumbent = [&](const std::string& key) -> const Node* {
    auto it = latest.find(key);
    if (!branches || it == latest.end()) return nullptr;
    const Node* n = it->second;
    // A single idea's state only: not a pair, swap or drop, nor a branch node whose state holds
    // more (a pair kept on a branch and un-kept later sits under the incumbent too).
    return n->parent == incumbent && MayBranchFrom(*n) && !CompanionKey(*n) && !DroppedKey(*n) &&
                   !tree.IsBranch(*n) && !HasFlag(*n, kBranchFlag)
               ? n
               : nullptr;
  };
  auto place = [&](Requeue* q) {
    if (const Node* w = at_incumbent(*q->with)) {
      q->under = w->id;
    } else if (const Node* o = at_incumbent(q->key)) {
      auto with = latest.find(*q->with);
      q->from = with != latest.end() ? with->second->id : kNoNode;
      q->key = *q->with;
      q->under = o->id;
    } else {
      return;
    }
    q->with.reset();
  };
  // With `retune`, the own side may be another value of a parameter applied on the path.
  auto take = [&](const std::string& own, NodeId from, const std::string& with,
                  const std::string& why, bool retune = false) {
    const std::string own_id = SplitCandidateKey(own).first;
    const std::string with_id = SplitCandidateKey(with).first;
    const bool own_fits =
        retune && eligible.Applied(own_id)
            ? own_id != with_id && !eligible.Applied(own) && eligible.Fits(own_id, with_id)
            : fits(own_id, with_id);
    if (static_cast<int>(out.size()) >= limit || !own_fits || !fits(with_id, own_id) ||
        !pairs_tried.insert(unordered(own, with)).second) {
      return;
    }
    Requeue q;
    q.from = from;
    q.key = own;
    q.with = with;
    q.move = Move::kPair;
    q.reason = "a pair (" + with + " + " + own + "): " + why;
    place(&q);
    out.push_back(std::move(q));
  };
  auto gain_of = [](const Node* n) { return n->gain.value_or(-1.0); };
  // The speedup the node's action promised (≥ 0), and what the node measured. A promise that
  // k pairs with the side in them did not deliver counts for 2^-k of its gain: a prior can be
  // wrong, and one wrong ×2 otherwise leads every batch of pairs with partner after partner (on
  // one generated landscape 12 of the last 40 evaluations, while an idea that had become worth
  // +36% on the path waited behind them).
  auto promised = [&](const Node* n) {
    const ActionSpec* a = catalog.FindAction(n->action_id);
    if (a == nullptr) return 1.0;
    const double s = std::max(0.0, promise ? promise(*a) : a->speedup);
    auto lost = pairs_lost.find(n->CandidateKey());
    return lost == pairs_lost.end() || s <= 1 ? s : 1 + (s - 1) / (1 << std::min(lost->second, 30));
  };
  auto measured = [&](const Node* n) { return std::max(0.0, 1 + gain_of(n)); };
  std::vector<const Node*> no_gain, accuracy, lacking;
  for (const auto& [key, n] : latest) {
    if (n->outcome == Outcome::kCrashed && n->critic.rca == RcaClass::kPrerequisite)
      lacking.push_back(n);
    if (n->outcome != Outcome::kReverted) continue;
    if (moves_detail::RevertedForNoGain(*n)) no_gain.push_back(n);
    if (n->critic.rca == RcaClass::kAccuracy) accuracy.push_back(n);
  }
  auto by_seq = [](const Node* a, const Node* b) { return a->seq < b->seq; };
  std::sort(accuracy.begin(), accuracy.end(), by_seq);
  std::sort(lacking.begin(), lacking.end(), by_seq);
  std::sort(no_gain.begin(), no_gain.end(), by_seq);
  std::stable_sort(no_gain.begin(), no_gain.end(),
                   [&](const Node* a, const Node* b) { return gain_of(a) > gain_of(b); });

  if (kinds != PairKinds::kRetunes) {
    // 1. Declared requires that one more candidate completes.
    for (const Candidate& c : catalog.All()) {
      if (tried_here.count(c.key) || eligible.Applied(c.action->id)) continue;
      std::vector<std::string> missing;
      for (const std::string& r : c.action->requires_) {
        if (!eligible.Applied(r)) missing.push_back(r);
      }
      if (missing.size() != 1) continue;
      const ActionSpec* need = catalog.FindAction(missing[0]);
      if (need == nullptr || !need->values.empty()) continue;  // which value is not declared
      take(c.key, kNoNode, need->id,
           c.key + " requires " + need->id + ", which is not on the path: tried together");
    }
    // 2. An accuracy failure with something that costs a little; 2b. a crash for a missing
    // prerequisite (SIGILL) with each idea reverted for no gain: the prerequisite may be a
    // change that pays nothing alone, so no keep ever brings it. Its own side may be another
    // value of a parameter on the path (avx512 where sse4 was kept). Each failing idea's
    // partners come best measured first, and the failing ideas take turns (round robin, at most
    // half a batch each): one trap with thirty partners would otherwise fill batch after batch
    // while a SIGILL whose enabler is one pair away, or an interaction, waited behind it.
    struct Suspect {
      const Node* x;
      bool lacking;
      std::vector<const Node*> partners;
      size_t taken = 0;  // partners paired in this batch
    };
    std::vector<Suspect> suspects;
    for (const Node* x : accuracy) suspects.push_back({x, false, {}});
    for (const Node* x : lacking) suspects.push_back({x, true, {}});
    // The candidates already applied with a change whose check still failed the same way (a
    // fix search's group, or a pair) on the path: none of them is its fix (the fix search's
    // premise, one fix and not two together), so no pair with it is tried again. (A demo
    // campaign spent 6 of 56 evaluations pairing two traps with partners their failed groups
    // had held.)
    std::map<std::string, std::set<std::string>> no_fix;
    for (const Node* p : tree.Path(incumbent)) {
      for (const Node* x : tree.Below(p->id)) {
        if (x->outcome != Outcome::kReverted || x->critic.rca != RcaClass::kAccuracy ||
            DroppedKey(*x)) {
          continue;
        }
        std::vector<std::string> with = CompanionKeys(*x);
        if (with.empty()) {
          if (std::optional<std::string> other = PairedWith(tree, *x)) with.push_back(*other);
        }
        no_fix[x->CandidateKey()].insert(with.begin(), with.end());
      }
    }
    for (Suspect& s : suspects) {
      const auto ruled_out = no_fix.find(s.x->CandidateKey());
      for (const Node* f : no_gain) {
        // The partner costs more than x promises.
        if (hopeful_only && promised(s.x) * measured(f) <= 1) continue;
        if (!s.lacking && ruled_out != no_fix.end() && ruled_out->second.count(f->CandidateKey()))
          continue;
        s.partners.push_back(f);
      }
    }
    const size_t per_suspect = static_cast<size_t>(std::max(1, limit / 2));
    for (size_t round = 0;; ++round) {
      bool any = false;
      for (Suspect& s : suspects) {
        if (round >= s.partners.size() || s.taken >= per_suspect) continue;
        any = true;
        const Node* f = s.partners[round];
        const size_t before = out.size();
        if (s.lacking) {
          take(s.x->CandidateKey(), s.x->id, f->CandidateKey(),
               "#" + std::to_string(s.x->id) + " lacked a prerequisite alone; #" +
                   std::to_string(f->id) + " (" + Percent(gain_of(f)) + " alone) may be it",
               /*retune=*/true);
        } else {
          take(s.x->CandidateKey(), s.x->id, f->CandidateKey(),
               "#" + std::to_string(s.x->id) + " broke accuracy alone; with #" +
                   std::to_string(f->id) + " (" + Percent(gain_of(f)) + " alone) it may not");
        }
        if (out.size() > before) ++s.taken;
      }
      if (!any || static_cast<int>(out.size()) >= limit) break;
    }
    // 3. Two near-neutral ideas, the highest optimistic speedup first; the side on top (the
    // node's own candidate) is the one whose promise makes it.
    // With branches, the follow-ups of the frontier's open states that are no single idea
    // rank with them: `with` is null and `state` the node they go on top of.
    struct Two {
      const Node* own;
      const Node* with;
      double speedup;
      const Node* state = nullptr;
      const Candidate* unlocked = nullptr;  // a follow-up never tried: `own` is null
    };
    std::vector<Two> twos;
    for (size_t i = 0; i < no_gain.size(); ++i) {
      for (size_t j = i + 1; j < no_gain.size(); ++j) {
        const Node* a = no_gain[i];
        const Node* b = no_gain[j];
        const double a_delivers = promised(a) * measured(b);
        const double b_delivers = promised(b) * measured(a);
        if (hopeful_only && std::max(a_delivers, b_delivers) <= 1) continue;
        twos.push_back(b_delivers > a_delivers ? Two{b, a, b_delivers} : Two{a, b, a_delivers});
      }
    }
    // The candidates whose declared requires the path does not meet (never tried on it): a
    // state that applies what they require (a swap that put an alternative in place of a kept
    // change) unlocks them, and they are its follow-ups too. The subtree of an alternative holds
    // what only pays with it; without them it is judged by the alternative alone.
    std::vector<const Candidate*> locked;
    if (branches) {
      for (const Candidate& c : catalog.All()) {
        if (LockedOnPath(c, tried_here, eligible)) locked.push_back(&c);
      }
    }
    for (const OpenState& s : branches ? Frontier(tree, incumbent) : std::vector<OpenState>{}) {
      const Node* e = s.node;
      const bool single = !CompanionKey(*e) && !DroppedKey(*e) && !tree.IsBranch(*e);
      if (single || e->critic.rca == RcaClass::kAccuracy)
        continue;  // a single idea is paired above
      // What the state measured, times what the idea promises; each change the hypothesis
      // holds beyond a pair halves the hope (an interaction of three is a rarer thing than one
      // of two), and so does each follow-up under the state that measured no gain (its subtree
      // was explored). Hopeful ones only, but at the very last (kFollowUps): the hypotheses of
      // three changes are many, and one no promise supports is worth an evaluation only when
      // nothing else is.
      const int halvings = std::min(s.changes - 1 + s.lost, 30);
      auto hope_of = [&](double promise) {
        return 1 + (promise * measured(e) - 1) / (1 << halvings);
      };
      for (const Node* f : no_gain) {
        const double hope = hope_of(promised(f));
        if (hope <= 1 && kinds != PairKinds::kFollowUps) continue;
        twos.push_back(Two{f, nullptr, hope, e});
      }
      for (const Candidate* c : locked) {
        const double hope =
            hope_of(std::max(0.0, promise ? promise(*c->action) : c->action->speedup));
        if (hope <= 1 && kinds != PairKinds::kFollowUps) continue;
        twos.push_back(Two{nullptr, nullptr, hope, e, c});
      }
    }
    // Eligibility at each followed-up state (its own children, applied changes, conflicts), and
    // the hypotheses run or waiting at the incumbent, whichever branch holds them.
    std::map<NodeId, Eligibility> at_state;
    std::set<std::set<std::string>> hypotheses;
    if (branches) {
      for (const Node* x : tree.Below(incumbent)) {
        if (x->outcome != Outcome::kPruned) hypotheses.insert(ChangeSet(tree, *x));
      }
    }
    // Whether `key` of `action_id` may go on top of `e`: room in the batch, a hypothesis not run
    // or waiting yet, and eligible at e's state (taken there once).
    auto admit = [&](const std::string& action_id, const std::string& key, const Node* e) {
      auto it = at_state.find(e->id);
      if (it == at_state.end()) {
        it = at_state.emplace(e->id, Eligibility::OfState(tree, catalog, e->id)).first;
      }
      std::set<std::string> changes = ChangeSet(tree, *e);
      changes.insert(key);
      if (static_cast<int>(out.size()) >= limit || hypotheses.count(changes) ||
          !it->second.Take(action_id, key)) {
        return false;
      }
      hypotheses.insert(std::move(changes));
      return true;
    };
    auto follow_up = [&](const Node* f, const Node* e) {
      if (!admit(f->action_id, f->CandidateKey(), e)) return;
      Requeue q;
      q.from = f->id;
      q.key = f->CandidateKey();
      q.under = e->id;
      q.move = Move::kFollowUp;
      q.reason = "a follow-up of #" + std::to_string(e->id) + " (" + e->CandidateKey() + ", " +
                 Percent(gain_of(e)) + "): #" + std::to_string(f->id) + " " + f->CandidateKey() +
                 " (" + Percent(gain_of(f)) + " alone, promised " + Percent(promised(f) - 1) +
                 ") on top";
      out.push_back(std::move(q));
    };
    auto follow_up_unlocked = [&](const Candidate& c, const Node* e) {
      if (admit(c.action->id, c.key, e)) out.push_back(UnlockedFollowUp(c, *e));
    };
    std::stable_sort(twos.begin(), twos.end(),
                     [](const Two& x, const Two& y) { return x.speedup > y.speedup; });
    for (const Two& t : twos) {
      if (static_cast<int>(out.size()) >= limit) break;
      if (t.unlocked != nullptr) {
        follow_up_unlocked(*t.unlocked, t.state);
        continue;
      }
      if (t.state != nullptr) {
        follow_up(t.own, t.state);
        continue;
      }
      take(t.own->CandidateKey(), t.own->id, t.with->CandidateKey(),
           "#" + std::to_string(t.own->id) + " (" + Percent(gain_of(t.own)) + ", promised " +
               Percent(promised(t.own) - 1) + ") and #" + std::to_string(t.with->id) + " (" +
               Percent(gain_of(t.with)) + ") gained nothing alone; an interaction may");
    }
  }
  if (kinds != PairKinds::kRetunes) return out;
  // 4. PairKinds::kRetunes: another value of a parameter kept on the path with each idea
  // reverted for no gain, the values next to the kept one first. A parameter's best value can
  // move with a change that did not pay at the value kept (a thread count and an allocator).
  for (const auto& [id, kept] : moves_detail::LastKeptValues(tree.Path(incumbent))) {
    const ActionSpec* action = catalog.FindAction(id);
    if (action == nullptr) continue;
    const auto& vs = action->values;
    const auto at = std::find(vs.begin(), vs.end(), kept->value) - vs.begin();
    std::vector<std::string> by_distance(vs.begin(), vs.end());
    std::stable_sort(by_distance.begin(), by_distance.end(), [&](const auto& a, const auto& b) {
      auto distance = [&](const std::string& v) {
        const auto i = std::find(vs.begin(), vs.end(), v) - vs.begin();
        return i > at ? 2 * (i - at) - 1 : 2 * (at - i);  // the next one first, then the one before
      };
      return distance(a) < distance(b);
    });
    for (const std::string& v : by_distance) {
      if (v == kept->value) continue;
      for (const Node* f : no_gain) {
        take(CandidateKey(id, v), kept->id, f->CandidateKey(),
             id + "=" + v + " (kept at " + kept->value + " in #" + std::to_string(kept->id) +
                 ") with #" + std::to_string(f->id) + " (" + Percent(gain_of(f)) +
                 " alone): the best value may move with it",
             /*retune=*/true);
      }
    }
  }
  return out;
}

std::vector<Requeue> PairsOrTheirSidesAlone(const Tree& tree, const std::vector<Requeue>& pairs,
                                            const std::vector<Requeue>& revisits) {
  std::map<std::string, const Requeue*> alone;
  for (const Requeue& r : revisits) alone.emplace(RetriedKey(tree, r), &r);
  std::set<std::string> sent;
  std::vector<Requeue> out;
  for (const Requeue& q : pairs) {
    bool gives_way = false;
    for (const std::string& side : {q.key, q.with.value_or("")}) {
      auto it = alone.find(side);
      if (it == alone.end()) continue;
      gives_way = true;
      if (sent.insert(side).second) out.push_back(*it->second);
    }
    if (!gives_way) out.push_back(q);
  }
  return out;
}
std::vector<Requeue> UnlockedFollowUps(const Tree& tree, const Catalog& catalog, NodeId incumbent,
                                       const Node& swap, const Promise& promise) {
  // A swap's first look only: its re-measures are the same state, whose follow-ups were queued.
  if (swap.parent != incumbent || MoveOf(swap) != Move::kDrop || !DroppedKey(swap) ||
      !CompanionKey(swap) || !MayBranchFrom(swap) || swap.critic.rca == RcaClass::kAccuracy) {
    return {};
  }
  // The hypotheses run or waiting at the incumbent, whichever branch holds them (as Pairs).
  std::set<std::set<std::string>> hypotheses;
  for (const Node* x : tree.Below(incumbent)) {
    if (x->outcome != Outcome::kPruned) hypotheses.insert(ChangeSet(tree, *x));
  }
  const std::set<std::string> state = ChangeSet(tree, swap);
  const std::set<std::string> tried_here = tree.TriedAlongPath(incumbent);
  const Eligibility on_path(tree, catalog, incumbent);
  Eligibility at_state = Eligibility::OfState(tree, catalog, swap.id);
  // The same hope as Pairs gives a follow-up of a state of two changes: half the hope above 1.
  const double measured = std::max(0.0, 1 + swap.gain.value_or(-1.0));
  std::vector<Requeue> out;
  for (const Candidate& c : catalog.All()) {
    if (!LockedOnPath(c, tried_here, on_path)) continue;
    const double promised = std::max(0.0, promise ? promise(*c.action) : c.action->speedup);
    std::set<std::string> changes = state;
    changes.insert(c.key);
    if (1 + (promised * measured - 1) / 2 <= 1 || hypotheses.count(changes) ||
        !at_state.Take(c.action->id, c.key)) {
      continue;
    }
    hypotheses.insert(std::move(changes));
    out.push_back(UnlockedFollowUp(c, swap));
    if (static_cast<int>(out.size()) >= kPairBatch) break;
  }
  return out;
}

}  // namespace arbor
