// Doubles in the store's JSON columns, shared by the codecs of store/ (internal to store/).
//
// JSON has no NaN or infinity; they are written as the strings "nan", "inf" and "-inf" and read
// back as the same value, so nothing is silently turned into null.
#pragma once

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>

namespace arbor::store_json::internal {

inline nlohmann::json Number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

// Non-finite spellings written by Number(); false for any other string.
inline bool ParseNonFinite(std::string_view s, double* out) {
  if (s == "nan") {
    *out = std::numeric_limits<double>::quiet_NaN();
  } else if (s == "inf") {
    *out = std::numeric_limits<double>::infinity();
  } else if (s == "-inf") {
    *out = -std::numeric_limits<double>::infinity();
  } else {
    return false;
  }
  return true;
}

// Reads a number written by Number(); false when `j` is neither a number nor one of its
// non-finite spellings.
inline bool ReadNumber(const nlohmann::json& j, double* out) {
  if (j.is_number()) {
    *out = j.get<double>();
    return true;
  }
  return j.is_string() && ParseNonFinite(j.get_ref<const std::string&>(), out);
}

}  // namespace arbor::store_json::internal
