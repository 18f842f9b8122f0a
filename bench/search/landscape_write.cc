// Landscape::ToJson: a landscape as the file format Landscape::Parse reads
// (docs/search-bench.md), so generated landscapes can be kept, read and run by the target
// program like hand-written ones. Keys at their parse defaults are left out, so a written file
// reads like one written by hand; the key order follows the docs' tables.
#include <nlohmann/json.hpp>

#include "bench/search/landscape.h"

namespace arbor::search {

namespace {

using nlohmann::ordered_json;

ordered_json EffectsJson(const Effects& e) {
  ordered_json out = ordered_json::object();
  for (const auto& [name, factor] : e) out[name] = factor;
  return out;
}

void PutIds(ordered_json* o, const char* key, const std::vector<std::string>& ids) {
  if (!ids.empty()) (*o)[key] = ids;
}

void PutRate(ordered_json* o, const char* key, double v) {
  if (v != 0) (*o)[key] = v;
}

ordered_json PriorJson(const Prior& p) {
  const Prior d;
  ordered_json out = ordered_json::object();
  if (p.speedup != d.speedup) out["speedup"] = p.speedup;
  if (p.cost_s != d.cost_s) out["cost_s"] = p.cost_s;
  PutRate(&out, "risk_crash", p.risk_crash);
  PutRate(&out, "risk_accuracy", p.risk_accuracy);
  PutIds(&out, "targets", p.targets);
  PutIds(&out, "requires", p.requires_);
  PutIds(&out, "conflicts", p.conflicts);
  return out;
}

ordered_json ActionJson(const LandscapeAction& a) {
  ordered_json out;
  out["id"] = a.id;
  out["layer"] = a.layer;
  if (a.category != a.id.substr(0, a.id.find('.'))) out["category"] = a.category;
  if (!a.describe.empty()) out["describe"] = a.describe;
  if (!a.effects.empty()) out["effects"] = EffectsJson(a.effects);
  if (!a.when.empty()) {
    ordered_json when = ordered_json::array();
    for (const ConditionalEffects& w : a.when) {
      ordered_json j = ordered_json::object();
      PutIds(&j, "with", w.with);
      PutIds(&j, "without", w.without);
      j["effects"] = EffectsJson(w.effects);
      when.push_back(std::move(j));
    }
    out["when"] = std::move(when);
  }
  PutRate(&out, "crash_rate", a.crash_rate);
  PutIds(&out, "crash_with", a.crash_with);
  PutRate(&out, "accuracy_fail", a.accuracy_fail);
  PutIds(&out, "accuracy_fixed_by", a.accuracy_fixed_by);
  PutIds(&out, "crash_unless", a.crash_unless);
  if (a.inflation != 1) out["inflation"] = a.inflation;
  if (!a.values.empty()) {
    ordered_json values = ordered_json::array();
    for (const ActionValue& v : a.values) {
      ordered_json j;
      j["value"] = v.value;
      if (!v.effects.empty()) j["effects"] = EffectsJson(v.effects);
      PutRate(&j, "crash_rate", v.crash_rate);
      PutRate(&j, "accuracy_fail", v.accuracy_fail);
      PutIds(&j, "crash_unless", v.crash_unless);
      values.push_back(std::move(j));
    }
    out["values"] = std::move(values);
  }
  ordered_json prior = PriorJson(a.prior);
  if (!prior.empty()) out["prior"] = std::move(prior);
  return out;
}

}  // namespace

std::string Landscape::ToJson() const {
  ordered_json out;
  out["name"] = name;
  out["description"] = description;
  out["base_value"] = base_value;
  out["repetitions"] = repetitions;
  const Noise d;
  ordered_json n = ordered_json::object();
  n["cv"] = noise.cv;
  if (noise.outlier_rate != d.outlier_rate) n["outlier_rate"] = noise.outlier_rate;
  if (noise.outlier_factor != d.outlier_factor) n["outlier_factor"] = noise.outlier_factor;
  if (noise.drift != d.drift) n["drift"] = noise.drift;
  if (noise.drift_period != d.drift_period) n["drift_period"] = noise.drift_period;
  out["noise"] = std::move(n);
  ordered_json comps = ordered_json::array();
  for (const LandscapeComponent& c : components) {
    comps.push_back({{"name", c.name}, {"layer", c.layer}, {"share", c.share}});
  }
  out["components"] = std::move(comps);
  ordered_json acts = ordered_json::array();
  for (const LandscapeAction& a : actions) acts.push_back(ActionJson(a));
  out["actions"] = std::move(acts);
  return out.dump(2) + "\n";
}

}  // namespace arbor::search
