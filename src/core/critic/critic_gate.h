// CriticGate: the statistical keep gate. Nothing is kept unless a sequential one-sided
// Mann–Whitney test says the candidate beats the baseline, the observed gain reaches
// critic.min_effect, and every guard holds. docs/critic.md states the rule and its proof.
//
// Input contract: GateInput.parent is the baseline (incumbent) arm and GateInput.candidate the
// candidate arm, measured interleaved (A B A B …) in one session after a discarded warm-up.
// Every sample of each vector counts, whatever its Sample::arm: the caller picks the arms.
// The gate is a group-sequential test of at most `max_rounds` looks; the round k is inferred
// from the samples per arm, ceil(n / r), r = GateInput.repetitions (metric.repetitions when 0).
// The caller judges once per round with the cumulative samples; when the verdict says "more"
// it measures `more_samples` (= r) more per arm, interleaved again, and judges again. At the
// last round the gate always decides, so the cap is the gate's own: a caller that honours
// every "more" needs no cap of its own. Judging one round twice spends its α twice: don't.
//
// Also here: the A/A noise pre-flight. The plausibility of a win is core/critic/plausibility.h.
#pragma once

#include <string>
#include <vector>

#include "core/critic/gate.h"
#include "core/model/spec.h"

namespace arbor {

struct CriticOptions {
  int max_rounds = 4;              // looks of metric.repetitions per arm, at most
  int bootstrap_resamples = 2000;  // 0: no confidence interval
  double futility_alpha = 0.20;    // stop early when the gain is significantly < min_effect
  // Looks by information (GateInput::info): stop early when, even at an optimistic effect (the
  // estimate plus one standard error), the last look would keep it less often than this.
  double futility_power = 0.10;
  // A replication (GateInput::replication) keeps at its last look with p within this and a gain
  // of min_effect: a null change passes the first A/B (α) and this (0.20) ~1% of the time.
  double replication_alpha = 0.20;
};

class CriticGate : public Gate {
 public:
  CriticGate() = default;
  explicit CriticGate(const CriticOptions& options) : options_(options) {}
  Verdict Judge(const GateInput& in) override;
  const CriticOptions& options() const { return options_; }

 private:
  CriticOptions options_;
};

// One-sided level spent at round k of K (1-based) by the Pocock-type spending function
// α(t) = α·ln(1 + (e − 1)·t): α(k/K) − α((k−1)/K). The levels sum to α, so by the union bound
// the chance of a false keep over all looks is at most α, however the looks are correlated.
double NominalAlpha(double alpha, int round, int rounds);
// The level spent by information fraction t ∈ [0, 1]: α·ln(1 + (e − 1)·t) (the same function).
double SpentAlpha(double alpha, double t);

// The chance that a comparison measured on to `max_samples` candidate samples (the base arm
// growing in proportion) ends with a keep at the last look's `final_alpha` and a gain of at
// least `min_effect`, if the true effect is the current estimate plus one standard error.
// Normal approximation on the log ratio of the medians, with the arms' robust CV. 1 when it
// cannot be estimated (a median ≤ 0); for a noise-free comparison, 1 or 0.
double ConditionalPower(const std::vector<double>& base, const std::vector<double>& cand, Goal goal,
                        double min_effect, double final_alpha, int max_samples);

// ---- Noise pre-flight ------------------------------------------------------------------------
// The pre-flight never refuses to run: a noisy benchmark is the normal case. It raises the
// repetitions per arm as far as the campaign's time budget allows, states the minimum
// detectable effect that leaves, and the campaign evaluates with it (docs/critic.md "Noise").
inline constexpr double kDesignPower = 0.8;  // power at which the pre-flight states an MDE
// The power the gate's last look has for a gain of exactly min_effect (as likely as not).
inline constexpr double kMinEffectPower = 0.5;
inline constexpr int kRepetitionCapFactor = 8;  // repetitions may rise to 8× the campaign's
// Benchmark runs one evaluation costs per repetition, for the time cap: two arms, about two
// looks of the sequential gate (the first look decides most candidates, a keep adds the
// confirmation's).
inline constexpr double kRunsPerRepetition = 4;

// What the time budget allows: the median duration of one baseline benchmark run and the
// campaign's time per evaluation (max_time / max_nodes). 0 = unknown (no time cap).
struct NoiseBudget {
  double bench_s = 0;
  double time_per_node_s = 0;
};

struct NoiseReport {
  double cv = 0;                    // robust CV of the A/A samples (RobustCV)
  double mde = 0;                   // relative, one look at recommended_repetitions
  int recommended_repetitions = 0;  // per arm and look
  int cap = 0;                      // the most repetitions the budget allows
  bool noisy = false;               // cv > max_cv: repetitions were raised
  bool capped = false;              // even the cap leaves cv·sqrt(r/n) > max_cv: MDE widened
  int outliers = 0;                 // flagged A/A samples (kept in the data)
  std::string message;              // one line for the user
};
// `aa_samples`: repeated measurements of the unchanged baseline. Repetitions rise until
// cv·sqrt(repetitions / n) ≤ max_cv (a look has the resolution max_cv promises), up to
// min(kRepetitionCapFactor × repetitions, what `budget` allows), never below `repetitions`.
NoiseReport AssessNoise(const std::vector<double>& aa_samples, const CriticSpec& critic,
                        int repetitions, const NoiseBudget& budget = {});

}  // namespace arbor
