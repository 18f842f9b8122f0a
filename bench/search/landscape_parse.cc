// Landscape::Parse / Load: the JSON format of docs/search-bench.md ("Landscape files"). The
// structure is read first (types, ranges, unknown keys), then the names are checked against
// each other, so every message carries the JSON path of the offending value.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "bench/search/landscape.h"
#include "bench/search/landscape_json.h"

namespace arbor::search {

namespace {

using internal::JsonReader;
using internal::Need;
using internal::Range;
using nlohmann::json;

std::string Index(const std::string& array, size_t i) {
  return array + "[" + std::to_string(i) + "]";
}

// Action ids and the landscape name become campaign names, git branches and env variables.
bool IsName(const std::string& s) {
  if (s.empty() || s[0] == '.' || s[0] == '-') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-';
  });
}

Status ReadNoise(const JsonReader& top, Noise* noise) {
  std::optional<JsonReader> r;
  ARBOR_TRY(top.ReadObject("noise", &r));
  if (!r) return {};
  ARBOR_TRY(r->CheckObject({"cv", "outlier_rate", "outlier_factor", "drift", "drift_period"}));
  ARBOR_TRY(r->ReadNumber("cv", Range::kNonNegative, &noise->cv));
  ARBOR_TRY(r->ReadNumber("outlier_rate", Range::kUnit, &noise->outlier_rate));
  ARBOR_TRY(r->ReadNumber("outlier_factor", Range::kPositive, &noise->outlier_factor));
  ARBOR_TRY(r->ReadNumber("drift", Range::kUnitOpenTop, &noise->drift));
  return r->ReadNumber("drift_period", Range::kPositive, &noise->drift_period);
}

Status ReadComponents(const JsonReader& top, std::vector<LandscapeComponent>* out) {
  std::vector<JsonReader> items;
  ARBOR_TRY(top.ReadArray("components", Need::kRequired, &items));
  if (items.empty()) return top.FailAt("components", "is empty; expected at least one component");
  double sum = 0;
  for (const JsonReader& r : items) {
    ARBOR_TRY(r.CheckObject({"name", "layer", "share"}));
    LandscapeComponent c;
    ARBOR_TRY(r.ReadString("name", Need::kRequired, &c.name));
    if (c.name == "*" || c.name.find_first_of("*?[]") != std::string::npos) {
      return r.FailAt(r.PathOf("name"), "'" + c.name +
                                            "' has a glob character; expected a plain name "
                                            "(actions' targets are globs matched against it)");
    }
    for (const LandscapeComponent& other : *out) {
      if (other.name == c.name) {
        return r.FailAt(r.PathOf("name"), "'" + c.name +
                                              "' is declared twice; expected unique "
                                              "component names");
      }
    }
    ARBOR_TRY(r.ReadString("layer", Need::kRequired, &c.layer));
    if (r.value().find("share") == r.value().end()) {
      return r.FailAt(r.PathOf("share"), "is missing; expected a number in [0, 1]");
    }
    ARBOR_TRY(r.ReadNumber("share", Range::kUnit, &c.share));
    sum += c.share;
    out->push_back(std::move(c));
  }
  if (std::fabs(sum - 1) > 1e-6) {
    return top.FailAt("components", "shares sum to " + json(sum).dump() + ", expected 1 (±1e-6)");
  }
  return {};
}

Status ReadPrior(const JsonReader& action, Prior* prior) {
  std::optional<JsonReader> r;
  ARBOR_TRY(action.ReadObject("prior", &r));
  if (!r) return {};
  ARBOR_TRY(r->CheckObject(
      {"speedup", "cost_s", "risk_crash", "risk_accuracy", "targets", "requires", "conflicts"}));
  ARBOR_TRY(r->ReadNumber("speedup", Range::kPositive, &prior->speedup));
  ARBOR_TRY(r->ReadNumber("cost_s", Range::kNonNegative, &prior->cost_s));
  // [0, 1) like a campaign file's risk (a certain crash is not a candidate).
  ARBOR_TRY(r->ReadNumber("risk_crash", Range::kUnitOpenTop, &prior->risk_crash));
  ARBOR_TRY(r->ReadNumber("risk_accuracy", Range::kUnitOpenTop, &prior->risk_accuracy));
  ARBOR_TRY(r->ReadStrings("targets", &prior->targets));
  ARBOR_TRY(r->ReadStrings("requires", &prior->requires_));
  return r->ReadStrings("conflicts", &prior->conflicts);
}

