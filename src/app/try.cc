#include "app/try.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "app/campaign.h"
#include "app/command_target.h"
#include "app/run_logs.h"
#include "app/secrets.h"
#include "arbor/exit_codes.h"
#include "core/critic/statistics.h"
#include "exec/git_cli.h"
#include "exec/runner.h"
#include "formats/metrics.h"
#include "report/views.h"
#include "util/escape.h"
#include "util/strings.h"

namespace arbor {
namespace fs = std::filesystem;

namespace {

std::atomic<int> g_try_signals{0};

// The command running now is killed (its whole group); try then cleans up and leaves.
void OnTrySignal(int) {
  g_try_signals.fetch_add(1);
  KillRunningCommandsFromSignal();
}

// A detached checkout of the workspace's HEAD in a temporary directory outside it, as a node's
// worktree is one of its commit; removed, with git's record of it, when this goes away.
class TryCheckout {
 public:
  TryCheckout() = default;
  TryCheckout(const TryCheckout&) = delete;
  TryCheckout& operator=(const TryCheckout&) = delete;
  ~TryCheckout() {
    if (dir_.empty()) return;
    // Nothing a command left running may write into the checkout while it goes, or outlive try.
    KillOrphans();
    KillProcessesWithin(dir_);
    if (!worktree_.empty())
      (void)RunGitCli("worktree remove --force " + ShellQuote(worktree_), repo_);
    std::error_code ec;
    fs::remove_all(dir_, ec);
    if (!worktree_.empty()) (void)RunGitCli("worktree prune", repo_);
  }

  Status Create(const std::string& repo) {
    repo_ = repo;
    ARBOR_TRY_ASSIGN(auto head, RunGitCli("rev-parse --verify -q HEAD^{commit}", repo));
    if (!head.result.ok() || head.result.exit_code != 0) {
      return MakeError(repo + " is not a git repository with a commit: commit the target first",
                       kExitState);
    }
    commit_ = Trim(head.out);
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/arbor-try-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      return MakeError(
          "cannot create a temporary directory " + pattern + ": " + std::strerror(errno),
          kExitState);
    }
    dir_ = pattern;
    const std::string path = dir_ + "/worktree";
    ARBOR_TRY_ASSIGN(auto added,
                     RunGitCli("worktree add --detach " + ShellQuote(path) + " " + commit_, repo));
    if (!added.result.ok() || added.result.exit_code != 0) {
      return MakeError("git worktree add failed: " + EscapeControlChars(Trim(added.err)),
                       kExitState);
    }
    worktree_ = path;
    return {};
  }
  const std::string& worktree() const { return worktree_; }
  std::string runs() const { return dir_ + "/runs"; }
  const std::string& commit() const { return commit_; }

 private:
  std::string repo_;
  std::string dir_;
  std::string worktree_;
  std::string commit_;
};

// How the command ended, in words.
std::string Ending(const StepResult& s) {
  switch (s.kind) {
    case ExitKind::kOk:
    case ExitKind::kFailed:
    case ExitKind::kBadOutput:
      return "exit " + std::to_string(s.exit_code);
    case ExitKind::kSignaled:
      return "killed by signal " + std::to_string(s.signal) + " (" + strsignal(s.signal) + ")";
    case ExitKind::kTimedOut:
      return "timed out (" + EscapeControlChars(s.detail) + "), its process group killed";
    case ExitKind::kSpawnError:
      return "could not start: " + EscapeControlChars(s.detail);
  }
  return "?";
}

class TryPrinter {
 public:
  TryPrinter(std::FILE* out, const Scrubber& scrubber) : out_(out), scrubber_(scrubber) {}

  void Line(const std::string& text) {
    std::fprintf(out_, "%s\n", text.c_str());
    std::fflush(out_);
  }
  // The end of the file at `path` as every view of a run's output shows it (app/run_logs.h:
  // bounded, scrubbed, escaped), each line indented under `title`.
  void Tail(const std::string& title, const std::string& path) {
    std::fputs(TailText(title, LogTail(path, scrubber_), "  ").c_str(), out_);
    std::fflush(out_);
  }
  void Step(const std::string& title, const std::string& command, const StepResult& s) {
    Line("");
    Line("== " + title + ": " + EscapeControlChars(scrubber_.Scrub(command)));
    Line("  " + Ending(s) + " after " + FormatDouble(s.duration_s, 3) + "s");
    Tail("stdout", s.log_dir + "/stdout");
    Tail("stderr", s.log_dir + "/stderr");
  }
  std::string Scrub(const std::string& text) const { return scrubber_.Scrub(text); }

