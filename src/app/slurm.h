// The Slurm executor's pieces (docs/slurm.md): how one target command becomes a Slurm job,
// what Slurm's own messages say about a job it ended (cancelled, preempted, lost with its node,
// over its time limit), and cancelling a campaign's jobs.
//
// A benchmark is `srun ... /bin/sh -c WRAPPER` under exec/'s runner on this machine: srun blocks
// until the job ends, streams its output into the runner's capped logs and exits with the
// command's status (a step of the measurement's allocation). A build, check or profile is
// submitted with `sbatch`: a batch script whose record, logs and status live in a job folder
// and outlive Arbor, so a resumed run can adopt or read it (app/slurm_jobs.h); Arbor waits on
// that folder. On the compute node the wrapper or script records
// $SLURM_JOB_ID and the host, applies the memory and CPU limits there (ulimit), then runs the
// command.
#pragma once

#include <map>
#include <string>

#include "core/model/ports.h"
#include "core/model/spec.h"
#include "report/views.h"
#include "util/result.h"

namespace arbor {

// What one srun job is asked to be.
struct SlurmRequest {
  std::string job_name;  // SlurmJobName(): one name for all of a campaign's jobs
  std::string comment;   // "n12/bench-3": which node and run
  std::string cwd;       // the worktree (on shared_dir)
  std::string job_id_file;
  // A batch job's folder (SbatchCommand): its script, the job's record and, once the command
  // ended, its logs (the first output_limit_bytes of each stream) and "status" ("exit N\n").
  std::string job_dir;
  long long output_limit_bytes = 16LL << 20;
  std::string command;
  double timeout_s = 600;  // the step's timeout: --time when [executor] time_limit is unset
  // A benchmark's or profile's job: --exclusive unless exclusive_bench = false (a measurement
  // or a profile shares its node with nothing, as locally it takes the machine).
  bool exclusive = false;
  // When set, the command runs as a step of this allocation (SallocCommand): `srun
  // --jobid=ALLOCATION`, without the job-level options (name, comment, partition, account,
  // constraint, --exclusive), which the allocation already has.
  std::string allocation;
  std::optional<double> memory_limit_mb;
  std::optional<double> cpu_limit_s;
};

// "arbor-<campaign>-<8 hex of the state folder>": unique per campaign state, so `scancel
// --name` reaches exactly this campaign's jobs.
std::string SlurmJobName(const std::string& campaign, const std::string& state_dir);

// Slurm's --time value for a limit in seconds, rounded up to whole minutes ("H:MM:00").
std::string SlurmTime(double seconds);

// The shell command the runner starts: "exec srun --job-name=... /bin/sh -c '...'".
std::string SrunCommand(const ExecutorSpec& executor, const SlurmRequest& request);

// A build, check or profile command as a batch job that outlives Arbor (docs/slurm.md, "Jobs a
// killed run left"): `exec sbatch --parsable <job options> --chdir --export=ALL --time [--gres]
// <extra...> --output=<job_dir>/slurm.out --error=<job_dir>/slurm.err <job_dir>/script`. It
// submits and prints the job id; Arbor then waits on the job folder (AwaitSlurmJob). Unlike an
// srun job, which dies with its srun, a batch job runs on when Arbor is killed.
std::string SbatchCommand(const ExecutorSpec& executor, const SlurmRequest& request);

// The batch script (<job_dir>/script): records the job in <job_dir>/job and job_id_file, runs
// the command under the limits with its output in <job_dir>/stdout and stderr (capped), and
// writes <job_dir>/status ("exit N\n") last, atomically.
std::string SlurmBatchScript(const SlurmRequest& request);

// The command that obtains one allocation for a measurement's benchmark runs (Target::
// BeginMeasurement): `salloc --no-shell` with the campaign's job name, `comment`, the
// benchmark options (--exclusive unless exclusive_bench = false) and `--time` (time_limit,
// else none: the partition's default). It blocks until the allocation is granted.
std::string SallocCommand(const ExecutorSpec& executor, const std::string& job_name,
                          const std::string& comment);
// The allocation's id from salloc's messages ("salloc: Granted job allocation 45"), or "".
std::string GrantedAllocation(const std::string& salloc_stderr);

// What srun's stderr says about how Slurm ended the job.
struct SlurmVerdict {
  enum class Kind { kNone, kCancelled, kTimeLimit, kPreempted, kNodeFailure, kRefused };
  Kind kind = Kind::kNone;
  std::string job;   // the job id named in the message, if any
  std::string line;  // the message itself (trimmed)
};
SlurmVerdict ReadSlurmVerdict(const std::string& stderr_text);

// Turns a finished run's StepResult into what Slurm made of it: a job Slurm ended becomes an
// infrastructure failure (kTimedOut for its time limit, kSpawnError when Slurm refused it,
// else kSignaled) with a one-line detail naming Slurm and the job. Sets r->job and r->executor.
void ApplySlurmVerdict(const SlurmVerdict& verdict, const std::string& job_id, StepResult* r);

// This user's queued and running jobs named `job_name` (squeue --name), oldest first; an error
// (one line, from squeue) when Slurm could not be asked.
Result<std::vector<ExecutorJob>> ListSlurmJobs(const std::string& job_name,
                                               const std::map<std::string, std::string>& env);

// Cancels every queued or running job named `job_name` of this user (scancel --name). `env` is
// the environment for squeue/scancel (PATH, SLURM_CONF). Returns how many were listed first,
// or -1 when Slurm could not be asked.
int CancelSlurmJobs(const std::string& job_name, const std::map<std::string, std::string>& env);

// Cancels one job by id; whether scancel succeeded.
bool CancelSlurmJob(const std::string& job_id, const std::map<std::string, std::string>& env);

// Arbor's own variables a Slurm client needs: SLURM_CONF (when set) and PATH.
std::map<std::string, std::string> SlurmClientEnv();

}  // namespace arbor
