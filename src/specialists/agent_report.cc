#include "specialists/agent_report.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "config/proposal_loader.h"
#include "config/values.h"
#include "util/escape.h"

namespace arbor {

namespace {

using json = nlohmann::json;

// An id as it may appear in a one-line message: control characters replaced, length capped.
std::string Shown(std::string id) {
  constexpr size_t kMax = 64;
  if (id.size() > kMax) id = id.substr(0, kMax) + "...";
  for (char& c : id) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return id;
}

// One JSON value as an inline TOML value. JSON has no dates and TOML no null.
Result<std::string> TomlValue(const json& v) {
  switch (v.type()) {
    case json::value_t::string:
      return TomlBasicString(v.get<std::string>());
    case json::value_t::boolean:
      return std::string(v.get<bool>() ? "true" : "false");
    case json::value_t::number_integer:
      return std::to_string(v.get<long long>());
    case json::value_t::number_unsigned: {
      if (v.get<unsigned long long>() >
          static_cast<unsigned long long>(std::numeric_limits<long long>::max())) {
        return MakeError("integer " + v.dump() + " is too large");
      }
      return v.dump();
    }
    case json::value_t::number_float:
      return v.dump();  // shortest round trip, always with '.' or an exponent ("2.0", "1e+20")
    case json::value_t::array: {
      std::string out = "[";
      for (size_t i = 0; i < v.size(); ++i) {
        Result<std::string> element = TomlValue(v[i]);
        if (!element) return element;
        out += (i == 0 ? "" : ", ") + *element;
      }
      return out + "]";
    }
    case json::value_t::object: {
      std::string out = "{";
      bool first = true;
      for (const auto& [key, value] : v.items()) {
        Result<std::string> element = TomlValue(value);
        if (!element) return element;
        out += (first ? " " : ", ") + TomlBasicString(key) + " = " + *element;
        first = false;
      }
      return out + (first ? "}" : " }");
    }
    default:
      return MakeError("null is not a value; leave the key out instead");
  }
}

// A JSON proposal as the campaign file would write it: one [[action]] table.
Result<std::string> ToToml(const json& action) {
  std::string text = "[[action]]\n";
  for (const auto& [key, value] : action.items()) {
    Result<std::string> v = TomlValue(value);
    if (!v) return MakeError("key '" + key + "': " + v.error().message);
    text += TomlBasicString(key) + " = " + *v + "\n";
  }
  return text;
}

// "parse error at line 1, column 5: syntax error ..." without nlohmann's "[json.exception...]".
std::string JsonError(const json::exception& e) {
  std::string what = e.what();
  if (size_t close = what.find("] "); what.rfind("[json.exception", 0) == 0 && close != what.npos) {
    what = what.substr(close + 2);
  }
  return what;
}

Result<json> ParseJson(std::string_view text, const std::string& what) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    return MakeError(what + " is not JSON: " + JsonError(e) + " (byte " + std::to_string(e.byte) +
                     ")");
  } catch (const json::exception& e) {
    // A number too large for a double ("1e400") is out_of_range.406, not a parse_error.
    return MakeError(what + " is not JSON: " + JsonError(e));
  }
}

Status ReadString(const json& object, const char* key, std::string* out) {
  auto it = object.find(key);
  if (it == object.end()) return {};
  if (!it->is_string()) return MakeError(std::string("report: ") + key + " must be a string");
  *out = it->get<std::string>();
  return {};
}

Status ReadStrings(const json& object, const char* key, std::vector<std::string>* out) {
  auto it = object.find(key);
  if (it == object.end()) return {};
  std::string why = std::string("report: ") + key + " must be an array of strings";
  if (!it->is_array()) return MakeError(why);
  for (const json& element : *it) {
    if (!element.is_string()) return MakeError(why);
    out->push_back(element.get<std::string>());
  }
  return {};
}

