#include "formats/importers.h"

#include <nlohmann/json.hpp>

#include "formats/import_internal.h"
#include "formats/metrics.h"
#include "util/strings.h"

namespace arbor {
namespace {

using import_internal::ForEachLine;
using import_internal::TrimBlank;
using Json = nlohmann::json;

// One table: the formats, their names in the campaign file and in messages.
struct FormatName {
  ProfileFormat format;
  const char* name;
};
constexpr FormatName kFormats[] = {
    {ProfileFormat::kAuto, "auto"},           {ProfileFormat::kArbor, "arbor"},
    {ProfileFormat::kPerf, "perf"},           {ProfileFormat::kChromeTrace, "chrome-trace"},
    {ProfileFormat::kCallgrind, "callgrind"}, {ProfileFormat::kCollapsed, "collapsed"},
};

// How much of the text the detector looks at: formats announce themselves early.
constexpr size_t kDetectLines = 200;

std::optional<ProfileFormat> DetectJson(std::string_view t) {
  Json doc = Json::parse(t.begin(), t.end(), nullptr, /*allow_exceptions=*/false);
  if (!doc.is_discarded()) {
    if (doc.is_object() && doc.contains("components")) return ProfileFormat::kArbor;
    if (doc.is_object() && doc.contains("traceEvents")) return ProfileFormat::kChromeTrace;
    if (doc.is_array()) return ProfileFormat::kChromeTrace;
    return std::nullopt;
  }
  // Not one document: a truncated trace, or logs before an Arbor JSON line.
  std::string_view head = t.substr(0, 4096);
  if (t[0] == '[' && head.find("\"ph\"") != std::string_view::npos) {
    return ProfileFormat::kChromeTrace;
  }
  if (t[0] == '{' && head.find("\"traceEvents\"") != std::string_view::npos) {
    return ProfileFormat::kChromeTrace;
  }
  return std::nullopt;
}

bool IsArborLine(std::string_view line) {
  line = TrimBlank(line);
  if (line.size() < 2 || line.front() != '{' || line.back() != '}') return false;
  if (line.find("\"components\"") == std::string_view::npos) return false;
  Json doc = Json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  return !doc.is_discarded() && doc.is_object() && doc.contains("components");
}

// "a;b;c 123": a stack, a blank, a whole count.
bool IsCollapsedLine(std::string_view line) {
  size_t space = line.find_last_of(" \t");
  if (space == std::string_view::npos || TrimBlank(line.substr(0, space)).empty()) return false;
  std::string_view count = line.substr(space + 1);
  if (count.empty()) return false;
  for (char c : count) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// "12.34%" as the first field.
bool StartsWithPercent(std::string_view line) {
  size_t end = line.find_first_of(" \t");
  std::string_view first = line.substr(0, end);
  double v = 0;
  return first.size() > 1 && first.back() == '%' &&
         import_internal::ParseWeight(first.substr(0, first.size() - 1), false, &v);
}

// "comm 123 [000] 4567.890123: 250000 cpu-clock:" — a timestamp field followed by more.
bool IsPerfScriptLine(std::string_view line) {
  for (size_t pos = line.find(": "); pos != std::string_view::npos;
       pos = line.find(": ", pos + 1)) {
    size_t begin = line.find_last_of(" \t", pos);
    std::string_view field = line.substr(begin == std::string_view::npos ? 0 : begin + 1,
                                         pos - (begin == std::string_view::npos ? 0 : begin + 1));
    size_t dot = field.find('.');
    if (dot != std::string_view::npos && dot > 0 && dot + 1 < field.size() &&
        field.find_first_not_of("0123456789.") == std::string_view::npos) {
      return true;
    }
  }
  return false;
}

std::optional<ProfileFormat> DetectText(std::string_view text) {
  std::optional<ProfileFormat> found;
  bool collapsed = false;
  bool first_checked = false;  // collapsed text is judged by its first data line
  size_t seen = 0;
  ForEachLine(text, [&](std::string_view line, size_t) {
    if (found || seen >= kDetectLines) return;
    std::string_view t = TrimBlank(line);
    if (t.empty()) return;
    ++seen;
    if (StartsWith(t, "# callgrind format") || StartsWith(t, "events:") ||
        StartsWith(t, "Profile data file") || EndsWith(t, "PROGRAM TOTALS")) {
      found = ProfileFormat::kCallgrind;
    } else if (StartsWith(t, "# Samples:") || StartsWith(t, "# Overhead") ||
               StartsWith(t, "# Children") || StartsWithPercent(t) || IsPerfScriptLine(t)) {
      found = ProfileFormat::kPerf;
    } else if (t[0] != '#' && !first_checked) {
      collapsed = IsCollapsedLine(t);
    }
    if (t[0] != '#') first_checked = true;
  });
  if (found) return found;
  if (collapsed) return ProfileFormat::kCollapsed;
  return std::nullopt;
}

}  // namespace

std::string_view ProfileFormatName(ProfileFormat f) {
  for (const FormatName& entry : kFormats) {
    if (entry.format == f) return entry.name;
  }
  return "auto";
}

std::optional<ProfileFormat> DetectProfileFormat(std::string_view text) {
  std::string_view t = TrimBlank(text);
  if (t.empty()) return std::nullopt;
  if (t[0] == '{' || t[0] == '[') {
    if (auto f = DetectJson(t)) return f;
  }
  bool arbor = false;
  ForEachLine(t, [&](std::string_view line, size_t) { arbor = arbor || IsArborLine(line); });
  if (arbor) return ProfileFormat::kArbor;
  return DetectText(t);
}

Result<Profile> ImportProfile(std::string_view text, const ProfileSpec& spec) {
  ProfileFormat format = spec.format;
  if (format == ProfileFormat::kAuto) {
    std::optional<ProfileFormat> detected = DetectProfileFormat(text);
    if (!detected) {
      Result<Profile> arbor = ParseProfile(text);  // its message says what JSON was expected
      if (arbor.ok()) return arbor;
      return MakeError(arbor.error().message +
                       "; nor is it perf, chrome-trace, callgrind or collapsed text (set "
                       "[profile] format to say which)");
    }
    format = *detected;
  }
  Result<import_internal::RawProfile> raw = MakeError("");
  switch (format) {
    case ProfileFormat::kAuto:
    case ProfileFormat::kArbor:
      return ParseProfile(text);
    case ProfileFormat::kPerf:
      raw = import_internal::ImportPerf(text);
      break;
    case ProfileFormat::kChromeTrace:
      raw = import_internal::ImportChromeTrace(text, spec.tracks);
      break;
    case ProfileFormat::kCallgrind:
      raw = import_internal::ImportCallgrind(text);
      break;
    case ProfileFormat::kCollapsed:
      raw = import_internal::ImportCollapsed(text);
      break;
  }
  if (!raw.ok()) return raw.error();
  return import_internal::GroupProfile(*raw, spec, ProfileFormatName(format));
}

}  // namespace arbor
