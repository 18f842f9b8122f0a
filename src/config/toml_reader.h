// Section: typed, located reads from one TOML table, for the campaign loader only.
//
// Every failed read is an Error of one line, "FILE:LINE:COL: what was wrong; what was
// expected", pointing at the offending key or value (or at the table header when a required key
// is missing). Optional readers leave their output untouched when the key is absent, so the
// defaults written in core/model/spec.h stay the single source of defaults.
#pragma once

#include <toml++/toml.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/spec.h"
#include "util/result.h"

namespace arbor::config_internal {

// "string", "integer", "float", "boolean", "table", "array", "date", "time", "date-time".
std::string TypeName(const toml::node& node);

// "FILE:LINE:COL: message"; a region without a position (an implicit table) becomes 1:1.
Error ErrorAt(const std::string& file, const toml::source_region& where, std::string_view message);

// Which values a numeric key accepts; the enumerator names the interval.
enum class NumberRule { kAny, kPositive, kNonNegative, kUnitHalfOpen, kUnitOpen };

class Section {
 public:
  // `path` names keys in messages ("target" -> "target.build"; "" at the top level); `title`
  // names the table in unknown-key messages ("[target]", "[[action]]", "action.apply").
  Section(std::string file, const toml::table& table, std::string path, std::string title);

  const toml::table& table() const { return table_; }
  const std::string& file() const { return file_; }
  std::string KeyPath(std::string_view key) const;
  const toml::node* Get(std::string_view key) const { return table_.get(key); }

  Error At(const toml::node& node, std::string_view message) const;
  Error AtKey(std::string_view key, std::string_view message) const;  // at the key itself
  Error AtHeader(std::string_view message) const;
  // "expected a string for target.build, got integer", at the value.
  Error WrongType(const toml::node& node, std::string_view key_path,
                  std::string_view expected) const;
  // "invalid metric.goal "maximum"; expected ..." (`tail` begins with ": why" or "; expected").
  Error Invalid(const toml::node& node, std::string_view key_path, std::string_view tail) const;

  // Unknown keys are errors (a typo must not silently fall back to a default), reported in
  // file order with a did-you-mean suggestion.
  Status CheckKeys(const std::vector<std::string>& allowed) const;
  Status Require(std::string_view key, std::string_view expected) const;

  Status ReadString(std::string_view key, std::string* out) const;
  Status ReadBool(std::string_view key, bool* out) const;
  Status ReadNonEmptyString(std::string_view key, std::string* out) const;
  Status ReadNumber(std::string_view key, NumberRule rule, double* out) const;
  Status ReadNumber(std::string_view key, NumberRule rule, std::optional<double>* out) const;
  Status ReadInt(std::string_view key, long long lo, long long hi, int* out) const;
  // Strings through ParseDuration or numbers of seconds; zero only when `allow_zero`.
  enum class Zero { kAllowed, kRejected };
  Status ReadDuration(std::string_view key, Zero zero, double* out) const;
  Status ReadDuration(std::string_view key, Zero zero, std::optional<double>* out) const;
  Status ReadSizeMb(std::string_view key, std::optional<double>* out) const;
  Status ReadSource(std::string_view key, std::optional<MetricSource>* out) const;
  // An inline table of strings whose keys are environment variable names.
  Status ReadEnv(std::string_view key, std::map<std::string, std::string>* out) const;
  Status ReadStringArray(std::string_view key, std::vector<std::string>* out) const;
  // A sub-table; `*out` stays null when absent.
  Status GetTable(std::string_view key, const toml::table** out) const;
  // An array of tables ([[key]]); `*out` stays empty when absent.
  Status GetTableArray(std::string_view key, std::vector<const toml::table*>* out) const;

 private:
  std::string file_;
  const toml::table& table_;
  std::string path_;
  std::string title_;
};

}  // namespace arbor::config_internal
