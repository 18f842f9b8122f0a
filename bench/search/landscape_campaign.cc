// The campaign Arbor runs against a landscape, as a CampaignSpec (in process) and as a campaign
// file (for the real target program). Both are built from the same ActionSpecs, so a test can
// hold the file, read back by Arbor's own loader, against the spec.
#include <algorithm>
#include <charconv>
#include <cmath>

#include "bench/search/landscape.h"
#include "util/escape.h"
#include "util/hash.h"

namespace arbor::search {

namespace {

// What a campaign file's targets would say: the prior's, else every component the action's true
// effects touch (its own, its values', its conditional ones) in file order; "*" anywhere means
// the whole program (no targets).
std::vector<std::string> Targets(const Landscape& l, const LandscapeAction& a) {
  if (!a.prior.targets.empty()) return a.prior.targets;
  std::vector<const Effects*> all = {&a.effects};
  for (const ConditionalEffects& w : a.when) all.push_back(&w.effects);
  for (const ActionValue& v : a.values) all.push_back(&v.effects);
  std::vector<std::string> out;
  for (const Effects* e : all) {
    if (e->count("*") > 0) return {};
  }
  for (const LandscapeComponent& c : l.components) {
    bool touched =
        std::any_of(all.begin(), all.end(), [&](const Effects* e) { return e->count(c.name) > 0; });
    if (touched) out.push_back(c.name);
  }
  return out;
}

// Mirrors config/action_loader.cc ContentHash for an env action (kind, the four string fields
// that are empty here, the variables, the values), so the in-process spec and the loaded file
// agree on "the same change".
std::string EnvContentHash(const ActionSpec& action) {
  std::string text = std::to_string(static_cast<int>(ApplySpec::Kind::kEnv));
  for (int i = 0; i < 4; ++i) text += '\x1f';  // patch, run, agent, goal
  for (const auto& [name, value] : action.apply.env) text += '\x1f' + name + '\x1f' + value;
  for (const std::string& value : action.values) text += '\x1e' + value;
  return HashHex(text);
}

// The shortest text that reads back as the same double (an integer when it is one).
std::string TomlNumber(double d) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, end);
}

std::string TomlArray(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i > 0 ? ", " : "") + TomlBasicString(items[i]);
  return out + "]";
}

std::string TomlEnv(const std::map<std::string, std::string>& env) {
  std::string out = "{ ";
  bool first = true;
  for (const auto& [name, value] : env) {
    out += (first ? "" : ", ") + name + " = " + TomlBasicString(value);
    first = false;
  }
  return out + " }";
}

std::string ActionToml(const ActionSpec& a) {
  std::string out = "\n[[action]]\n";
  out += "id = " + TomlBasicString(a.id) + "\n";
  out += "layer = " + TomlBasicString(a.layer) + "\n";
  out += "category = " + TomlBasicString(a.category) + "\n";
  out += "describe = " + TomlBasicString(a.describe) + "\n";
  out += "targets = " + TomlArray(a.targets) + "\n";
  out += "speedup = " + TomlNumber(a.speedup) + "\n";
  out += "cost = " + TomlNumber(a.cost_s) + "\n";
  out += "risk = { accuracy = " + TomlNumber(a.risk_accuracy) +
         ", crash = " + TomlNumber(a.risk_crash) + " }\n";
  if (!a.requires_.empty()) out += "requires = " + TomlArray(a.requires_) + "\n";
  if (!a.conflicts.empty()) out += "conflicts = " + TomlArray(a.conflicts) + "\n";
  if (!a.values.empty()) out += "values = " + TomlArray(a.values) + "\n";
  out += "apply = { env = " + TomlEnv(a.apply.env) + " }\n";
  return out;
}

}  // namespace

