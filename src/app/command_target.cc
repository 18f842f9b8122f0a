#include "app/command_target.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "app/run_logs.h"
#include "app/slurm.h"
#include "app/slurm_jobs.h"
#include "formats/importers.h"
#include "formats/metrics.h"
#include "util/cpu_list.h"
#include "util/name_table.h"
#include "util/strings.h"

namespace arbor {
namespace fs = std::filesystem;

namespace {

// Arbor's own secrets (API keys, tokens) must never reach a target command: only these pass.
constexpr const char* kInherited[] = {"PATH",   "HOME", "USER",   "LOGNAME", "LANG",
                                      "LC_ALL", "TZ",   "TMPDIR", "SHELL",   "TERM"};

std::string ReadIfExists(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return "";
  auto r = ReadFileBounded(path);
  return r.ok() ? *r : "";
}

// What the profile step produced: [profile] profile_file when set ("$ARBOR_OUT/x" in the
// run's out folder, a relative path in the worktree), else $ARBOR_OUT/profile.json when the
// command wrote one, else its stdout.
Result<std::string> ProfileText(const ProfileSpec& spec, const std::string& worktree,
                                const std::string& out_dir, const std::string& stdout_path) {
  if (spec.profile_file.empty()) {
    std::string text = ReadIfExists(out_dir + "/profile.json");
    return text.empty() ? ReadIfExists(stdout_path) : text;
  }
  std::string path = spec.profile_file;
  for (const char* var : {"$ARBOR_OUT/", "${ARBOR_OUT}/"}) {
    if (StartsWith(path, var)) path = out_dir + "/" + path.substr(std::string_view(var).size());
  }
  if (path.front() != '/') path = worktree + "/" + path;
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return MakeError("profile: profile_file '" + spec.profile_file + "' was not written (" + path +
                     ")");
  }
  auto text = ReadFileBounded(path);
  if (!text.ok()) return MakeError("profile: profile_file: " + text.error().message);
  return text;
}

}  // namespace

CommandTarget::CommandTarget(const CampaignSpec* spec, std::string runs_dir, std::string job_name)
    : spec_(spec), runs_dir_(std::move(runs_dir)), job_name_(std::move(job_name)) {
  if (spec_->target.serve.enabled()) servers_ = std::make_unique<TargetServers>(spec_, runs_dir_);
}

bool CommandTarget::LooksLikeSecret(std::string_view name) {
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (std::string_view word : {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE",
                                "CREDENTIAL", "AUTH", "COOKIE", "SESSION"}) {
    if (upper.find(word) != std::string::npos) return true;
  }
  return false;
}

std::map<std::string, std::string> CommandTarget::InheritedEnv(const CampaignSpec& spec) {
  std::map<std::string, std::string> env;
  for (const char* name : kInherited) {
    if (const char* v = std::getenv(name)) env[name] = v;
  }
  const std::vector<std::string>& patterns = spec.target.pass_env;
  if (!patterns.empty()) {
    auto passes = [&](std::string_view name) {
      for (const std::string& p : patterns) {
        if (p == name) return true;  // named: passed even if it is a secret
      }
      if (LooksLikeSecret(name) ||
          std::find(spec.secrets.begin(), spec.secrets.end(), name) != spec.secrets.end()) {
        return false;
      }
      for (const std::string& p : patterns) {
        if (p.find_first_of("*?") != std::string::npos && GlobMatch(p, name)) return true;
      }
      return false;
    };
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string_view entry(*e);
      const size_t eq = entry.find('=');
      if (eq == std::string_view::npos || eq == 0) continue;
      if (passes(entry.substr(0, eq))) env[std::string(entry.substr(0, eq))] = entry.substr(eq + 1);
    }
  }
  if (!env.count("PATH")) env["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  return env;
}

