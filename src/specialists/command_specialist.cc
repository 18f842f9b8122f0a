#include "specialists/command_specialist.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "exec/git_cli.h"
#include "exec/patch_policy.h"
#include "exec/runner.h"
#include "exec/scrubbing.h"
#include "specialists/agent_report.h"
#include "specialists/prompt.h"
#include "util/check.h"
#include "util/duration.h"
#include "util/escape.h"
#include "util/strings.h"

namespace arbor {

namespace {

namespace fs = std::filesystem;
using Verdict = SpecialistResult::Status;

constexpr size_t kMaxReportBytes = size_t{4} << 20;

constexpr std::string_view kImplementFormat =
    "Edit the files in your working directory (the node's worktree, also $ARBOR_WORKTREE) to "
    "achieve the goal; do not commit. When you are done, you may write a JSON report to the "
    "file named by $ARBOR_RESULT, in the shape the protocol describes (summary, confidence, "
    "findings, questions, env, proposals). Exit 0 when you made the change, non-zero when you "
    "could not.";

constexpr std::string_view kProposeFormat =
    "Do not change any file. Write to the file named by $ARBOR_RESULT a JSON object "
    "{\"summary\": \"...\", \"proposals\": [ ... ]} whose proposals are actions in the campaign "
    "file's [[action]] shape (kinds env, append or agent only), then exit 0.";

std::string LastLine(std::string_view text) {
  std::vector<std::string> lines = Split(text, '\n');
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (std::string t = Trim(*it); !t.empty()) return t;
  }
  return "";
}

std::string FirstLine(std::string_view text) {
  for (const std::string& line : Split(text, '\n')) {
    if (std::string t = Trim(line); !t.empty()) return t;
  }
  return "";
}

// What one run of the agent command needs besides the command itself.
struct Invocation {
  fs::path dir;  // task.md, result.json, stdout, stderr: kept, so scrubbed of secrets
  std::string cwd;
  std::string prompt;
  std::map<std::string, std::string> extra_env;
};

// "agent exited with code 3 — <last stderr line>", or "" when it ended well.
struct Ran {
  std::string failure;
};

Result<Ran> RunAgent(const SpecialistSpec& config, const TargetSpec& target,
                     const Invocation& inv) {
  std::error_code ec;
  fs::create_directories(inv.dir, ec);
  if (ec) return MakeError("cannot create " + inv.dir.string() + ": " + ec.message());
  fs::path task_file = inv.dir / "task.md";
  fs::path result_file = inv.dir / "result.json";
  ARBOR_TRY(WriteKeptFile(task_file.string(), inv.prompt));
  fs::remove(result_file, ec);  // a report left by an earlier attempt must not be read

  RunSpec rs;
  rs.command = config.command;
  rs.cwd = inv.cwd;
  rs.env = EngineEnv();
  // The agent's own credential, when configured: the one variable of Arbor's environment it
  // may see besides PATH and HOME (it is a secret: the logs are scrubbed of its value).
  if (!config.api_key_env.empty()) {
    if (const char* key = std::getenv(config.api_key_env.c_str()); key != nullptr) {
      rs.env[config.api_key_env] = key;
    }
  }
  for (const auto& [name, value] : inv.extra_env) rs.env[name] = value;
  rs.env["ARBOR_TASK"] = task_file.string();
  rs.env["ARBOR_RESULT"] = result_file.string();
  rs.timeout_s = config.timeout_s;
  // Only [target]'s output limit: its memory and CPU limits size the user's commands, and an
  // agent CLI (a JavaScript or Python runtime that itself runs builds) needs far more.
  rs.output_limit_bytes = static_cast<long long>(target.output_limit_mb * 1024 * 1024);
  rs.stdout_path = (inv.dir / "stdout").string();
  rs.stderr_path = (inv.dir / "stderr").string();
  rs.stdin_data = inv.prompt;
  // The report and anything else the agent leaves in its folder are scrubbed with its output
  // before Arbor reads them (exec/scrubbing.h).
  rs.kept_paths = {inv.dir.string()};
  Result<RunResult> run = RunCommand(rs);
  if (!run) return MakeError("could not start the agent: " + run.error().message);
  Ran ran;
  if (run->ok()) return ran;
  switch (run->status) {
    case RunResult::Status::kExited:
      ran.failure = "agent exited with code " + std::to_string(run->exit_code);
      break;
    case RunResult::Status::kSignaled:
      ran.failure = "agent was killed by signal " + std::to_string(run->signal);
      break;
    case RunResult::Status::kTimedOut:
      ran.failure = "agent timed out after " + FormatDuration(config.timeout_s);
      break;
  }
  if (std::string last = LastLine(ReadTail(rs.stderr_path)); !last.empty()) {
    ran.failure += " — " + last;
  }
  return ran;
}

// The report the agent wrote, or nullopt when it wrote none.
Result<std::optional<std::string>> ReadReport(const fs::path& dir) {
  fs::path path = dir / "result.json";
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::optional<std::string>();
  ARBOR_TRY_ASSIGN(std::string text, ReadFileBounded(path.string(), kMaxReportBytes));
  return std::optional<std::string>(std::move(text));
}

// Whether the worktree differs from `base` (tracked changes or untracked files), and whether
// the agent moved HEAD, which the contract forbids (Arbor makes every commit).
struct Changed {
  bool files = false;
  std::string head;
};

Result<Changed> WorktreeChanged(const std::string& worktree, const std::string& base) {
  Changed c;
  ARBOR_TRY_ASSIGN(CapturedRun status,
                   RunGitCli("status --porcelain -z --untracked-files=all", worktree));
  if (!status.result.ok()) return MakeError("git status failed in " + worktree);
  c.files = !status.out.empty();
  ARBOR_TRY_ASSIGN(CapturedRun head, RunGitCli("rev-parse HEAD", worktree));
  c.head = Trim(head.out);
  if (!base.empty() && c.head != base) {
    ARBOR_TRY_ASSIGN(
        CapturedRun diff,
        RunGitCli("diff --quiet --end-of-options " + ShellQuote(base) + " --", worktree));
    c.files = c.files || !diff.result.ok();
  }
  return c;
}

}  // namespace

