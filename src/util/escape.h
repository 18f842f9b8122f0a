// Escaping text: error messages kept on one line when they quote input, JSON strings, and words
// for /bin/sh.
//
// Messages quote keys, values and paths from campaign files, program output and model answers,
// and any of those may hold a newline ("a\nb" in TOML or JSON). Every Error is one line
// (util/result.h), so the parsers pass their messages through EscapeControlChars once, where
// they leave the module. Found by the fuzz targets (tests/fuzz, docs/reliability/fuzzing.md).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace arbor {

// `s` with line breaks and other control characters written as escapes (a newline becomes the
// two characters \n; also \r, \t and \xNN for the other bytes below 0x20 and 0x7f).
std::string EscapeControlChars(std::string_view s);

// The last lines of a command's output for a terminal: at most `max_lines` lines taken from the
// last `max_bytes` bytes of `text`, each passed through EscapeControlChars, so a progress line
// that rewrites itself with \r shows every state it went through and no byte can move the
// cursor. Lines end at \n only; a final empty line is dropped, and a line cut by the byte bound
// starts with "...".
std::vector<std::string> VisibleTail(std::string_view text, size_t max_lines, size_t max_bytes);

// `bytes` escaped for the inside of a JSON string (no quotes added): \" \\ \b \f \n \r \t, other
// bytes below 0x20 as \u00XX in `hex_digits` (lower or upper case), and '/' as \/ when asked.
// One escaper for the event data core writes and the JSON forms the secrets Scrubber searches.
enum class JsonSlash { kKeep, kEscape };
std::string JsonEscape(std::string_view bytes, std::string_view hex_digits = "0123456789abcdef",
                       JsonSlash slash = JsonSlash::kKeep);

// Quotes a string for /bin/sh: unchanged when it has only safe characters
// ([A-Za-z0-9_@%+=:,./-], non-empty), else single-quoted.
std::string ShellQuote(const std::string& s);

}  // namespace arbor
