// Keeping error messages on one line when they quote input.
//
// Messages quote keys, values and paths from campaign files, program output and model answers,
// and any of those may hold a newline ("a\nb" in TOML or JSON). Every Error is one line
// (util/result.h), so the parsers pass their messages through EscapeControlChars once, where
// they leave the module. Found by the fuzz targets (tests/fuzz, docs/reliability/fuzzing.md).
#pragma once

#include <string>
#include <string_view>

namespace arbor {

// `s` with line breaks and other control characters written as escapes (a newline becomes the
// two characters \n; also \r, \t and \xNN for the other bytes below 0x20 and 0x7f).
std::string EscapeControlChars(std::string_view s);

}  // namespace arbor
