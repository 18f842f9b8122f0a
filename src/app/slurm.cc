#include "app/slurm.h"

#include <pwd.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "exec/runner.h"
#include "util/hash.h"
#include "util/strings.h"

namespace arbor {
namespace {

bool Has(const std::string& s, std::string_view needle) {
  return s.find(needle) != std::string::npos;
}

// The id after `word` in `line` ("JOB 41 ON", "STEP 41.0 ON", "job 41 queued"), without a
// step suffix; "" when there is none.
std::string IdAfter(const std::string& line, std::string_view word) {
  size_t at = line.find(word);
  if (at == std::string::npos) return "";
  size_t i = at + word.size();
  while (i < line.size() && line[i] == ' ') ++i;
  size_t start = i;
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
  return line.substr(start, i - start);
}

int Rank(SlurmVerdict::Kind k) {
  switch (k) {
    case SlurmVerdict::Kind::kNone:
      return 0;
    case SlurmVerdict::Kind::kCancelled:
      return 1;
    case SlurmVerdict::Kind::kRefused:
      return 2;
    default:
      return 3;  // a reason Slurm named: time limit, preemption, node failure
  }
}

std::string UserName() {
  if (const passwd* pw = getpwuid(getuid())) return pw->pw_name;
  return std::to_string(getuid());
}

}  // namespace

std::string SlurmJobName(const std::string& campaign, const std::string& state_dir) {
  return "arbor-" + campaign + "-" + HashHex(state_dir).substr(0, 8);
}

std::string SlurmTime(double seconds) {
  long minutes = std::max(1L, static_cast<long>(std::ceil(seconds / 60.0)));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld:%02ld:00", minutes / 60, minutes % 60);
  return buf;
}

std::string SrunCommand(const ExecutorSpec& e, const SlurmRequest& r) {
  std::vector<std::string> args = {"exec", "srun"};
  auto opt = [&](const std::string& name, const std::string& value) {
    if (!value.empty()) args.push_back(ShellQuote("--" + name + "=" + value));
  };
  opt("job-name", r.job_name);
  opt("comment", r.comment);
  opt("chdir", r.cwd);
  args.push_back("--export=ALL");
  args.push_back("--nodes=1");
  args.push_back("--ntasks=1");
  opt("partition", e.partition);
  opt("account", e.account);
  opt("time", SlurmTime(e.time_limit_s ? *e.time_limit_s : r.timeout_s + 60));
  opt("gres", e.gres);
  opt("constraint", e.constraint);
  if (r.bench && e.exclusive_bench) args.push_back("--exclusive");
  for (const std::string& x : e.extra) args.push_back(ShellQuote(x));
  // On the compute node: record the job id, apply the limits there (srun itself must not run
  // under them), then become the command.
  std::string inner =
      "printf '%s\\n' \"$SLURM_JOB_ID\" > " + ShellQuote(r.job_id_file) + " 2>/dev/null; ";
  if (r.memory_limit_mb) {
    inner += "ulimit -v " + std::to_string(static_cast<long long>(*r.memory_limit_mb * 1024)) +
             " || exit 126; ";
  }
  if (r.cpu_limit_s) {
    inner += "ulimit -t " + std::to_string(static_cast<long long>(std::ceil(*r.cpu_limit_s))) +
             " || exit 126; ";
  }
  inner += "exec /bin/sh -c " + ShellQuote(r.command);
  args.push_back("/bin/sh");
  args.push_back("-c");
  args.push_back(ShellQuote(inner));
  return Join(args, " ");
}

SlurmVerdict ReadSlurmVerdict(const std::string& stderr_text) {
  SlurmVerdict best;
  std::string any_job;
  for (const std::string& raw : Split(stderr_text, '\n')) {
    std::string line(Trim(raw));
    SlurmVerdict v;
    if (StartsWith(line, "slurmstepd") && (Has(line, "*** JOB ") || Has(line, "*** STEP ")) &&
        Has(line, " CANCELLED AT ")) {
      v.job = Has(line, "*** JOB ") ? IdAfter(line, "*** JOB") : IdAfter(line, "*** STEP");
      if (Has(line, "DUE TO TIME LIMIT")) {
        v.kind = SlurmVerdict::Kind::kTimeLimit;
      } else if (Has(line, "DUE TO PREEMPTION")) {
        v.kind = SlurmVerdict::Kind::kPreempted;
      } else if (Has(line, "DUE TO NODE FAILURE")) {
        v.kind = SlurmVerdict::Kind::kNodeFailure;
      } else {
        v.kind = SlurmVerdict::Kind::kCancelled;
      }
    } else if (StartsWith(line, "srun: error: Node failure") ||
               (StartsWith(line, "srun:") && Has(line, "Lost contact with"))) {
      v.kind = SlurmVerdict::Kind::kNodeFailure;
    } else if (StartsWith(line, "srun: error: Unable to allocate resources") ||
               StartsWith(line, "srun: error: Unable to create step")) {
      v.kind = SlurmVerdict::Kind::kRefused;
    } else if (StartsWith(line, "srun:") &&
               (Has(line, "Force Terminated job") || Has(line, "has been revoked"))) {
      v.kind = SlurmVerdict::Kind::kCancelled;
      v.job = IdAfter(line, "job");
    }
    if (StartsWith(line, "srun:")) {
      for (std::string_view w : {"srun: job", "srun: jobid", "allocation"}) {
        if (std::string id = IdAfter(line, w); !id.empty()) any_job = id;
      }
    }
    if (Rank(v.kind) > Rank(best.kind)) {
      v.line = line;
      best = v;
    }
  }
  if (best.job.empty()) best.job = any_job;
  return best;
}

void ApplySlurmVerdict(const SlurmVerdict& v, const std::string& job_id, StepResult* r) {
  r->executor = "slurm";
  r->job = !job_id.empty() ? job_id : v.job;
  if (v.kind == SlurmVerdict::Kind::kNone) return;
  std::string job = "Slurm job" + (r->job.empty() ? "" : " " + r->job);
  r->infrastructure = true;
  switch (v.kind) {
    case SlurmVerdict::Kind::kTimeLimit:
      r->kind = ExitKind::kTimedOut;
      r->detail = job + " exceeded its Slurm time limit";
      break;
    case SlurmVerdict::Kind::kPreempted:
      r->kind = ExitKind::kSignaled;
      r->detail = job + " was preempted";
      break;
    case SlurmVerdict::Kind::kNodeFailure:
      r->kind = ExitKind::kSignaled;
      r->detail = job + " was lost with its node";
      break;
    case SlurmVerdict::Kind::kRefused:
      r->kind = ExitKind::kSpawnError;
      r->detail = "Slurm refused the job";
      break;
    default:
      r->kind = ExitKind::kSignaled;
      r->detail = job + " was cancelled (scancel)";
      break;
  }
  if (r->kind == ExitKind::kSignaled && r->signal == 0) r->signal = 15;
  r->detail += ": " + v.line;
}

std::map<std::string, std::string> SlurmClientEnv() {
  std::map<std::string, std::string> env;
  if (const char* conf = std::getenv("SLURM_CONF")) env["SLURM_CONF"] = conf;
  const char* path = std::getenv("PATH");
  env["PATH"] = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  return env;
}

bool CancelSlurmJob(const std::string& job_id, const std::map<std::string, std::string>& env) {
  auto r = RunCaptured("scancel " + ShellQuote(job_id), "", env, 60);
  return r.ok() && r->result.ok();
}

int CancelSlurmJobs(const std::string& job_name, const std::map<std::string, std::string>& env) {
  const std::string user = ShellQuote(UserName());
  const std::string name = ShellQuote("--name=" + job_name);
  auto listed = RunCaptured("squeue -h -o %i -u " + user + " " + name, "", env, 60);
  if (!listed.ok() || !listed->result.ok()) return -1;
  int n = 0;
  for (const std::string& line : Split(listed->out, '\n')) n += Trim(line).empty() ? 0 : 1;
  if (n == 0) return 0;
  auto cancelled = RunCaptured("scancel -u " + user + " " + name, "", env, 60);
  if (!cancelled.ok() || !cancelled->result.ok()) return -1;
  return n;
}

}  // namespace arbor
