// Live views of a running campaign: a one-line status on a TTY (plain log lines otherwise)
// and JSON lines for machines (--json, --events FILE). The store stays the record; these only
// mirror it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/model/ports.h"
#include "core/model/spec.h"
#include "report/views.h"
#include "util/secrets.h"

namespace arbor {

// The failed run of the node a failure event names (app/run_logs.h): what the event's log line
// shows under it. nullopt for other events and for a node without one.
using FailedRunOf = std::function<std::optional<FailedRun>(const Event&)>;
// Failure events are "crashed", "reverted" (a check that failed) and "reprofiled" (a profile
// that failed); their runs are read from `runs_dir`, scrubbed with `scrubber` (borrowed).
FailedRunOf FailedRunsIn(std::string runs_dir, const Scrubber* scrubber);

// On a TTY: the verdicts scroll by as log lines, and one status line below them is redrawn
// about once a second (report/live_status.h: the node and its step with the step's elapsed
// time, evaluated of the budget, the best so far and its speedup, the time left). Otherwise:
// every event as one plain line, and no status line, which is what log files and CI want.
// Either way a failure's line is followed by its failed run's output. Thread-safe.
class TerminalSink : public EventSink {
 public:
  struct Options {
    bool tty = false;
    std::string metric_name;
    Goal goal = Goal::kMax;
    FailedRunOf failed_run;  // empty: failures show their line only
  };
  TerminalSink(std::FILE* out, Options options);
  ~TerminalSink() override;
  TerminalSink(const TerminalSink&) = delete;
  TerminalSink& operator=(const TerminalSink&) = delete;
  void OnEvent(const Event& e) override;
  void OnProgress(const Progress& p) override;

 private:
  using Clock = std::chrono::steady_clock;
  // With mu_ held.
  void ClearLine();
  void DrawLine();
  void RedrawLoop();

  std::FILE* out_;
  Options options_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool line_shown_ = false;
  std::optional<Progress> progress_;
  Clock::time_point progress_at_;  // when progress_ arrived
  Clock::time_point step_since_;   // when its node entered its step
  std::thread redraw_;             // TTY only
};

class JsonLinesSink : public EventSink {
 public:
  // A failure event's line gets "failed_run" (FailedRunJson) when `failed_run` finds one.
  explicit JsonLinesSink(std::FILE* out, FailedRunOf failed_run = {})
      : out_(out), failed_run_(std::move(failed_run)) {}
  void OnEvent(const Event& e) override;
  void OnProgress(const Progress&) override {}

 private:
  std::FILE* out_;
  FailedRunOf failed_run_;
};

// Fans out to several sinks.
class TeeSink : public EventSink {
 public:
  void Add(EventSink* s) { sinks_.push_back(s); }
  void OnEvent(const Event& e) override {
    for (auto* s : sinks_) s->OnEvent(e);
  }
  void OnProgress(const Progress& p) override {
    for (auto* s : sinks_) s->OnProgress(p);
  }

 private:
  std::vector<EventSink*> sinks_;
};

}  // namespace arbor
