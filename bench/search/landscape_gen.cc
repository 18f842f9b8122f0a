// Generate: a landscape from a seed (landscape_gen.h). Actions are built under temporary ids
// in groups (a pair's two halves together), shuffled, then renamed "<layer>.a<NN>" in file
// order, so neither the order nor the names give a group away.
#include "bench/search/landscape_gen.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/model/rng.h"

namespace arbor::search {

namespace {

constexpr const char* kLayers[] = {"application", "framework", "compiler", "kernel", "hardware"};
constexpr const char* kComponentNames[] = {
    "parse",  "io",   "dispatch", "matmul", "attention", "conv",      "alloc",    "sync",
    "decode", "sort", "hash",     "reduce", "gather",    "serialize", "compress", "schedule"};
constexpr const char* kSizes[] = {"1", "2", "4", "8", "16", "32", "64", "128"};

// `v` to a multiple of `unit` (1, 0.01, 0.001, ...), as the double nearest the short decimal,
// so a written file reads "0.944", not "0.9440000000000001".
double Round(double v, double unit) {
  const double scale = std::round(1 / unit);
  return std::round(v * scale) / scale;
}

// The troubles a landscape may have: presence probability, instances when present.
struct Trouble {
  const char* name;
  double presence;
  int max_count;
};
constexpr Trouble kTroubles[] = {
    {"gated", 0.6, 2},      {"hidden-pair", 0.7, 3},  {"antagonistic", 0.5, 2},
    {"crash-pair", 0.6, 2}, {"crash-region", 0.7, 2}, {"accuracy-trap", 0.7, 2},
    {"inflation", 0.6, 2},  {"flaky-crash", 0.5, 2},
};

class Gen {
 public:
  Gen(uint64_t seed, const GenOptions& o) : rng_(seed ^ 0x6c616e6473636170ULL), o_(o) {
    l_.name = "gen-" + std::to_string(seed);
    if (o.rivals > 0) l_.name += "-rivals" + std::to_string(o.rivals);  // another landscape
    seed_ = seed;
  }

  Landscape Run() {
    Components();
    l_.actions.reserve(o_.max_actions + 8);  // a trap's fix may come on top
    const int n = I(o_.min_actions, o_.max_actions);
    Troubles(n);
    for (int k = 0; k < o_.rivals; ++k) Make("rivals");
    if (o_.rivals > 0) story_ += "rivals ×" + std::to_string(o_.rivals) + ", ";
    Fill(n);
    Priors();
    Shuffle();
    Noise();
    l_.description = "generated from seed " + std::to_string(seed_) +
                     " (bench/search/landscape_gen.h): " + std::to_string(l_.actions.size()) +
                     " actions over " + std::to_string(l_.components.size()) + " components; " +
                     story_;
    return std::move(l_);
  }

 private:
  double U(double lo, double hi) { return lo + (hi - lo) * rng_.Uniform(); }
  int I(int lo, int hi) {
    return std::min(hi, lo + static_cast<int>(rng_.Uniform() * (hi - lo + 1)));
  }
  bool P(double p) { return rng_.Uniform() < p; }
  // A speedup factor: mostly small, sometimes large (log-uniform in each band).
  double Win() {
    return P(0.7) ? Round(std::exp(U(std::log(1.03), std::log(1.3))), 0.001)
                  : Round(std::exp(U(std::log(1.3), std::log(2.5))), 0.001);
  }
  const LandscapeComponent& Component() { return l_.components[I(0, l_.components.size() - 1)]; }

  // A new action on `comp`'s layer (usually), under a temporary id.
  LandscapeAction& New(const LandscapeComponent& comp) {
    LandscapeAction a;
    a.id = "t" + std::to_string(l_.actions.size());
    a.layer = P(0.75) ? comp.layer : kLayers[I(0, 4)];
    l_.actions.push_back(std::move(a));
    return l_.actions.back();
  }

  void Components() {
    const int n = I(o_.min_components, o_.max_components);
    std::vector<std::string> names(std::begin(kComponentNames), std::end(kComponentNames));
    std::vector<double> w;
    for (int i = 0; i < n; ++i) {
      std::swap(names[i], names[I(i, names.size() - 1)]);
      w.push_back(std::exp(U(0, 2.5)) * (i == 0 && P(0.3) ? 4 : 1));  // sometimes one dominates
    }
    double sum = 0;
    for (double x : w) sum += x;
    double used = 0;
    for (int i = 0; i < n; ++i) {
      double share = Round(i + 1 < n ? 0.02 + (1 - 0.02 * n) * w[i] / sum : 1 - used, 0.0001);
      used += share;
      l_.components.push_back({names[i], kLayers[I(0, 4)], share});
    }
  }

