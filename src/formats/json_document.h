// Internal to formats/: one JSON document parsed without exceptions, for the readers that try
// a text (a metrics file, a whole output, one line of it) as JSON and fall back otherwise.
#pragma once

#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

namespace arbor::formats_internal {

// nullopt when `text` is not one JSON document.
inline std::optional<nlohmann::json> TryParseJson(std::string_view text) {
  try {
    nlohmann::json j =
        nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return std::nullopt;
    return j;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace arbor::formats_internal
