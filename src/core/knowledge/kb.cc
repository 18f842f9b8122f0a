#include "core/knowledge/kb.h"

#include <algorithm>
#include <cmath>

#include "util/hash.h"
#include "util/strings.h"

namespace arbor {
namespace {

constexpr double kUncontrolledConfidence = 0.5;
constexpr double kConflictFactor = 0.5;
// Gains further apart than this (absolute, relative units) diverge when no interval says more.
constexpr double kDivergence = 0.05;
constexpr double kSecondsPerDay = 86400;

std::string Clean(std::string s) {
  for (char& c : s) {
    if (c == ';' || c == '=' || c == '\n') c = ' ';
  }
  return Trim(s);
}

// |a ∩ b| / |a ∪ b| of two sorted, duplicate-free lists (signatures keep theirs sorted), by
// one merge: this runs for every entry when priors are computed.
double Jaccard(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.empty() && b.empty()) return 1;
  size_t i = 0, j = 0, both = 0;
  while (i < a.size() && j < b.size()) {
    int c = a[i].compare(b[j]);
    if (c == 0) {
      ++both;
      ++i;
      ++j;
    } else if (c < 0) {
      ++i;
    } else {
      ++j;
    }
  }
  return static_cast<double>(both) / static_cast<double>(a.size() + b.size() - both);
}

std::string Percent(double fraction) {
  return (fraction >= 0 ? "+" : "") + FormatDouble(fraction * 100, 3) + "%";
}

}  // namespace

// ---- signatures ------------------------------------------------------------------------------

std::string HardwareSignature::Encode() const {
  return "cpu=" + Clean(cpu_model) + ";cores=" + std::to_string(cores) + ";isa=" + Join(isa, ",") +
         ";mem=" + FormatDouble(mem_gib, 6) + ";gpu=" + Clean(gpu);
}

std::optional<HardwareSignature> HardwareSignature::Decode(const std::string& text) {
  HardwareSignature h;
  bool any = false;
  for (const std::string& part : Split(text, ';')) {
    if (Trim(part).empty()) continue;
    size_t eq = part.find('=');
    if (eq == std::string::npos) return std::nullopt;
    std::string key = Trim(part.substr(0, eq));
    std::string value = Trim(part.substr(eq + 1));
    char* end = nullptr;
    if (key == "cpu") {
      h.cpu_model = value;
    } else if (key == "cores") {
      long n = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || n < 0 || n > 1 << 20) return std::nullopt;
      h.cores = static_cast<int>(n);
    } else if (key == "isa") {
      for (const std::string& f : Split(value, ',')) {
        if (!Trim(f).empty()) h.isa.push_back(Trim(f));
      }
      std::sort(h.isa.begin(), h.isa.end());
      h.isa.erase(std::unique(h.isa.begin(), h.isa.end()), h.isa.end());
    } else if (key == "mem") {
      double g = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(g >= 0) || !std::isfinite(g)) return std::nullopt;
      h.mem_gib = g;
    } else if (key == "gpu") {
      h.gpu = value;
    } else {
      return std::nullopt;
    }
    any = true;
  }
  if (!any) return std::nullopt;
  return h;
}

double HardwareSimilarity(const HardwareSignature& a, const HardwareSignature& b) {
  if (a == b) return 1;
  double s = 0.5 * (a.cpu_model == b.cpu_model ? 1 : 0) + 0.2 * Jaccard(a.isa, b.isa) +
             0.15 * (a.cores == b.cores ? 1 : 0);
  double hi = std::max(a.mem_gib, b.mem_gib);
  s += 0.15 * (hi <= 0 || std::min(a.mem_gib, b.mem_gib) >= 0.75 * hi ? 1 : 0);
  if (a.gpu != b.gpu) s *= 0.5;
  return std::max(0.1, s);
}