  // Each trouble is present with its probability, 1..max_count times; troubles never take
  // more than 60% of the actions (the rest are the ordinary wins, duds and parameters).
  void Troubles(int n) {
    std::vector<const Trouble*> todo;
    for (const Trouble& t : kTroubles) {
      if (!P(t.presence)) continue;
      for (int k = I(1, t.max_count); k > 0; --k) todo.push_back(&t);
    }
    while (Size(todo) > 0.6 * n) todo.erase(todo.begin() + I(0, todo.size() - 1));
    std::map<std::string, int> count;
    for (const Trouble* t : todo) {
      Make(t->name);
      ++count[t->name];
    }
    for (const auto& [name, k] : count) story_ += name + " ×" + std::to_string(k) + ", ";
  }

  static int Size(const std::vector<const Trouble*>& todo) {
    int n = 0;
    for (const Trouble* t : todo)
      n += std::string(t->name) == "crash-region" || std::string(t->name) == "inflation" ||
                   std::string(t->name) == "flaky-crash"
               ? 1
               : 2;
    return n;
  }

  void Make(const std::string& kind) {
    const LandscapeComponent& c = Component();
    if (kind == "gated") {
      // An enabler (a -march flag: a small global win) and an action built for it: without
      // the enabler, every run dies of SIGILL. Sometimes only one value of a parameter is.
      LandscapeAction& e = New(c);
      e.layer = "compiler";
      e.effects["*"] = Round(U(1.0, 1.06), 0.001);
      const std::string enabler = e.id;
      LandscapeAction& g = New(c);
      if (P(0.35)) {
        const double top = Round(U(1.3, 2.5), 0.001);
        g.values = {{"sse4", {{c.name, Round(std::sqrt(top) * 0.9, 0.001)}}},
                    {"avx2", {{c.name, Round(std::sqrt(top), 0.001)}}},
                    {"avx512", {{c.name, top}}}};
        g.values.back().crash_unless = {enabler};
      } else {
        g.effects[c.name] = Round(U(1.3, 2.5), 0.001);
        g.crash_unless = {enabler};
        if (P(0.5)) g.prior.requires_ = {enabler};  // else the campaign file forgot it
      }
    } else if (kind == "hidden-pair") {
      // B costs a little alone and pays only once A is on; the file may not say so.
      LandscapeAction& a = New(c);
      a.effects[Component().name] = P(0.5) ? Round(U(0.95, 1.05), 0.001) : Win();
      const std::string first = a.id;
      LandscapeAction& b = New(c);
      b.effects[c.name] = Round(U(0.9, 0.98), 0.001);
      b.when.push_back({{first}, {}, {{c.name, Round(U(1.3, 2.5), 0.001)}}});
      if (P(0.5)) b.prior.requires_ = {first};
    } else if (kind == "antagonistic") {
      // Each wins alone; together they are worse than the better one alone.
      const double fa = Win(), fb = Win();
      LandscapeAction& a = New(c);
      a.effects[c.name] = fa;
      const std::string first = a.id;
      LandscapeAction& b = New(c);
      b.effects[c.name] = fb;
      b.when.push_back(
          {{first}, {}, {{c.name, Round(std::max(fa, fb) / (fa * fb) * U(0.85, 0.97), 0.001)}}});
    } else if (kind == "crash-pair") {
      // Mutually exclusive: both win, together every run crashes; declared or not.
      LandscapeAction& a = New(c);
      a.effects[c.name] = Win();
      const std::string first = a.id;
      LandscapeAction& b = New(Component());
      b.effects[b.layer == c.layer ? c.name : Component().name] = Win();
      b.crash_with = {first};
      if (P(0.5)) b.prior.conflicts = {first};
    } else if (kind == "crash-region") {
      // A size parameter whose gains grow with the value, and which crashes above a threshold
      // (the threshold value itself sometimes only flaky).
      LandscapeAction& a = New(c);
      const int n = I(3, 6), from = I(0, 8 - n), threshold = I(1, n - 1);
      const double top = Win() * 1.1;
      for (int k = 0; k < n; ++k) {
        ActionValue v{kSizes[from + k], {{c.name, Round(std::pow(top, (k + 1.0) / n), 0.001)}}};
        if (k > threshold || (k == threshold && !P(0.4))) v.crash_rate = 1;
        if (k == threshold && v.crash_rate == 0) v.crash_rate = Round(U(0.2, 0.6), 0.01);
        a.values.push_back(std::move(v));
      }
      if (P(0.5)) a.prior.risk_crash = Round(U(0.1, 0.4), 0.01);
    } else if (kind == "accuracy-trap") {
      // A tempting win that breaks accuracy (always or sometimes), sometimes with a fix that
      // costs a little.
      LandscapeAction& x = New(c);
      x.effects[c.name] = Round(U(1.3, 2.5), 0.001);
      x.accuracy_fail = P(0.6) ? 1 : Round(U(0.2, 0.6), 0.01);
      if (P(0.5)) x.prior.risk_accuracy = Round(U(0.1, 0.4), 0.01);
      if (P(0.5)) {
        const std::string trap = x.id;
        LandscapeAction& f = New(Component());
        f.effects[Component().name] = Round(U(0.9, 0.99), 0.001);
        l_.actions[std::stoi(trap.substr(1))].accuracy_fixed_by = {f.id};
      }
    } else if (kind == "inflation") {
      // Readings up by k, work down by k, the truth unchanged or a little worse.
      LandscapeAction& k = New(c);
      k.inflation = Round(U(1.2, 3.0), 0.01);
      if (P(0.5)) k.effects[c.name] = Round(U(0.85, 0.99), 0.001);
      k.prior.speedup = Round(U(1.2, 2.0), 0.01);  // the author believed the readings
    } else if (kind == "rivals") {
      // Two alternatives (two kernels, two layouts), mutually exclusive and declared so: A wins
      // more alone, B less; a complement of B costs a little alone (or with A) and makes B beat A
      // by far. Whoever keeps A first and compares B with it alone never sees B's subtree; half
      // declare that the complement requires B.
      const double fa = U(1.3, 2.2), fb = fa * U(0.7, 0.9);
      LandscapeAction& a = New(c);
      a.effects[c.name] = Round(fa, 0.001);
      const std::string first = a.id;
      LandscapeAction& b = New(c);
      b.effects[c.name] = Round(fb, 0.001);
      b.crash_with = {first};
      b.prior.conflicts = {first};
      const std::string second = b.id;
      LandscapeAction& x = New(c);
      x.effects[c.name] = Round(U(0.93, 0.99), 0.001);
      x.when.push_back({{second}, {}, {{c.name, Round(fa / fb * U(1.3, 2.0), 0.001)}}});
      if (P(0.5)) x.prior.requires_ = {second};
    } else if (kind == "flaky-crash") {
      LandscapeAction& a = New(c);
      a.effects[c.name] = Win();
      a.crash_rate = Round(U(0.05, 0.3), 0.01);
    }
  }