 private:
  std::FILE* out_;
  const Scrubber& scrubber_;
};

// A benchmark run without a metric: the parser's error, where it read and what it read.
void PrintNoMetric(TryPrinter& p, const CampaignSpec& spec, const Measurement& m) {
  if (m.step.kind != ExitKind::kBadOutput) {
    return p.Line("  no metric: the command did not succeed (" + Ending(m.step) + ")");
  }
  p.Line("  no metric: " + EscapeControlChars(m.step.detail));
  const std::string out_dir = m.step.log_dir;
  const std::string metrics_file = ReadTail(out_dir + "/out/metrics.json", kRegexWindowBytes);
  const bool file = ReadsMetricsFile(spec.metric.source) && !metrics_file.empty();
  if (file) {
    p.Line("  read from: $ARBOR_OUT/metrics.json (it beats stdout when the command writes it)");
    return p.Tail("text it tried to match", out_dir + "/out/metrics.json");
  }
  p.Line("  read from: stdout (metrics are never read from stderr)");
  p.Tail("text it tried to match", out_dir + "/stdout");
  auto on_stderr =
      ExtractMetric(spec.metric.source, ReadTail(out_dir + "/stderr", kRegexWindowBytes), "");
  if (on_stderr.ok()) {
    p.Line("  hint: stderr holds a match (" + FormatDouble(*on_stderr) +
           "); print the metric on stdout");
  }
}

// The noise across the benchmark runs that gave a metric.
void PrintNoise(TryPrinter& p, const CampaignSpec& spec, const std::vector<double>& values,
                int runs) {
  const std::string& metric = spec.metric.name;
  p.Line("");
  if (values.empty()) return p.Line("noise: no benchmark run gave a metric");
  std::string line = "noise over " + std::to_string(values.size()) + " of " + std::to_string(runs) +
                     " runs: median " + metric + " " + FormatDouble(Median(values)) + ", min " +
                     FormatDouble(*std::min_element(values.begin(), values.end())) + ", max " +
                     FormatDouble(*std::max_element(values.begin(), values.end()));
  if (values.size() >= 2) {
    line += ", robust CV " + FormatDouble(100 * RobustCV(values), 3) + "% (1.4826*MAD/median)" +
            ", CV " + FormatDouble(100 * CoefficientOfVariation(values), 3) + "%";
  }
  p.Line(line);
  // The Critic gates on the robust CV: above [critic] max_cv a campaign measures more.
  if (values.size() >= 2 && RobustCV(values) > spec.critic.max_cv) {
    p.Line("  above [critic] max_cv " + FormatDouble(100 * spec.critic.max_cv, 3) +
           "%: a campaign raises its repetitions (the noise pre-flight, docs/critic.md)");
  }
}

void PrintProfile(TryPrinter& p, const Profile& profile) {
  p.Line("  components (name, layer, share):");
  for (const Component& c : profile.components) {
    p.Line("    " + EscapeControlChars(p.Scrub(c.name)) + "  " +
           (c.layer.empty() ? "-" : EscapeControlChars(c.layer)) + "  " +
           FormatDouble(100 * c.share, 3) + "%");
  }
}

// Each action with its targets; a target no component of the profile matches is marked (the
// scorer's matching: GlobMatch on the component's name, as ExpectedGain does).
void PrintTargets(TryPrinter& p, const CampaignSpec& spec, const Profile* profile) {
  if (spec.actions.empty()) return;
  p.Line("");
  p.Line(profile != nullptr ? "actions and the profile components they target:"
                            : "actions and their targets (no profile ran to check them against):");
  for (const ActionSpec& a : spec.actions) {
    if (a.targets.empty()) {
      p.Line("  " + a.id + ": the whole program");
      continue;
    }
    std::vector<std::string> shown;
    for (const std::string& glob : a.targets) {
      bool found = profile == nullptr ||
                   std::any_of(profile->components.begin(), profile->components.end(),
                               [&](const Component& c) { return GlobMatch(glob, c.name); });
      shown.push_back(found ? glob : glob + " (not in the profile)");
    }
    p.Line("  " + a.id + ": " + Join(shown, ", "));
  }
}

// A note when HEAD is not what the user sees: a campaign (and this try) runs the last commit.
void NoteUncommitted(TryPrinter& p, const std::string& repo) {
  auto status = RunGitCli("status --porcelain --untracked-files=normal", repo);
  if (!status.ok() || status->result.exit_code != 0) return;
  for (const std::string& line : Split(status->out, '\n')) {
    if (line.size() < 4 || StartsWith(line.substr(3), ".arbor")) continue;
    p.Line(
        "note: the workspace has uncommitted changes; this try, like a campaign, runs the last "
        "commit, and `arbor run` refuses to start until they are committed or stashed");
    return;
  }
}

}  // namespace