WorkloadSignature ParseWorkload(const std::string& text) {
  WorkloadSignature w;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) w.push_back(cur);
    cur.clear();
  };
  for (char c : text) {
    if (c == ' ' || c == ',' || c == '\t' || c == '\n') {
      flush();
    } else {
      cur += c;
    }
  }
  flush();
  std::sort(w.begin(), w.end());
  w.erase(std::unique(w.begin(), w.end()), w.end());
  return w;
}

std::string EncodeWorkload(const WorkloadSignature& w) { return Join(w, " "); }

double WorkloadSimilarity(const WorkloadSignature& a, const WorkloadSignature& b) {
  return 0.1 + 0.9 * Jaccard(a, b);
}

// ---- entries ---------------------------------------------------------------------------------

std::string KbEntry::CandidateKey() const { return arbor::CandidateKey(action_id, value); }

std::optional<double> ImpliedSpeedup(std::optional<double> gain, double share, Goal goal) {
  if (!gain || !(share > 0)) return std::nullopt;
  double saved = goal == Goal::kMax ? (*gain > -1 ? *gain / (1 + *gain) : -1e9) : *gain;
  double ratio = saved / share;
  double s = ratio >= 0.99 ? 100 : 1 / (1 - ratio);
  return std::clamp(s, 0.25, 100.0);
}

KbEntry EntryFromNode(const Node& node, const ActionSpec& action, const KbContext& context,
                      const std::string& path_hash, const std::string& campaign, Goal goal) {
  KbEntry e;
  e.campaign = campaign;
  e.campaign_uid = context.campaign_uid;
  e.node = node.id;
  e.uid = context.campaign_uid + "/" + std::to_string(node.id);
  e.action_id = node.action_id;
  e.value = node.value;
  e.category = node.category.empty() ? action.category : node.category;
  e.layer = node.layer.empty() ? action.layer : node.layer;
  e.content_hash = action.content_hash;
  e.workload = context.workload;
  e.hardware = context.hardware;
  e.path_hash = path_hash;
  e.outcome = std::string(OutcomeName(node.outcome));
  e.accuracy_failure = node.outcome == Outcome::kReverted && StartsWith(node.diagnosis, "accuracy");
  e.gain = node.gain;
  e.ci_low = node.critic.ci_low;
  e.ci_high = node.critic.ci_high;
  e.prior_speedup = node.score.speedup > 0 ? node.score.speedup : action.speedup;
  // g = f·(1 − 1/s) at dispatch, so the share its targets had is g / (1 − 1/s).
  if (e.prior_speedup > 1 && node.score.g > 0) {
    e.target_share = std::min(1.0, node.score.g / (1 - 1 / e.prior_speedup));
  }
  e.implied_speedup = ImpliedSpeedup(e.gain, e.target_share, goal);
  e.cost_s = node.cost_s;
  e.rca = RcaClassName(node.critic.rca);
  e.controlled = context.controlled;
  e.recorded_at = context.now;
  std::string key = node.CandidateKey();
  std::string what = action.describe.empty() ? key : action.describe + " (" + key + ")";
  if (node.outcome == Outcome::kKept) {
    e.lesson = "Kept: " + what + " gave " + (e.gain ? Percent(*e.gain) : "a gain") + " end to end";
    if (e.ci_low && e.ci_high) {
      e.lesson +=
          " (95% CI ×" + FormatDouble(*e.ci_low, 4) + "–×" + FormatDouble(*e.ci_high, 4) + ")";
    }
    if (auto s = e.implied_speedup) {
      e.lesson += ", with its targets at " + FormatDouble(e.target_share * 100, 3) +
                  "% of the time: about ×" + FormatDouble(*s, 3) + " on them";
    }
    e.lesson += ".";
  } else if (e.accuracy_failure) {
    e.lesson = "Pitfall: " + what + " broke accuracy: " + node.diagnosis;
  } else if (node.outcome == Outcome::kCrashed) {
    e.lesson = "Pitfall: " + what + " crashed (" + (e.rca.empty() ? "unclassified" : e.rca) +
               "): " + node.diagnosis;
    if (!node.critic.suggestion.empty()) e.lesson += " Suggestion: " + node.critic.suggestion;
  } else {
    e.lesson = "Pitfall: " + what + " was reverted: " + node.diagnosis;
  }
  // What the specialist found on the way is worth as much as the outcome to the next one.
  if (!node.agent.findings.empty()) e.lesson += " Findings: " + Join(node.agent.findings, "; ");
  return e;
}

