// Small string helpers shared by every module.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace arbor {

std::string Trim(std::string_view s);
std::vector<std::string> Split(std::string_view s, char sep);
bool StartsWith(std::string_view s, std::string_view prefix);
bool EndsWith(std::string_view s, std::string_view suffix);
std::string Join(const std::vector<std::string>& parts, std::string_view sep);
// Replaces every occurrence of `from` in `s` by `to`.
std::string ReplaceAll(std::string s, std::string_view from, std::string_view to);
// Shell-style glob: '*' any run, '?' one char, '[...]' a class. Used for profile targets.
bool GlobMatch(std::string_view pattern, std::string_view text);
// Path glob over '/'-separated paths: '*', '?' and '[...]' never match '/'; '**' matches any
// run including '/', and '**/' zero or more whole directories ("src/**/*.cc" matches
// "src/a.cc" and "src/x/y/a.cc"). Used for allowlists of files.
bool PathGlobMatch(std::string_view pattern, std::string_view path);
// Levenshtein distance, for did-you-mean suggestions.
size_t EditDistance(std::string_view a, std::string_view b);
// The candidate closest to `word` within distance 2 (or a third of its length), or "".
std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates);
// Formats a double with up to `digits` significant digits, no trailing zeros.
std::string FormatDouble(double v, int digits = 6);

}  // namespace arbor
