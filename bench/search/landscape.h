// Landscape: a simulated cross-layer stack for the search benchmark (docs/search-bench.md).
//
// A landscape is a program whose end-to-end time is the sum of its components' times (shares of
// the baseline time, across the five layers); actions make components faster or slower, so the
// bottleneck moves by Amdahl's law as components get faster. Besides plain speedups it has the
// interactions real stacks have: effects that only appear once another action is on (or only
// without it), pairs that crash together, actions that break accuracy unless another is on,
// parameter values with a crash region, flaky crashes, and measurement noise (CV, outliers,
// slow drift). It also says what a campaign file would tell the engine about each action (the
// priors, which may be wrong): the benchmark is honest only if the engine is judged against the
// truth, not against what it was told.
//
// Landscapes are data (JSON files in bench/search/landscapes/, format in docs/search-bench.md),
// so new ones need no code. The same model serves three ways: in-process for policies
// (TrueValue, Reading), as a real target program (landscape_target.cc, driven by environment
// variables), and as a campaign (ToCampaignSpec / CampaignToml), so the whole engine can run
// against it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/model/spec.h"
#include "util/result.h"

namespace arbor::search {

// A configuration: action id → chosen value ("on" for an action without values). Actions not
// in the map are off.
using Config = std::map<std::string, std::string>;

struct LandscapeComponent {
  std::string name;
  std::string layer;
  double share = 0;  // fraction of the baseline's time; shares sum to 1
};

// Speedup factors by component name (> 1 faster, < 1 slower); "*" applies to every component.
using Effects = std::map<std::string, double>;

// Extra effects that apply only when every id of `with` is on and no id of `without` is.
struct ConditionalEffects {
  std::vector<std::string> with;
  std::vector<std::string> without;
  Effects effects;
};

struct ActionValue {
  std::string value;
  Effects effects;                        // replaces the action's own `effects` for this value
  double crash_rate = 0;                  // probability that one benchmark run crashes (1 = always)
  double accuracy_fail = 0;               // probability that one check fails
  std::vector<std::string> crash_unless;  // SIGILL on every run unless all of these are on
};

// What a campaign file says about an action: the engine sees only this, never the truth.
struct Prior {
  double speedup = 1.2;
  double cost_s = 30;
  double risk_crash = 0;
  double risk_accuracy = 0;
  std::vector<std::string> targets;    // default: the components of the true effects
  std::vector<std::string> requires_;  // declared dependencies (may be fewer than the truth)
  std::vector<std::string> conflicts;  // declared conflicts
};

struct LandscapeAction {
  std::string id;
  std::string layer;
  std::string category;
  std::string describe;
  Effects effects;
  std::vector<ConditionalEffects> when;
  double crash_rate = 0;
  std::vector<std::string> crash_with;         // always crashes when any of these is on too
  double accuracy_fail = 0;                    // probability that one check fails
  std::vector<std::string> accuracy_fixed_by;  // accuracy_fail is 0 when all of these are on
  // A prerequisite-gated action (code built for an ISA extension the machine lacks): every run
  // dies of SIGILL unless every id here is on.
  std::vector<std::string> crash_unless;
  // An inflation knob (the benchmark does less work): readings × inflation, work ÷ inflation;
  // the true value is untouched (only `effects` count). 1 = an honest action.
  double inflation = 1;
  std::vector<ActionValue> values;  // empty: an on/off action
  Prior prior;
};

struct Noise {
  double cv = 0.02;             // lognormal, per benchmark run
  double outlier_rate = 0;      // probability that a run is an outlier
  double outlier_factor = 0.7;  // an outlier's value is multiplied by this
  double drift = 0;             // amplitude of a slow sinusoidal drift (0.05 = ±5%)
  double drift_period = 500;    // in benchmark runs
};

struct Landscape {
  std::string name;
  std::string description;
  double base_value = 100;  // the baseline's noise-free metric (higher is better: work/time)
  int repetitions = 5;      // benchmark runs per evaluation, for every policy
  std::vector<LandscapeComponent> components;
  std::vector<LandscapeAction> actions;
  Noise noise;

