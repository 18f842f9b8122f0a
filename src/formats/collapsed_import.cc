// collapsed: folded stacks, one "root;caller;leaf COUNT" per line, as written by
// stackcollapse-perf.pl, inferno-collapse-* and py-spy --format raw. A line's count is the
// self weight of its leaf (the last ';'-separated frame); lines starting with '#' are comments.
// Any other non-blank line is an error naming it.
#include <string>

#include "formats/import_internal.h"

namespace arbor::import_internal {

Result<RawProfile> ImportCollapsed(std::string_view text) {
  RawAccumulator acc;
  double total = 0;
  std::string error;
  ForEachLine(text, [&](std::string_view line, size_t number) {
    if (!error.empty()) return;
    std::string_view t = TrimBlank(line);
    if (t.empty() || t[0] == '#') return;
    size_t space = t.find_last_of(" \t");
    double count = 0;
    std::string_view stack =
        space == std::string_view::npos ? std::string_view() : TrimBlank(t.substr(0, space));
    if (stack.empty() || !ParseWeight(t.substr(space + 1), false, &count)) {
      error = "collapsed: line " + std::to_string(number) +
              " is not \"frame;frame;leaf COUNT\" (a stack, a blank, a count)";
      return;
    }
    size_t semi = stack.rfind(';');
    std::string_view leaf = semi == std::string_view::npos ? stack : stack.substr(semi + 1);
    if (TrimBlank(leaf).empty()) {
      error = "collapsed: line " + std::to_string(number) + " has an empty leaf frame";
      return;
    }
    acc.Add(TrimBlank(leaf), count);
    total += count;
  });
  if (!error.empty()) return MakeError(error);
  if (acc.size() == 0) return MakeError("collapsed: no stack lines found");
  return acc.Take(total);
}

}  // namespace arbor::import_internal
