#include "bench/search/landscape_json.h"

#include <algorithm>
#include <cmath>

namespace arbor::search::internal {

using nlohmann::json;

namespace {

std::string Number(double v) {
  std::string s = json(v).dump();
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

bool InRange(double v, Range range) {
  switch (range) {
    case Range::kAny:
      return true;
    case Range::kPositive:
      return v > 0;
    case Range::kNonNegative:
      return v >= 0;
    case Range::kUnit:
      return v >= 0 && v <= 1;
    case Range::kUnitOpenTop:
      return v >= 0 && v < 1;
  }
  return false;
}

std::string_view RangeText(Range range) {
  switch (range) {
    case Range::kAny:
      return "a finite number";
    case Range::kPositive:
      return "a number > 0";
    case Range::kNonNegative:
      return "a number >= 0";
    case Range::kUnit:
      return "a number in [0, 1]";
    case Range::kUnitOpenTop:
      return "a number in [0, 1)";
  }
  return "";
}

}  // namespace

std::string Describe(const json& v) {
  if (v.is_string()) return "a string " + v.dump();
  if (v.is_number()) return "a number " + Number(v.get<double>());
  if (v.is_boolean()) return std::string("a boolean ") + (v.get<bool>() ? "true" : "false");
  if (v.is_null()) return "null";
  if (v.is_array()) return "an array";
  return "an object";
}

std::string JsonReader::PathOf(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

Error JsonReader::FailAt(const std::string& path, const std::string& what) const {
  return MakeError(*file_ + ": " + (path.empty() ? "top level" : path) + ": " + what);
}

Error JsonReader::WrongType(const std::string& path, const json& v, std::string_view want) const {
  return FailAt(path, "is " + Describe(v) + ", expected " + std::string(want));
}

const json* JsonReader::Get(std::string_view key) const {
  auto it = j_->find(key);
  return it == j_->end() ? nullptr : &*it;
}

Status JsonReader::CheckObject(const std::vector<std::string_view>& allowed) const {
  if (!j_->is_object()) return WrongType(path_, *j_, "an object");
  for (const auto& [key, value] : j_->items()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string list;
    for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    return FailAt(PathOf(key), "unknown key '" + key + "'; expected one of " + list);
  }
  return {};
}

Status JsonReader::ReadString(std::string_view key, Need need, std::string* out) const {
  const json* v = Get(key);
  if (v == nullptr) {
    if (need == Need::kRequired) return FailAt(PathOf(key), "is missing; expected a string");
    return {};
  }
  if (!v->is_string()) return WrongType(PathOf(key), *v, "a string");
  *out = v->get<std::string>();
  if (need == Need::kRequired && out->empty()) {
    return FailAt(PathOf(key), "is empty; expected a non-empty string");
  }
  return {};
}

Status JsonReader::ReadNumber(std::string_view key, Range range, double* out) const {
  const json* v = Get(key);
  if (v == nullptr) return {};
  if (!v->is_number()) return WrongType(PathOf(key), *v, RangeText(range));
  double d = v->get<double>();
  if (!std::isfinite(d) || !InRange(d, range)) {
    return FailAt(PathOf(key), "is " + Number(d) + ", expected " + std::string(RangeText(range)));
  }
  *out = d;
  return {};
}

Status JsonReader::ReadInt(std::string_view key, int min, int max, int* out) const {
  const json* v = Get(key);
  if (v == nullptr) return {};
  std::string want = "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (!v->is_number_integer()) return WrongType(PathOf(key), *v, want);
  auto i = v->get<int64_t>();
  if (i < min || i > max)
    return FailAt(PathOf(key), "is " + std::to_string(i) + ", expected " + want);
  *out = static_cast<int>(i);
  return {};
}

Status JsonReader::ReadStrings(std::string_view key, std::vector<std::string>* out) const {
  const json* v = Get(key);
  if (v == nullptr) return {};
  if (!v->is_array()) return WrongType(PathOf(key), *v, "an array of strings");
  out->clear();
  for (size_t i = 0; i < v->size(); ++i) {
    const json& e = (*v)[i];
    std::string path = PathOf(key) + "[" + std::to_string(i) + "]";
    if (!e.is_string() || e.get<std::string>().empty()) {
      return WrongType(path, e, "a non-empty string");
    }
    out->push_back(e.get<std::string>());
  }
  return {};
}

Status JsonReader::ReadEffects(std::string_view key, Effects* out) const {
  const json* v = Get(key);
  if (v == nullptr) return {};
  if (!v->is_object()) {
    return WrongType(PathOf(key), *v, "an object of component name → speedup factor");
  }
  out->clear();
  for (const auto& [name, factor] : v->items()) {
    std::string path = PathOf(key) + "." + name;
    if (!factor.is_number()) return WrongType(path, factor, "a speedup factor > 0");
    double f = factor.get<double>();
    if (!std::isfinite(f) || f <= 0) {
      return FailAt(path, "is " + Number(f) + ", expected a speedup factor > 0");
    }
    (*out)[name] = f;
  }
  return {};
}

Status JsonReader::ReadArray(std::string_view key, Need need, std::vector<JsonReader>* out) const {
  const json* v = Get(key);
  if (v == nullptr) {
    if (need == Need::kRequired) return FailAt(PathOf(key), "is missing; expected an array");
    return {};
  }
  if (!v->is_array()) return WrongType(PathOf(key), *v, "an array");
  for (size_t i = 0; i < v->size(); ++i) {
    out->emplace_back(*file_, (*v)[i], PathOf(key) + "[" + std::to_string(i) + "]");
  }
  return {};
}

Status JsonReader::ReadObject(std::string_view key, std::optional<JsonReader>* out) const {
  const json* v = Get(key);
  if (v == nullptr) return {};
  if (!v->is_object()) return WrongType(PathOf(key), *v, "an object");
  out->emplace(*file_, *v, PathOf(key));
  return {};
}

}  // namespace arbor::search::internal
