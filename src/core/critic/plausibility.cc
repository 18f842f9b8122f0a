#include "core/critic/plausibility.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/critic/gate.h"
#include "core/critic/statistics.h"
#include "util/strings.h"

namespace arbor {
namespace {

std::string Times(double v) { return "×" + FormatDouble(v, 4); }
std::string Pct(double f) { return (f >= 0 ? "+" : "") + FormatDouble(f * 100, 3) + "%"; }

// The median of one `extra` reading over samples that have it (nullopt: none has).
std::optional<double> ExtraMedian(const std::vector<Sample>& samples, const std::string& key) {
  std::vector<double> v;
  for (const Sample& s : samples) {
    auto it = s.extra.find(key);
    if (it != s.extra.end()) v.push_back(it->second);
  }
  if (v.empty()) return std::nullopt;
  return Median(v);
}

// a / b of two medians, when both are positive.
std::optional<double> Ratio(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || !(*a > 0) || !(*b > 0)) return std::nullopt;
  return *a / *b;
}

}  // namespace

Plausibility CheckPlausibility(const PlausibilityInput& in) {
  Plausibility p;
  if (in.user_max_speedup) {
    p.bound = p.explained = *in.user_max_speedup;
    p.basis = "[critic] max_plausible_speedup " + Times(p.bound);
  } else {
    // The end-to-end speedup the action was expected to give, and the targets' share.
    const double s = in.prior_speedup;
    double expected = s > 1 ? s : 1;
    std::string why = s > 1 ? "prior " + Times(s) + " on the whole program" : "no usable prior";
    if (s > 1 && !in.whole_program && in.expected_gain_g > 0 && in.expected_gain_g < 1) {
      const double share = std::min(1.0, in.expected_gain_g / (1 - 1 / s));
      expected = 1 / (1 - in.expected_gain_g);
      why = "prior " + Times(s) + " on targets with " + FormatDouble(share * 100, 3) +
            "% of the time";
      const double f = share + kShareSlack;
      if (f < 1) {
        p.amdahl = 1 / (1 - f);
        p.basis = "Amdahl " + Times(p.amdahl) + " (the targets' share + " +
                  FormatDouble(kShareSlack * 100, 3) + " points, removed entirely); ";
      }
    }
    double gain = expected - 1;
    std::string from = why + ": expected " + Pct(gain);
    if (in.kb_max_speedup && *in.kb_max_speedup - 1 > gain) {
      gain = *in.kb_max_speedup - 1;
      from = "the knowledge base's largest kept gain in the category, " + Pct(gain);
    }
    p.explained = std::max(kMinPlausibleSpeedup, 1 + kPlausibleGainMargin * gain);
    p.basis += "explained " + Times(p.explained) + " (" + from + ", ×" +
               FormatDouble(kPlausibleGainMargin) + " margin, at least " +
               Times(kMinPlausibleSpeedup) + ")";
    p.bound = std::min(p.amdahl, p.explained);
  }
  p.anomaly = !(in.observed_speedup <= p.bound);  // NaN is an anomaly too
  p.message = std::string(p.anomaly ? "anomaly: speedup " : "plausible: speedup ") +
              Times(in.observed_speedup) + (p.anomaly ? " beyond" : " within") + " the plausible " +
              Times(p.bound) + " [" + p.basis + "]";
  return p;
}

AnomalyVerdict JudgeAnomaly(double observed_speedup, const Plausibility& p,
                            const AnomalyEvidence& e) {
  AnomalyVerdict v;
  const std::string claim =
      "the metric claims " + Times(observed_speedup) + ", beyond the plausible " + Times(p.bound);
  if (e.trust_large_gains) {
    v.keep = true;
    v.reason = claim + "; kept: [critic] trust_large_gains = true";
    return v;
  }
  if (e.fixed == BenchFixed::kWork && e.wall_ratio && *e.wall_ratio < 1 + kWallWitnessMinChange) {
    v.reason = claim + ", but the fixed-work bench command took as long as before (wall time " +
               Times(*e.wall_ratio) + "): the metric is broken, not the program faster";
    return v;
  }
  if (e.work_ratio && *e.work_ratio >= kWorkHeld) {
    v.keep = true;
    v.reason = claim + "; kept: the work metric held (" + Times(*e.work_ratio) + ")";
    return v;
  }
  const bool reproduced =
      !e.work_ratio && e.first_speedup && *e.first_speedup > 0 && observed_speedup > 0 &&
      std::max(*e.first_speedup, observed_speedup) / std::min(*e.first_speedup, observed_speedup) <=
          kReproducedAgreement;
  if (reproduced && observed_speedup <= kReproducibleBeyondBound * p.bound) {
    v.keep = true;
    v.reason = claim + "; kept: a fresh run with twice the repetitions reproduced it (" +
               Times(*e.first_speedup) + " then " + Times(observed_speedup) + "), within ×" +
               FormatDouble(kReproducibleBeyondBound) + " of the bound: the prior was too low";
    return v;
  }
  v.reason = claim + "; not kept without evidence (" +
             (e.work_ratio ? "the work metric fell to " + Times(*e.work_ratio)
              : reproduced ? "reproduced, but more than ×" +
                                 FormatDouble(kReproducibleBeyondBound) + " beyond the bound"
                           : std::string("not reproduced, no [metric] work declared")) +
             "): if the gain is real, declare [metric] work, raise the action's speedup prior, "
             "set [critic] max_plausible_speedup or [critic] trust_large_gains";
  return v;
}

