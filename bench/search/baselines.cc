#include "bench/search/baselines.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/model/rng.h"

namespace arbor::search {
namespace {

// One (action, value) a hill climber can apply to its state.
struct Move {
  const LandscapeAction* action;
  std::string value;
  std::string Key() const { return action->id + "=" + value; }
};

std::vector<Move> AllMoves(const Landscape& l) {
  std::vector<Move> out;
  for (const LandscapeAction& a : l.actions) {
    if (a.values.empty()) out.push_back({&a, "on"});
    for (const ActionValue& v : a.values) out.push_back({&a, v.value});
  }
  return out;
}

// `state` with `m` applied, or nullopt when the declared requires/conflicts rule it out or it
// changes nothing.
std::optional<Config> Apply(const Landscape& l, const Config& state, const Move& m) {
  auto it = state.find(m.action->id);
  if (it != state.end() && it->second == m.value) return std::nullopt;
  Config next = state;
  next[m.action->id] = m.value;
  if (Repair(l, next) != next) return std::nullopt;
  return next;
}

// The baseline's measurement, free for every policy: the median of `repetitions` runs (the
// baseline never crashes in a valid landscape; a crashed run is skipped).
double MeasureBaseline(Evaluator* ev) {
  std::vector<double> runs;
  for (int i = 0; i < ev->landscape().repetitions; ++i) {
    if (auto v = ev->Run({})) runs.push_back(*v);
  }
  if (runs.empty()) return 0;
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

void Count(const Evaluation& e, RunResult* r) {
  r->crashes += e.crashed;
  r->accuracy_failures += e.accuracy_failed;
}

// The hill climbers' common loop: `pick` chooses the next move (nullptr: nothing left); a move
// is kept when it measured better than the state's own (stale) measurement, once.
template <typename Pick, typename Learn>
RunResult Climb(const Landscape& l, uint64_t seed, int budget, Pick pick, Learn learn) {
  RunResult r;
  Evaluator ev(l, seed);
  Config state;
  double state_value = MeasureBaseline(&ev);
  while (ev.evaluations() < budget) {
    std::optional<Config> next;
    const Move* m = pick(state, &next);
    if (m == nullptr) break;
    Evaluation e = ev.Evaluate(*next);
    Count(e, &r);
    bool kept = e.value && *e.value > state_value;
    if (kept) {
      state = *next;
      state_value = *e.value;
    }
    learn(*m, kept);
    r.states.push_back(state);
  }
  r.runs = ev.runs();
  return r;
}

}  // namespace

RunResult RandomPolicy::Run(const Landscape& l, uint64_t seed, int budget) {
  RunResult r;
  Evaluator ev(l, seed);
  Rng rng(seed * 0x9e3779b97f4a7c15ULL + 1);
  Config best;
  double best_value = MeasureBaseline(&ev);
  const int n = static_cast<int>(l.actions.size());
  while (ev.evaluations() < budget && n > 0) {
    std::vector<int> order(n);
    for (int i = 0; i < n; ++i) order[i] = i;
    for (int i = n - 1; i > 0; --i) {  // Fisher–Yates with the campaign's seeded generator
      std::swap(order[i], order[static_cast<int>(rng.Next() % static_cast<uint64_t>(i + 1))]);
    }
    int m = 1 + static_cast<int>(rng.Next() % static_cast<uint64_t>(n));
    Config c;
    for (int i = 0; i < m; ++i) {
      const LandscapeAction& a = l.actions[order[i]];
      c[a.id] = a.values.empty()
                    ? "on"
                    : a.values[rng.Next() % static_cast<uint64_t>(a.values.size())].value;
    }
    c = Repair(l, std::move(c));
    Evaluation e = ev.Evaluate(c);
    Count(e, &r);
    if (e.value && *e.value > best_value) {
      best = c;
      best_value = *e.value;
    }
    r.states.push_back(best);
  }
  r.runs = ev.runs();
  return r;
}

RunResult GreedyPolicy::Run(const Landscape& l, uint64_t seed, int budget) {
  std::vector<Move> moves = AllMoves(l);
  std::stable_sort(moves.begin(), moves.end(), [](const Move& a, const Move& b) {
    return a.action->prior.speedup > b.action->prior.speedup;
  });
  std::set<std::string> tried;
  auto pick = [&](const Config& state, std::optional<Config>* next) -> const Move* {
    for (const Move& m : moves) {
      if (tried.count(m.Key())) continue;
      if ((*next = Apply(l, state, m))) return &m;
    }
    return nullptr;
  };
  auto learn = [&](const Move& m, bool) { tried.insert(m.Key()); };
  return Climb(l, seed, budget, pick, learn);
}

RunResult BanditPolicy::Run(const Landscape& l, uint64_t seed, int budget) {
  std::vector<Move> moves = AllMoves(l);
  std::map<std::string, std::vector<const Move*>> by_category;
  for (const Move& m : moves) by_category[m.action->category].push_back(&m);
  struct Arm {
    int pulls = 0;
    int wins = 0;
  };
  std::map<std::string, Arm> arms;
  std::set<std::string> tried;
  Rng rng(seed * 0xbf58476d1ce4e5b9ULL + 7);
  int total = 0;
  auto pick = [&](const Config& state, std::optional<Config>* next) -> const Move* {
    // UCB1 over the categories that still have an applicable untried move.
    std::map<std::string, std::vector<std::pair<const Move*, Config>>> open;
    for (const auto& [category, list] : by_category) {
      for (const Move* m : list) {
        if (tried.count(m->Key())) continue;
        if (auto c = Apply(l, state, *m)) open[category].push_back({m, *c});
      }
    }
    if (open.empty()) return nullptr;
    const std::string* chosen = nullptr;
    double best = -1;
    for (const auto& [category, list] : open) {
      const Arm& a = arms[category];
      double ucb = a.pulls == 0 ? 1e9
                                : static_cast<double>(a.wins) / a.pulls +
                                      std::sqrt(2 * std::log(std::max(1, total)) / a.pulls);
      if (ucb > best) {
        best = ucb;
        chosen = &category;
      }
    }
    auto& list = open[*chosen];
    auto& choice = list[rng.Next() % static_cast<uint64_t>(list.size())];
    *next = choice.second;
    return choice.first;
  };
  auto learn = [&](const Move& m, bool kept) {
    tried.insert(m.Key());
    Arm& a = arms[m.action->category];
    ++a.pulls;
    a.wins += kept;
    ++total;
  };
  return Climb(l, seed, budget, pick, learn);
}

}  // namespace arbor::search