  // The ordinary actions, in randomised proportions: plain wins (sometimes with a side cost),
  // global wins, duds and slowdowns, and parameters with a sweet spot.
  void Fill(int n) {
    const double w[4] = {U(0.3, 0.7), U(0.05, 0.15), U(0.1, 0.35), U(0.05, 0.25)};
    const double total = w[0] + w[1] + w[2] + w[3];
    while (static_cast<int>(l_.actions.size()) < n) {
      const LandscapeComponent& c = Component();
      LandscapeAction& a = New(c);
      double u = U(0, total);
      if ((u -= w[0]) < 0) {
        a.effects[c.name] = Win();
        const std::string other = Component().name;
        if (P(0.3) && other != c.name) a.effects[other] = Round(U(0.9, 1.0), 0.001);
      } else if ((u -= w[1]) < 0) {
        a.layer = P(0.5) ? "compiler" : "hardware";
        a.effects["*"] = Round(U(1.02, 1.12), 0.001);
      } else if ((u -= w[2]) < 0) {
        a.effects[c.name] = P(0.5) ? Round(U(0.85, 0.97), 0.001) : Round(U(0.98, 1.0), 0.001);
      } else {
        // Threads or batch: better up to a peak, then worse (oversubscription).
        const int n_values = I(3, 6), from = I(0, 8 - n_values), peak = I(0, n_values - 1);
        const double top = Win();
        for (int k = 0; k < n_values; ++k) {
          a.values.push_back(
              {kSizes[from + k],
               {{c.name, Round(std::pow(top, 1 - 0.6 * std::abs(k - peak)), 0.001)}}});
        }
      }
    }
  }

  // What the campaign file says: the true best factor give or take 15% (a hopeful 1.02–1.1
  // for a dud), a random cost; on a random fraction of actions a wrong speedup instead.
  void Priors() {
    const double misleading = U(0.1, 0.4);
    int wrong = 0;
    for (LandscapeAction& a : l_.actions) {
      if (a.inflation == 1) {
        double best = 0;
        std::vector<const Effects*> own = {&a.effects};
        for (const ActionValue& v : a.values) own.push_back(&v.effects);
        double when = 1;
        for (const ConditionalEffects& w : a.when) when *= std::max(1.0, Max(w.effects));
        for (const Effects* e : own) best = std::max(best, Max(*e) * when);
        a.prior.speedup =
            best > 1.01 ? Round(best * U(0.85, 1.15), 0.01) : Round(U(1.02, 1.1), 0.01);
        a.prior.speedup = std::max(a.prior.speedup, 1.01);
      }
      if (P(misleading)) {
        a.prior.speedup = Round(U(1.0, 2.5), 0.01);
        ++wrong;
      }
      a.prior.cost_s = Round(U(5, 120), 1);
    }
    story_ += "wrong prior speedups on " + std::to_string(wrong) + ", ";
  }

