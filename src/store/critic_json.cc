#include "store/critic_json.h"

#include <nlohmann/json.hpp>

namespace arbor::store_json {
namespace {

using json = nlohmann::json;

void PutOptional(json* j, const char* key, const std::optional<double>& v) {
  if (v) (*j)[key] = *v;
}

std::optional<double> GetOptional(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string GetString(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

json EncodeConstraint(const Constraint& c) {
  json j = {{"kind", std::string(ConstraintKindName(c.kind))},
            {"scope", c.scope == ConstraintScope::kCampaign ? "campaign" : "subtree"},
            {"reason", c.reason},
            {"source", c.source}};
  if (c.scope == ConstraintScope::kSubtree) j["scope_node"] = c.scope_node;
  if (!c.action.empty()) j["action"] = c.action;
  if (!c.category.empty()) j["category"] = c.category;
  PutOptional(&j, "min", c.min);
  PutOptional(&j, "max", c.max);
  if (c.until_keep) j["until_keep"] = true;
  return j;
}

Result<Constraint> DecodeConstraint(const json& j) {
  Constraint c;
  auto kind = ParseConstraintKind(GetString(j, "kind"));
  if (!kind) return MakeError("critic: unknown constraint kind '" + GetString(j, "kind") + "'");
  c.kind = *kind;
  c.scope =
      GetString(j, "scope") == "campaign" ? ConstraintScope::kCampaign : ConstraintScope::kSubtree;
  c.scope_node = j.value("scope_node", static_cast<NodeId>(kNoNode));
  c.action = GetString(j, "action");
  c.category = GetString(j, "category");
  c.min = GetOptional(j, "min");
  c.max = GetOptional(j, "max");
  c.reason = GetString(j, "reason");
  c.source = j.value("source", static_cast<NodeId>(kNoNode));
  c.until_keep = j.value("until_keep", false);
  return c;
}

}  // namespace

std::string EncodeCritic(const CriticNote& n) {
  if (n.empty()) return "{}";
  json j = json::object();
  PutOptional(&j, "p_value", n.p_value);
  PutOptional(&j, "ci_low", n.ci_low);
  PutOptional(&j, "ci_high", n.ci_high);
  if (n.confirmed) j["confirmed"] = true;
  if (n.rca != RcaClass::kNone) j["rca"] = RcaClassName(n.rca);
  if (!n.evidence.empty()) j["evidence"] = n.evidence;
  if (!n.suggestion.empty()) j["suggestion"] = n.suggestion;
  if (n.requeued_from != kNoNode) j["requeued_from"] = n.requeued_from;
  if (!n.opened.empty()) j["opened"] = n.opened;
  if (!n.flags.empty()) j["flags"] = n.flags;
  if (!n.constraints.empty()) {
    json list = json::array();
    for (const auto& c : n.constraints) list.push_back(EncodeConstraint(c));
    j["constraints"] = std::move(list);
  }
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<CriticNote> DecodeCritic(std::string_view text) {
  CriticNote n;
  if (text.empty() || text == "{}") return n;
  try {
    json j = json::parse(text);
    if (!j.is_object()) return MakeError("critic: not a JSON object");
    n.p_value = GetOptional(j, "p_value");
    n.ci_low = GetOptional(j, "ci_low");
    n.ci_high = GetOptional(j, "ci_high");
    n.confirmed = j.value("confirmed", false);
    // A word this build does not know (a store written by another version) reads as kUnknown:
    // like the word itself, it matches none of the rules that ask for a class.
    n.rca = ParseRcaClass(GetString(j, "rca")).value_or(RcaClass::kUnknown);
    n.evidence = GetString(j, "evidence");
    n.suggestion = GetString(j, "suggestion");
    n.requeued_from = j.value("requeued_from", static_cast<NodeId>(kNoNode));
    n.opened = GetString(j, "opened");
    if (auto it = j.find("flags"); it != j.end() && it->is_array()) {
      for (const auto& f : *it) {
        if (f.is_string()) n.flags.push_back(f.get<std::string>());
      }
    }
    if (auto it = j.find("constraints"); it != j.end() && it->is_array()) {
      for (const auto& c : *it) {
        ARBOR_TRY_ASSIGN(auto decoded, DecodeConstraint(c));
        n.constraints.push_back(decoded);
      }
    }
  } catch (const json::exception& e) {
    return MakeError(std::string("critic: ") + e.what());
  }
  return n;
}

}  // namespace arbor::store_json