Result<int> TryCommand(const TryOptions& options, std::FILE* out) {
  ARBOR_TRY_ASSIGN(CampaignSpec spec, LoadSpec(options.file));
  ARBOR_TRY(CheckProcessLimit(spec));
  SecretsLayer secrets(spec.secrets);  // the commands' logs and everything printed
  TryPrinter p(out, secrets.scrubber());
  if (spec.executor.kind == ExecutorSpec::Kind::kSlurm) {
    spec.executor.kind = ExecutorSpec::Kind::kLocal;
    p.Line("note: [executor] kind = \"slurm\": try runs the commands on this machine");
  }
  TryCheckout checkout;
  ARBOR_TRY(checkout.Create(spec.workspace));
  HandleStopSignals(OnTrySignal);
  p.Line("arbor try: campaign '" + spec.name + "', commit " + checkout.commit().substr(0, 12) +
         " of " + spec.workspace + ", " + std::to_string(options.runs) +
         (options.runs == 1 ? " benchmark run" : " benchmark runs") + "; nothing is stored");
  NoteUncommitted(p, spec.workspace);

  CommandTarget target(&spec, checkout.runs());
  auto context = [&](const std::string& label, int repetition) {
    RunContext ctx;
    ctx.node = kRootId;
    ctx.worktree = checkout.worktree();
    ctx.env = spec.target.env;
    ctx.repetition = repetition;
    ctx.label = label;
    return ctx;
  };
  auto interrupted = [&p] {
    if (g_try_signals.load() == 0) return false;
    p.Line("interrupted: the running command was killed; nothing was stored");
    return true;
  };
  std::vector<std::string> problems;

  StepResult build = target.Build(context("build", 0));
  if (!spec.target.build.empty()) p.Step("build", spec.target.build, build);
  if (interrupted()) return kExitInterrupted;
  if (!build.ok()) {
    problems.push_back("the build failed");
  } else {
    if (!spec.target.check.empty()) {
      Measurement check = target.Check(context("check", 0));
      p.Step("check", spec.target.check, check.step);
      if (check.value) p.Line("  accuracy " + FormatDouble(*check.value));
      if (!check.step.ok()) {
        if (check.step.kind == ExitKind::kBadOutput)
          p.Line("  " + EscapeControlChars(check.step.detail));
        problems.push_back("the check failed");
      }
      if (interrupted()) return kExitInterrupted;
    }
    std::vector<double> values;
    std::vector<std::string> no_metric;  // the runs without one, by number
    for (int i = 1; i <= options.runs; ++i) {
      Measurement m = target.Bench(context("bench-" + std::to_string(i), i));
      p.Step("bench " + std::to_string(i) + "/" + std::to_string(options.runs), spec.target.bench,
             m.step);
      if (interrupted()) return kExitInterrupted;
      if (m.value) {
        p.Line("  metric " + spec.metric.name + " = " + FormatDouble(*m.value));
        values.push_back(*m.value);
      } else {
        PrintNoMetric(p, spec, m);
        no_metric.push_back(std::to_string(i));
      }
    }
    if (!no_metric.empty()) {
      problems.push_back((no_metric.size() == 1 ? "benchmark run " : "benchmark runs ") +
                         Join(no_metric, ", ") + " gave no metric");
    }
    PrintNoise(p, spec, values, options.runs);
    std::optional<Profile> profile;
    if (!spec.target.profile.empty()) {
      ProfileResult r = target.Profile(context("profile", 0));
      p.Step("profile", spec.target.profile, r.step);
      if (interrupted()) return kExitInterrupted;
      if (r.profile) {
        PrintProfile(p, *r.profile);
        profile = std::move(r.profile);
      } else if (r.step.kind == ExitKind::kBadOutput) {
        p.Line("  no profile: " + EscapeControlChars(r.step.detail));
      }
    }
    PrintTargets(p, spec, profile ? &*profile : nullptr);
  }
  p.Line("");
  if (!problems.empty()) {
    p.Line("not ready: " + Join(problems, "; ") + " (exit " + std::to_string(kExitBaseline) +
           "); fix it and run `arbor try` again");
    return kExitBaseline;
  }
  p.Line("ready: a campaign can start (`arbor run " + options.file + "`)");
  return kExitOk;
}

}  // namespace arbor
