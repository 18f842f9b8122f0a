#include "config/action_loader.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include "config/values.h"
#include "util/hash.h"
#include "util/strings.h"

namespace arbor::config_internal {

namespace {

using Zero = Section::Zero;

const std::vector<std::string> kApplyKinds = {"env", "append", "patch", "run", "agent"};

Status ReadRisk(const Section& s, ActionSpec* action) {
  const toml::table* table = nullptr;
  ARBOR_TRY(s.GetTable("risk", &table));
  if (table == nullptr) return {};
  Section risk(s.file(), *table, "action.risk", "in action.risk");
  ARBOR_TRY(risk.CheckKeys({"accuracy", "crash"}));
  ARBOR_TRY(risk.ReadNumber("accuracy", NumberRule::kUnitHalfOpen, &action->risk_accuracy));
  return risk.ReadNumber("crash", NumberRule::kUnitHalfOpen, &action->risk_crash);
}

// The apply kinds present in `apply`, in the order they were written.
std::vector<std::string> KindsWritten(const toml::table& apply) {
  std::vector<std::pair<std::pair<unsigned, unsigned>, std::string>> kinds;
  for (auto&& [k, v] : apply) {
    std::string key(k.str());
    if (std::find(kApplyKinds.begin(), kApplyKinds.end(), key) != kApplyKinds.end()) {
      kinds.push_back({{k.source().begin.line, k.source().begin.column}, key});
    }
  }
  std::sort(kinds.begin(), kinds.end());
  std::vector<std::string> out;
  for (auto& kind : kinds) out.push_back(kind.second);
  return out;
}

Status ReadVariables(const Section& apply, std::string_view key,
                     std::map<std::string, std::string>* out) {
  ARBOR_TRY(apply.ReadEnv(key, out));
  if (out->empty()) {
    return apply.At(*apply.Get(key), "empty " + apply.KeyPath(key) +
                                         "; expected at least one variable, like { NAME = \"x\" }");
  }
  return {};
}

Status ReadApply(const Section& s, const std::string& base_dir, ApplySpec* apply) {
  ARBOR_TRY(s.Require("apply", "apply = { env = { ... } } or append, patch, run, agent"));
  const toml::table* table = nullptr;
  ARBOR_TRY(s.GetTable("apply", &table));
  Section a(s.file(), *table, "action.apply", "in action.apply");
  ARBOR_TRY(a.CheckKeys({"env", "append", "patch", "run", "agent", "goal"}));
  std::vector<std::string> kinds = KindsWritten(*table);
  if (kinds.size() != 1) {
    std::string what = kinds.empty() ? "apply names no change"
                                     : "apply has both '" + kinds[0] + "' and '" + kinds[1] + "'";
    return a.AtHeader(what + "; expected exactly one of env, append, patch, run, agent");
  }
  if (a.Get("goal") != nullptr && kinds[0] != "agent") {
    return a.AtKey("goal", "'goal' without 'agent' in action.apply; expected goal only with agent");
  }
  if (kinds[0] == "env") {
    apply->kind = ApplySpec::Kind::kEnv;
    return ReadVariables(a, "env", &apply->env);
  }
  if (kinds[0] == "append") {
    apply->kind = ApplySpec::Kind::kAppend;
    return ReadVariables(a, "append", &apply->append);
  }
  if (kinds[0] == "patch") {
    apply->kind = ApplySpec::Kind::kPatch;
    ARBOR_TRY(a.ReadNonEmptyString("patch", &apply->patch));
    apply->patch = ResolvePath(base_dir, apply->patch);
    return {};
  }
  if (kinds[0] == "run") {
    apply->kind = ApplySpec::Kind::kRun;
    return a.ReadNonEmptyString("run", &apply->run);
  }
  apply->kind = ApplySpec::Kind::kAgent;
  ARBOR_TRY(a.Require("goal", "goal = \"what the agent should achieve\" with agent"));
  ARBOR_TRY(a.ReadNonEmptyString("agent", &apply->agent));
  return a.ReadNonEmptyString("goal", &apply->goal);
}

Status ReadValues(const Section& s, std::vector<std::string>* values) {
  const toml::node* node = s.Get("values");
  if (node == nullptr) return {};
  const toml::array* array = node->as_array();
  if (array == nullptr)
    return s.WrongType(*node, "action.values", "an array of strings or numbers");
  if (array->empty()) return s.At(*node, "empty action.values; expected at least one value");
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node& element = *array->get(i);
    std::string path = "action.values[" + std::to_string(i) + "]";
    std::string value;
    if (const auto* str = element.as_string()) {
      value = str->get();
      // An empty value would be indistinguishable from "no value" in candidate keys.
      if (value.empty()) return s.Invalid(element, path, "; expected a non-empty string");
    } else if (const auto* integer = element.as_integer()) {
      value = std::to_string(integer->get());
    } else if (const auto* number = element.as_floating_point()) {
      if (!std::isfinite(number->get()))
        return s.Invalid(element, path, "; expected a finite number");
      value = FormatValueNumber(number->get());
    } else {
      return s.WrongType(element, path, "a string or a number");
    }
    auto same = std::find(values->begin(), values->end(), value);
    if (same != values->end()) {
      return s.Invalid(element, path,
                       ": same as action.values[" + std::to_string(same - values->begin()) +
                           "]; expected unique values");
    }
    values->push_back(value);
  }
  return {};
}

// Every string of `apply` that "{value}" may appear in.
std::vector<std::string> ApplyStrings(const ApplySpec& apply) {
  std::vector<std::string> out = {apply.patch, apply.run, apply.agent, apply.goal};
  for (const auto* vars : {&apply.env, &apply.append}) {
    for (const auto& [name, value] : *vars) {
      out.push_back(name);
      out.push_back(value);
    }
  }
  return out;
}

Status CheckValuesAndPatch(const Section& s, ActionSpec* action) {
  if (!action->values.empty()) {
    std::vector<std::string> strings = ApplyStrings(action->apply);
    bool used = std::any_of(strings.begin(), strings.end(), [](const std::string& str) {
      return str.find("{value}") != std::string::npos;
    });
    if (!used) {
      return s.At(*s.Get("values"), "action '" + action->id +
                                        "' has values but its apply never uses {value}; expected "
                                        "\"{value}\" in apply");
    }
  }
  if (action->apply.kind != ApplySpec::Kind::kPatch) return {};
  std::vector<std::string> paths;
  for (const std::string& value : action->values) {
    paths.push_back(ReplaceAll(action->apply.patch, "{value}", value));
  }
  if (paths.empty()) paths.push_back(action->apply.patch);
  const toml::node& node = *s.Get("apply")->as_table()->get("patch");
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      return s.Invalid(node, "action.apply.patch",
                       ": " + path +
                           " does not exist; expected a patch file, relative to the "
                           "campaign file");
    }
  }
  return {};
}

