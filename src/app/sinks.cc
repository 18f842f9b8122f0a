#include "app/sinks.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "app/run_logs.h"
#include "core/model/event_kind.h"
#include "report/live_status.h"
#include "util/duration.h"

namespace arbor {
namespace {

constexpr auto kRedrawEvery = std::chrono::seconds(1);
constexpr size_t kDefaultWidth = 100;  // when the terminal does not say

size_t TerminalWidth(std::FILE* out) {
  winsize size{};
  if (ioctl(fileno(out), TIOCGWINSZ, &size) == 0 && size.ws_col > 1) {
    return size.ws_col - 1;  // the last column would wrap on some terminals
  }
  return kDefaultWidth;
}

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

FailedRunOf FailedRunsIn(std::string runs_dir, const Scrubber* scrubber) {
  return [runs_dir = std::move(runs_dir), scrubber](const Event& e) -> std::optional<FailedRun> {
    if (e.node == kNoNode) return std::nullopt;
    // The outcome only decides for a run that recorded no exit (a specialist's): a crash.
    Outcome outcome = Outcome::kCrashed;
    switch (KindOf(e)) {
      case EventKind::kReverted:
        outcome = Outcome::kReverted;
        break;
      case EventKind::kReprofiled:
        outcome = Outcome::kKept;
        break;
      case EventKind::kCrashed:
        break;
      default:
        return std::nullopt;
    }
    return ReadFailedRun(runs_dir, e.node, outcome, *scrubber);
  };
}

TerminalSink::TerminalSink(std::FILE* out, Options options)
    : out_(out), options_(std::move(options)) {
  if (options_.tty) redraw_ = std::thread([this] { RedrawLoop(); });
}

TerminalSink::~TerminalSink() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (redraw_.joinable()) redraw_.join();
  std::lock_guard<std::mutex> lock(mu_);
  ClearLine();
}

void TerminalSink::ClearLine() {
  if (options_.tty && line_shown_) {
    std::fputs("\r\033[K", out_);
    std::fflush(out_);
    line_shown_ = false;
  }
}

void TerminalSink::DrawLine() {
  if (!options_.tty || !progress_) return;
  const Clock::time_point now = Clock::now();
  LiveStatus status;
  status.progress = *progress_;
  status.step_elapsed_s = Seconds(now - step_since_);
  status.elapsed_s = progress_->elapsed_s + Seconds(now - progress_at_);
  status.metric_name = options_.metric_name;
  status.goal = options_.goal;
  std::string line = LiveStatusLine(status, TerminalWidth(out_));
  std::fprintf(out_, "\r\033[K%s", line.c_str());
  std::fflush(out_);
  line_shown_ = true;
}

void TerminalSink::RedrawLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, kRedrawEvery, [this] { return stopping_; });
    if (!stopping_) DrawLine();
  }
}

void TerminalSink::OnEvent(const Event& e) {
  // On a TTY only verdicts scroll by; the status line shows the rest. Off a TTY every event
  // is one plain line, which is what log files and CI want.
  static constexpr EventKind kVerdicts[] = {
      EventKind::kKept,    EventKind::kReverted,   EventKind::kCrashed, EventKind::kSkipped,
      EventKind::kStopped, EventKind::kReprofiled, EventKind::kVetoed,  EventKind::kConfigChanged};
  const EventKind kind = KindOf(e);
  bool verdict = false;
  for (EventKind k : kVerdicts) verdict |= kind == k;
  if (options_.tty && !verdict) return;
  // Read before the lock: the redraw must not wait on the disk.
  std::optional<FailedRun> failed =
      options_.failed_run ? options_.failed_run(e) : std::optional<FailedRun>();
  std::lock_guard<std::mutex> lock(mu_);
  ClearLine();
  std::string node = e.node ? "#" + std::to_string(e.node) + " " : "";
  std::fprintf(out_, "[%s] %s%s: %s\n", FormatDuration(e.t).c_str(), node.c_str(), e.kind.c_str(),
               e.message.c_str());
  if (failed) std::fputs(FailedRunText(*failed, "    ").c_str(), out_);
  std::fflush(out_);
  DrawLine();
}

void TerminalSink::OnProgress(const Progress& p) {
  if (!options_.tty) return;
  std::lock_guard<std::mutex> lock(mu_);
  const Clock::time_point now = Clock::now();
  const bool new_step = !progress_ || progress_->node != p.node || progress_->step != p.step;
  // A new step, verdict or best shows at once; anything else (a sample saved) at the next tick.
  const bool moved = new_step || progress_->nodes_done != p.nodes_done || progress_->best != p.best;
  if (new_step) step_since_ = now;
  progress_ = p;
  progress_at_ = now;
  if (moved) DrawLine();
}

void JsonLinesSink::OnEvent(const Event& e) {
  nlohmann::json j = {
      {"type", "event"}, {"kind", e.kind}, {"message", e.message}, {"t", e.t}, {"node", nullptr}};
  if (e.node) j["node"] = e.node;
  if (failed_run_) {
    if (std::optional<FailedRun> failed = failed_run_(e)) j["failed_run"] = FailedRunJson(*failed);
  }
  std::fprintf(out_, "%s\n",
               j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  std::fflush(out_);
}

}  // namespace arbor
