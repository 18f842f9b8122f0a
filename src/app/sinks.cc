#include "app/sinks.h"

#include <nlohmann/json.hpp>

#include "util/duration.h"
#include "util/strings.h"

namespace arbor {

TerminalSink::TerminalSink(std::FILE* out, bool tty, std::string metric_name)
    : out_(out), tty_(tty), metric_name_(std::move(metric_name)) {}

TerminalSink::~TerminalSink() { ClearLine(); }

void TerminalSink::ClearLine() {
  if (tty_ && line_shown_) {
    std::fputs("\r\033[K", out_);
    std::fflush(out_);
    line_shown_ = false;
  }
}

void TerminalSink::OnEvent(const Event& e) {
  // On a TTY only verdicts scroll by; the status line shows the rest. Off a TTY every event
  // is one plain line, which is what log files and CI want.
  static const char* kVerdicts[] = {"kept",    "reverted",   "crashed", "skipped",
                                    "stopped", "reprofiled", "vetoed",  "config_changed"};
  bool verdict = false;
  for (const char* k : kVerdicts) verdict |= e.kind == k;
  if (tty_ && !verdict) return;
  ClearLine();
  std::string node = e.node ? "#" + std::to_string(e.node) + " " : "";
  std::fprintf(out_, "[%s] %s%s: %s\n", FormatDuration(e.t).c_str(), node.c_str(), e.kind.c_str(),
               e.message.c_str());
  std::fflush(out_);
}

void TerminalSink::OnProgress(const Progress& p) {
  if (!tty_) return;
  std::string best = p.best ? metric_name_ + " " + FormatDouble(*p.best, 5) : "-";
  std::string line = "node #" + std::to_string(p.node) + " " + p.action + " [" +
                     std::string(StepName(p.step)) + "]  best " + best + "  " +
                     std::to_string(p.nodes_done) + "/" + std::to_string(p.max_nodes) + " nodes  " +
                     FormatDuration(p.elapsed_s) + "/" + FormatDuration(p.max_time_s);
  if (line.size() > 160) line = line.substr(0, 160);
  std::fprintf(out_, "\r\033[K%s", line.c_str());
  std::fflush(out_);
  line_shown_ = true;
}

void JsonLinesSink::OnEvent(const Event& e) {
  nlohmann::json j = {
      {"type", "event"}, {"kind", e.kind}, {"message", e.message}, {"t", e.t}, {"node", nullptr}};
  if (e.node) j["node"] = e.node;
  std::fprintf(out_, "%s\n",
               j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  std::fflush(out_);
}

}  // namespace arbor