// What the action does, independent of where the campaign file lives: the apply kind, its
// strings (patch paths replaced by the patch files' bytes) and the values.
std::string ContentHash(const ActionSpec& action) {
  const ApplySpec& apply = action.apply;
  std::string text = std::to_string(static_cast<int>(apply.kind));
  std::vector<std::string> strings = ApplyStrings(apply);
  strings[0].clear();  // the patch path: its content counts instead
  for (const std::string& str : strings) text += '\x1f' + str;
  for (const std::string& value : action.values) text += '\x1e' + value;
  if (apply.kind == ApplySpec::Kind::kPatch) {
    std::vector<std::string> paths;
    for (const std::string& value : action.values) {
      paths.push_back(ReplaceAll(apply.patch, "{value}", value));
    }
    if (paths.empty()) paths.push_back(apply.patch);
    for (const std::string& path : paths) {
      std::ifstream in(path, std::ios::binary);
      std::ostringstream bytes;
      bytes << in.rdbuf();
      text += '\x1d' + bytes.str();
    }
  }
  return HashHex(text);
}

Status ReadAction(const Section& s, const std::string& base_dir, ActionSpec* action) {
  ARBOR_TRY(s.CheckKeys({"id", "layer", "category", "describe", "targets", "speedup", "cost",
                         "risk", "requires", "conflicts", "refresh", "apply", "values"}));
  action->line = static_cast<int>(s.table().source().begin.line);
  ARBOR_TRY(s.Require("id", "a unique id like \"kernel.gemm-tiled\""));
  ARBOR_TRY(s.ReadString("id", &action->id));
  if (!IsValidName(action->id)) {
    return s.Invalid(*s.Get("id"), "action.id", "; expected letters, digits, '.', '_' or '-'");
  }
  ARBOR_TRY(s.Require("layer", "a layer like \"compiler\" or \"kernel\""));
  ARBOR_TRY(s.ReadNonEmptyString("layer", &action->layer));
  // Category statistics group related actions; the id's prefix is the natural family.
  action->category = action->id.substr(0, action->id.find('.'));
  ARBOR_TRY(s.ReadNonEmptyString("category", &action->category));
  ARBOR_TRY(s.ReadString("describe", &action->describe));
  ARBOR_TRY(s.ReadStringArray("targets", &action->targets));
  ARBOR_TRY(s.ReadNumber("speedup", NumberRule::kPositive, &action->speedup));
  ARBOR_TRY(s.ReadDuration("cost", Zero::kAllowed, &action->cost_s));
  ARBOR_TRY(ReadRisk(s, action));
  ARBOR_TRY(s.ReadStringArray("requires", &action->requires_));
  ARBOR_TRY(s.ReadStringArray("conflicts", &action->conflicts));
  ARBOR_TRY(ReadApply(s, base_dir, &action->apply));
  ARBOR_TRY(s.ReadBool("refresh", &action->refresh));
  // Only a command's output can go stale: an overlay or a patch is the same on any state.
  if (action->refresh && action->apply.kind != ApplySpec::Kind::kRun) {
    return s.Invalid(*s.Get("refresh"), "action.refresh",
                     "; expected it only on an action with apply = { run = ... }, whose command "
                     "derives files from the state it runs on (a PGO profile)");
  }
  ARBOR_TRY(ReadValues(s, &action->values));
  ARBOR_TRY(CheckValuesAndPatch(s, action));
  action->content_hash = ContentHash(*action);
  return {};
}