CommandSpecialist::CommandSpecialist(const CampaignSpec* spec, const SpecialistSpec* config,
                                     std::string log_root)
    : spec_(spec), config_(config), log_root_(std::move(log_root)) {
  ARBOR_CHECK(spec_ != nullptr && config_ != nullptr, "CommandSpecialist needs its specs");
}

SpecialistResult CommandSpecialist::Implement(const Task& task, std::string_view protocol,
                                              std::string_view skill) const {
  ARBOR_CHECK(task.action != nullptr, "Task without an action");
  auto start = std::chrono::steady_clock::now();
  const std::string& domain = config_->domain.empty() ? task.context.domain : config_->domain;
  ComposedPrompt prompt = ComposeImplement(task, protocol, skill, kImplementFormat);
  SpecialistResult result;
  result.backend = SpecialistBackend::kCommand;
  result.prompt = prompt.Text();
  result.overlay = task.parent_overlay;
  result.summary =
      "agent " + domain + ": " +
      FirstLine(task.context.goal.empty() ? task.action->apply.goal : task.context.goal);
  auto finish = [&](Verdict status, std::string diagnosis) {
    result.status = status;
    result.diagnosis = std::move(diagnosis);
    result.duration_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  };

  Invocation inv;
  inv.dir = fs::path(log_root_) / ("n" + std::to_string(task.node)) / "agent";
  inv.cwd = task.worktree;
  inv.prompt = result.prompt;
  inv.extra_env = {{"ARBOR_WORKTREE", task.worktree},
                   {"ARBOR_NODE", std::to_string(task.node)},
                   {"ARBOR_MODE", "implement"}};
  Result<Ran> ran = RunAgent(*config_, spec_->target, inv);
  if (!ran) return finish(Verdict::kFailed, ran.error().message);
  if (!ran->failure.empty()) return finish(Verdict::kFailed, ran->failure);

  if (Status policy =
          CheckWorktreeChanges(task.worktree, task.base_commit, PatchPolicy{config_->allow});
      !policy) {
    return finish(Verdict::kFailed, policy.error().message);
  }
  Result<Changed> changed = WorktreeChanged(task.worktree, task.base_commit);
  if (!changed) return finish(Verdict::kFailed, changed.error().message);
  if (!task.base_commit.empty() && changed->head != task.base_commit) {
    return finish(Verdict::kFailed,
                  "the agent committed (HEAD moved from " + task.base_commit.substr(0, 12) +
                      " to " + changed->head.substr(0, 12) +
                      "); agents must leave commits to Arbor (turn off auto-commits)");
  }

  Result<std::optional<std::string>> text = ReadReport(inv.dir);
  if (!text) return finish(Verdict::kFailed, "agent report: " + text.error().message);
  AgentReport report;
  if (*text) {
    std::set<std::string> known(task.known_actions.begin(), task.known_actions.end());
    std::string by = domain + " specialist at node " + std::to_string(task.node);
    Result<AgentReport> parsed = ParseAgentReport(**text, *spec_, known, by);
    if (!parsed) return finish(Verdict::kFailed, "agent report: " + parsed.error().message);
    report = std::move(*parsed);
  }
  if (!changed->files && report.env.empty()) {
    return finish(Verdict::kFailed, "the agent changed nothing");
  }
  for (const auto& [name, value] : report.env) result.overlay[name] = value;
  if (!report.summary.empty())
    result.summary = "agent " + domain + ": " + FirstLine(report.summary);
  size_t dropped = report.rejected.size();
  if (config_->max_proposals >= 0 &&
      report.proposals.size() > static_cast<size_t>(config_->max_proposals)) {
    dropped += report.proposals.size() - config_->max_proposals;
    report.proposals.resize(config_->max_proposals);
  }
  if (dropped > 0) {
    result.summary +=
        " (" + std::to_string(dropped) + " proposal" + (dropped == 1 ? "" : "s") + " dropped)";
  }
  result.confidence = report.confidence;
  result.findings = std::move(report.findings);
  result.questions = std::move(report.questions);
  result.proposals = std::move(report.proposals);
  return finish(Verdict::kApplied, "");
}