  static double Max(const Effects& e) {
    double m = e.empty() ? 1 : 0;
    for (const auto& [name, f] : e) m = std::max(m, f);
    return m;
  }

  // Shuffles the actions and names them "<layer>.a<NN>" in their new order.
  void Shuffle() {
    auto& a = l_.actions;
    for (size_t k = a.size(); k > 1; --k) std::swap(a[k - 1], a[I(0, k - 1)]);
    std::map<std::string, std::string> rename;
    for (size_t k = 0; k < a.size(); ++k) {
      char num[24];
      std::snprintf(num, sizeof num, "%02zu", k);
      rename[a[k].id] = a[k].layer + ".a" + num;
    }
    auto ids = [&](std::vector<std::string>& v) {
      for (std::string& id : v) id = rename.at(id);
    };
    for (LandscapeAction& x : a) {
      x.id = rename.at(x.id);
      x.category = x.layer;
      for (ConditionalEffects& w : x.when) ids(w.with), ids(w.without);
      ids(x.crash_with), ids(x.accuracy_fixed_by), ids(x.crash_unless);
      for (ActionValue& v : x.values) ids(v.crash_unless);
      ids(x.prior.requires_), ids(x.prior.conflicts);
    }
  }

  void Noise() {
    l_.repetitions = o_.repetitions;
    l_.noise.cv = Round(U(o_.min_cv, o_.max_cv), 0.001);
    if (P(0.5)) {
      l_.noise.outlier_rate = Round(U(0.005, 0.03), 0.001);
      l_.noise.outlier_factor = Round(U(0.5, 0.8), 0.01);
    }
    if (P(0.5)) {
      l_.noise.drift = Round(U(0.01, 0.05), 0.001);
      l_.noise.drift_period = Round(U(200, 1000), 1);
    }
    char buf[96];
    std::snprintf(buf, sizeof buf, "cv %.1f%%%s%s", 100 * l_.noise.cv,
                  l_.noise.outlier_rate > 0 ? ", outliers" : "",
                  l_.noise.drift > 0 ? ", drift" : "");
    story_ += buf;
  }

  Rng rng_;
  uint64_t seed_;
  GenOptions o_;
  Landscape l_;
  std::string story_;
};

}  // namespace

Landscape Generate(uint64_t seed, const GenOptions& options) { return Gen(seed, options).Run(); }

const std::vector<std::string>& FeatureNames() {
  static const std::vector<std::string> kNames = {
      "inflation",     "gated",       "crash-pair",   "crash-region", "flaky-crash",
      "accuracy-trap", "hidden-pair", "antagonistic", "rivals",       "drift",
      "outliers",      "noisy",       "small",        "large"};
  return kNames;
}

std::vector<std::string> Features(const Landscape& l) {
  std::map<std::string, bool> has;
  for (const LandscapeAction& a : l.actions) {
    has["inflation"] |= a.inflation > 1;
    has["gated"] |= !a.crash_unless.empty();
    has["crash-pair"] |= !a.crash_with.empty();
    has["flaky-crash"] |= a.crash_rate > 0 && a.crash_rate < 1;
    has["accuracy-trap"] |= a.accuracy_fail > 0;
    bool safe_value = false, crashing_value = false;
    for (const ActionValue& v : a.values) {
      has["gated"] |= !v.crash_unless.empty();
      has["accuracy-trap"] |= v.accuracy_fail > 0;
      (v.crash_rate > 0 ? crashing_value : safe_value) = true;
    }
    has["crash-region"] |= safe_value && crashing_value;
    for (const ConditionalEffects& w : a.when) {
      if (w.with.empty()) continue;
      const bool up = std::all_of(w.effects.begin(), w.effects.end(),
                                  [](const auto& e) { return e.second > 1; });
      has[up ? "hidden-pair" : "antagonistic"] = true;
      // Rivals: what pays only with an action that has a mutually exclusive partner.
      for (const LandscapeAction& b : l.actions) {
        if (up && w.with.size() == 1 && b.id == w.with[0] && !b.crash_with.empty())
          has["rivals"] = true;
      }
    }
  }
  has["drift"] = l.noise.drift > 0;
  has["outliers"] = l.noise.outlier_rate > 0;
  has["noisy"] = l.noise.cv >= 0.04;
  has["small"] = l.actions.size() <= 20;
  has["large"] = l.actions.size() >= 40;
  std::vector<std::string> out;
  for (const std::string& name : FeatureNames()) {
    if (has[name]) out.push_back(name);
  }
  return out;
}

}  // namespace arbor::search