void CommandTarget::SetExitCode(int code, StepResult* step) {
  step->exit_code = code;
  step->kind = code == 0 ? ExitKind::kOk : ExitKind::kFailed;
  // `sh -c` reports a child killed by signal N as exit code 128+N: that is a crash of the
  // command, not a verdict it gave (a check exiting 1 is a verdict).
  if (code > 128 && code < 128 + 32) {
    step->kind = ExitKind::kSignaled;
    step->signal = code - 128;
    step->detail = "exit code " + std::to_string(code) + " from the shell";
  }
}

std::vector<int> LaneCpus(const SearchSpec& search, int lane) {
  if (lane < static_cast<int>(search.lane_cpus.size())) {
    Result<std::vector<int>> cpus = ParseCpuList(search.lane_cpus[lane]);
    if (cpus.ok()) return *cpus;  // validated when the campaign file was read
  }
  return {lane};
}

std::string CommandTarget::RoleName(Role role) {
  static constexpr NameTable<Role, 4> kRoleNames = {{
      {Role::kBuild, "build"},
      {Role::kCheck, "check"},
      {Role::kBench, "bench"},
      {Role::kProfile, "profile"},
  }};
  return std::string(NameIn(kRoleNames, role));
}

CommandTarget::Run CommandTarget::Execute(const RunContext& ctx, Role role,
                                          const std::string& command, double timeout_s) {
  Run run;
  const bool bench = role == Role::kBench;
  const std::string role_name = RoleName(role);
  run.out_dir = runs_dir_ + "/n" + std::to_string(ctx.node) + "/" + ctx.label;
  std::error_code ec;
  const bool slurm = spec_->executor.kind == ExecutorSpec::Kind::kSlurm;
  // With Slurm, a build, check or profile is a batch job whose folder jobs/<key>/ outlives this
  // run; a job a killed run left under this step's key is this step's (app/slurm_jobs.h). A
  // benchmark is never adopted: its measurement is redone.
  const bool batch = slurm && !bench && !jobs_dir_.empty();
  const std::string key =
      batch ? SlurmStepKey(ctx.node, ctx.label, command, ctx.worktree, ctx.env) : std::string();
  std::optional<LeftJob> left = batch ? ClaimLeftJob(key) : std::nullopt;
  std::string reconciled = "requeued";
  if (left && left->finished) {
    // A build's files live in its worktree: a worktree recreated since then lost them.
    if (left->request.worktree_id == WorktreeIdentity(ctx.worktree)) return ReadBack(ctx, *left);
    reconciled = "rerun";
  }
  if (left) fs::remove_all(left->dir, ec);
  fs::remove_all(run.out_dir, ec);  // a replayed step starts from an empty folder
  fs::create_directories(run.out_dir + "/out", ec);
  run.step.log_dir = run.out_dir;
  if (ec) {
    run.step.kind = ExitKind::kSpawnError;
    run.step.detail = "cannot create " + run.out_dir + ": " + ec.message();
    return run;
  }
  RunSpec rs;
  rs.command = command;
  rs.cwd = ctx.worktree;
  rs.env = InheritedEnv(*spec_);
  for (const auto& [k, v] : ctx.env) rs.env[k] = v;
  rs.env["ARBOR_NODE"] = std::to_string(ctx.node);
  rs.env["ARBOR_WORKTREE"] = ctx.worktree;
  rs.env["ARBOR_OUT"] = run.out_dir + "/out";
  rs.env["ARBOR_REPETITION"] = std::to_string(ctx.repetition);
  if (ctx.lane >= 0) {
    // A measurement lane (docs/lanes.md#measurement-lanes): pinned here; a Slurm job gets its
    // own allocation instead, so only the variables go with it.
    const std::vector<int> cpus = LaneCpus(spec_->search, ctx.lane);
    rs.env["ARBOR_LANE"] = std::to_string(ctx.lane);
    rs.env["ARBOR_LANE_CPUS"] = FormatCpuList(cpus);
    if (!slurm) rs.cpus = cpus;
  }
  rs.timeout_s = timeout_s;
  rs.memory_limit_mb = spec_->target.memory_limit_mb;
  rs.cpu_limit_s = spec_->target.cpu_limit_s;
  rs.max_processes = spec_->target.max_processes;
  rs.output_limit_bytes = static_cast<long long>(spec_->target.output_limit_mb * 1024 * 1024);
  rs.stdout_path = run.out_dir + "/stdout";
  rs.stderr_path = run.out_dir + "/stderr";
  rs.kept_paths = {run.out_dir};  // $ARBOR_OUT too: scrubbed before metrics are read from it
  run.stdout_path = rs.stdout_path;
  const std::string job_id_file = run.out_dir + "/slurm-job";
  if (batch) {
    run = RunBatch(ctx, role, command, timeout_s, key, std::move(rs), std::move(run));
    if (left) {
      run.step.reconciled = reconciled;
      run.step.previous_job = left->job;
    }
    Finish(&run);
    return run;
  }
  SlurmRequest req;
  if (slurm) {
    // The command becomes an srun job; the limits move into the job (srun itself must not run
    // under them), and srun needs the cluster's client settings.
    const ExecutorSpec executor = spec_->executor.For(role_name);
    req.job_name = job_name_;
    req.comment = "n" + std::to_string(ctx.node) + "/" + ctx.label;
    req.cwd = ctx.worktree;
    req.job_id_file = job_id_file;
    req.command = command;
    req.timeout_s = timeout_s;
    req.exclusive = bench || role == Role::kProfile;
    if (bench && MeasuringHere()) req.allocation = Allocation(timeout_s);
    req.memory_limit_mb = rs.memory_limit_mb;
    req.cpu_limit_s = rs.cpu_limit_s;
    rs.memory_limit_mb.reset();
    rs.cpu_limit_s.reset();
    rs.command = SrunCommand(executor, req);
    for (const auto& [k, v] : SlurmClientEnv()) rs.env.emplace(k, v);
    // A job of its own (no allocation) may first wait in the queue: srun cannot say when it
    // starts, so its run is given the queue limit on top of the step's timeout.
    if (req.allocation.empty()) rs.timeout_s += executor.queue_timeout_s.value_or(0);
  }
  // The node's server (started by the first of its commands) runs while this one does.
  TargetServers::Lease lease;
  if (servers_ && role != Role::kBuild) {
    lease = servers_->Acquire(ctx, rs, role_name);
    if (lease.failure) {
      run.step = *lease.failure;  // detail and tail scrubbed already
      return run;
    }
    rs.env["ARBOR_PORT"] = std::to_string(lease.port);
  }
  auto r = RunCommand(rs);
  if (!r.ok()) {
    if (servers_) servers_->Release(lease, role_name, &run.step);
    run.step.kind = ExitKind::kSpawnError;
    run.step.detail = Scrubbed(r.error().message);
    return run;
  }
  run.step.duration_s = r->duration_s;
  switch (r->status) {
    case RunResult::Status::kExited:
      SetExitCode(r->exit_code, &run.step);
      break;
    case RunResult::Status::kSignaled:
      run.step.kind = ExitKind::kSignaled;
      run.step.signal = r->signal;
      break;
    case RunResult::Status::kTimedOut:
      run.step.kind = ExitKind::kTimedOut;
      run.step.signal = r->signal;
      run.step.detail = "limit " + FormatDouble(timeout_s) + "s";
      break;
  }
  if (slurm) {
    // "<job id> <host> <step id>", written by the wrapper on the compute node. A step of a
    // measurement's allocation is "<allocation>.<step>", as Slurm names steps.
    std::vector<std::string> recorded = Split(Trim(ReadIfExists(job_id_file)), ' ');
    std::string job_id = recorded.empty() ? "" : recorded[0];
    run.step.host = recorded.size() > 1 ? recorded[1] : "";
    if (!req.allocation.empty() && !job_id.empty() && recorded.size() > 2) {
      job_id += "." + recorded[2];
    }
    SlurmVerdict verdict = ReadSlurmVerdict(ReadTail(rs.stderr_path, 8192));
    if (r->status == RunResult::Status::kTimedOut) {
      // The step's own timeout stopped srun (whatever srun then printed about the job being
      // cancelled): a timeout of the command. The job must not run on.
      verdict.kind = SlurmVerdict::Kind::kNone;
      ApplySlurmVerdict(verdict, job_id, &run.step);
      if (!run.step.job.empty() && CancelSlurmJob(run.step.job, SlurmClientEnv())) {
        run.step.detail += " (Slurm job " + run.step.job + " cancelled)";
      }
    } else {
      ApplySlurmVerdict(verdict, job_id, &run.step);
    }
  }
  Finish(&run);
  // A server that died while the command ran: the step is its crash (its tail replaces the
  // command's, and is scrubbed already).
  if (servers_) servers_->Release(lease, role_name, &run.step);
  return run;
}