  // Parses a landscape (JSON). Errors name the file, the JSON path and what was wrong; unknown
  // keys, unknown component or action ids, shares not summing to 1 (±1e-6) and non-positive
  // factors are errors.
  static Result<Landscape> Parse(const std::string& text, const std::string& file);
  static Result<Landscape> Load(const std::string& path);
  // The landscape as a file Parse reads back to an equal landscape (keys at their defaults are
  // left out).
  std::string ToJson() const;

  const LandscapeAction* Find(const std::string& id) const;
  // Every action's choices ("on", or its values), in file order.
  std::vector<std::vector<std::string>> Choices() const;
  // The number of configurations (∏ (1 + choices)), saturating at UINT64_MAX.
  uint64_t SpaceSize() const;

  // The end-to-end time relative to the baseline's (1 = baseline), after Amdahl.
  double RelativeTime(const Config& c) const;
  // The noise-free metric: base_value / RelativeTime.
  double TrueValue(const Config& c) const;
  // Probability that one benchmark run crashes (max over the config's causes; 1 = always).
  double CrashRate(const Config& c) const;
  // Probability that one check fails.
  double AccuracyFailRate(const Config& c) const;
  // Broken: crashes (any crash rate > 0) or fails accuracy (any rate > 0).
  bool Broken(const Config& c) const { return CrashRate(c) > 0 || AccuracyFailRate(c) > 0; }
  // The signal a crashing run dies of: 4 (SIGILL) when an action or value is on without its
  // `crash_unless` prerequisites, else 6 (SIGABRT).
  int CrashSignal(const Config& c) const;
  // The product of the inflation factors of the actions on (1: the reading is honest), and the
  // work a run reports: 1 / Inflation (the baseline does work 1).
  double Inflation(const Config& c) const;
  double Work(const Config& c) const { return 1 / Inflation(c); }
  bool Inflated(const Config& c) const { return Inflation(c) != 1; }
  // The profile: each component's share of the config's time (sums to 1), layer from the file.
  Profile TrueProfile(const Config& c) const;

  // Run number `k` of the campaign's measurement stream with `seed`: crashed (nullopt) with
  // CrashRate, else TrueValue × Inflation × lognormal(cv) × outlier × drift(k). Deterministic
  // in (seed, k, c).
  std::optional<double> Reading(const Config& c, uint64_t seed, uint64_t k) const;
  // Check number `k`: false with AccuracyFailRate. Deterministic in (seed, k, c).
  bool CheckPasses(const Config& c, uint64_t seed, uint64_t k) const;

  // The environment variable an action sets (LS_ + id upper-cased, non-alphanumerics → '_'),
  // and the config an environment describes (unknown variables ignored; "1" = on).
  static std::string EnvVar(const std::string& action_id);
  Config ConfigFromEnv(const std::map<std::string, std::string>& env) const;

  // The campaign Arbor runs against this landscape: one env action per landscape action (its
  // values as candidate values), the priors as speedup/cost/risk/targets/requires/conflicts,
  // metric "value" (max, repetitions) with work "work", no commands (an in-process Target supplies
  // them).
  CampaignSpec ToCampaignSpec(uint64_t seed, int max_nodes) const;
  // The same campaign as a campaign file for the real target program: build none, check/bench/
  // profile = `target_cmd` + " --check" / " --bench" / " --profile", [target] env with
  // LANDSCAPE_FILE, LANDSCAPE_SEED and LANDSCAPE_STATE (the measurement counter file).
  std::string CampaignToml(const std::string& target_cmd, const std::string& landscape_path,
                           const std::string& state_path, uint64_t seed, int max_nodes) const;
};

struct Optimum {
  Config config;
  double value = 0;    // TrueValue of config
  bool exact = false;  // true: every configuration was enumerated
};

// The best configuration neither broken nor inflated: exhaustive when SpaceSize() ≤ max_enumerate,
// else the best of hill climbs (first-improvement over single changes, and an action switched on
// with the actions its truth names) from `restarts` seeded random starts and from the baseline
// (a lower bound on the optimum, marked not exact).
Optimum FindOptimum(const Landscape& l, uint64_t max_enumerate = 2'000'000, int restarts = 200);

}  // namespace arbor::search
