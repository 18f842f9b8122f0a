#include "config/values.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "util/metric_presets.h"
#include "util/metric_regex.h"
#include "util/strings.h"

namespace arbor {

namespace {

constexpr std::string_view kSourceForms =
    "expected \"json:PATH\", \"regex:PATTERN\" or \"preset:TOOL\"";

Result<MetricSource> ParseJsonSource(std::string_view text, std::string_view expr) {
  if (expr.empty()) {
    return MakeError(
        "empty JSON path; expected dot-separated keys like \"json:throughput.tok_per_s\"");
  }
  for (const std::string& segment : Split(expr, '.')) {
    if (segment.empty()) {
      return MakeError(
          "empty JSON path segment; expected dot-separated keys like "
          "\"json:throughput.tok_per_s\"");
    }
  }
  return MetricSource{MetricSource::Kind::kJson, std::string(expr), std::string(text)};
}

Result<MetricSource> ParseRegexSource(std::string_view text, std::string_view expr) {
  if (expr.empty()) {
    return MakeError("empty pattern; expected a regex like \"regex:tok/s: ([0-9.]+)\"");
  }
  // The runner compiles the same pattern later; failing here names the file line instead.
  Result<std::regex> re = CompileMetricRegex(std::string(expr));
  if (!re.ok()) {
    return MakeError("the pattern does not compile (" + re.error().message +
                     "); expected an ECMAScript regular expression");
  }
  if (re->mark_count() < 1) {
    return MakeError(
        "the pattern has no capture group; expected the number inside ( ), as in "
        "\"regex:tok/s: ([0-9.]+)\"");
  }
  return MetricSource{MetricSource::Kind::kRegex, std::string(expr), std::string(text)};
}

Result<MetricSource> ParsePresetSource(std::string_view text, std::string_view expr) {
  ARBOR_TRY(ParsePresetExpr(expr));
  return MetricSource{MetricSource::Kind::kPreset, std::string(expr), std::string(text)};
}

}  // namespace

Result<MetricSource> ParseMetricSource(std::string_view text) {
  if (StartsWith(text, "json:")) return ParseJsonSource(text, text.substr(5));
  if (StartsWith(text, "regex:")) return ParseRegexSource(text, text.substr(6));
  if (StartsWith(text, "preset:")) return ParsePresetSource(text, text.substr(7));
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return MakeError("missing prefix; " + std::string(kSourceForms));
  }
  return MakeError("unknown prefix '" + std::string(text.substr(0, colon)) + "'; " +
                   std::string(kSourceForms));
}

Result<double> ParseSizeMb(std::string_view text) {
  constexpr std::string_view kExpected = "expected a size like \"512M\", \"2G\" or megabytes";
  std::string s = Trim(text);
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) != 0 || s[i] == '.')) {
    ++i;
  }
  if (i == 0) return MakeError("no number; " + std::string(kExpected));
  std::string number = s.substr(0, i);
  char* end = nullptr;
  double v = std::strtod(number.c_str(), &end);
  if (end == nullptr || *end != '\0') {
    return MakeError("'" + number + "' is not a number; " + std::string(kExpected));
  }
  std::string unit = Trim(std::string_view(s).substr(i));
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  // Binary multiples throughout: memory limits are compared with RLIMIT_AS in bytes.
  double mb = 0;
  if (unit == "K" || unit == "KB" || unit == "KIB") {
    mb = v / 1024;
  } else if (unit.empty() || unit == "M" || unit == "MB" || unit == "MIB") {
    mb = v;
  } else if (unit == "G" || unit == "GB" || unit == "GIB") {
    mb = v * 1024;
  } else if (unit == "T" || unit == "TB" || unit == "TIB") {
    mb = v * 1024 * 1024;
  } else {
    return MakeError("unknown unit '" + unit + "'; " + std::string(kExpected));
  }
  if (!std::isfinite(mb) || mb <= 0) return MakeError("not positive; " + std::string(kExpected));
  return mb;
}

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-';
}

bool IsValidName(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsNameChar);
}

bool IsValidCampaignName(std::string_view s) {
  return IsValidName(s) && s.front() != '.' && s.front() != '-' &&
         s.find("..") == std::string_view::npos && !EndsWith(s, ".lock");
}

bool IsValidEnvName(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) != 0) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  });
}

std::string ResolvePath(const std::string& base_dir, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_relative()) p = std::filesystem::path(base_dir) / p;
  std::string out = p.lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::string FormatValueNumber(double v) { return FormatDouble(v, 15); }

}  // namespace arbor
