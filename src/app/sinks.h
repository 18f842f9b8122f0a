// Live views of a running campaign: a one-line status on a TTY (plain log lines otherwise)
// and JSON lines for machines (--json, --events FILE). The store stays the record; these only
// mirror it.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "core/ports.h"

namespace arbor {

class TerminalSink : public EventSink {
 public:
  TerminalSink(std::FILE* out, bool tty, std::string metric_name);
  ~TerminalSink() override;
  void OnEvent(const Event& e) override;
  void OnProgress(const Progress& p) override;

 private:
  void ClearLine();
  std::FILE* out_;
  bool tty_;
  bool line_shown_ = false;
  std::string metric_name_;
};

class JsonLinesSink : public EventSink {
 public:
  explicit JsonLinesSink(std::FILE* out) : out_(out) {}
  void OnEvent(const Event& e) override;
  void OnProgress(const Progress&) override {}

 private:
  std::FILE* out_;
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