Status ReadValues(const JsonReader& action, std::vector<ActionValue>* out) {
  std::vector<JsonReader> items;
  ARBOR_TRY(action.ReadArray("values", Need::kOptional, &items));
  if (items.empty() && action.value().contains("values")) {
    return action.FailAt(action.PathOf("values"), "is empty; expected at least one value");
  }
  for (const JsonReader& r : items) {
    ARBOR_TRY(r.CheckObject({"value", "effects", "crash_rate", "accuracy_fail", "crash_unless"}));
    ActionValue v;
    ARBOR_TRY(r.ReadString("value", Need::kRequired, &v.value));
    for (const ActionValue& other : *out) {
      if (other.value == v.value) {
        return r.FailAt(r.PathOf("value"), "\"" + v.value +
                                               "\" appears twice; expected unique "
                                               "values");
      }
    }
    ARBOR_TRY(r.ReadEffects("effects", &v.effects));
    ARBOR_TRY(r.ReadNumber("crash_rate", Range::kUnit, &v.crash_rate));
    ARBOR_TRY(r.ReadNumber("accuracy_fail", Range::kUnit, &v.accuracy_fail));
    ARBOR_TRY(r.ReadStrings("crash_unless", &v.crash_unless));
    out->push_back(std::move(v));
  }
  return {};
}

Status ReadAction(const JsonReader& r, LandscapeAction* a) {
  ARBOR_TRY(r.CheckObject({"id", "layer", "category", "describe", "effects", "when", "crash_rate",
                           "crash_with", "accuracy_fail", "accuracy_fixed_by", "crash_unless",
                           "inflation", "values", "prior"}));
  ARBOR_TRY(r.ReadString("id", Need::kRequired, &a->id));
  if (!IsName(a->id)) {
    return r.FailAt(r.PathOf("id"), "'" + a->id +
                                        "' is not a valid id; expected letters, digits, '.', "
                                        "'_' or '-', not starting with '.' or '-'");
  }
  ARBOR_TRY(r.ReadString("layer", Need::kRequired, &a->layer));
  a->category = a->id.substr(0, a->id.find('.'));  // as a campaign file's default
  ARBOR_TRY(r.ReadString("category", Need::kOptional, &a->category));
  if (a->category.empty()) return r.FailAt(r.PathOf("category"), "is empty; expected a name");
  ARBOR_TRY(r.ReadString("describe", Need::kOptional, &a->describe));
  ARBOR_TRY(r.ReadEffects("effects", &a->effects));
  std::vector<JsonReader> when;
  ARBOR_TRY(r.ReadArray("when", Need::kOptional, &when));
  for (const JsonReader& w : when) {
    ARBOR_TRY(w.CheckObject({"with", "without", "effects"}));
    ConditionalEffects c;
    ARBOR_TRY(w.ReadStrings("with", &c.with));
    ARBOR_TRY(w.ReadStrings("without", &c.without));
    ARBOR_TRY(w.ReadEffects("effects", &c.effects));
    a->when.push_back(std::move(c));
  }
  ARBOR_TRY(r.ReadNumber("crash_rate", Range::kUnit, &a->crash_rate));
  ARBOR_TRY(r.ReadStrings("crash_with", &a->crash_with));
  ARBOR_TRY(r.ReadNumber("accuracy_fail", Range::kUnit, &a->accuracy_fail));
  ARBOR_TRY(r.ReadStrings("accuracy_fixed_by", &a->accuracy_fixed_by));
  ARBOR_TRY(r.ReadStrings("crash_unless", &a->crash_unless));
  ARBOR_TRY(r.ReadNumber("inflation", Range::kPositive, &a->inflation));
  if (a->inflation < 1) {
    return r.FailAt(r.PathOf("inflation"), "is " + json(a->inflation).dump() +
                                               ", expected a number >= 1 (1 = honest readings)");
  }
  ARBOR_TRY(ReadValues(r, &a->values));
  return ReadPrior(r, &a->prior);
}

