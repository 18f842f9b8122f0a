// perf: the text of `perf report --stdio` and of `perf script`.
//
// report: every line whose first field is a percentage ("98.61%") is an entry; with
// --children the last of the leading percentages (Self) is used. The name is the text after
// the "[.] " / "[k] " marker (or after the percentages when there is none, e.g. --sort dso),
// up to the first run of two blanks (perf pads columns and appends IPC columns). Only the first
// event's section is read. Weights are percentages, so the total is 100.
//
// script: each sample is a header line "comm pid [cpu] time: [period] event: [ip sym+off
// (dso)]" and, when recorded with -g, frame lines beginning with a tab, leaf first. A sample
// counts for its leaf symbol (the "+0x.." offset dropped), weighted by its period when perf
// printed one, else 1.
#include <cctype>
#include <string>
#include <vector>

#include "formats/import_internal.h"
#include "util/strings.h"

namespace arbor::import_internal {
namespace {

// The percentage that `field` is ("12.5%"), or false.
bool ParsePercent(std::string_view field, double* out) {
  if (field.size() < 2 || field.back() != '%') return false;
  return ParseWeight(field.substr(0, field.size() - 1), false, out) && *out <= 100;
}

std::string_view NextField(std::string_view* rest) {
  *rest = TrimBlank(*rest);
  size_t end = rest->find_first_of(" \t");
  std::string_view field = rest->substr(0, end);
  rest->remove_prefix(end == std::string_view::npos ? rest->size() : end);
  return field;
}

std::string_view CutAtColumnGap(std::string_view s) {
  s = TrimBlank(s);
  size_t gap = s.find("  ");
  return TrimBlank(s.substr(0, gap));
}

// One report line: false when it is not an entry.
bool ParseReportLine(std::string_view line, double* percent, std::string_view* name) {
  std::string_view rest = line;
  double value = 0;
  bool any = false;
  while (true) {
    std::string_view probe = rest;
    std::string_view field = NextField(&probe);
    double v = 0;
    if (!ParsePercent(field, &v)) break;
    value = v;
    any = true;
    rest = probe;
  }
  if (!any) return false;
  size_t marker = std::string_view::npos;
  for (size_t i = 0; i + 3 < rest.size(); ++i) {
    if (rest[i] == '[' && rest[i + 2] == ']' && rest[i + 3] == ' ' &&
        (i == 0 || rest[i - 1] == ' ' || rest[i - 1] == '\t')) {
      marker = i;
      break;
    }
  }
  *name = CutAtColumnGap(marker == std::string_view::npos ? rest : rest.substr(marker + 4));
  *percent = value;
  return !name->empty();
}

bool LooksLikeReport(std::string_view text) {
  bool found = false;
  ForEachLine(text, [&](std::string_view line, size_t) {
    if (found) return;
    std::string_view t = TrimBlank(line);
    if (StartsWith(t, "# Overhead") || StartsWith(t, "# Samples:") || StartsWith(t, "# Children")) {
      found = true;
      return;
    }
    double pct = 0;
    std::string_view name;
    if (!t.empty() && t[0] != '#' && ParseReportLine(t, &pct, &name)) found = true;
  });
  return found;
}

Result<RawProfile> ImportReport(std::string_view text) {
  RawAccumulator acc;
  int sections = 0;
  bool stop = false;
  ForEachLine(text, [&](std::string_view line, size_t) {
    if (stop) return;
    std::string_view t = TrimBlank(line);
    if (StartsWith(t, "# Samples:")) {
      if (++sections > 1 && acc.size() > 0) stop = true;  // the first event only
      return;
    }
    if (t.empty() || t[0] == '#') return;
    double pct = 0;
    std::string_view name;
    if (ParseReportLine(t, &pct, &name)) acc.Add(name, pct);
  });
  if (acc.size() == 0)
    return MakeError("perf: no sample lines found (expected \"12.34%  [.] sym\")");
  return acc.Take(100);
}

// The symbol of "ip sym+0x1c (dso)" / "sym+0x1c (dso)": offset and dso dropped.
std::string_view FrameSymbol(std::string_view frame, bool has_ip) {
  frame = TrimBlank(frame);
  if (!frame.empty() && frame.back() == ')') {
    size_t open = frame.rfind(" (");
    if (open != std::string_view::npos) frame = TrimBlank(frame.substr(0, open));
  }
  if (has_ip) {
    size_t space = frame.find_first_of(" \t");
    frame = space == std::string_view::npos ? std::string_view() : TrimBlank(frame.substr(space));
  }
  size_t plus = frame.rfind("+0x");
  if (plus != std::string_view::npos && plus > 0) frame = frame.substr(0, plus);
  return frame.empty() ? std::string_view("[unknown]") : frame;
}

bool IsTimestamp(std::string_view field) {
  if (field.size() < 4 || field.back() != ':') return false;
  size_t dot = field.find('.');
  if (dot == std::string_view::npos || dot == 0) return false;
  for (size_t i = 0; i + 1 < field.size(); ++i) {
    if (i != dot && !std::isdigit(static_cast<unsigned char>(field[i]))) return false;
  }
  return true;
}

struct ScriptHeader {
  double weight = 1;
  std::string_view leaf;  // empty when the frames follow on their own lines
};

// "comm pid [cpu] 123.456: 250000 cpu-clock:ppp:  ip sym+off (dso)".
bool ParseScriptHeader(std::string_view line, ScriptHeader* h) {
  std::string_view rest = line;
  bool seen_time = false;
  while (!rest.empty() && !seen_time) seen_time = IsTimestamp(NextField(&rest));
  if (!seen_time) return false;
  std::string_view probe = rest;
  std::string_view field = NextField(&probe);
  double period = 0;
  h->weight = 1;
  if (ParseWeight(field, false, &period)) {
    h->weight = period;
    rest = probe;
    field = NextField(&rest);
  } else {
    rest = probe;
  }
  if (field.empty() || field.back() != ':') return false;  // the event name
  std::string_view frame = TrimBlank(rest);
  h->leaf = frame.empty() ? std::string_view() : FrameSymbol(frame, /*has_ip=*/true);
  return true;
}

Result<RawProfile> ImportScript(std::string_view text) {
  RawAccumulator acc;
  double total = 0;
  double pending = 0;  // weight of a sample whose leaf is on the next line
  bool waiting = false;
  size_t samples = 0;
  auto settle = [&](std::string_view leaf) {
    if (waiting) acc.Add(leaf, pending);
    waiting = false;
  };
  ForEachLine(text, [&](std::string_view line, size_t) {
    if (TrimBlank(line).empty()) return settle("[unknown]");
    if (line[0] == '\t') return settle(FrameSymbol(line, /*has_ip=*/true));  // else outer frame
    ScriptHeader h;
    if (!ParseScriptHeader(line, &h)) return;
    settle("[unknown]");
    ++samples;
    total += h.weight;
    if (h.leaf.empty()) {
      waiting = true;
      pending = h.weight;
    } else {
      acc.Add(h.leaf, h.weight);
    }
  });
  settle("[unknown]");
  if (samples == 0) return MakeError("perf: no sample lines found");
  return acc.Take(total);
}

}  // namespace

Result<RawProfile> ImportPerf(std::string_view text) {
  if (TrimBlank(text).empty()) return MakeError("perf: the profile is empty");
  if (LooksLikeReport(text)) return ImportReport(text);
  return ImportScript(text);
}

}  // namespace arbor::import_internal
