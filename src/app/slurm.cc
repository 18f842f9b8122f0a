#include "app/slurm.h"

#include <pwd.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "exec/runner.h"
#include "util/escape.h"
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

namespace {

// "--name=value" (quoted) appended to `args` when value is set.
void Opt(std::vector<std::string>* args, const std::string& name, const std::string& value) {
  if (!value.empty()) args->push_back(ShellQuote("--" + name + "=" + value));
}

// The options a job (not a step of an allocation) gets from [executor].
void JobOptions(const ExecutorSpec& e, const std::string& job_name, const std::string& comment,
                bool exclusive, std::vector<std::string>* args) {
  Opt(args, "job-name", job_name);
  Opt(args, "comment", comment);
  args->push_back("--nodes=1");
  args->push_back("--ntasks=1");
  Opt(args, "partition", e.partition);
  Opt(args, "account", e.account);
  Opt(args, "constraint", e.constraint);
  if (exclusive && e.exclusive_bench) args->push_back("--exclusive");
}

}  // namespace

std::string SallocCommand(const ExecutorSpec& e, const std::string& job_name,
                          const std::string& comment) {
  std::vector<std::string> args = {"salloc", "--no-shell"};
  JobOptions(e, job_name, comment, /*exclusive=*/true, &args);
  if (e.time_limit_s) Opt(&args, "time", SlurmTime(*e.time_limit_s));
  Opt(&args, "gres", e.gres);
  for (const std::string& x : e.extra) args.push_back(ShellQuote(x));
  return Join(args, " ");
}

std::string GrantedAllocation(const std::string& salloc_stderr) {
  std::string id;
  for (const std::string& line : Split(salloc_stderr, '\n')) {
    if (StartsWith(Trim(line), "salloc:") && Has(line, "Granted job allocation")) {
      id = IdAfter(line, "Granted job allocation");
    }
  }
  return id;
}

namespace {

// `ulimit` lines for the request's memory and CPU limits ("" when unset): applied on the compute
// node to the command alone (srun and the batch script's own copies must not run under them).
std::string Limits(const SlurmRequest& r) {
  std::string limits;
  if (r.memory_limit_mb) {
    limits += "ulimit -v " + std::to_string(static_cast<long long>(*r.memory_limit_mb * 1024)) +
              " || exit 126; ";
  }
  if (r.cpu_limit_s) {
    limits += "ulimit -t " + std::to_string(static_cast<long long>(std::ceil(*r.cpu_limit_s))) +
              " || exit 126; ";
  }
  return limits;
}

// Shell text writing "<job id> <host> <step id>" to `file` (quoted already).
std::string RecordJob(const std::string& file) {
  return "printf '%s %s %s\\n' \"$SLURM_JOB_ID\" \"${SLURMD_NODENAME:-$(hostname 2>/dev/null || "
         "uname -n)}\" \"${SLURM_STEP_ID:-0}\" > " +
         file + " 2>/dev/null";
}

// The options srun and sbatch share after the job-level ones: where, how long, what hardware.
void PlacementOptions(const ExecutorSpec& e, const SlurmRequest& r,
                      std::vector<std::string>* args) {
  Opt(args, "chdir", r.cwd);
  args->push_back("--export=ALL");
  Opt(args, "time", SlurmTime(e.time_limit_s ? *e.time_limit_s : r.timeout_s + 60));
  Opt(args, "gres", e.gres);
  for (const std::string& x : e.extra) args->push_back(ShellQuote(x));
}

// sbatch expands %j and the like in --output/--error; "%%" is a literal "%".
std::string NoPatterns(const std::string& path) {
  std::string out;
  for (char c : path) out += c == '%' ? std::string("%%") : std::string(1, c);
  return out;
}

}  // namespace

std::string SrunCommand(const ExecutorSpec& e, const SlurmRequest& r) {
  std::vector<std::string> args = {"exec", "srun"};
  if (r.allocation.empty()) {
    JobOptions(e, r.job_name, r.comment, r.exclusive, &args);
  } else {
    Opt(&args, "jobid", r.allocation);
    args.push_back("--nodes=1");
    args.push_back("--ntasks=1");
  }
  PlacementOptions(e, r, &args);
  // On the compute node: record the job id and the host, apply the limits there, then become
  // the command.
  std::string inner = RecordJob(ShellQuote(r.job_id_file)) + "; " + Limits(r) + "exec /bin/sh -c " +
                      ShellQuote(r.command);
  args.push_back("/bin/sh");
  args.push_back("-c");
  args.push_back(ShellQuote(inner));
  return Join(args, " ");
}

