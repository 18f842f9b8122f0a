#include "config/toml_reader.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include "config/values.h"
#include "util/duration.h"
#include "util/escape.h"
#include "util/strings.h"

namespace arbor::config_internal {

namespace {

constexpr std::string_view kDurationForms =
    "a duration like \"90s\", \"10m\", \"1h30m\" or a number of seconds";

std::string ValueText(const toml::node& node) {
  if (const auto* s = node.as_string()) return QuoteForMessage(s->get());
  if (const auto* i = node.as_integer()) return std::to_string(i->get());
  if (const auto* f = node.as_floating_point()) return FormatDouble(f->get(), 15);
  if (const auto* b = node.as_boolean()) return b->get() ? "true" : "false";
  return "(" + TypeName(node) + ")";
}

bool InRange(double v, NumberRule rule) {
  if (!std::isfinite(v)) return false;
  switch (rule) {
    case NumberRule::kAny:
      return true;
    case NumberRule::kPositive:
      return v > 0;
    case NumberRule::kNonNegative:
      return v >= 0;
    case NumberRule::kUnitHalfOpen:
      return v >= 0 && v < 1;
    case NumberRule::kUnitOpen:
      return v > 0 && v < 1;
  }
  return false;
}

std::string_view RuleText(NumberRule rule) {
  switch (rule) {
    case NumberRule::kAny:
      return "a finite number";
    case NumberRule::kPositive:
      return "a number > 0";
    case NumberRule::kNonNegative:
      return "a number >= 0";
    case NumberRule::kUnitHalfOpen:
      return "a number in [0, 1)";
    case NumberRule::kUnitOpen:
      return "a number in (0, 1)";
  }
  return "";
}

// ParseDuration says why in the middle of its message: `invalid duration "X": WHY (expected...`.
std::string DurationReason(const std::string& text, const std::string& message) {
  std::string prefix = "invalid duration \"" + text + "\": ";
  size_t end = message.find(" (expected");
  if (!StartsWith(message, prefix) || end == std::string::npos || end < prefix.size()) return "";
  return message.substr(prefix.size(), end - prefix.size());
}

}  // namespace

std::string TypeName(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string:
      return "string";
    case toml::node_type::integer:
      return "integer";
    case toml::node_type::floating_point:
      return "float";
    case toml::node_type::boolean:
      return "boolean";
    case toml::node_type::table:
      return "table";
    case toml::node_type::array:
      return "array";
    case toml::node_type::date:
      return "date";
    case toml::node_type::time:
      return "time";
    case toml::node_type::date_time:
      return "date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

Error ErrorAt(const std::string& file, const toml::source_region& where, std::string_view message) {
  unsigned line = where.begin.line == 0 ? 1 : where.begin.line;
  unsigned column = where.begin.column == 0 ? 1 : where.begin.column;
  return MakeError(file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " +
                   std::string(message));
}

Section::Section(std::string file, const toml::table& table, std::string path, std::string title)
    : file_(std::move(file)), table_(table), path_(std::move(path)), title_(std::move(title)) {}

std::string Section::KeyPath(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

Error Section::At(const toml::node& node, std::string_view message) const {
  return ErrorAt(file_, node.source(), message);
}

Error Section::AtKey(std::string_view key, std::string_view message) const {
  for (auto&& [k, v] : table_) {
    if (k.str() == key) return ErrorAt(file_, k.source(), message);
  }
  return AtHeader(message);
}

Error Section::AtHeader(std::string_view message) const {
  return ErrorAt(file_, table_.source(), message);
}

Error Section::WrongType(const toml::node& node, std::string_view key_path,
                         std::string_view expected) const {
  return At(node, "expected " + std::string(expected) + " for " + std::string(key_path) + ", got " +
                      TypeName(node));
}

Error Section::Invalid(const toml::node& node, std::string_view key_path,
                       std::string_view tail) const {
  return At(node, "invalid " + std::string(key_path) + " " + ValueText(node) + std::string(tail));
}

Status Section::CheckKeys(const std::vector<std::string>& allowed) const {
  std::vector<std::tuple<unsigned, unsigned, std::string>> unknown;
  for (auto&& [k, v] : table_) {
    if (std::find(allowed.begin(), allowed.end(), k.str()) == allowed.end()) {
      unknown.emplace_back(k.source().begin.line, k.source().begin.column, std::string(k.str()));
    }
  }
  if (unknown.empty()) return {};
  std::sort(unknown.begin(), unknown.end());
  const std::string& key = std::get<2>(unknown.front());
  std::string message = "unknown key '" + key + "' " + title_;
  std::string suggestion = ClosestMatch(key, allowed);
  if (!suggestion.empty()) {
    message += "; did you mean '" + suggestion + "'?";
  } else {
    message += "; expected one of: " + Join(allowed, ", ");
  }
  return AtKey(key, message);
}

Status Section::Require(std::string_view key, std::string_view expected) const {
  if (Get(key) != nullptr) return {};
  return AtHeader("missing required key '" + std::string(key) + "' " + title_ + "; expected " +
                  std::string(expected));
}

Status Section::ReadString(std::string_view key, std::string* out) const {
  const toml::node* node = Get(key);
  if (node == nullptr) return {};
  if (!node->is_string()) return WrongType(*node, KeyPath(key), "a string");
  *out = node->as_string()->get();
  return {};
}

Status Section::ReadBool(std::string_view key, bool* out) const {
  const toml::node* node = Get(key);
  if (node == nullptr) return {};
  if (!node->is_boolean()) return WrongType(*node, KeyPath(key), "true or false");
  *out = node->as_boolean()->get();
  return {};
}

Status Section::ReadNonEmptyString(std::string_view key, std::string* out) const {
  std::string value;
  ARBOR_TRY(ReadString(key, &value));
  const toml::node* node = Get(key);
  if (node == nullptr) return {};
  if (Trim(value).empty()) return Invalid(*node, KeyPath(key), "; expected a non-empty string");
  *out = value;
  return {};
}

Status Section::ReadNumber(std::string_view key, NumberRule rule, double* out) const {
  std::optional<double> value;
  ARBOR_TRY(ReadNumber(key, rule, &value));
  if (value) *out = *value;
  return {};
}

Status Section::ReadNumber(std::string_view key, NumberRule rule,
                           std::optional<double>* out) const {
  const toml::node* node = Get(key);
  if (node == nullptr) return {};
  if (!node->is_number()) return WrongType(*node, KeyPath(key), "a number");
  double v = node->value<double>().value_or(0);
  if (!InRange(v, rule)) {
    return Invalid(*node, KeyPath(key), "; expected " + std::string(RuleText(rule)));
  }
  *out = v;
  return {};
}

Status Section::ReadInt(std::string_view key, long long lo, long long hi, int* out) const {
  const toml::node* node = Get(key);
  if (node == nullptr) return {};
  if (!node->is_integer()) return WrongType(*node, KeyPath(key), "an integer");
  long long v = node->as_integer()->get();
  if (v < lo || v > hi) {
    std::string range = hi == std::numeric_limits<int>::max()
                            ? ">= " + std::to_string(lo)
                            : "from " + std::to_string(lo) + " to " + std::to_string(hi);
    return Invalid(*node, KeyPath(key), "; expected an integer " + range);
  }
  *out = static_cast<int>(v);
  return {};
}

Status Section::ReadDuration(std::string_view key, Zero zero, double* out) const {
  std::optional<double> value;
  ARBOR_TRY(ReadDuration(key, zero, &value));
  if (value) *out = *value;
  return {};
}

Status Section::ReadDuration(std::string_view key, Zero zero, std::optional<double>* out) const {
  const toml::node* node = Get(key);
  if (node == nullptr) return {};
  std::string expected = zero == Zero::kAllowed
                             ? std::string(kDurationForms)
                             : "a positive " + std::string(kDurationForms).substr(2);
  double seconds = 0;
  if (node->is_string()) {
    const std::string& text = node->as_string()->get();
    Result<double> parsed = ParseDuration(text);
    if (!parsed.ok()) {
      std::string reason = DurationReason(text, parsed.error().message);
      return Invalid(*node, KeyPath(key),
                     (reason.empty() ? "" : ": " + reason) + "; expected " + expected);
    }
    seconds = *parsed;
  } else if (node->is_number()) {
    seconds = node->value<double>().value_or(-1);
  } else {
    return WrongType(*node, KeyPath(key), "a duration (string or number of seconds)");
  }
  if (!std::isfinite(seconds) || seconds < 0 || (zero == Zero::kRejected && seconds == 0)) {
    return Invalid(*node, KeyPath(key), "; expected " + expected);
  }
  *out = seconds;
  return {};
}

Status Section::ReadSizeMb(std::string_view key, std::optional<double>* out) const {
  const toml::node* node = Get(key);
  if (node == nullptr) return {};
  if (node->is_number()) {
    double mb = node->value<double>().value_or(0);
    if (!std::isfinite(mb) || mb <= 0) {
      return Invalid(*node, KeyPath(key), "; expected a positive number of megabytes");
    }
    *out = mb;
    return {};
  }
  if (!node->is_string()) return WrongType(*node, KeyPath(key), "a size (string or megabytes)");
  Result<double> mb = ParseSizeMb(node->as_string()->get());
  if (!mb.ok()) return Invalid(*node, KeyPath(key), ": " + mb.error().message);
  *out = *mb;
  return {};
}

Status Section::ReadSource(std::string_view key, std::optional<MetricSource>* out) const {
  const toml::node* node = Get(key);
  if (node == nullptr) return {};
  if (!node->is_string()) return WrongType(*node, KeyPath(key), "a string");
  Result<MetricSource> source = ParseMetricSource(node->as_string()->get());
  if (!source.ok()) return Invalid(*node, KeyPath(key), ": " + source.error().message);
  *out = *source;
  return {};
}

Status Section::ReadEnv(std::string_view key, std::map<std::string, std::string>* out) const {
  const toml::table* table = nullptr;
  ARBOR_TRY(GetTable(key, &table));
  if (table == nullptr) return {};
  for (auto&& [k, v] : *table) {
    std::string name(k.str());
    // "{value}" is substituted before the variable is set, so it may stand for part of a name.
    if (!IsValidEnvName(ReplaceAll(name, "{value}", "V"))) {
      return ErrorAt(file_, k.source(),
                     "invalid environment variable name '" + name + "' in " + KeyPath(key) +
                         "; expected letters, digits and '_', not starting with a digit");
    }
    if (!v.is_string()) return WrongType(v, KeyPath(key) + "." + name, "a string");
    (*out)[name] = v.as_string()->get();
  }
  return {};
}

Status Section::ReadStringArray(std::string_view key, std::vector<std::string>* out) const {
  const toml::node* node = Get(key);
  if (node == nullptr) return {};
  const toml::array* array = node->as_array();
  if (array == nullptr) return WrongType(*node, KeyPath(key), "an array of strings");
  std::vector<std::string> values;
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node& element = *array->get(i);
    std::string path = KeyPath(key) + "[" + std::to_string(i) + "]";
    if (!element.is_string()) return WrongType(element, path, "a string");
    const std::string& s = element.as_string()->get();
    if (Trim(s).empty()) return Invalid(element, path, "; expected a non-empty string");
    values.push_back(s);
  }
  *out = std::move(values);
  return {};
}

Status Section::GetTable(std::string_view key, const toml::table** out) const {
  const toml::node* node = Get(key);
  if (node == nullptr) return {};
  if (!node->is_table()) return WrongType(*node, KeyPath(key), "a table");
  *out = node->as_table();
  return {};
}

Status Section::GetTableArray(std::string_view key, std::vector<const toml::table*>* out) const {
  const toml::node* node = Get(key);
  if (node == nullptr) return {};
  std::string expected = "an array of tables ([[" + KeyPath(key) + "]])";
  const toml::array* array = node->as_array();
  if (array == nullptr) return WrongType(*node, KeyPath(key), expected);
  for (const toml::node& element : *array) {
    if (!element.is_table()) return WrongType(element, KeyPath(key), expected);
    out->push_back(element.as_table());
  }
  return {};
}

}  // namespace arbor::config_internal