// ---- Names against each other ----------------------------------------------------------------

class NameCheck {
 public:
  NameCheck(const JsonReader& top, const Landscape& l) : top_(top), l_(l) {
    for (const LandscapeComponent& c : l.components) components_.insert(c.name);
  }

  Status Run() {
    std::map<std::string, std::string> env_owner;
    for (size_t i = 0; i < l_.actions.size(); ++i) {
      const LandscapeAction& a = l_.actions[i];
      const std::string path = Index("actions", i);
      for (size_t j = 0; j < i; ++j) {
        if (l_.actions[j].id == a.id) {
          return Fail(path + ".id",
                      "'" + a.id + "' is also " + Index("actions", j) + ".id; expected unique ids");
        }
      }
      auto [owner, fresh] = env_owner.emplace(Landscape::EnvVar(a.id), a.id);
      if (!fresh) {
        return Fail(path + ".id", "'" + a.id + "' and '" + owner->second +
                                      "' map to the same variable " + owner->first +
                                      "; expected ids that differ in more than punctuation");
      }
      ARBOR_TRY(CheckAction(a, path));
    }
    return CheckRequiresCycle();
  }

 private:
  Error Fail(const std::string& path, const std::string& what) const {
    return top_.FailAt(path, what);
  }

  Status Effects(const arbor::search::Effects& e, const std::string& path) const {
    for (const auto& [name, factor] : e) {
      if (name != "*" && components_.count(name) == 0) {
        return Fail(path + "." + name,
                    "unknown component '" + name + "'; expected a declared component or \"*\"");
      }
    }
    return {};
  }

  Status Ids(const std::vector<std::string>& ids, const std::string& path,
             const std::string& self) const {
    for (size_t k = 0; k < ids.size(); ++k) {
      if (l_.Find(ids[k]) == nullptr) {
        return Fail(Index(path, k), "unknown action '" + ids[k] + "'; expected a declared id");
      }
      if (ids[k] == self) {
        return Fail(Index(path, k), "names the action itself; expected another action's id");
      }
    }
    return {};
  }

  Status CheckAction(const LandscapeAction& a, const std::string& path) const {
    ARBOR_TRY(Effects(a.effects, path + ".effects"));
    for (size_t w = 0; w < a.when.size(); ++w) {
      const std::string wp = Index(path + ".when", w);
      ARBOR_TRY(Ids(a.when[w].with, wp + ".with", a.id));
      ARBOR_TRY(Ids(a.when[w].without, wp + ".without", a.id));
      ARBOR_TRY(Effects(a.when[w].effects, wp + ".effects"));
    }
    ARBOR_TRY(Ids(a.crash_with, path + ".crash_with", a.id));
    ARBOR_TRY(Ids(a.accuracy_fixed_by, path + ".accuracy_fixed_by", a.id));
    ARBOR_TRY(Ids(a.crash_unless, path + ".crash_unless", a.id));
    for (size_t v = 0; v < a.values.size(); ++v) {
      const std::string vp = Index(path + ".values", v);
      ARBOR_TRY(Effects(a.values[v].effects, vp + ".effects"));
      ARBOR_TRY(Ids(a.values[v].crash_unless, vp + ".crash_unless", a.id));
    }
    const Prior& p = a.prior;
    for (size_t t = 0; t < p.targets.size(); ++t) {
      // Globs like a campaign file's targets; a literal name must exist.
      const std::string& target = p.targets[t];
      if (target.find_first_of("*?[") == std::string::npos && components_.count(target) == 0) {
        return Fail(Index(path + ".prior.targets", t), "unknown component '" + target + "'");
      }
    }
    ARBOR_TRY(Ids(p.requires_, path + ".prior.requires", a.id));
    ARBOR_TRY(Ids(p.conflicts, path + ".prior.conflicts", a.id));
    for (size_t k = 0; k < p.conflicts.size(); ++k) {
      if (std::find(p.requires_.begin(), p.requires_.end(), p.conflicts[k]) != p.requires_.end()) {
        return Fail(Index(path + ".prior.conflicts", k),
                    "'" + p.conflicts[k] + "' is also required; expected it in only one list");
      }
    }
    return {};
  }

