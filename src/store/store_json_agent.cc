// EncodeAgent/DecodeAgent and EncodeAction/DecodeAction (declared in store/store_json.h).
//
// Both are small and rare next to the per-node columns (an agent note only on specialist
// nodes, a few dozen proposed actions per campaign), so they go through nlohmann's DOM rather
// than the flat streaming decoder; the empty agent note "{}" skips the parser on bulk loads.
#include <array>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "store/json_numbers.h"
#include "store/store_json.h"

namespace arbor::store_json {
namespace {

using internal::Number;
using nlohmann::json;

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// Reads optional members of one JSON object: an absent member leaves the target unchanged, the
// first member of the wrong type is remembered and reported by status().
class FieldReader {
 public:
  FieldReader(const json& j, const char* what, std::string prefix = "")
      : j_(j), what_(what), prefix_(std::move(prefix)) {}

  void Read(const char* key, std::string* out) {
    Visit(key, [&](const json& v) {
      if (!v.is_string()) return false;
      *out = v.get<std::string>();
      return true;
    });
  }
  void Read(const char* key, double* out) {
    Visit(key, [&](const json& v) { return internal::ReadNumber(v, out); });
  }
  void Read(const char* key, bool* out) {
    Visit(key, [&](const json& v) {
      if (!v.is_boolean()) return false;
      *out = v.get<bool>();
      return true;
    });
  }
  void Read(const char* key, int64_t* out) {
    Visit(key, [&](const json& v) {
      if (!v.is_number_integer()) return false;
      *out = v.get<int64_t>();
      return true;
    });
  }
  void Read(const char* key, int* out) {
    Visit(key, [&](const json& v) {
      if (!v.is_number_integer()) return false;
      const auto n = v.get<int64_t>();
      if (n < std::numeric_limits<int>::min() || n > std::numeric_limits<int>::max()) return false;
      *out = static_cast<int>(n);
      return true;
    });
  }
  void Read(const char* key, std::vector<std::string>* out) {
    Visit(key, [&](const json& v) {
      if (!v.is_array()) return false;
      std::vector<std::string> list;
      for (const json& item : v) {
        if (!item.is_string()) return false;
        list.push_back(item.get<std::string>());
      }
      *out = std::move(list);
      return true;
    });
  }
  void Read(const char* key, std::map<std::string, std::string>* out) {
    Visit(key, [&](const json& v) {
      if (!v.is_object()) return false;
      std::map<std::string, std::string> map;
      for (const auto& [k, item] : v.items()) {
        if (!item.is_string()) return false;
        map.emplace(k, item.get<std::string>());
      }
      *out = std::move(map);
      return true;
    });
  }
  // Marks `key` as bad (a value the type allows but the format does not).
  void Reject(const char* key) {
    if (bad_.empty()) bad_ = prefix_ + key;
  }

  Status status() const {
    if (bad_.empty()) return {};
    return MakeError(std::string("malformed ") + what_ + " JSON: field '" + bad_ +
                     "' has the wrong type");
  }

 private:
  template <typename F>
  void Visit(const char* key, F read) {
    auto it = j_.find(key);
    if (it != j_.end() && !read(*it)) Reject(key);
  }

  const json& j_;
  const char* what_;
  std::string prefix_;
  std::string bad_;
};

Result<json> ParseObject(std::string_view text, const char* what) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return MakeError(std::string("malformed ") + what +
                     " JSON: not an object: " + std::string(text.substr(0, 80)));
  }
  return j;
}

// The apply kinds under the campaign file's own keys (docs/campaign-file.md).
constexpr std::array<std::pair<ApplySpec::Kind, const char*>, 5> kApplyKinds = {{
    {ApplySpec::Kind::kEnv, "env"},
    {ApplySpec::Kind::kAppend, "append"},
    {ApplySpec::Kind::kPatch, "patch"},
    {ApplySpec::Kind::kRun, "run"},
    {ApplySpec::Kind::kAgent, "agent"},
}};

const char* ApplyKindName(ApplySpec::Kind kind) {
  for (const auto& [k, name] : kApplyKinds) {
    if (k == kind) return name;
  }
  return "env";
}

json EncodeApply(const ApplySpec& a) {
  json j = json::object();
  j["kind"] = ApplyKindName(a.kind);
  if (!a.env.empty()) j["env"] = a.env;
  if (!a.append.empty()) j["append"] = a.append;
  if (!a.patch.empty()) j["patch"] = a.patch;
  if (!a.run.empty()) j["run"] = a.run;
  if (!a.agent.empty()) j["agent"] = a.agent;
  if (!a.goal.empty()) j["goal"] = a.goal;
  return j;
}