std::string PathHash(const std::vector<const Node*>& kept_path) {
  std::vector<std::string> keys;
  for (const Node* n : kept_path) {
    if (n->id != kRootId) keys.push_back(n->CandidateKey());
  }
  std::sort(keys.begin(), keys.end());
  return HashHex(Join(keys, "\n"));
}

bool SameContext(const KbEntry& a, const KbEntry& b) {
  return a.action_id == b.action_id && a.value == b.value && a.content_hash == b.content_hash &&
         a.workload == b.workload && a.hardware == b.hardware && a.path_hash == b.path_hash;
}

bool Diverge(const KbEntry& a, const KbEntry& b) {
  bool ka = !a.IsPitfall();
  bool kb = !b.IsPitfall();
  if (ka != kb) return true;
  if (!a.gain || !b.gain) return false;
  if (a.ci_low && a.ci_high && b.ci_low && b.ci_high) {
    return *a.ci_high < *b.ci_low || *b.ci_high < *a.ci_low;
  }
  return std::abs(*a.gain - *b.gain) > kDivergence;
}

bool Corrects(const KbEntry& a, const KbEntry& b) {
  return !b.uid.empty() && a.uid == b.uid + kKbCorrectionSuffix;
}

KbRelation Compare(const KbEntry& a, const KbEntry& b) {
  if (Corrects(a, b)) return KbRelation::kSupersedes;
  if (Corrects(b, a)) return KbRelation::kSupersededBy;
  if (!SameContext(a, b) || !Diverge(a, b)) return KbRelation::kAgree;
  if (a.controlled && !b.controlled) return KbRelation::kSupersedes;
  if (b.controlled && !a.controlled) return KbRelation::kSupersededBy;
  return KbRelation::kConflict;
}

// ---- weights ---------------------------------------------------------------------------------

namespace {

double MatchLevel(const KbEntry& e, const ActionSpec& action, const std::string& value) {
  if (e.action_id == action.id) {
    return e.value == value && e.content_hash == action.content_hash ? 1 : kKbLevelSameAction;
  }
  return e.category == action.category ? kKbLevelSameCategory : 0;
}

}  // namespace

double EntryStanding(const KbEntry& e, double now) {
  if (e.superseded_by != 0) return 0;
  double w =
      (e.controlled ? 1 : kUncontrolledConfidence) * (e.conflict.empty() ? 1 : kConflictFactor);
  double age_days = std::max(0.0, now - e.recorded_at) / kSecondsPerDay;
  return age_days > 0 ? w * std::exp2(-age_days / kKbHalfLifeDays) : w;
}

double EntryWeight(const KbEntry& e, const ActionSpec& action, const std::string& value,
                   const KbContext& context) {
  double level = MatchLevel(e, action, value);
  if (level <= 0) return 0;
  if (!context.campaign_uid.empty() && e.campaign_uid == context.campaign_uid) return 0;
  return level * EntryStanding(e, context.now) * WorkloadSimilarity(e.workload, context.workload) *
         HardwareSimilarity(e.hardware, context.hardware);
}

std::vector<KbEntry> RelevantEntries(const std::vector<KbEntry>& entries, const ActionSpec& action,
                                     const std::string& value, const KbContext& context, int k) {
  std::vector<std::pair<double, const KbEntry*>> scored;
  for (const KbEntry& e : entries) {
    double w = EntryWeight(e, action, value, context);
    if (w > 0) scored.emplace_back(w, &e);
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    return a.second->recorded_at > b.second->recorded_at;
  });
  std::vector<KbEntry> out;
  for (const auto& [w, e] : scored) {
    if (static_cast<int>(out.size()) >= k) break;
    out.push_back(*e);
  }
  return out;
}

}  // namespace arbor