void CommandTarget::Finish(Run* run) const {
  if (!run->step.ok()) {
    run->step.tail = ReadTail(run->out_dir + "/stderr", 2048);
    if (Trim(run->step.tail).empty()) run->step.tail = ReadTail(run->out_dir + "/stdout", 2048);
  }
  run->step.tail = Scrubbed(std::move(run->step.tail));
  run->step.detail = Scrubbed(std::move(run->step.detail));
}

void CommandTarget::BeginMeasurement(NodeId node) {
  std::lock_guard<std::mutex> lock(measuring_mu_);
  measuring_[std::this_thread::get_id()] = Measuring{node, "", false};
}

void CommandTarget::EndMeasurement(NodeId) {
  std::optional<Measuring> m;
  {
    std::lock_guard<std::mutex> lock(measuring_mu_);
    auto it = measuring_.find(std::this_thread::get_id());
    if (it == measuring_.end()) return;
    m = std::move(it->second);
    measuring_.erase(it);
  }
  if (!m->allocation.empty()) CancelSlurmJob(m->allocation, SlurmClientEnv());
}

std::optional<CommandTarget::Measuring> CommandTarget::MeasuringHere() {
  std::lock_guard<std::mutex> lock(measuring_mu_);
  auto it = measuring_.find(std::this_thread::get_id());
  if (it == measuring_.end()) return std::nullopt;
  return it->second;
}

