// Compiling user-written metric patterns ("regex:..." in the campaign file): config/values.cc
// compiles them to check the campaign, formats/metrics.cc to extract values. Both found by
// the fuzz targets (tests/fuzz, docs/reliability/fuzzing.md):
//
// - libstdc++'s default matcher backtracks, so a nested quantifier ("(a*)*", "s**") takes
//   time exponential in the line's length, even on an empty line: ExtractMetric would hang
//   the campaign. Its __polynomial extension selects the Thompson-NFA matcher instead (time
//   polynomial in pattern and line, recursion bounded by the pattern, not the line) and
//   refuses back-references (regex_error error_complexity).
// - libstdc++ 12 reads a {n,m} count or a back-reference number into a long without an
//   overflow check: "a{99999999999999999999}" is undefined behaviour. A run of more than 9
//   digits after '{', ',' or '\' is refused before the pattern reaches std::regex.
#pragma once

#include <regex>
#include <string>

#include "util/result.h"

namespace arbor {

inline constexpr std::regex::flag_type kMetricRegexFlags =
#if defined(__GLIBCXX__)
    std::regex::ECMAScript | std::regex_constants::__polynomial;
#else
    std::regex::ECMAScript;
#endif

// `pattern` compiled with kMetricRegexFlags, or an Error whose one-line message says why not
// (std::regex_error's text, or the over-long count).
Result<std::regex> CompileMetricRegex(const std::string& pattern);

}  // namespace arbor
