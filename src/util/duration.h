// Durations as written in campaign files: "90s", "10m", "2h", "1h30m", "250ms", "1.5h".
#pragma once

#include <string>
#include <string_view>

#include "util/result.h"

namespace arbor {

// Parses a duration into seconds. A bare number is seconds. Errors name what was expected.
Result<double> ParseDuration(std::string_view text);
// Renders seconds compactly: 0.25 -> "250ms", 90 -> "1m30s", 7200 -> "2h".
std::string FormatDuration(double seconds);

}  // namespace arbor