std::string CommandTarget::Allocation(double timeout_s) {
  // Only the thread that began the measurement reads or writes its entry; the map is shared.
  Measuring m = *MeasuringHere();
  if (!m.allocation.empty() || m.allocation_failed) return m.allocation;
  // The wait for the allocation is bounded by [executor] queue_timeout, else by the first
  // benchmark's timeout.
  const std::string comment = "n" + std::to_string(m.node) + "/measure";
  const ExecutorSpec bench = spec_->executor.For("bench");
  auto r = RunCaptured(SallocCommand(bench, job_name_, comment), "", SlurmClientEnv(),
                       bench.queue_timeout_s.value_or(timeout_s));
  if (r.ok()) m.allocation = GrantedAllocation(r->err);
  if (!m.allocation.empty() && !r->result.ok()) {
    CancelSlurmJob(m.allocation, SlurmClientEnv());  // granted, then salloc failed: not ours
    m.allocation.clear();
  }
  // Without an allocation each run is its own job (and may land on another node).
  m.allocation_failed = m.allocation.empty();
  std::lock_guard<std::mutex> lock(measuring_mu_);
  measuring_[std::this_thread::get_id()] = m;
  return m.allocation;
}

void CommandTarget::RecordExit(const RunContext& ctx, const StepResult& step) const {
  RecordRunExit(runs_dir_ + "/n" + std::to_string(ctx.node) + "/" + ctx.label, step);
}

StepResult CommandTarget::Build(const RunContext& ctx) {
  // A build may replace what the worktree's servers run: they stop first.
  if (servers_) servers_->StopIn(ctx.worktree);
  if (spec_->target.build.empty()) return StepResult{};
  StepResult step =
      Execute(ctx, Role::kBuild, spec_->target.build, spec_->target.build_timeout_s).step;
  RecordExit(ctx, step);
  return step;
}

