// Escaping text, one escaper per format: error messages kept on one line when they quote input,
// JSON strings, TOML basic strings, HTML text and attributes, and words for /bin/sh. A module
// that writes one of these formats calls the escaper here rather than keeping its own.
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

// `s` double-quoted for a one-line message: " and \ escaped with a backslash, control
// characters as EscapeControlChars writes them ("a\"b\n" for the 4 bytes a"b and a newline).
std::string QuoteForMessage(std::string_view s);

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

// `s` as a JSON string: JsonEscape's escapes between double quotes.
std::string JsonString(std::string_view s);

// `s` as a one-line TOML basic string: double-quoted, with \" \\ \b \t \n \f \r and \uXXXX
// (upper-case hex) for the other control characters and 0x7f; other bytes as they are.
std::string TomlBasicString(std::string_view s);

// `text` for HTML text or a quoted attribute value: & < > " and ' as entities, other bytes as
// they are (the page is UTF-8).
std::string HtmlEscape(std::string_view text);

// Quotes a string for /bin/sh. kWhenNeeded: unchanged when it has only safe characters
// ([A-Za-z0-9_@%+=:,./-], non-empty), else single-quoted. kAlways: single-quoted in any case,
// for files a person reads where every value should look the same.
enum class ShellQuoting { kWhenNeeded, kAlways };
std::string ShellQuote(const std::string& s, ShellQuoting quoting = ShellQuoting::kWhenNeeded);

}  // namespace arbor