  // A campaign file rejects a requires cycle, so a landscape that would produce one is wrong.
  Status CheckRequiresCycle() const {
    std::map<std::string, int> state;  // 0 new, 1 on the stack, 2 done
    std::function<bool(const std::string&)> cyclic = [&](const std::string& id) {
      int& s = state[id];
      if (s == 1) return true;
      if (s == 2) return false;
      s = 1;
      for (const std::string& r : l_.Find(id)->prior.requires_) {
        if (cyclic(r)) return true;
      }
      state[id] = 2;
      return false;
    };
    for (size_t i = 0; i < l_.actions.size(); ++i) {
      if (cyclic(l_.actions[i].id)) {
        return Fail(Index("actions", i) + ".prior.requires",
                    "requires form a cycle through '" + l_.actions[i].id + "'; expected no cycle");
      }
    }
    return {};
  }

  const JsonReader& top_;
  const Landscape& l_;
  std::set<std::string> components_;
};

// "parse error at line 1, column 5: ..." without nlohmann's "[json.exception...] " prefix.
std::string SyntaxError(const json::parse_error& e) {
  std::string what = e.what();
  if (size_t close = what.find("] "); what.rfind("[json.exception", 0) == 0 && close != what.npos) {
    what = what.substr(close + 2);
  }
  return what;
}

}  // namespace

Result<Landscape> Landscape::Parse(const std::string& text, const std::string& file) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    return MakeError(file + ": JSON syntax error: " + SyntaxError(e));
  }
  JsonReader top(file, doc, "");
  ARBOR_TRY(top.CheckObject(
      {"name", "description", "base_value", "repetitions", "noise", "components", "actions"}));
  Landscape l;
  ARBOR_TRY(top.ReadString("name", Need::kRequired, &l.name));
  if (!IsName(l.name)) {
    return top.FailAt("name", "'" + l.name +
                                  "' is not a valid name; expected letters, digits, '.', '_' "
                                  "or '-' (it becomes the campaign's name)");
  }
  ARBOR_TRY(top.ReadString("description", Need::kRequired, &l.description));
  ARBOR_TRY(top.ReadNumber("base_value", Range::kPositive, &l.base_value));
  ARBOR_TRY(top.ReadInt("repetitions", 1, 1000, &l.repetitions));
  ARBOR_TRY(ReadNoise(top, &l.noise));
  ARBOR_TRY(ReadComponents(top, &l.components));
  std::vector<JsonReader> actions;
  ARBOR_TRY(top.ReadArray("actions", Need::kRequired, &actions));
  l.actions.resize(actions.size());
  for (size_t i = 0; i < actions.size(); ++i) ARBOR_TRY(ReadAction(actions[i], &l.actions[i]));
  ARBOR_TRY(NameCheck(top, l).Run());
  return l;
}

Result<Landscape> Landscape::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(path + ": cannot read the landscape (" + std::strerror(errno) + ")");
  std::ostringstream text;
  text << in.rdbuf();
  return Parse(text.str(), path);
}

}  // namespace arbor::search