std::string SlurmBatchScript(const SlurmRequest& r) {
  // The command's output goes to the job folder through head -c with unbuffered output
  // (stdbuf -o0: a stopped copier loses nothing it read): the first output_limit_bytes of each
  // stream are kept and the rest drained (GNU dd was used before: with count_bytes it counts a
  // pipe's short read as a whole block and stopped after the first writes, and with fullblock
  // it holds a partial block back until the stream ends), so a flood neither fills the shared
  // filesystem nor blocks the command. The fifos live in the compute node's /tmp (not $TMPDIR,
  // which is this machine's), else in the job folder. A background process of the command may hold
  // its output open: the copies get 5 s after the command ends, then they are stopped (Slurm ends
  // that process with the job). The status is written last and atomically: a status file means the
  // logs are complete. A cancelled job writes none.
  std::string script = R"(#!/bin/sh
# Arbor: @COMMENT@ (docs/slurm.md)
d=@DIR@
@RECORD@ && mv -f "$d/job.tmp" "$d/job"
cp "$d/job" @JOBIDFILE@ 2>/dev/null
t=$(mktemp -d /tmp/arbor-job.XXXXXX 2>/dev/null) || t="$d/fifos"
trap 'rm -rf "$t"' EXIT
trap 'exit 143' TERM INT
mkdir -p "$t" && mkfifo "$t/o" "$t/e" || { echo "arbor: cannot make fifos in $t" >&2; exit 125; }
{ stdbuf -o0 head -c @CAP@ > "$d/stdout"; cat > /dev/null; } < "$t/o" & p1=$!
{ stdbuf -o0 head -c @CAP@ > "$d/stderr"; cat > /dev/null; } < "$t/e" & p2=$!
@RUN@ > "$t/o" 2> "$t/e"; s=$?
i=0; while [ $i -lt 50 ] && { kill -0 $p1 || kill -0 $p2; } 2>/dev/null; do sleep 0.1; i=$((i+1)); done
pkill -P "$p1,$p2" 2>/dev/null; kill $p1 $p2 2>/dev/null
printf 'exit %s\n' "$s" > "$d/status.tmp" && mv -f "$d/status.tmp" "$d/status"
exit $s
)";
  const std::vector<std::pair<std::string, std::string>> fill = {
      {"@COMMENT@", r.comment},
      {"@DIR@", ShellQuote(r.job_dir)},
      {"@RECORD@", RecordJob("\"$d/job.tmp\"")},
      {"@JOBIDFILE@", ShellQuote(r.job_id_file)},
      {"@CAP@", std::to_string(std::max(1LL, r.output_limit_bytes))},
      {"@RUN@", "( " + Limits(r) + "exec /bin/sh -c " + ShellQuote(r.command) + " )"},
  };
  for (const auto& [mark, text] : fill) {
    for (size_t at = script.find(mark); at != std::string::npos;
         at = script.find(mark, at + text.size())) {
      script.replace(at, mark.size(), text);
    }
  }
  return script;
}

std::string SbatchCommand(const ExecutorSpec& e, const SlurmRequest& r) {
  std::vector<std::string> args = {"exec", "sbatch", "--parsable"};
  JobOptions(e, r.job_name, r.comment, r.exclusive, &args);
  // A job Slurm would requeue itself (node failure, preemption) would start over unseen, its
  // time counted against the step: Arbor reconciles it instead (an infrastructure loss).
  args.push_back("--no-requeue");
  PlacementOptions(e, r, &args);
  Opt(&args, "output", NoPatterns(r.job_dir + "/slurm.out"));
  Opt(&args, "error", NoPatterns(r.job_dir + "/slurm.err"));
  args.push_back(ShellQuote(r.job_dir + "/script"));
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
               StartsWith(line, "srun: error: Unable to create step") ||
               StartsWith(line, "sbatch: error: Batch job submission failed")) {
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

Result<std::vector<ExecutorJob>> ListSlurmJobs(const std::string& job_name,
                                               const std::map<std::string, std::string>& env) {
  // Tab-separated: id, state, comment, elapsed, node list, partition (a comment holds no tab).
  const std::string command = "squeue -h -u " + ShellQuote(UserName()) + " " +
                              ShellQuote("--name=" + job_name) + " -o " +
                              ShellQuote("%i\t%T\t%k\t%M\t%N\t%P");
  auto listed = RunCaptured(command, "", env, 60);
  if (!listed.ok()) return MakeError("squeue: " + listed.error().message);
  if (!listed->result.ok()) {
    std::string why(Trim(listed->err));
    why = why.substr(0, why.find('\n'));
    return MakeError("squeue failed" + (why.empty() ? std::string() : ": " + why));
  }
  std::vector<ExecutorJob> jobs;
  for (const std::string& line : Split(listed->out, '\n')) {
    if (Trim(line).empty()) continue;
    std::vector<std::string> f = Split(line, '\t');
    f.resize(6);
    std::string comment = f[2] == "(null)" ? "" : f[2];
    jobs.push_back({std::string(Trim(f[0])), f[1], comment, f[3], std::string(Trim(f[4])),
                    std::string(Trim(f[5]))});
  }
  return jobs;
}

int CancelSlurmJobs(const std::string& job_name, const std::map<std::string, std::string>& env) {
  auto listed = ListSlurmJobs(job_name, env);
  if (!listed.ok()) return -1;
  if (listed->empty()) return 0;
  const std::string command =
      "scancel -u " + ShellQuote(UserName()) + " " + ShellQuote("--name=" + job_name);
  auto cancelled = RunCaptured(command, "", env, 60);
  if (!cancelled.ok() || !cancelled->result.ok()) return -1;
  return static_cast<int>(listed->size());
}

}  // namespace arbor