bool DisagreesByOrders(double kept, double now) {
  if (!(kept > 0) || !(now > 0)) return false;
  const double ratio = now / kept;
  return ratio >= kUnkeepFactor || ratio <= 1 / kUnkeepFactor;
}

std::optional<double> LargestKeptSpeedup(const std::vector<KbEntry>& entries,
                                         const std::string& category, Goal goal) {
  std::set<std::string> corrected;  // entries a later "/unkept" correction replaced
  const std::string suffix = kKbCorrectionSuffix;
  for (const KbEntry& e : entries) {
    if (EndsWith(e.uid, suffix)) corrected.insert(e.uid.substr(0, e.uid.size() - suffix.size()));
  }
  std::optional<double> best;
  for (const KbEntry& e : entries) {
    if (e.IsPitfall() || e.category != category || e.superseded_by != 0 || !e.gain ||
        !e.controlled || corrected.count(e.uid) > 0) {
      continue;
    }
    double s = SpeedupOfGain(*e.gain, goal);
    if (!std::isfinite(s) || s <= 0) continue;
    if (!best || s > *best) best = s;
  }
  return best;
}

// Goal-aware speedup of the candidate's median over the base's (> 1 better; 0 if undefined).
double ArmSpeedup(const std::vector<Sample>& base, const std::vector<Sample>& cand, Goal goal) {
  if (base.empty() || cand.empty()) return 0;
  const double b = Median(SampleValues(base));
  const double c = Median(SampleValues(cand));
  if (!(b > 0) || !(c > 0)) return 0;
  return goal == Goal::kMax ? c / b : b / c;
}

// The plausibility bound of `node`'s action (core/critic/plausibility.h): its scored gain and
// prior, its targets, the knowledge base's largest kept gain in its category, the user's bound.
Plausibility PlausibilityOfNode(const Node& node, const ActionSpec* action,
                                const std::vector<KbEntry>& kb, const CampaignSpec& spec,
                                double speedup) {
  PlausibilityInput in;
  in.observed_speedup = speedup;
  in.expected_gain_g = node.score.g;
  in.prior_speedup = node.score.speedup > 0 ? node.score.speedup
                     : action != nullptr    ? action->speedup
                                            : 0;
  in.whole_program = action == nullptr || action->targets.empty();
  in.kb_max_speedup = LargestKeptSpeedup(kb, node.category, spec.metric.goal);
  in.user_max_speedup = spec.critic.max_plausible_speedup;
  return CheckPlausibility(in);
}

// What the re-runs of an anomaly decide: `first` is the A/B's speedup that raised it,
// `confirmed` the fresh run's (confirm arms `base`, `cand`), `p` the bound at `confirmed`.
AnomalyVerdict JudgeRerun(const Plausibility& p, double first, double confirmed,
                          const std::vector<Sample>& base, const std::vector<Sample>& cand,
                          const CampaignSpec& spec) {
  if (!p.anomaly) {  // the fresh run's gain is plausible: kept on it, unless it disagrees
    AnomalyVerdict v;
    v.keep = !DisagreesByOrders(first, confirmed);
    v.reason = "the A/B claimed ×" + FormatDouble(first, 4) + ", the fresh run ×" +
               FormatDouble(confirmed, 4) + " (" + p.message + ")" +
               (v.keep ? "; kept on the fresh run's figures"
                       : ": they disagree by an order of magnitude, so a reading is broken");
    return v;
  }
  AnomalyEvidence e;
  e.trust_large_gains = spec.critic.trust_large_gains;
  e.fixed = spec.metric.fixed;
  if (spec.metric.work) e.work_ratio = Ratio(ExtraMedian(cand, "work"), ExtraMedian(base, "work"));
  e.first_speedup = first;
  const std::optional<double> base_wall = ExtraMedian(base, "wall_s");
  if (base_wall && *base_wall >= kWallWitnessMinSeconds) {
    e.wall_ratio = Ratio(base_wall, ExtraMedian(cand, "wall_s"));
  }
  AnomalyVerdict v = JudgeAnomaly(confirmed, p, e);
  v.reason = "re-run: check passed, " + v.reason + " [" + p.basis + "]";
  return v;
}

}  // namespace arbor
