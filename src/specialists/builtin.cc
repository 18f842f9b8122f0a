#include "specialists/builtin.h"

#include <chrono>
#include <filesystem>
#include <map>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "core/search/candidates.h"
#include "exec/git_cli.h"
#include "exec/patch_policy.h"
#include "exec/runner.h"
#include "util/check.h"
#include "util/duration.h"
#include "util/strings.h"

namespace arbor {
namespace {

namespace fs = std::filesystem;
using Verdict = SpecialistResult::Status;

constexpr size_t kMaxPatchBytes = size_t{64} << 20;

SpecialistResult MakeResult(Verdict status, EnvOverlay overlay, std::string summary,
                            std::string diagnosis = "") {
  SpecialistResult r;
  r.status = status;
  r.overlay = std::move(overlay);
  r.summary = std::move(summary);
  r.diagnosis = std::move(diagnosis);
  return r;
}

std::vector<std::string> NonEmptyLines(std::string_view text) {
  std::vector<std::string> out;
  for (const std::string& line : Split(text, '\n')) {
    std::string t = Trim(line);
    if (!t.empty()) out.push_back(std::move(t));
  }
  return out;
}

// The first line of a (possibly multi-line) command, shortened for summaries.
std::string Abbreviate(std::string_view text, size_t max = 72) {
  std::vector<std::string> lines = NonEmptyLines(text);
  std::string first = lines.empty() ? "" : lines.front();
  bool more = lines.size() > 1;
  if (first.size() > max) {
    first.resize(max);
    more = true;
  }
  return more ? first + " ..." : first;
}

// Files a unified diff touches: its "diff --git" headers, else its "+++ " headers.
int CountPatchFiles(std::string_view patch) {
  int git_headers = 0;
  int plus_headers = 0;
  for (const std::string& line : Split(patch, '\n')) {
    if (StartsWith(line, "diff --git ")) ++git_headers;
    if (StartsWith(line, "+++ ")) ++plus_headers;
  }
  return git_headers > 0 ? git_headers : plus_headers;
}

std::string Plural(int n, std::string_view word) {
  return std::to_string(n) + " " + std::string(word) + (n == 1 ? "" : "s");
}

// "exited with code 3", "was killed by signal 9", "timed out after 10m".
std::string HowItEnded(const RunResult& r, double timeout_s) {
  switch (r.status) {
    case RunResult::Status::kExited:
      return "exited with code " + std::to_string(r.exit_code);
    case RunResult::Status::kSignaled:
      return "was killed by signal " + std::to_string(r.signal);
    case RunResult::Status::kTimedOut:
      return "timed out after " + FormatDuration(timeout_s);
  }
  return "failed";
}

// An LD_PRELOAD entry that names a file which is not there: the dynamic loader prints a
// warning and runs the program without it, so the node would measure nothing and blame the
// idea. Entries are separated by spaces or colons (ld.so(8)); a bare soname is searched by the
// loader and not checked here. "" when every path entry exists.
std::string MissingPreload(const EnvOverlay& overlay) {
  auto it = overlay.find("LD_PRELOAD");
  if (it == overlay.end()) return "";
  std::string entry;
  for (char c : it->second + " ") {
    if (c != ' ' && c != ':') {
      entry += c;
      continue;
    }
    std::error_code ec;
    if (entry.find('/') != std::string::npos && !std::filesystem::exists(entry, ec)) {
      return "LD_PRELOAD: " + entry +
             ": cannot open shared object file: No such file or directory (the dynamic loader "
             "would ignore it and the benchmark would run without it)";
    }
    entry.clear();
  }
  return "";
}

bool SetsPreload(const ApplySpec& apply) {
  return apply.env.count("LD_PRELOAD") != 0 || apply.append.count("LD_PRELOAD") != 0;
}

}  // namespace

BuiltinSpecialist::BuiltinSpecialist(const CampaignSpec* spec, std::string log_root,
                                     PatchPolicy policy)
    : spec_(spec), log_root_(std::move(log_root)), policy_(std::move(policy)) {
  ARBOR_CHECK(spec_ != nullptr, "BuiltinSpecialist needs a campaign spec");
}

SpecialistResult BuiltinSpecialist::Implement(const Task& task) {
  ARBOR_CHECK(task.action != nullptr, "Task without an action");
  auto start = std::chrono::steady_clock::now();
  ApplySpec apply = SubstituteValue(task.action->apply, task.value);
  SpecialistResult result;
  switch (apply.kind) {
    case ApplySpec::Kind::kEnv: {
      EnvOverlay overlay = task.parent_overlay;
      std::vector<std::string> parts;
      for (const auto& [name, value] : apply.env) {
        overlay[name] = value;
        parts.push_back(name + "=" + value);
      }
      result = MakeResult(Verdict::kApplied, std::move(overlay), "set " + Join(parts, ", "));
      break;
    }
    case ApplySpec::Kind::kAppend: {
      EnvOverlay overlay = task.parent_overlay;
      std::vector<std::string> parts;
      for (const auto& [name, suffix] : apply.append) {
        std::string base;
        if (auto it = task.parent_overlay.find(name); it != task.parent_overlay.end()) {
          base = it->second;
        } else if (auto b = task.base_env.find(name); b != task.base_env.end()) {
          base = b->second;
        }
        overlay[name] = base + suffix;
        parts.push_back("'" + suffix + "' to " + name);
      }
      result = MakeResult(Verdict::kApplied, std::move(overlay), "appended " + Join(parts, ", "));
      break;
    }
    case ApplySpec::Kind::kPatch:
      result = ApplyPatch(task, apply);
      break;
    case ApplySpec::Kind::kRun:
      result = RunCommandIn(task, apply);
      break;
    case ApplySpec::Kind::kAgent:
      result = Agent(task, apply);
      break;
  }
  // A library preloaded on a Slurm node need not exist here; locally it must.
  if (result.status == Verdict::kApplied && SetsPreload(apply) &&
      spec_->executor.kind == ExecutorSpec::Kind::kLocal) {
    if (std::string missing = MissingPreload(result.overlay); !missing.empty()) {
      result = MakeResult(Verdict::kFailed, task.parent_overlay, result.summary, missing);
    }
  }
  result.duration_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string BuiltinSpecialist::ShownPath(const std::string& path) const {
  if (spec_->file.empty()) return path;
  fs::path rel = fs::path(path).lexically_relative(fs::path(spec_->file).parent_path());
  if (rel.empty() || StartsWith(rel.string(), "..")) return path;
  return rel.string();
}

SpecialistResult BuiltinSpecialist::ApplyPatch(const Task& task, const ApplySpec& apply) const {
  std::string path = apply.patch;
  if (!fs::path(path).is_absolute() && !spec_->file.empty()) {
    path = (fs::path(spec_->file).parent_path() / path).lexically_normal().string();
  }
  std::string shown = ShownPath(path);
  auto fail = [&](const std::string& why) {
    return MakeResult(Verdict::kFailed, task.parent_overlay, "did not apply " + shown,
                      "patch did not apply: " + why);
  };
  Result<std::string> text = ReadFileBounded(path, kMaxPatchBytes);
  if (!text) return fail(text.error().message);
  if (Status allowed = CheckPatch(*text, task.worktree, policy_); !allowed) {
    return MakeResult(Verdict::kFailed, task.parent_overlay, "refused " + shown,
                      allowed.error().message);
  }

  // git reads the very text the policy checked, from stdin: the file cannot change between
  // the check and the apply. -p1 is the prefix the policy strips; --unsafe-paths is never
  // passed, so git itself also refuses paths outside the worktree.
  std::string command = "git -c core.hooksPath=/dev/null apply -p1 --whitespace=nowarn -";
  Result<CapturedRun> run =
      RunCaptured(command, task.worktree, EngineEnv(), spec_->target.build_timeout_s, *text);
  if (!run) return fail("could not run git: " + run.error().message);
  if (!run->result.ok()) {
    std::vector<std::string> lines = NonEmptyLines(run->err);
    return fail(lines.empty()
                    ? "git apply " + HowItEnded(run->result, spec_->target.build_timeout_s)
                    : lines.front());
  }
  std::string summary = "applied " + shown + " (" + Plural(CountPatchFiles(*text), "file") + ")";
  Result<std::vector<std::string>> ignored = StageIgnoredPaths(task.worktree, PatchTargets(*text));
  if (!ignored) return fail(ignored.error().message);
  if (!ignored->empty()) summary += "; " + IgnoredPathsWarning(*ignored);
  return MakeResult(Verdict::kApplied, task.parent_overlay, summary);
}

SpecialistResult BuiltinSpecialist::RunCommandIn(const Task& task, const ApplySpec& apply) const {
  std::string summary = "ran: " + Abbreviate(apply.run);
  auto fail = [&](const std::string& why) {
    return MakeResult(Verdict::kFailed, task.parent_overlay, summary, why);
  };
  fs::path dir = fs::path(log_root_) / ("n" + std::to_string(task.node)) / "apply";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fail("cannot create the log folder " + dir.string() + ": " + ec.message());

  const TargetSpec& target = spec_->target;
  RunSpec rs;
  rs.command = apply.run;
  rs.cwd = task.worktree;
  rs.env = task.base_env;
  for (const auto& [name, value] : task.parent_overlay) rs.env[name] = value;
  for (const auto& [name, value] : EngineEnv()) rs.env.emplace(name, value);  // if missing
  rs.env["ARBOR_WORKTREE"] = task.worktree;
  rs.env["ARBOR_NODE"] = std::to_string(task.node);
  rs.timeout_s = target.build_timeout_s;
  rs.memory_limit_mb = target.memory_limit_mb;
  rs.cpu_limit_s = target.cpu_limit_s;
  rs.max_processes = target.max_processes;
  rs.output_limit_bytes = static_cast<long long>(target.output_limit_mb * 1024 * 1024);
  rs.stdout_path = (dir / "stdout").string();
  rs.stderr_path = (dir / "stderr").string();

  Result<RunResult> run = RunCommand(rs);
  if (!run) return fail("could not start the apply command: " + run.error().message);
  if (!run->ok()) {
    std::vector<std::string> lines = NonEmptyLines(ReadTail(rs.stderr_path));
    std::string why = "apply command " + HowItEnded(*run, rs.timeout_s);
    return fail(lines.empty() ? why : why + ": " + lines.back());
  }
  return MakeResult(Verdict::kApplied, task.parent_overlay, summary);
}

SpecialistResult BuiltinSpecialist::Agent(const Task& task, const ApplySpec& apply) const {
  std::string summary = "skipped agent action for domain '" + apply.agent + "'";
  auto it = spec_->specialists.find(apply.agent);
  if (it == spec_->specialists.end() || it->second.backend == SpecialistBackend::kBuiltin) {
    return MakeResult(Verdict::kSkipped, task.parent_overlay, summary,
                      "no specialist backend configured for domain '" + apply.agent +
                          "': add [specialists." + apply.agent +
                          R"(] with backend = "command" or "llm")");
  }
  return MakeResult(Verdict::kSkipped, task.parent_overlay, summary,
                    "the builtin specialist does not run backend '" +
                        std::string(SpecialistBackendName(it->second.backend)) +
                        "': agent actions go through the SpecialistRouter (specialists/router.h)");
}

}  // namespace arbor