Measurement CommandTarget::Check(const RunContext& ctx) {
  Measurement m = ReadCheck(ctx);
  if (!spec_->target.check.empty()) RecordExit(ctx, m.step);
  return m;
}

Measurement CommandTarget::Bench(const RunContext& ctx) {
  Measurement m = ReadBench(ctx);
  RecordExit(ctx, m.step);
  return m;
}

ProfileResult CommandTarget::Profile(const RunContext& ctx) {
  ProfileResult r = ReadProfile(ctx);
  if (!spec_->target.profile.empty()) RecordExit(ctx, r.step);
  return r;
}

Measurement CommandTarget::ReadCheck(const RunContext& ctx) {
  Measurement m;
  if (spec_->target.check.empty()) return m;
  Run run = Execute(ctx, Role::kCheck, spec_->target.check, spec_->target.check_timeout_s);
  m.step = run.step;
  if (!m.step.ok() || !spec_->accuracy.source) return m;
  std::string out = ReadIfExists(run.stdout_path);
  auto v =
      ExtractMetric(*spec_->accuracy.source, out, ReadIfExists(run.out_dir + "/out/metrics.json"));
  if (!v.ok()) {
    m.step.kind = ExitKind::kBadOutput;
    m.step.detail = Scrubbed("accuracy " + v.error().message);
    return m;
  }
  m.value = *v;
  return m;
}

Measurement CommandTarget::ReadBench(const RunContext& ctx) {
  Measurement m;
  Run run = Execute(ctx, Role::kBench, spec_->target.bench, spec_->target.bench_timeout_s);
  m.step = run.step;
  if (!m.step.ok()) return m;
  std::string out = ReadIfExists(run.stdout_path);
  std::string metrics_file = ReadIfExists(run.out_dir + "/out/metrics.json");
  auto v = ExtractMetric(spec_->metric.source, out, metrics_file);
  // A value no correct benchmark prints (negative, zero, outside [metric] min/max) is bad
  // output like an unreadable one: it must never become a sample the gate compares.
  Status valid = v.ok() ? CheckMetricValue(spec_->metric, *v) : Status(v.error());
  if (!valid.ok()) {
    m.step.kind = ExitKind::kBadOutput;
    m.step.detail = Scrubbed(valid.error().message);
    return m;
  }
  m.value = *v;
  // Guards and work are optional readings: a missing one is judged by the gate, not here.
  for (const Guard& g : spec_->metric.guards) {
    auto gv = ExtractMetric(g.source, out, metrics_file);
    if (gv.ok()) m.extra[g.name] = *gv;
  }
  if (spec_->metric.work) {
    auto w = ExtractMetric(*spec_->metric.work, out, metrics_file);
    Status work_valid = w.ok() ? CheckWorkValue(*spec_->metric.work, *w) : Status{};
    if (!work_valid.ok()) {
      m.value.reset();
      m.step.kind = ExitKind::kBadOutput;
      m.step.detail = Scrubbed(work_valid.error().message);
      return m;
    }
    if (w.ok()) m.extra["work"] = *w;
  }
  return m;
}

ProfileResult CommandTarget::ReadProfile(const RunContext& ctx) {
  ProfileResult r;
  if (spec_->target.profile.empty()) return r;
  Run run = Execute(ctx, Role::kProfile, spec_->target.profile, spec_->target.profile_timeout_s);
  r.step = run.step;
  if (!r.step.ok()) return r;
  auto text = ProfileText(spec_->profile, ctx.worktree, run.out_dir + "/out", run.stdout_path);
  auto p = text.ok() ? ImportProfile(*text, spec_->profile) : Result<arbor::Profile>(text.error());
  if (!p.ok()) {
    r.step.kind = ExitKind::kBadOutput;
    r.step.detail = Scrubbed(p.error().message);
    return r;
  }
  r.profile = *p;
  return r;
}

}  // namespace arbor