struct Declared {
  Section section;
  ActionSpec* spec;
};

const toml::node& ListElement(const Section& s, std::string_view key, size_t i) {
  return *s.Get(key)->as_array()->get(i);
}

Status CheckReferences(const std::vector<Declared>& declared, const std::vector<std::string>& ids) {
  for (const Declared& d : declared) {
    const ActionSpec& a = *d.spec;
    for (std::string_view key : {"requires", "conflicts"}) {
      const auto& list = key == "requires" ? a.requires_ : a.conflicts;
      for (size_t i = 0; i < list.size(); ++i) {
        const toml::node& node = ListElement(d.section, key, i);
        std::string verb = key == "requires" ? "requires" : "conflicts with";
        std::string head = "action '" + a.id + "' " + verb + " ";
        if (list[i] == a.id) {
          return d.section.At(node, head + "itself; expected the ids of other actions");
        }
        if (std::find(ids.begin(), ids.end(), list[i]) == ids.end()) {
          std::string suggestion = ClosestMatch(list[i], ids);
          return d.section.At(node,
                              head + "unknown action '" + list[i] + "'; " +
                                  (suggestion.empty() ? "expected an id declared by an [[action]]"
                                                      : "did you mean '" + suggestion + "'?"));
        }
        if (key == "conflicts" &&
            std::find(a.requires_.begin(), a.requires_.end(), list[i]) != a.requires_.end()) {
          return d.section.At(node, head + "'" + list[i] +
                                        "', which it also requires; expected it in only one list");
        }
      }
    }
  }
  return {};
}

// Depth-first search over requires edges in file order, so the reported cycle is stable.
class CycleFinder {
 public:
  explicit CycleFinder(const std::vector<Declared>& declared) : declared_(declared) {
    for (size_t i = 0; i < declared.size(); ++i) index_[declared[i].spec->id] = i;
    color_.assign(declared.size(), kWhite);
  }

  Status Check() {
    for (size_t i = 0; i < declared_.size(); ++i) {
      if (color_[i] == kWhite) ARBOR_TRY(Visit(i));
    }
    return {};
  }

 private:
  enum Color { kWhite, kGray, kBlack };

  Status Visit(size_t i) {
    color_[i] = kGray;
    stack_.push_back(i);
    const ActionSpec& a = *declared_[i].spec;
    for (size_t r = 0; r < a.requires_.size(); ++r) {
      auto declared = index_.find(a.requires_[r]);
      if (declared == index_.end()) continue;  // an external action: no edge back to us
      size_t j = declared->second;
      if (color_[j] == kGray) {
        std::string cycle;
        auto from = std::find(stack_.begin(), stack_.end(), j);
        for (auto it = from; it != stack_.end(); ++it) cycle += declared_[*it].spec->id + " -> ";
        cycle += declared_[j].spec->id;
        return declared_[i].section.At(
            ListElement(declared_[i].section, "requires", r),
            "requires cycle " + cycle + "; expected requires to form no cycle");
      }
      if (color_[j] == kWhite) ARBOR_TRY(Visit(j));
    }
    stack_.pop_back();
    color_[i] = kBlack;
    return {};
  }

  const std::vector<Declared>& declared_;
  std::map<std::string, size_t> index_;
  std::vector<Color> color_;
  std::vector<size_t> stack_;
};

}  // namespace

Status ReadActions(const Section& root, const std::string& base_dir,
                   std::vector<ActionSpec>* actions, const std::vector<std::string>& external_ids) {
  std::vector<const toml::table*> tables;
  ARBOR_TRY(root.GetTableArray("action", &tables));
  actions->resize(tables.size());
  std::vector<Declared> declared;
  std::vector<std::string> ids;
  for (size_t i = 0; i < tables.size(); ++i) {
    Section s(root.file(), *tables[i], "action", "in [[action]]");
    ActionSpec* action = &(*actions)[i];
    ARBOR_TRY(ReadAction(s, base_dir, action));
    auto same = std::find(ids.begin(), ids.end(), action->id);
    if (same != ids.end()) {
      return s.Invalid(*s.Get("id"), "action.id",
                       ": already declared on line " +
                           std::to_string((*actions)[same - ids.begin()].line) +
                           "; expected a unique id");
    }
    ids.push_back(action->id);
    declared.push_back({s, action});
  }
  std::vector<std::string> referable = ids;
  referable.insert(referable.end(), external_ids.begin(), external_ids.end());
  ARBOR_TRY(CheckReferences(declared, referable));
  return CycleFinder(declared).Check();
}

}  // namespace arbor::config_internal
