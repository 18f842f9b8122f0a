// CommandTarget's Slurm batch jobs (docs/slurm.md, "Jobs a killed run left"): a build, check or
// profile runs as an `sbatch` job of a script that keeps the job's record, logs and status in
// its folder jobs/<key>/, so the job outlives a killed Arbor; the next run adopts it (waits for
// it), reads its result, or runs the step again when it was lost (app/slurm_jobs.h).
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "app/command_target.h"
#include "app/slurm.h"
#include "app/slurm_jobs.h"
#include "util/strings.h"

namespace arbor {
namespace fs = std::filesystem;

namespace {

bool WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc | std::ios::binary);
  out << text;
  return static_cast<bool>(out.flush());
}

std::string ReadOrEmpty(const std::string& path, size_t max_bytes) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return "";
  auto text = ReadFileBounded(path, max_bytes);
  return text.ok() ? *text : "";
}

// The job folder's logs as the run's: stdout as the script capped it, stderr followed by what
// Slurm itself said (slurmstepd's lines in slurm.err, sbatch's own messages).
void CopyLogs(const std::string& dir, const std::string& out_dir, long long cap) {
  const size_t max = static_cast<size_t>(cap) + 1;
  for (const char* name : {"stdout", "stderr"}) {
    std::string text = ReadOrEmpty(dir + "/" + name, max);
    if (static_cast<long long>(text.size()) >= cap) {
      text += "\n[arbor: the output reached the cap of " + std::to_string(cap) +
              " bytes; anything after it was dropped]\n";
    }
    if (std::string_view(name) == "stderr") {
      text += ReadOrEmpty(dir + "/slurm.err", 1 << 16) + ReadOrEmpty(dir + "/sbatch.err", 1 << 16);
    }
    (void)WriteText(out_dir + "/" + name, text);
  }
}

std::string FirstLineOf(const std::string& text) {
  std::string line(Trim(text));
  return line.substr(0, line.find('\n'));
}

// How long sbatch may take to submit (a busy slurmctld answers within seconds; sbatch retries
// on its own while it is unreachable).
constexpr double kSubmitTimeoutS = 120;

double Now() { return static_cast<double>(std::time(nullptr)); }

}  // namespace

std::optional<LeftJob> CommandTarget::ClaimLeftJob(const std::string& key) {
  std::lock_guard<std::mutex> lock(left_mu_);
  if (left_ == nullptr) return std::nullopt;
  auto it = left_->left.find(key);
  if (it == left_->left.end()) return std::nullopt;
  LeftJob job = std::move(it->second);
  left_->left.erase(it);
  return job;
}