CampaignSpec Landscape::ToCampaignSpec(uint64_t seed, int max_nodes) const {
  CampaignSpec spec;
  spec.name = name;
  spec.seed = seed;
  spec.metric.name = "value";
  spec.metric.goal = Goal::kMax;
  spec.metric.source = {MetricSource::Kind::kJson, "value", "json:value"};
  spec.metric.repetitions = repetitions;
  // Every run reports the work it did (1 = the baseline's), so the Critic can catch an
  // inflation knob: a faster reading from a run that did less work.
  spec.metric.work = MetricSource{MetricSource::Kind::kJson, "work", "json:work"};
  spec.search.max_nodes = max_nodes;
  spec.search.max_time_s = 1e9;  // the budget is nodes; simulated time must never end a run
  // The Critic's defaults, as a user would run them: a noisy landscape gets the engine's extra
  // repetitions (robust CV > max_cv) like a real benchmark, and nothing refuses to gate.
  // A benchmark run must not learn from earlier runs through the user's knowledge base.
  spec.kb.enabled = false;
  spec.profile.format = ProfileFormat::kArbor;
  for (const LandscapeAction& a : actions) {
    ActionSpec s;
    s.id = a.id;
    s.layer = a.layer;
    s.category = a.category;
    s.describe = a.describe;
    s.targets = Targets(*this, a);
    s.speedup = a.prior.speedup;
    s.cost_s = a.prior.cost_s;
    s.risk_crash = a.prior.risk_crash;
    s.risk_accuracy = a.prior.risk_accuracy;
    s.requires_ = a.prior.requires_;
    s.conflicts = a.prior.conflicts;
    s.apply.kind = ApplySpec::Kind::kEnv;
    s.apply.env[EnvVar(a.id)] = a.values.empty() ? "1" : "{value}";
    for (const ActionValue& v : a.values) s.values.push_back(v.value);
    s.content_hash = EnvContentHash(s);
    spec.actions.push_back(std::move(s));
  }
  return spec;
}

std::string Landscape::CampaignToml(const std::string& target_cmd,
                                    const std::string& landscape_path,
                                    const std::string& state_path, uint64_t seed,
                                    int max_nodes) const {
  const CampaignSpec spec = ToCampaignSpec(seed, max_nodes);
  std::string out = "# Generated from the landscape " + TomlBasicString(name) +
                    " (bench/search/landscape.h); docs/search-bench.md.\n";
  out += "\n[campaign]\nname = " + TomlBasicString(spec.name) + "\nworkspace = \".\"\n";
  out += "seed = " + std::to_string(spec.seed) + "\n";
  out += "\n[target]\n";
  out += "check = " + TomlBasicString(target_cmd + " --check") + "\n";
  out += "bench = " + TomlBasicString(target_cmd + " --bench") + "\n";
  out += "profile = " + TomlBasicString(target_cmd + " --profile") + "\n";
  out += "env = " +
         TomlEnv({{"LANDSCAPE_FILE", landscape_path},
                  {"LANDSCAPE_SEED", std::to_string(seed)},
                  {"LANDSCAPE_STATE", state_path}}) +
         "\n";
  out += "\n[metric]\nname = " + TomlBasicString(spec.metric.name) + "\ngoal = \"max\"\n";
  out += "source = " + TomlBasicString(spec.metric.source.text) + "\n";
  out += "work = " + TomlBasicString(spec.metric.work->text) + "\n";
  out += "repetitions = " + std::to_string(spec.metric.repetitions) + "\n";
  out += "\n[search]\nmax_nodes = " + std::to_string(spec.search.max_nodes) + "\n";
  out += "max_time = " + TomlNumber(spec.search.max_time_s) + "\n";
  out += "\n[critic]\nmax_cv = " + TomlNumber(spec.critic.max_cv) + "\n";
  out += "\n[kb]\nenabled = false\n";
  out += "\n[profile]\nformat = \"arbor\"\n";
  for (const ActionSpec& a : spec.actions) out += ActionToml(a);
  return out;
}

}  // namespace arbor::search
