// Jobs that outlive Arbor (docs/slurm.md, "Jobs a killed run left"). Before each Slurm job,
// Arbor writes a folder <state>/jobs/<step key>/ with a `request`; the job's wrapper adds `job`
// (its id and host), `stdout`, `stderr` and, when the command ended, `status` (app/slurm.h).
// Arbor removes the folder once it has the command's result, so the folders present when a run
// starts are what a killed run left in flight. ReconcileSlurmJobs settles them before any step
// runs: a job still queued or running is adopted (waited for, bounded by its step's timeout),
// a finished one is read, one gone without a result is lost (its step runs again), and every
// other job of the campaign (a measurement's allocation, anything unknown) is cancelled.
// CommandTarget then hands a step the result of the job with its key instead of running it.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "util/result.h"

namespace arbor {

// The step key of one command: "n<node>-<label>-<8 hex>", the hex a hash of what runs (the
// command, its working folder and the step's environment). Deterministic: the replay of a step
// after a kill has the same key; another node, label, command or overlay has another one.
std::string SlurmStepKey(NodeId node, const std::string& label, const std::string& command,
                         const std::string& cwd, const EnvOverlay& env);

// Which instance of a worktree this is (inode and modification time of its .git link, else of
// the folder): a worktree removed and recreated since a job started is another one, and the
// job's work (a build's files) is gone with the old one. "" when the path does not exist.
std::string WorktreeIdentity(const std::string& worktree);

// <jobs>/<key>/request, written before the job is submitted.
struct JobRequest {
  std::string key;
  std::string comment;  // the job's --comment, "n7/build": finds a job still pending in squeue
  std::string worktree;
  std::string worktree_id;   // WorktreeIdentity() at submission
  double timeout_s = 0;      // the step's timeout, counted from `submitted` (see below)
  double submitted = 0;      // seconds since the epoch
  bool measurement = false;  // a benchmark of a measurement: redone, never adopted
  // [executor] queue_timeout when the job was submitted: the job had that long to start, and
  // its timeout counts from its start (the time its `job` record was written).
  std::optional<double> queue_timeout_s;
};
std::string FormatJobRequest(const JobRequest& r);
Result<JobRequest> ParseJobRequest(const std::string& text);

// The exit code in a status file ("exit N\n", N in 0..255); an error saying what is wrong with
// anything else (empty, no final newline: cut short, not a number).
Result<int> ParseJobStatus(const std::string& text);

// One job a killed run left, once reconciled.
struct LeftJob {
  bool finished = false;   // its result is there to read; else it is lost
  bool adopted = false;    // it was still queued or running when this run started
  bool timed_out = false;  // adopted, then cancelled when its step's timeout ran out
  int exit_code = 0;
  std::string job;   // Slurm's id ("" when it never started and squeue no longer knows it)
  std::string host;  // where it ran
  std::string why;   // lost: one line saying why
  std::string dir;   // its folder under <state>/jobs
  JobRequest request;
};

struct Reconciliation {
  std::map<std::string, LeftJob> left;  // by step key, until a step claims it
  std::vector<std::string> adopted;     // "123 (node 7 build)"
  int read = 0;                         // finished while no Arbor ran
  int lost = 0;                         // gone without a result: their steps run again
  int cancelled = 0;                    // jobs no step can claim
  // "adopted Slurm job 123 (node 7 build), read 1 finished job, re-queued 1 lost job,
  // cancelled 1 Slurm job(s) a previous run left"; "" when nothing was left.
  std::string Summary() const;
};

// Settles the folders under `jobs_dir` against `squeue --name=job_name` (see the top of this
// file). `say` gets progress lines (an adoption that waits); `stopping` ends a wait early (the
// waited jobs are then cancelled and lost). An error when Slurm cannot be asked.
Result<Reconciliation> ReconcileSlurmJobs(const std::string& jobs_dir, const std::string& job_name,
                                          const std::map<std::string, std::string>& env,
                                          const std::function<bool()>& stopping,
                                          const std::function<void(const std::string&)>& say);

// What a job folder says of its job: id and host (`job`, written when it started) and, when it
// ended, its exit code (`status`); not finished, with `why`, when there is no valid status.
LeftJob ReadJobFolder(const std::string& dir);

// How a job Arbor waits for ended (AwaitSlurmJob).
enum class JobEnd {
  kFinished,       // its status file is there
  kGone,           // Slurm no longer lists it and it wrote no status: cancelled, lost, refused
  kTimedOut,       // it started, and ran past the step's timeout (not cancelled here)
  kQueueTimedOut,  // it had not started when queue_timeout_s ran out (not cancelled here)
};

// The deadlines of a job's wait, in seconds on the steady clock (SteadyNow()).
struct JobWait {
  double submitted = 0;
  double timeout_s = 600;  // the step's: from `submitted`, or from the start with a queue limit
  std::optional<double> queue_timeout_s;  // [executor] queue_timeout
};

// Waits for the batch job `job_id` (named `job_name`) whose folder is `dir`: polls the status
// file every 0.2 s and `squeue --name` every 2 s until the status appears, the job leaves
// Slurm's list without one (a few more looks first, unless slurmstepd's slurm.err already says
// how it ended: a shared filesystem may show the status late), or a deadline passes. Without a
// queue limit the step's timeout counts from submission; with one, the job must start (its
// script writes <dir>/job) within queue_timeout_s, and the timeout counts from then. A failing
// squeue is asked again; it never ends the wait, and the deadlines still apply.
JobEnd AwaitSlurmJob(const std::string& dir, const std::string& job_id, const std::string& job_name,
                     const JobWait& wait, const std::map<std::string, std::string>& env);

// Seconds on the steady clock.
double SteadyNow();

// "node 7 build" for the comment "n7/build".
std::string DescribeComment(const std::string& comment);

}  // namespace arbor
