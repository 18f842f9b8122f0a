// FindOptimum: the truth the benchmark's policies are judged against.
#include <algorithm>
#include <utility>

#include "bench/search/landscape.h"
#include "bench/search/landscape_model.h"
#include "core/model/rng.h"
#include "util/hash.h"

namespace arbor::search {

namespace {

using internal::Choices;
using internal::kOff;
using internal::LandscapeModel;

// Relative improvements smaller than this are ties (floating-point noise, not a better state).
constexpr double kTie = 1e-12;

struct Best {
  Choices choices;
  double time = 0;
};

// Every configuration in odometer order, from the baseline; the first of equal times wins.
Best Enumerate(const LandscapeModel& m) {
  const int n = m.actions();
  Choices c(n, kOff);
  Best best{c, m.RelativeTime(c)};
  while (true) {
    int i = 0;
    while (i < n && c[i] == m.Options(i) - 1) c[i++] = kOff;
    if (i == n) break;
    ++c[i];
    if (!m.Eligible(c)) continue;
    double t = m.RelativeTime(c);
    if (t < best.time * (1 - kTie)) best = {c, t};
  }
  return best;
}

int Below(Rng& rng, int n) {
  return static_cast<int>(rng.Uniform() * n) % n;  // Uniform() < 1, the modulo is a guard
}

// A random configuration, with random actions switched off until it is eligible (the
// baseline, all off, always is).
Choices RandomStart(const LandscapeModel& m, Rng& rng) {
  Choices c(m.actions(), kOff);
  for (int i = 0; i < m.actions(); ++i) {
    if (rng.Uniform() < 0.5) c[i] = Below(rng, m.Options(i));
  }
  while (!m.Eligible(c)) {
    std::vector<int> on;
    for (int i = 0; i < m.actions(); ++i) {
      if (c[i] != kOff) on.push_back(i);
    }
    c[on[Below(rng, static_cast<int>(on.size()))]] = kOff;
  }
  return c;
}

struct Move {
  int action = 0;
  int choice = kOff;
  std::vector<int> partners;  // switched on (first choice) with the action, when off
};

// Single changes (one action off, on, or another value), and each action switched on together
// with the partners its truth names: a pair that only pays (or only runs) together is not
// reachable one change at a time.
std::vector<Move> Moves(const LandscapeModel& m) {
  std::vector<Move> moves;
  for (int i = 0; i < m.actions(); ++i) {
    std::vector<int> partners = m.Partners(i);
    for (int s = kOff; s < m.Options(i); ++s) {
      moves.push_back({i, s, {}});
      if (s != kOff && !partners.empty()) moves.push_back({i, s, partners});
    }
  }
  return moves;
}

// First-improvement hill climbing over Moves, in a random order each round, never through an
// ineligible configuration.
Best Climb(const LandscapeModel& m, Choices c, Rng& rng) {
  std::vector<Move> moves = Moves(m);
  Best best{c, m.RelativeTime(c)};
  bool improved = true;
  while (improved) {
    improved = false;
    for (size_t k = moves.size(); k > 1; --k) {
      std::swap(moves[k - 1], moves[Below(rng, static_cast<int>(k))]);
    }
    for (const Move& move : moves) {
      Choices next = best.choices;
      next[move.action] = move.choice;
      for (int p : move.partners) {
        if (next[p] == kOff) next[p] = 0;
      }
      if (next == best.choices || !m.Eligible(next)) continue;
      double t = m.RelativeTime(next);
      if (t < best.time * (1 - kTie)) {
        best = {std::move(next), t};
        improved = true;
        break;
      }
    }
  }
  return best;
}

}  // namespace

Optimum FindOptimum(const Landscape& l, uint64_t max_enumerate, int restarts) {
  LandscapeModel m(l);
  Optimum out;
  Best best;
  if (l.SpaceSize() <= max_enumerate) {
    best = Enumerate(m);
    out.exact = true;
  } else {
    // Seeded from the landscape's name: the same file always reports the same bound.
    Rng rng(Fnv1a64(l.name));
    best = Climb(m, Choices(m.actions(), kOff), rng);
    for (int r = 0; r < restarts; ++r) {
      Best b = Climb(m, RandomStart(m, rng), rng);
      if (b.time < best.time * (1 - kTie)) best = std::move(b);
    }
  }
  out.config = m.ToConfig(best.choices);
  out.value = l.base_value / best.time;
  return out;
}

}  // namespace arbor::search
