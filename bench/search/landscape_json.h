// JsonReader: reads one JSON object of a landscape file with errors that name the file, the
// JSON path ("actions[3].values[1].crash_rate") and what was wrong (internal to bench/search).
//
// Every Read* leaves the output untouched when the key is absent (its default stays) and fails
// when the value has the wrong type or is out of range. Keys not passed to CheckKeys are errors.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/search/landscape.h"
#include "util/result.h"

namespace arbor::search::internal {

enum class Range {
  kAny,
  kPositive,     // > 0
  kNonNegative,  // >= 0
  kUnit,         // [0, 1]
  kUnitOpenTop,  // [0, 1)
};

enum class Need { kOptional, kRequired };

class JsonReader {
 public:
  // `file` and `j` must outlive the reader and every reader it hands out.
  JsonReader(const std::string& file, const nlohmann::json& j, std::string path)
      : file_(&file), j_(&j), path_(std::move(path)) {}

  const nlohmann::json& value() const { return *j_; }
  const std::string& path() const { return path_; }
  // "path.key" (or "key" at the top level).
  std::string PathOf(std::string_view key) const;

  // "FILE: PATH: what" (PATH "top level" for the document itself).
  Error Fail(const std::string& what) const { return FailAt(path_, what); }
  Error FailAt(const std::string& path, const std::string& what) const;

  // Fails unless the value is an object whose keys are all in `allowed`.
  Status CheckObject(const std::vector<std::string_view>& allowed) const;

  Status ReadString(std::string_view key, Need need, std::string* out) const;
  Status ReadNumber(std::string_view key, Range range, double* out) const;
  Status ReadInt(std::string_view key, int min, int max, int* out) const;
  Status ReadStrings(std::string_view key, std::vector<std::string>* out) const;
  // An object of component name → factor (> 0).
  Status ReadEffects(std::string_view key, Effects* out) const;
  // The elements of an array (absent: none; `need` kRequired: must be present).
  Status ReadArray(std::string_view key, Need need, std::vector<JsonReader>* out) const;
  // A nested object (absent: *out stays nullopt).
  Status ReadObject(std::string_view key, std::optional<JsonReader>* out) const;

 private:
  const nlohmann::json* Get(std::string_view key) const;
  Error WrongType(const std::string& path, const nlohmann::json& v, std::string_view want) const;

  const std::string* file_;
  const nlohmann::json* j_;
  std::string path_;
};

// `v` in a message: a string "x", a number 3, an object, ...
std::string Describe(const nlohmann::json& v);

}  // namespace arbor::search::internal