Proposal CommandSpecialist::Propose(const ProposeRequest& request, std::string_view protocol,
                                    std::string_view skill, const std::string& scratch_dir) const {
  int max = std::min(request.max_actions, config_->max_proposals);
  ProposeRequest bounded = request;
  bounded.max_actions = max;
  ComposedPrompt prompt = ComposePropose(bounded, protocol, skill, kProposeFormat);
  Proposal proposal;
  proposal.prompt = prompt.Text();

  Invocation inv;
  inv.dir = scratch_dir;
  inv.cwd = scratch_dir;
  inv.prompt = proposal.prompt;
  inv.extra_env = {{"ARBOR_MODE", "propose"}, {"ARBOR_DOMAIN", request.domain}};
  Result<Ran> ran = RunAgent(*config_, spec_->target, inv);
  if (!ran) {
    proposal.diagnosis = ran.error().message;
    return proposal;
  }
  if (!ran->failure.empty()) {
    proposal.diagnosis = ran->failure;
    return proposal;
  }
  Result<std::optional<std::string>> text = ReadReport(inv.dir);
  if (!text || !*text) {
    proposal.diagnosis = text ? "the agent wrote no report to $ARBOR_RESULT"
                              : "agent report: " + text.error().message;
    return proposal;
  }
  std::set<std::string> known(request.known.begin(), request.known.end());
  std::string by = request.domain + " specialist (proposal round)";
  // A bare array of actions is accepted as well as a report object with "proposals".
  if (StartsWith(Trim(**text), "[")) {
    Status s =
        ParseProposals(**text, *spec_, known, by, max, &proposal.actions, &proposal.rejected);
    if (!s) proposal.diagnosis = "agent report: " + s.error().message;
    return proposal;
  }
  Result<AgentReport> report = ParseAgentReport(**text, *spec_, known, by);
  if (!report) {
    proposal.diagnosis = "agent report: " + report.error().message;
    return proposal;
  }
  proposal.rejected = std::move(report->rejected);
  for (ActionSpec& a : report->proposals) {
    if (static_cast<int>(proposal.actions.size()) < max) {
      proposal.actions.push_back(std::move(a));
    } else {
      proposal.rejected.push_back("'" + a.id + "': over the limit of " + std::to_string(max) +
                                  " proposals");
    }
  }
  return proposal;
}

}  // namespace arbor
