// Parsers for the small value languages inside a campaign file: metric sources
// ("json:a.b.0.c", "regex:tok/s: ([0-9.]+)"), sizes ("512M", "2G"), names and paths.
//
// They know nothing of TOML or of where a value was written: errors are the tail of a message,
// "what was wrong; what was expected", which the loader prefixes with FILE:LINE:COL and the key.
// Other modules may use them to validate the same values given on a command line.
#pragma once

#include <string>
#include <string_view>

#include "core/model/spec.h"
#include "util/result.h"

namespace arbor {

// "json:PATH" (dot-separated non-empty keys; digits index arrays) or "regex:PATTERN" (an
// ECMAScript regex with at least one capture group; group 1 is the value).
Result<MetricSource> ParseMetricSource(std::string_view text);

// A size in megabytes (binary multiples): "512M", "2G", "1.5GiB", "64K", "1T"; a bare number
// string is megabytes. Must be > 0.
Result<double> ParseSizeMb(std::string_view text);

// [A-Za-z0-9._-]: the characters of names.
bool IsNameChar(char c);

// [A-Za-z0-9._-]+: action ids and specialist domains are keys in the store and in messages.
bool IsValidName(std::string_view s);

// An IsValidName that is also a git branch component and a folder name: it does not start with
// '.' or '-', contain "..", or end in ".lock".
bool IsValidCampaignName(std::string_view s);

// [A-Za-z_][A-Za-z0-9_]*: a POSIX environment variable name.
bool IsValidEnvName(std::string_view s);

// `path` made absolute against `base_dir` (itself absolute) and lexically normalized, without a
// trailing separator. An absolute `path` is only normalized.
std::string ResolvePath(const std::string& base_dir, const std::string& path);

// A number as written in `values = [...]`: 16 -> "16", 0.5 -> "0.5", 2.0 -> "2".
std::string FormatValueNumber(double v);

}  // namespace arbor
