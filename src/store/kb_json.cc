#include "store/kb_json.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace arbor {
namespace {

using json = nlohmann::json;

Error FieldError(const std::string& key, const char* expected) {
  return MakeError("field '" + key + "': expected " + expected);
}

const json* Find(const json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

Status ReadString(const json& j, const char* key, std::string* out) {
  const json* v = Find(j, key);
  if (v == nullptr) return {};
  if (!v->is_string()) return FieldError(key, "a string");
  *out = v->get<std::string>();
  return {};
}

Status RequireString(const json& j, const char* key, std::string* out) {
  const json* v = Find(j, key);
  if (v == nullptr) return MakeError("field '" + std::string(key) + "' is missing");
  ARBOR_TRY(ReadString(j, key, out));
  if (out->empty()) return FieldError(key, "a non-empty string");
  return {};
}

Status ReadNumber(const json& j, const char* key, double* out) {
  const json* v = Find(j, key);
  if (v == nullptr) return {};
  if (!v->is_number()) return FieldError(key, "a number");
  *out = v->get<double>();
  return {};
}

// Absent and null both mean "no value".
Status ReadOptional(const json& j, const char* key, std::optional<double>* out) {
  const json* v = Find(j, key);
  if (v == nullptr || v->is_null()) return {};
  if (!v->is_number()) return FieldError(key, "a number or null");
  *out = v->get<double>();
  return {};
}

Status ReadInt(const json& j, const char* key, int64_t* out) {
  const json* v = Find(j, key);
  if (v == nullptr) return {};
  if (!v->is_number_integer()) return FieldError(key, "an integer");
  *out = v->get<int64_t>();
  return {};
}

Status ReadBool(const json& j, const char* key, bool* out) {
  const json* v = Find(j, key);
  if (v == nullptr) return {};
  if (!v->is_boolean()) return FieldError(key, "true or false");
  *out = v->get<bool>();
  return {};
}

Status ReadStrings(const json& j, const char* key, std::vector<std::string>* out) {
  const json* v = Find(j, key);
  if (v == nullptr) return {};
  if (!v->is_array()) return FieldError(key, "an array of strings");
  out->clear();
  for (const json& item : *v) {
    if (!item.is_string()) return FieldError(key, "an array of strings");
    out->push_back(item.get<std::string>());
  }
  return {};
}

json HardwareToJson(const HardwareSignature& h) {
  return {{"cpu_model", h.cpu_model},
          {"cores", h.cores},
          {"isa", h.isa},
          {"mem_gib", h.mem_gib},
          {"gpu", h.gpu}};
}

// An object, or the one-line encoded form (HardwareSignature::Encode).
Result<HardwareSignature> HardwareFromJson(const json& j) {
  if (j.is_string()) {
    auto decoded = HardwareSignature::Decode(j.get<std::string>());
    if (!decoded)
      return MakeError("field 'hardware': cannot decode '" + j.get<std::string>() + "'");
    return *decoded;
  }
  if (!j.is_object()) return FieldError("hardware", "an object or an encoded string");
  HardwareSignature h;
  int64_t cores = 0;
  Status s = ReadString(j, "cpu_model", &h.cpu_model);
  if (s.ok()) s = ReadInt(j, "cores", &cores);
  if (s.ok()) s = ReadStrings(j, "isa", &h.isa);
  if (s.ok()) s = ReadNumber(j, "mem_gib", &h.mem_gib);
  if (s.ok()) s = ReadString(j, "gpu", &h.gpu);
  if (!s.ok()) return MakeError("field 'hardware': " + s.error().message);
  h.cores = static_cast<int>(cores);
  return h;
}

void PutOptional(json* j, const char* key, const std::optional<double>& v) {
  if (v) (*j)[key] = *v;
}

Result<KbEntry> FromJson(const json& j) {
  if (!j.is_object()) return MakeError("expected a JSON object");
  const json* v = Find(j, "v");
  if (v == nullptr) return MakeError("field 'v' (format version) is missing");
  if (!v->is_number_integer()) return FieldError("v", "an integer");
  if (v->get<int64_t>() != kKbJsonVersion) {
    return MakeError("format version " + v->dump() + " is not supported (this arbor reads " +
                     std::to_string(kKbJsonVersion) + ")");
  }
  KbEntry e;
  ARBOR_TRY(ReadInt(j, "id", &e.id));
  ARBOR_TRY(RequireString(j, "uid", &e.uid));
  ARBOR_TRY(ReadString(j, "campaign", &e.campaign));
  ARBOR_TRY(ReadString(j, "campaign_uid", &e.campaign_uid));
  ARBOR_TRY(ReadInt(j, "node", &e.node));
  ARBOR_TRY(RequireString(j, "action_id", &e.action_id));
  ARBOR_TRY(ReadString(j, "value", &e.value));
  ARBOR_TRY(ReadString(j, "category", &e.category));
  ARBOR_TRY(ReadString(j, "layer", &e.layer));
  ARBOR_TRY(ReadString(j, "content_hash", &e.content_hash));
  ARBOR_TRY(ReadStrings(j, "workload", &e.workload));
  if (const json* hw = Find(j, "hardware"); hw != nullptr) {
    ARBOR_TRY_ASSIGN(e.hardware, HardwareFromJson(*hw));
  }
  ARBOR_TRY(ReadString(j, "path_hash", &e.path_hash));
  ARBOR_TRY(RequireString(j, "outcome", &e.outcome));
  ARBOR_TRY(ReadBool(j, "accuracy_failure", &e.accuracy_failure));
  ARBOR_TRY(ReadOptional(j, "gain", &e.gain));
  ARBOR_TRY(ReadOptional(j, "ci_low", &e.ci_low));
  ARBOR_TRY(ReadOptional(j, "ci_high", &e.ci_high));
  ARBOR_TRY(ReadNumber(j, "prior_speedup", &e.prior_speedup));
  ARBOR_TRY(ReadNumber(j, "target_share", &e.target_share));
  ARBOR_TRY(ReadOptional(j, "implied_speedup", &e.implied_speedup));
  ARBOR_TRY(ReadNumber(j, "cost_s", &e.cost_s));
  ARBOR_TRY(ReadString(j, "rca", &e.rca));
  ARBOR_TRY(ReadString(j, "lesson", &e.lesson));
  ARBOR_TRY(ReadBool(j, "controlled", &e.controlled));
  ARBOR_TRY(ReadNumber(j, "recorded_at", &e.recorded_at));
  ARBOR_TRY(ReadInt(j, "superseded_by", &e.superseded_by));
  ARBOR_TRY(ReadString(j, "conflict", &e.conflict));
  return e;
}

// nlohmann's messages start with "[json.exception.parse_error.101] "; the tag says nothing
// to a user.
std::string CleanMessage(const std::string& what) {
  if (what.empty() || what.front() != '[') return what;
  auto end = what.find("] ");
  return end == std::string::npos ? what : what.substr(end + 2);
}

}  // namespace

json KbEntryToJson(const KbEntry& e) {
  json j = {{"v", kKbJsonVersion},
            {"id", e.id},
            {"uid", e.uid},
            {"campaign", e.campaign},
            {"campaign_uid", e.campaign_uid},
            {"node", e.node},
            {"action_id", e.action_id},
            {"value", e.value},
            {"category", e.category},
            {"layer", e.layer},
            {"content_hash", e.content_hash},
            {"workload", e.workload},
            {"hardware", HardwareToJson(e.hardware)},
            {"path_hash", e.path_hash},
            {"outcome", e.outcome},
            {"accuracy_failure", e.accuracy_failure},
            {"prior_speedup", e.prior_speedup},
            {"target_share", e.target_share},
            {"cost_s", e.cost_s},
            {"rca", e.rca},
            {"lesson", e.lesson},
            {"controlled", e.controlled},
            {"recorded_at", e.recorded_at},
            {"superseded_by", e.superseded_by},
            {"conflict", e.conflict}};
  PutOptional(&j, "gain", e.gain);
  PutOptional(&j, "ci_low", e.ci_low);
  PutOptional(&j, "ci_high", e.ci_high);
  PutOptional(&j, "implied_speedup", e.implied_speedup);
  return j;
}

Result<KbEntry> KbEntryFromJson(const json& j) {
  try {
    return FromJson(j);
  } catch (const json::exception& e) {  // e.g. an integer out of range
    return MakeError(CleanMessage(e.what()));
  }
}

std::string ExportJsonLines(const std::vector<KbEntry>& entries) {
  std::string out;
  for (const KbEntry& e : entries) {
    // Replace invalid UTF-8 rather than throw: lessons may quote raw program output.
    out += KbEntryToJson(e).dump(-1, ' ', false, json::error_handler_t::replace);
    out += '\n';
  }
  return out;
}

Result<std::vector<KbEntry>> ParseJsonLines(std::string_view text) {
  std::vector<KbEntry> entries;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string where = "line " + std::to_string(line_no) + ": ";
    json j;
    try {
      j = json::parse(line);
    } catch (const json::exception& e) {
      return MakeError(where + CleanMessage(e.what()));
    }
    auto entry = KbEntryFromJson(j);
    if (!entry.ok()) return MakeError(where + entry.error().message);
    entries.push_back(std::move(*entry));
  }
  return entries;
}

}  // namespace arbor