Status ReadEnv(const json& object, EnvOverlay* out) {
  auto it = object.find("env");
  if (it == object.end()) return {};
  std::string why = "report: env must be an object of strings, like {\"OMP_NUM_THREADS\": \"8\"}";
  if (!it->is_object()) return MakeError(why);
  for (const auto& [name, value] : it->items()) {
    if (!IsValidEnvName(name)) {
      // The name is the model's and may hold a newline; the message stays one line.
      return MakeError("report: env name '" + EscapeControlChars(name) +
                       "' is not a variable name");
    }
    if (!value.is_string()) return MakeError(why);
    (*out)[name] = value.get<std::string>();
  }
  return {};
}

void ValidateProposals(const json& array, const CampaignSpec& spec, std::set<std::string> known,
                       const std::string& proposed_by, int max, std::vector<ActionSpec>* accepted,
                       std::vector<std::string>* rejected) {
  int taken = 0;
  for (size_t i = 0; i < array.size(); ++i) {
    const json& p = array[i];
    std::string name = "proposal " + std::to_string(i + 1);
    if (!p.is_object()) {
      rejected->push_back(name + ": not an object; expected an action like {\"id\": ...}");
      continue;
    }
    if (auto id = p.find("id"); id != p.end() && id->is_string()) {
      name += " ('" + Shown(id->get<std::string>()) + "')";
    }
    if (taken >= max) {
      rejected->push_back(name + ": over the limit of " + std::to_string(max) + " proposals");
      continue;
    }
    Result<std::string> toml = ToToml(p);
    if (!toml) {
      rejected->push_back(name + ": " + toml.error().message);
      continue;
    }
    Result<ActionSpec> action = ParseProposedAction(*toml, name, spec, known);
    if (!action) {
      rejected->push_back(action.error().message);
      continue;
    }
    action->proposed_by = proposed_by;
    known.insert(action->id);  // a second proposal with the same id is a duplicate
    accepted->push_back(std::move(*action));
    ++taken;
  }
}

}  // namespace

Result<AgentReport> ParseAgentReport(std::string_view text, const CampaignSpec& spec,
                                     const std::set<std::string>& known_ids,
                                     const std::string& proposed_by) {
  ARBOR_TRY_ASSIGN(const json object, ParseJson(text, "report"));
  if (!object.is_object())
    return MakeError("report: expected a JSON object, got " + std::string(object.type_name()));
  AgentReport report;
  ARBOR_TRY(ReadString(object, "summary", &report.summary));
  if (auto it = object.find("confidence"); it != object.end()) {
    if (!it->is_number() || it->get<double>() < 0 || it->get<double>() > 1) {
      return MakeError("report: confidence must be a number in [0, 1]");
    }
    report.confidence = it->get<double>();
  }
  ARBOR_TRY(ReadStrings(object, "findings", &report.findings));
  ARBOR_TRY(ReadStrings(object, "questions", &report.questions));
  ARBOR_TRY(ReadEnv(object, &report.env));
  if (auto it = object.find("proposals"); it != object.end()) {
    if (!it->is_array()) return MakeError("report: proposals must be an array of actions");
    ValidateProposals(*it, spec, known_ids, proposed_by, std::numeric_limits<int>::max(),
                      &report.proposals, &report.rejected);
  }
  return report;
}

Status ParseProposals(std::string_view text, const CampaignSpec& spec,
                      const std::set<std::string>& known_ids, const std::string& proposed_by,
                      int max, std::vector<ActionSpec>* accepted,
                      std::vector<std::string>* rejected) {
  ARBOR_TRY_ASSIGN(json parsed, ParseJson(text, "proposals"));
  if (!parsed.is_array()) {
    return MakeError("proposals: expected a JSON array of actions, got " +
                     std::string(parsed.type_name()));
  }
  ValidateProposals(parsed, spec, known_ids, proposed_by, max, accepted, rejected);
  return {};
}

}  // namespace arbor