CommandTarget::Run CommandTarget::RunBatch(const RunContext& ctx, Role role,
                                           const std::string& command, double timeout_s,
                                           const std::string& key, RunSpec rs, Run run) {
  const std::string dir = jobs_dir_ + "/" + key;
  const ExecutorSpec executor = spec_->executor.For(RoleName(role));
  SlurmRequest req;
  req.exclusive = role == Role::kProfile;
  req.job_name = job_name_;
  req.comment = "n" + std::to_string(ctx.node) + "/" + ctx.label;
  req.cwd = ctx.worktree;
  req.job_id_file = run.out_dir + "/slurm-job";
  req.command = command;
  req.timeout_s = timeout_s;
  req.job_dir = dir;
  req.output_limit_bytes = rs.output_limit_bytes;
  req.memory_limit_mb = rs.memory_limit_mb;
  req.cpu_limit_s = rs.cpu_limit_s;
  JobRequest request{key,       req.comment, ctx.worktree, WorktreeIdentity(ctx.worktree),
                     timeout_s, Now(),       false,        executor.queue_timeout_s};
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (ec || !WriteText(dir + "/request", FormatJobRequest(request)) ||
      !WriteText(dir + "/script", SlurmBatchScript(req))) {
    fs::remove_all(dir, ec);
    run.step.kind = ExitKind::kSpawnError;
    run.step.detail = "cannot write the Slurm job folder " + dir;
    return run;
  }
  // sbatch submits under the runner (bounded: it only talks to slurmctld); the limits apply to
  // the command, in the job. Its own output (the job id, its errors) stays in the job folder.
  const double start = SteadyNow();
  rs.memory_limit_mb.reset();
  rs.cpu_limit_s.reset();
  rs.command = SbatchCommand(executor, req);
  rs.stdout_path = dir + "/sbatch.out";
  rs.stderr_path = dir + "/sbatch.err";
  rs.timeout_s = std::min(timeout_s, kSubmitTimeoutS);
  for (const auto& [k, v] : SlurmClientEnv()) rs.env.emplace(k, v);
  auto submitted = RunCommand(rs);
  if (!submitted.ok()) {
    fs::remove_all(dir, ec);
    run.step.kind = ExitKind::kSpawnError;
    run.step.detail = Scrubbed(submitted.error().message);
    return run;
  }
  // --parsable: "<id>" or "<id>;<cluster>".
  std::string id(Trim(ReadOrEmpty(dir + "/sbatch.out", 4096)));
  id = id.substr(0, id.find_first_of(";\n"));
  JobEnd end = JobEnd::kGone;
  if (!submitted->ok()) {
    // sbatch failed or hung: a job it may still have queued must not run on unseen.
    if (!id.empty()) {
      CancelSlurmJob(id, SlurmClientEnv());
    } else if (auto listed = ListSlurmJobs(job_name_, SlurmClientEnv()); listed.ok()) {
      for (const ExecutorJob& j : *listed) {
        if (j.comment == req.comment) CancelSlurmJob(j.id, SlurmClientEnv());
      }
    }
  } else if (!id.empty()) {
    // The queue wait counts against the step's timeout unless [executor] queue_timeout bounds
    // it apart.
    end = AwaitSlurmJob(dir, id, job_name_, {start, timeout_s, executor.queue_timeout_s},
                        SlurmClientEnv());
  }
  LeftJob job = ReadJobFolder(dir);
  job.request = request;
  if (job.job.empty()) job.job = id;
  if (end == JobEnd::kQueueTimedOut) {
    // Not the command's fault: the cluster had no room. Retried once like any loss of the
    // infrastructure (docs/critic.md).
    CancelSlurmJob(job.job, SlurmClientEnv());
    Run out = FromJobFolder(ctx, job);
    out.step.duration_s = SteadyNow() - start;
    out.step.step_key = key;
    out.step.infrastructure = true;
    out.step.kind = ExitKind::kTimedOut;
    out.step.detail = "Slurm job " + job.job + " waited in the queue longer than queue_timeout " +
                      FormatDouble(*executor.queue_timeout_s) + "s; cancelled";
    fs::remove_all(dir, ec);
    return out;
  }
  if (end == JobEnd::kTimedOut) {
    // The step's own timeout: a timeout of the command. The job must not run on.
    job.finished = true;
    job.timed_out = true;
    CancelSlurmJob(job.job, SlurmClientEnv());
  }
  Run out = FromJobFolder(ctx, job);
  out.step.duration_s = SteadyNow() - start;
  out.step.step_key = key;
  if (!job.finished) {
    // No status: Slurm ended the job (scancel, time limit, preemption, node failure), refused
    // it (sbatch failed), or it was lost. Slurm's own lines say which; otherwise it is still the
    // infrastructure's loss, not the command's.
    SlurmVerdict verdict = ReadSlurmVerdict(ReadTail(dir + "/slurm.err", 8192) + "\n" +
                                            ReadTail(dir + "/sbatch.err", 8192));
    ApplySlurmVerdict(verdict, job.job, &out.step);
    if (verdict.kind == SlurmVerdict::Kind::kNone) {
      out.step.infrastructure = true;
      out.step.kind = ExitKind::kSignaled;
      out.step.signal = 9;
      out.step.detail =
          Scrubbed(submitted->ok() ? job.why
                                   : "sbatch failed (exit " + std::to_string(submitted->exit_code) +
                                         "): " + FirstLineOf(ReadTail(dir + "/sbatch.err", 512)));
    }
  }
  fs::remove_all(dir, ec);  // this run has the result
  return out;
}

CommandTarget::Run CommandTarget::FromJobFolder(const RunContext& ctx, const LeftJob& job) const {
  Run run;
  // The run's folder is the one the job wrote ($ARBOR_OUT): kept.
  run.out_dir = runs_dir_ + "/n" + std::to_string(ctx.node) + "/" + ctx.label;
  run.stdout_path = run.out_dir + "/stdout";
  run.step.log_dir = run.out_dir;
  std::error_code ec;
  fs::create_directories(run.out_dir + "/out", ec);
  CopyLogs(job.dir, run.out_dir,
           static_cast<long long>(spec_->target.output_limit_mb * 1024 * 1024));
  ScrubKept(run.out_dir);  // written here, not by a command the runner scrubbed
  run.step.executor = "slurm";
  run.step.job = job.job;
  run.step.host = job.host;
  run.step.step_key = job.request.key;
  if (job.timed_out) {
    run.step.kind = ExitKind::kTimedOut;
    run.step.detail = "limit " + FormatDouble(job.request.timeout_s) + "s" +
                      (job.job.empty() ? "" : " (Slurm job " + job.job + " cancelled)");
  } else if (job.finished) {
    SetExitCode(job.exit_code, &run.step);
  }
  return run;
}

CommandTarget::Run CommandTarget::ReadBack(const RunContext& ctx, const LeftJob& left) {
  Run run = FromJobFolder(ctx, left);
  run.step.reconciled = left.adopted ? "adopted" : "read";
  std::error_code ec;
  auto ended = fs::last_write_time(left.dir + "/status", ec);
  if (left.timed_out) {
    run.step.duration_s = left.request.timeout_s;
  } else if (!ec) {
    double end =
        std::chrono::duration<double>(std::chrono::file_clock::to_sys(ended).time_since_epoch())
            .count();
    run.step.duration_s = std::max(0.0, end - left.request.submitted);
  }
  fs::remove_all(left.dir, ec);
  Finish(&run);
  return run;
}

}  // namespace arbor
