// LogTail, RecordRunExit, ReadFailedRun and ReadLogs (declared in app/run_logs.h).
#include "app/run_logs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "exec/runner.h"
#include "util/escape.h"
#include "util/strings.h"

namespace arbor {
namespace {

namespace fs = std::filesystem;

constexpr const char* kExitFile = "exit";

struct RunFolder {
  std::string label;
  fs::file_time_type time;
  std::optional<std::string> exit;  // nullopt: no `exit` recorded
};

// When a run ended: its `exit` file's time, else its newest log's, else its folder's.
fs::file_time_type EndTime(const fs::path& dir) {
  std::error_code ec;
  auto exit_time = fs::last_write_time(dir / kExitFile, ec);
  if (!ec) return exit_time;
  fs::file_time_type newest = fs::last_write_time(dir, ec);
  for (const char* stream : {"stdout", "stderr"}) {
    auto t = fs::last_write_time(dir / stream, ec);
    if (!ec && t > newest) newest = t;
  }
  return newest;
}

// The node's run folders, newest first (ties by label, so the order is stable).
std::vector<RunFolder> RunFolders(const fs::path& dir) {
  std::vector<RunFolder> runs;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return runs;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_directory(ec)) continue;
    RunFolder run{entry.path().filename().string(), EndTime(entry.path()), std::nullopt};
    if (fs::exists(entry.path() / kExitFile, ec)) {
      run.exit = Trim(ReadTail((entry.path() / kExitFile).string(), 64));
    }
    runs.push_back(std::move(run));
  }
  std::sort(runs.begin(), runs.end(), [](const RunFolder& a, const RunFolder& b) {
    return a.time != b.time ? a.time > b.time : a.label > b.label;
  });
  return runs;
}

}  // namespace

std::vector<std::string> LogTail(const std::string& path, const Scrubber& scrubber,
                                 TailBounds bounds) {
  // One byte more than is shown, so VisibleTail knows when it cuts a line; and, with secrets,
  // the longest form more, so a secret across the shown window's first byte is still whole.
  const size_t skip = scrubber.empty() ? 0 : scrubber.max_pattern_length();
  const size_t want = bounds.bytes + 1 + skip;
  std::string window = ReadTail(path, want);
  size_t from = 0;
  if (window.size() == want && skip > 0) {
    // The window may start inside a secret, which no longer matches: its bytes (fewer than
    // `skip`) are dropped, unless they belong to a whole occurrence, which is redacted.
    from = skip;
    for (const Scrubber::Span& span : scrubber.Find(window)) {
      if (span.begin < from && from < span.end) from = span.begin;
    }
  }
  std::string_view kept = std::string_view(window).substr(from);
  return VisibleTail(scrubber.empty() ? std::string(kept) : scrubber.Scrub(kept), bounds.lines,
                     bounds.bytes);
}

void RecordRunExit(const std::string& run_dir, const StepResult& step) {
  if (run_dir.empty()) return;
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec)) return;
  std::ofstream(run_dir + "/" + kExitFile, std::ios::trunc) << ExitKindName(step.kind) << "\n";
}

std::optional<FailedRun> ReadFailedRun(const std::string& runs_dir, NodeId node, Outcome outcome,
                                       const Scrubber& scrubber, TailBounds bounds) {
  const fs::path dir = fs::path(runs_dir) / ("n" + std::to_string(node));
  std::vector<RunFolder> runs = RunFolders(dir);
  auto failed = [outcome](const RunFolder& r) {
    return r.exit ? *r.exit != ExitKindName(ExitKind::kOk) : outcome == Outcome::kCrashed;
  };
  const bool ended = outcome == Outcome::kCrashed || outcome == Outcome::kReverted;
  auto last = ended ? std::find_if(runs.begin(), runs.end(), failed)
                    : (runs.empty() || !failed(runs.front()) ? runs.end() : runs.begin());
  if (last == runs.end()) return std::nullopt;
  FailedRun run;
  run.label = last->label;
  run.dir = (dir / last->label).string();
  run.exit = last->exit.value_or("");
  run.out = LogTail(run.dir + "/stdout", scrubber, bounds);
  run.err = LogTail(run.dir + "/stderr", scrubber, bounds);
  return run;
}

std::vector<LogExcerpt> ReadLogs(const std::string& runs_dir, NodeId node, const Scrubber& scrubber,
                                 size_t runs_per_node, TailBounds bounds) {
  std::vector<LogExcerpt> logs;
  const fs::path dir = fs::path(runs_dir) / ("n" + std::to_string(node));
  std::vector<RunFolder> runs = RunFolders(dir);
  // The newest runs, shown oldest first.
  if (runs.size() > runs_per_node) runs.resize(runs_per_node);
  std::reverse(runs.begin(), runs.end());
  for (const RunFolder& run : runs) {
    for (const char* stream : {"stdout", "stderr"}) {
      std::vector<std::string> lines =
          LogTail((dir / run.label / stream).string(), scrubber, bounds);
      if (lines.empty() || Trim(Join(lines, "")).empty()) continue;
      logs.push_back({run.label, stream, Join(lines, "\n")});
    }
  }
  return logs;
}

}  // namespace arbor
