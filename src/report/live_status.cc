// TimeLeft and LiveStatusLine (declared in report/live_status.h).
#include "report/live_status.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "report/format.h"
#include "util/duration.h"
#include "util/escape.h"
#include "util/strings.h"

namespace arbor {
namespace {

// Whole seconds: a line redrawn every second should not flicker with tenths.
std::string Seconds(double s) { return s < 1 ? "0s" : FormatDuration(std::floor(s)); }

// An estimate, rounded to what it can promise: seconds under a minute, else minutes.
std::string Estimate(double s) {
  return s < 60 ? Seconds(s) : FormatDuration(std::round(s / 60) * 60);
}

// Code points, as Shorten counts them (a terminal column each, for the text shown here).
size_t Columns(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

std::string NodePart(const Progress& p, const std::string& action, double step_elapsed_s) {
  if (p.node == kNoNode) return "starting";
  std::string out =
      "#" + std::to_string(p.node) + " " + action + " [" + std::string(StepName(p.step));
  if (p.step != Step::kNone && p.step != Step::kDone) out += " " + Seconds(step_elapsed_s);
  return out + "]";
}

}  // namespace

std::optional<double> TimeLeft(int evaluated, int max_nodes, double elapsed_s, double max_time_s) {
  std::optional<double> left;
  if (max_time_s > 0) left = std::max(0.0, max_time_s - elapsed_s);
  if (evaluated > 0 && max_nodes > 0) {
    double by_nodes = elapsed_s / evaluated * std::max(0, max_nodes - evaluated);
    left = left ? std::min(*left, by_nodes) : by_nodes;
  }
  return left;
}

std::string LiveStatusLine(const LiveStatus& s, size_t width) {
  const Progress& p = s.progress;
  const std::string metric = EscapeControlChars(s.metric_name);
  std::string budget = std::to_string(p.nodes_done) +
                       (p.max_nodes > 0 ? "/" + std::to_string(p.max_nodes) : "") + " evaluated";
  std::string best = "best -";
  if (p.best) {
    best = "best " + metric + " " + FormatDouble(*p.best, 5);
    if (auto speedup = report::Speedup(s.goal, p.baseline, p.best)) {
      best =
          "best " + report::FormatSpeedup(*speedup) + " " + metric + " " + FormatDouble(*p.best, 5);
    }
  }
  std::string time = Seconds(s.elapsed_s);
  if (p.max_time_s > 0) time += " of " + FormatDuration(p.max_time_s);
  if (auto left = TimeLeft(p.nodes_done, p.max_nodes, s.elapsed_s, p.max_time_s)) {
    time += ", ~" + Estimate(*left) + " left";
  }
  const std::string rest = " | " + budget + " | " + best + " | " + time;
  // The action is the part of unbounded length: it gives way first, down to a few characters.
  std::string action = EscapeControlChars(p.action);
  const size_t fixed = Columns(NodePart(p, "", s.step_elapsed_s)) + Columns(rest);
  if (fixed + Columns(action) > width) {
    action = report::Shorten(action, std::max<size_t>(width > fixed ? width - fixed : 0, 8));
  }
  std::string line = NodePart(p, action, s.step_elapsed_s) + rest;
  return Columns(line) > width ? report::Shorten(line, width) : line;
}

}  // namespace arbor