Status DecodeApply(const json& j, ApplySpec* out) {
  FieldReader r(j, "action", "apply.");
  std::string kind;
  r.Read("kind", &kind);
  bool known = false;
  for (const auto& [k, name] : kApplyKinds) {
    if (kind == name) {
      out->kind = k;
      known = true;
    }
  }
  if (!known) r.Reject("kind");
  r.Read("env", &out->env);
  r.Read("append", &out->append);
  r.Read("patch", &out->patch);
  r.Read("run", &out->run);
  r.Read("agent", &out->agent);
  r.Read("goal", &out->goal);
  return r.status();
}

}  // namespace

std::string EncodeAgent(const AgentNote& n) {
  if (n.empty()) return "{}";
  json j = json::object();
  // The builtin specialist is the default: its word is never written.
  if (n.backend != SpecialistBackend::kBuiltin) j["backend"] = SpecialistBackendName(n.backend);
  if (!n.domain.empty()) j["domain"] = n.domain;
  if (n.confidence != 0) j["confidence"] = Number(n.confidence);
  if (n.rounds != 0) j["rounds"] = n.rounds;
  if (n.prompt_tokens != 0) j["prompt_tokens"] = n.prompt_tokens;
  if (n.completion_tokens != 0) j["completion_tokens"] = n.completion_tokens;
  if (n.cost != 0) j["cost"] = Number(n.cost);
  if (!n.findings.empty()) j["findings"] = n.findings;
  if (!n.questions.empty()) j["questions"] = n.questions;
  if (!n.proposed.empty()) j["proposed"] = n.proposed;
  return Dump(j);
}

Result<AgentNote> DecodeAgent(std::string_view text) {
  AgentNote n;
  if (text.empty() || text == "{}") return n;  // the common case; skips the parser
  ARBOR_TRY_ASSIGN(auto j, ParseObject(text, "agent"));
  FieldReader r(j, "agent");
  std::string backend(SpecialistBackendName(n.backend));
  r.Read("backend", &backend);
  r.Read("domain", &n.domain);
  r.Read("confidence", &n.confidence);
  r.Read("rounds", &n.rounds);
  r.Read("prompt_tokens", &n.prompt_tokens);
  r.Read("completion_tokens", &n.completion_tokens);
  r.Read("cost", &n.cost);
  r.Read("findings", &n.findings);
  r.Read("questions", &n.questions);
  r.Read("proposed", &n.proposed);
  ARBOR_TRY(r.status());
  std::optional<SpecialistBackend> parsed = ParseSpecialistBackend(backend);
  if (!parsed) {
    return MakeError("malformed agent JSON: unknown backend '" + backend +
                     "' (expected \"builtin\", \"command\" or \"llm\")");
  }
  n.backend = *parsed;
  return n;
}

std::string EncodeAction(const ActionSpec& a) {
  json j = json::object();
  j["id"] = a.id;
  j["layer"] = a.layer;
  j["category"] = a.category;
  j["describe"] = a.describe;
  j["targets"] = a.targets;
  j["speedup"] = Number(a.speedup);
  j["cost_s"] = Number(a.cost_s);
  j["risk_accuracy"] = Number(a.risk_accuracy);
  j["risk_crash"] = Number(a.risk_crash);
  j["requires"] = a.requires_;
  j["conflicts"] = a.conflicts;
  if (a.refresh) j["refresh"] = true;
  j["apply"] = EncodeApply(a.apply);
  j["values"] = a.values;
  j["line"] = a.line;
  j["proposed_by"] = a.proposed_by;
  j["content_hash"] = a.content_hash;
  return Dump(j);
}

Result<ActionSpec> DecodeAction(std::string_view text) {
  ARBOR_TRY_ASSIGN(auto j, ParseObject(text, "action"));
  ActionSpec a;
  FieldReader r(j, "action");
  r.Read("id", &a.id);
  r.Read("layer", &a.layer);
  r.Read("category", &a.category);
  r.Read("describe", &a.describe);
  r.Read("targets", &a.targets);
  r.Read("speedup", &a.speedup);
  r.Read("cost_s", &a.cost_s);
  r.Read("risk_accuracy", &a.risk_accuracy);
  r.Read("risk_crash", &a.risk_crash);
  r.Read("requires", &a.requires_);
  r.Read("conflicts", &a.conflicts);
  r.Read("refresh", &a.refresh);
  r.Read("values", &a.values);
  r.Read("line", &a.line);
  r.Read("proposed_by", &a.proposed_by);
  r.Read("content_hash", &a.content_hash);
  auto apply = j.find("apply");
  if (apply != j.end() && !apply->is_object()) r.Reject("apply");
  ARBOR_TRY(r.status());
  if (apply != j.end()) ARBOR_TRY(DecodeApply(*apply, &a.apply));
  if (a.id.empty()) {
    return MakeError("malformed action JSON: field 'id' is missing: " +
                     std::string(text.substr(0, 80)));
  }
  return a;
}

}  // namespace arbor::store_json
