// Evaluation of a landscape: the truth (time, crashes, accuracy, profile), the noisy
// measurement stream, and the environment a target program reads its configuration from.
#include "bench/search/landscape.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <numbers>

#include "bench/search/landscape_model.h"
#include "core/model/rng.h"
#include "util/check.h"
#include "util/hash.h"

namespace arbor::search {

namespace internal {
namespace {

int IndexOf(const std::vector<std::string>& names, const std::string& name, const char* what) {
  auto it = std::find(names.begin(), names.end(), name);
  ARBOR_CHECK(it != names.end(), std::string("landscape names an unknown ") + what + " '" + name +
                                     "' (Landscape::Parse rejects this)");
  return static_cast<int>(it - names.begin());
}

CompiledEffects Compile(const Effects& effects, const std::vector<std::string>& components) {
  CompiledEffects out;
  for (const auto& [name, factor] : effects) {
    ARBOR_CHECK(factor > 0, "effect factor on '" + name + "' must be > 0");
    out.push_back({name == "*" ? -1 : IndexOf(components, name, "component"), factor});
  }
  return out;
}

std::vector<int> CompileIds(const std::vector<std::string>& ids,
                            const std::vector<std::string>& actions) {
  std::vector<int> out;
  for (const std::string& id : ids) out.push_back(IndexOf(actions, id, "action"));
  return out;
}

void Apply(const CompiledEffects& effects, std::vector<double>* factors) {
  for (const CompiledEffect& e : effects) {
    if (e.component < 0) {
      for (double& f : *factors) f *= e.factor;
    } else {
      (*factors)[e.component] *= e.factor;
    }
  }
}

bool AllOn(const std::vector<int>& ids, const Choices& c) {
  return std::all_of(ids.begin(), ids.end(), [&](int i) { return c[i] != kOff; });
}

bool AnyOn(const std::vector<int>& ids, const Choices& c) {
  return std::any_of(ids.begin(), ids.end(), [&](int i) { return c[i] != kOff; });
}

}  // namespace

LandscapeModel::LandscapeModel(const Landscape& l) : l_(l) {
  std::vector<std::string> components;
  for (const LandscapeComponent& comp : l.components) {
    components.push_back(comp.name);
    shares_.push_back(comp.share);
  }
  std::vector<std::string> ids;
  for (const LandscapeAction& a : l.actions) ids.push_back(a.id);
  for (const LandscapeAction& a : l.actions) {
    CompiledAction ca;
    ca.effects = Compile(a.effects, components);
    for (const ConditionalEffects& w : a.when) {
      ca.when.push_back(
          {CompileIds(w.with, ids), CompileIds(w.without, ids), Compile(w.effects, components)});
    }
    ca.crash_rate = a.crash_rate;
    ca.crash_with = CompileIds(a.crash_with, ids);
    ca.accuracy_fail = a.accuracy_fail;
    ca.fixed_by = CompileIds(a.accuracy_fixed_by, ids);
    ca.crash_unless = CompileIds(a.crash_unless, ids);
    ca.inflation = a.inflation;
    for (const ActionValue& v : a.values) {
      ca.values.push_back({Compile(v.effects, components), v.crash_rate, v.accuracy_fail,
                           CompileIds(v.crash_unless, ids)});
    }
    actions_.push_back(std::move(ca));
  }
}

int LandscapeModel::Options(int i) const {
  return std::max<int>(1, static_cast<int>(actions_[i].values.size()));
}

Choices LandscapeModel::FromConfig(const Config& c) const {
  Choices out(actions_.size(), kOff);
  for (size_t i = 0; i < actions_.size(); ++i) {
    const LandscapeAction& a = l_.actions[i];
    auto it = c.find(a.id);
    if (it == c.end()) continue;
    if (a.values.empty()) {
      out[i] = 0;
      continue;
    }
    for (size_t v = 0; v < a.values.size(); ++v) {
      if (a.values[v].value == it->second) out[i] = static_cast<int>(v);
    }
  }
  return out;
}

Config LandscapeModel::ToConfig(const Choices& c) const {
  Config out;
  for (size_t i = 0; i < actions_.size(); ++i) {
    if (c[i] == kOff) continue;
    const LandscapeAction& a = l_.actions[i];
    out[a.id] = a.values.empty() ? "on" : a.values[c[i]].value;
  }
  return out;
}

std::vector<double> LandscapeModel::ComponentTimes(const Choices& c) const {
  std::vector<double> factors(shares_.size(), 1.0);
  for (size_t i = 0; i < actions_.size(); ++i) {
    if (c[i] == kOff) continue;
    const CompiledAction& a = actions_[i];
    Apply(a.values.empty() ? a.effects : a.values[c[i]].effects, &factors);
    for (const CompiledWhen& w : a.when) {
      if (AllOn(w.with, c) && !AnyOn(w.without, c)) Apply(w.effects, &factors);
    }
  }
  std::vector<double> times(shares_.size());
  for (size_t j = 0; j < shares_.size(); ++j) times[j] = shares_[j] / factors[j];
  return times;
}

double LandscapeModel::RelativeTime(const Choices& c) const {
  double total = 0;
  for (double t : ComponentTimes(c)) total += t;
  return total;
}

bool LandscapeModel::MissingPrerequisite(const Choices& c) const {
  for (size_t i = 0; i < actions_.size(); ++i) {
    if (c[i] == kOff) continue;
    const CompiledAction& a = actions_[i];
    if (!AllOn(a.crash_unless, c)) return true;
    if (!a.values.empty() && !AllOn(a.values[c[i]].crash_unless, c)) return true;
  }
  return false;
}

std::vector<int> LandscapeModel::Partners(int i) const {
  const CompiledAction& a = actions_[i];
  std::vector<int> out = a.crash_unless;
  for (const CompiledWhen& w : a.when) out.insert(out.end(), w.with.begin(), w.with.end());
  out.insert(out.end(), a.fixed_by.begin(), a.fixed_by.end());
  for (const CompiledValue& v : a.values) {
    out.insert(out.end(), v.crash_unless.begin(), v.crash_unless.end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double LandscapeModel::Inflation(const Choices& c) const {
  double k = 1;
  for (size_t i = 0; i < actions_.size(); ++i) {
    if (c[i] != kOff) k *= actions_[i].inflation;
  }
  return k;
}

double LandscapeModel::CrashRate(const Choices& c) const {
  if (MissingPrerequisite(c)) return 1;
  double rate = 0;
  for (size_t i = 0; i < actions_.size(); ++i) {
    if (c[i] == kOff) continue;
    const CompiledAction& a = actions_[i];
    if (AnyOn(a.crash_with, c)) return 1;
    rate = std::max(rate, a.crash_rate);
    if (!a.values.empty()) rate = std::max(rate, a.values[c[i]].crash_rate);
  }
  return rate;
}

double LandscapeModel::AccuracyFailRate(const Choices& c) const {
  double rate = 0;
  for (size_t i = 0; i < actions_.size(); ++i) {
    if (c[i] == kOff) continue;
    const CompiledAction& a = actions_[i];
    // An empty accuracy_fixed_by fixes nothing (not "all of none are on").
    if (!a.fixed_by.empty() && AllOn(a.fixed_by, c)) continue;
    rate = std::max(rate, a.accuracy_fail);
    if (!a.values.empty()) rate = std::max(rate, a.values[c[i]].accuracy_fail);
  }
  return rate;
}

uint64_t ConfigHash(const Config& c) {
  std::string text;
  for (const auto& [id, value] : c) text += id + '\x1f' + value + '\x1e';
  return Fnv1a64(text);
}

}  // namespace internal

namespace {

// Separate streams for benchmark runs and checks, so one never shifts the other.
constexpr uint64_t kReadingStream = 0x52454144494e4721ULL;
constexpr uint64_t kCheckStream = 0x434845434b535452ULL;

// The generator of draw `k` of `stream` for configuration `c` (normalized, so that the target
// program, which reads its configuration from the environment, draws the same numbers).
Rng DrawRng(const internal::LandscapeModel& model, const internal::Choices& c, uint64_t seed,
            uint64_t k, uint64_t stream) {
  uint64_t h = internal::ConfigHash(model.ToConfig(c));
  uint64_t state = Rng(seed ^ stream).Next();
  state = Rng(state ^ k).Next();
  state = Rng(state ^ h).Next();
  return Rng(state);
}

}  // namespace

const LandscapeAction* Landscape::Find(const std::string& id) const {
  for (const LandscapeAction& a : actions) {
    if (a.id == id) return &a;
  }
  return nullptr;
}

std::vector<std::vector<std::string>> Landscape::Choices() const {
  std::vector<std::vector<std::string>> out;
  for (const LandscapeAction& a : actions) {
    std::vector<std::string> choices;
    if (a.values.empty()) choices.push_back("on");
    for (const ActionValue& v : a.values) choices.push_back(v.value);
    out.push_back(std::move(choices));
  }
  return out;
}

uint64_t Landscape::SpaceSize() const {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  uint64_t size = 1;
  for (const auto& choices : Choices()) {
    uint64_t n = 1 + choices.size();
    if (size > kMax / n) return kMax;
    size *= n;
  }
  return size;
}

double Landscape::RelativeTime(const Config& c) const {
  internal::LandscapeModel model(*this);
  return model.RelativeTime(model.FromConfig(c));
}

double Landscape::TrueValue(const Config& c) const { return base_value / RelativeTime(c); }

double Landscape::CrashRate(const Config& c) const {
  internal::LandscapeModel model(*this);
  return model.CrashRate(model.FromConfig(c));
}

double Landscape::AccuracyFailRate(const Config& c) const {
  internal::LandscapeModel model(*this);
  return model.AccuracyFailRate(model.FromConfig(c));
}

int Landscape::CrashSignal(const Config& c) const {
  internal::LandscapeModel model(*this);
  return model.MissingPrerequisite(model.FromConfig(c)) ? 4 : 6;
}

double Landscape::Inflation(const Config& c) const {
  internal::LandscapeModel model(*this);
  return model.Inflation(model.FromConfig(c));
}

Profile Landscape::TrueProfile(const Config& c) const {
  internal::LandscapeModel model(*this);
  std::vector<double> times = model.ComponentTimes(model.FromConfig(c));
  Profile p;
  for (double t : times) p.total_s += t;  // the baseline takes 1 s
  for (size_t i = 0; i < components.size(); ++i) {
    p.components.push_back({components[i].name, components[i].layer, times[i] / p.total_s});
  }
  return p;
}

std::optional<double> Landscape::Reading(const Config& c, uint64_t seed, uint64_t k) const {
  internal::LandscapeModel model(*this);
  const internal::Choices choices = model.FromConfig(c);
  Rng rng = DrawRng(model, choices, seed, k, kReadingStream);
  // Every draw is taken whatever happens, so the stream's shape does not depend on the rates.
  const double u_crash = rng.Uniform();
  const double u1 = 1.0 - rng.Uniform();  // (0, 1]: log(u1) is finite
  const double u2 = rng.Uniform();
  const double u_outlier = rng.Uniform();
  if (u_crash < model.CrashRate(choices)) return std::nullopt;
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  // exp(cv·z − cv²/2) has mean 1, so the readings' mean is the truth (before outliers/drift).
  // An inflation knob makes the benchmark do less work: the reading rises, the truth does not.
  double value = base_value / model.RelativeTime(choices) * model.Inflation(choices) *
                 std::exp(noise.cv * z - noise.cv * noise.cv / 2);
  if (u_outlier < noise.outlier_rate) value *= noise.outlier_factor;
  value *= 1.0 + noise.drift *
                     std::sin(2.0 * std::numbers::pi * static_cast<double>(k) / noise.drift_period);
  return value;
}

bool Landscape::CheckPasses(const Config& c, uint64_t seed, uint64_t k) const {
  internal::LandscapeModel model(*this);
  const internal::Choices choices = model.FromConfig(c);
  Rng rng = DrawRng(model, choices, seed, k, kCheckStream);
  return !(rng.Uniform() < model.AccuracyFailRate(choices));
}

std::string Landscape::EnvVar(const std::string& action_id) {
  std::string out = "LS_";
  for (char ch : action_id) {
    const auto u = static_cast<unsigned char>(ch);
    out += std::isalnum(u) != 0 ? static_cast<char>(std::toupper(u)) : '_';
  }
  return out;
}

Config Landscape::ConfigFromEnv(const std::map<std::string, std::string>& env) const {
  Config c;
  for (const LandscapeAction& a : actions) {
    auto it = env.find(EnvVar(a.id));
    if (it == env.end()) continue;
    if (a.values.empty()) {
      if (it->second == "1") c[a.id] = "on";
      continue;
    }
    for (const ActionValue& v : a.values) {
      if (v.value == it->second) c[a.id] = v.value;
    }
  }
  return c;
}

}  // namespace arbor::search
