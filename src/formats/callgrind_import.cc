// callgrind: the output of callgrind_annotate, or a callgrind.out file itself.
//
// callgrind_annotate (valgrind 3.19's layout): "N (P%)  PROGRAM TOTALS" is the total, and each
// "N (P%)  file:function [object]" line of the function table an entry, named by the function
// (file and object dropped). Only the first event column (Ir by default) is read.
//
// callgrind.out (format version 1, any valgrind): the self cost of each "fn=" is the sum of
// the first event of its cost lines, skipping the inclusive cost line that follows each
// "calls=" line; name compression ("fn=(12) name", then "fn=(12)") is resolved. The total is
// the sum of self costs. Instruction counts do not depend on machine load, so shares read
// this way repeat from run to run.
#include <cctype>
#include <map>
#include <string>

#include "formats/import_internal.h"
#include "util/strings.h"

namespace arbor::import_internal {
namespace {

// "900,000,005 (99.99%)  rest" -> count and rest; false when the line is not a cost line.
bool ParseAnnotateLine(std::string_view line, double* count, std::string_view* rest) {
  line = TrimBlank(line);
  size_t space = line.find(' ');
  if (space == std::string_view::npos) return false;
  if (!ParseWeight(line.substr(0, space), true, count)) return false;
  std::string_view after = TrimBlank(line.substr(space));
  if (!after.empty() && after[0] == '(') {
    size_t close = after.find(')');
    if (close == std::string_view::npos) return false;
    after = TrimBlank(after.substr(close + 1));
  }
  *rest = after;
  return !after.empty();
}

// "t.c:main [/tmp/t]" -> "main"; C++ names keep their "::".
std::string_view FunctionOf(std::string_view s) {
  if (!s.empty() && s.back() == ']') {
    size_t open = s.rfind(" [");
    if (open != std::string_view::npos) s = TrimBlank(s.substr(0, open));
  }
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != ':') continue;
    if (i + 1 < s.size() && s[i + 1] == ':') {
      ++i;  // "::" belongs to the name
      continue;
    }
    return s.substr(i + 1);
  }
  return s;
}

Result<RawProfile> ImportAnnotate(std::string_view text) {
  RawAccumulator acc;
  double total = 0;
  bool in_table = false;  // after the "file:function" header, until the next blank line
  bool done = false;
  ForEachLine(text, [&](std::string_view line, size_t) {
    if (done) return;
    std::string_view t = TrimBlank(line);
    if (EndsWith(t, "file:function") || EndsWith(t, "function:file")) {
      in_table = true;
      return;
    }
    double count = 0;
    std::string_view rest;
    if (!ParseAnnotateLine(t, &count, &rest)) {
      if (in_table && t.empty() && acc.size() > 0) done = true;
      return;
    }
    if (rest == "PROGRAM TOTALS") {
      total = count;
    } else if (in_table) {
      std::string_view name = FunctionOf(rest);
      if (!name.empty()) acc.Add(name, count);
    }
  });
  if (total <= 0) return MakeError("callgrind: no \"PROGRAM TOTALS\" line found");
  if (acc.size() == 0) return MakeError("callgrind: no function lines found after PROGRAM TOTALS");
  return acc.Take(total);
}

class OutReader {
 public:
  // Returns "" or the error for `line`.
  std::string Line(std::string_view line, size_t number) {
    std::string_view t = TrimBlank(line);
    if (t.empty() || t[0] == '#') return "";
    char c = t[0];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '*') {
      return Cost(t, number);
    }
    size_t eq = t.find('=');
    size_t colon = t.find(':');
    if (colon != std::string_view::npos && (eq == std::string_view::npos || colon < eq)) {
      return Header(t.substr(0, colon), TrimBlank(t.substr(colon + 1)));
    }
    if (eq == std::string_view::npos) {
      return "callgrind: line " + std::to_string(number) + " is neither a spec nor a cost line";
    }
    std::string_view key = t.substr(0, eq);
    std::string_view value = TrimBlank(t.substr(eq + 1));
    skip_next_ = false;
    if (key == "fn") {
      fn_ = Resolve(value);
    } else if (key == "cfn") {
      Resolve(value);  // may define a name a later fn= refers to
    } else if (key == "calls") {
      skip_next_ = true;
    }
    return "";
  }

  Result<RawProfile> Finish() {
    if (!saw_events_) return MakeError("callgrind: no \"events:\" line found");
    if (lines_ == 0) return MakeError("callgrind: no cost lines found");
    return acc_.Take(total_);
  }

 private:
  std::string Header(std::string_view key, std::string_view value) {
    if (key == "events") saw_events_ = !value.empty();
    if (key == "positions") positions_ = Split(std::string(value), ' ').size();
    return "";
  }

  std::string Cost(std::string_view t, size_t number) {
    bool skip = skip_next_;
    skip_next_ = false;
    if (!saw_events_) return "callgrind: cost line " + std::to_string(number) + " before events:";
    ++lines_;
    if (skip) return "";
    std::string_view rest = t;
    for (size_t i = 0; i < positions_; ++i) {
      size_t space = rest.find_first_of(" \t");
      rest = space == std::string_view::npos ? std::string_view() : TrimBlank(rest.substr(space));
    }
    std::string_view first = rest.substr(0, rest.find_first_of(" \t"));
    if (first.empty()) return "";  // no cost given: zero
    double cost = 0;
    if (!ParseWeight(first, false, &cost)) {
      return "callgrind: line " + std::to_string(number) + " has a cost that is not a count";
    }
    if (fn_.empty()) return "callgrind: line " + std::to_string(number) + " has a cost before fn=";
    acc_.Add(fn_, cost);
    total_ += cost;
    return "";
  }

  // "(12) name" defines id 12; "(12)" refers to it; "name" is itself.
  std::string Resolve(std::string_view value) {
    if (value.empty() || value[0] != '(') return std::string(value);
    size_t close = value.find(')');
    if (close == std::string_view::npos) return std::string(value);
    std::string id(value.substr(1, close - 1));
    std::string_view name = TrimBlank(value.substr(close + 1));
    if (!name.empty()) names_[id] = std::string(name);
    auto it = names_.find(id);
    return it == names_.end() ? "(" + id + ")" : it->second;
  }

  RawAccumulator acc_;
  std::map<std::string, std::string> names_;
  std::string fn_;
  size_t positions_ = 1;
  size_t lines_ = 0;
  double total_ = 0;
  bool saw_events_ = false;
  bool skip_next_ = false;
};

Result<RawProfile> ImportOut(std::string_view text) {
  OutReader reader;
  std::string error;
  ForEachLine(text, [&](std::string_view line, size_t number) {
    if (error.empty()) error = reader.Line(line, number);
  });
  if (!error.empty()) return MakeError(error);
  return reader.Finish();
}

}  // namespace

Result<RawProfile> ImportCallgrind(std::string_view text) {
  if (TrimBlank(text).empty()) return MakeError("callgrind: the profile is empty");
  bool raw = false;
  ForEachLine(text, [&](std::string_view line, size_t) {
    if (StartsWith(line, "events:") || StartsWith(line, "# callgrind format")) raw = true;
  });
  return raw ? ImportOut(text) : ImportAnnotate(text);
}

}  // namespace arbor::import_internal
