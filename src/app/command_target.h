// CommandTarget: the Target port over the user's shell commands, run by exec/'s Runner.
//
// Each run gets its own folder runs/n<node>/<label>/ (stdout, stderr, $ARBOR_OUT and, once the
// step's result is final, `exit`: how it ended, read back by app/run_logs.h), a minimal
// environment (an allowlist of the caller's variables and those [target] pass_env names, then
// the campaign's env and the node's overlay, then ARBOR_NODE / ARBOR_WORKTREE / ARBOR_OUT /
// ARBOR_REPETITION, and ARBOR_PORT with [target.serve]), and the step's timeout and limits.
// With [target.serve], the check, bench and profile commands run against the node's server
// (command_target_servers.h), which the target starts, keeps and stops. With [executor] kind =
// "slurm" each command runs as an srun job (app/slurm.h), its job id and any Slurm verdict recorded
// in its StepResult. Metrics and profiles are parsed by formats/; anything unreadable becomes
// ExitKind::kBadOutput with the parser's one-line reason. Everything a run keeps — its folder, the
// step's tail and detail — is scrubbed of secrets by the process's installed Scrubber
// (exec/scrubbing.h) as soon as the command ends, before metrics or profiles are read from it.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "app/command_target_servers.h"
#include "app/slurm_jobs.h"
#include "core/model/ports.h"
#include "core/model/spec.h"
#include "exec/runner.h"
#include "exec/scrubbing.h"

namespace arbor {

// Lane `lane`'s CPUs: search.lane_cpus[lane], or CPU `lane` when none are given.
std::vector<int> LaneCpus(const SearchSpec& search, int lane);

class CommandTarget : public Target {
 public:
  // `job_name` names the campaign's Slurm jobs (SlurmJobName(); [executor] kind = "slurm").
  CommandTarget(const CampaignSpec* spec, std::string runs_dir, std::string job_name = "");
  StepResult Build(const RunContext& ctx) override;
  Measurement Check(const RunContext& ctx) override;
  Measurement Bench(const RunContext& ctx) override;
  ProfileResult Profile(const RunContext& ctx) override;
  // With Slurm, a measurement's benchmark runs share one allocation (salloc, obtained at its
  // first benchmark, released here), so both arms of an A/B run on the same node.
  void BeginMeasurement(NodeId node) override;
  void EndMeasurement(NodeId node) override;
  // Locally a benchmark shares the machine with everything else Arbor runs, so builds wait
  // for it (docs/lanes.md); a Slurm measurement has an exclusive allocation of its own.
  bool MeasurementsNeedTheMachine() const override {
    return spec_->executor.kind != ExecutorSpec::Kind::kSlurm;
  }

  // With Slurm: where each command keeps its result until this run has it (<state>/jobs), and
  // what the run found there at its start (app/slurm_jobs.h): a step whose key matches a job a
  // killed run left gets that job's result instead of running again. `left` is borrowed.
  void set_slurm_jobs(std::string jobs_dir, Reconciliation* left) {
    jobs_dir_ = std::move(jobs_dir);
    left_ = left;
  }

  // The servers of [target.serve] (nullptr without): a ServerStoppingWorkspace stops a node's
  // when its worktree is released; the owner stops the rest when the campaign ends.
  TargetServers* servers() { return servers_.get(); }

  // The variables of Arbor's own environment a target command may see: a fixed allowlist and
  // [target] pass_env's (an exact name always; a glob never a secret: one of `spec.secrets`,
  // or a name that looks like a credential).
  static std::map<std::string, std::string> InheritedEnv(const CampaignSpec& spec);
  // Whether a variable named `name` looks like a credential (KEY, TOKEN, SECRET, PASSWORD, …).
  static bool LooksLikeSecret(std::string_view name);

 private:
  struct Run {
    StepResult step;
    std::string out_dir;
    std::string stdout_path;
  };
  // Which of the target's commands runs: it picks the Slurm job's options (ExecutorSpec::For,
  // by RoleName); a benchmark's job also gets --exclusive and is never a batch job.
  enum class Role { kBuild, kCheck, kBench, kProfile };
  static std::string RoleName(Role role);  // "build", "check", "bench", "profile"
  Run Execute(const RunContext& ctx, Role role, const std::string& command, double timeout_s);
  // With Slurm, a build, check or profile (command_target_batch.cc): the command as a batch
  // job in jobs_dir_/<key>, submitted by `sbatch` under the runner, then waited for on its
  // folder (AwaitSlurmJob). `rs` is the local run's spec, whose limits move into the job;
  // `run` has the prepared run folder.
  // `role` as for Execute: a profile's job is --exclusive like a benchmark's.
  Run RunBatch(const RunContext& ctx, Role role, const std::string& command, double timeout_s,
               const std::string& key, RunSpec rs, Run run);
  // The job a killed run left under `key`, taken out of left_ (at most one step gets it).
  std::optional<LeftJob> ClaimLeftJob(const std::string& key);
  // The result of a job a killed run left, from its folder, as this step's run.
  Run ReadBack(const RunContext& ctx, const LeftJob& left);
  // A finished (or timed-out) job's folder as the run of `ctx`: its logs copied into the run's
  // folder (scrubbed), its exit, job and host in the step.
  Run FromJobFolder(const RunContext& ctx, const LeftJob& job) const;
  // The step's exit from a shell's exit code (128+N: killed by signal N).
  static void SetExitCode(int code, StepResult* step);
  // The failed run's tail; detail and tail scrubbed.
  void Finish(Run* run) const;
  // Check, Bench and Profile before their result is recorded: the command's run and what was
  // read from it (the accuracy, the metric, the profile).
  Measurement ReadCheck(const RunContext& ctx);
  Measurement ReadBench(const RunContext& ctx);
  ProfileResult ReadProfile(const RunContext& ctx);
  // How the step of `ctx` ended, final (app/run_logs.h): its folder's `exit`.
  void RecordExit(const RunContext& ctx, const StepResult& step) const;
  // The measurement's allocation, obtained on first use ("" when salloc failed).
  std::string Allocation(double timeout_s);
  // `text` without secrets (exec/scrubbing.h; unchanged when no Scrubber is installed).
  static std::string Scrubbed(std::string text) { return ScrubInstalled(std::move(text)); }

  const CampaignSpec* spec_;
  std::string runs_dir_;
  std::string job_name_;
  std::string jobs_dir_;
  std::mutex left_mu_;  // build lanes claim left jobs from several threads
  Reconciliation* left_ = nullptr;
  // The measurements in progress (BeginMeasurement), by the thread that began each: with
  // [search] lanes > 1 several run at once (docs/lanes.md#measurement-lanes), each with its own
  // Slurm allocation, once obtained.
  struct Measuring {
    NodeId node = kNoNode;
    std::string allocation;
    bool allocation_failed = false;  // salloc failed: this measurement's runs are separate jobs
  };
  std::optional<Measuring> MeasuringHere();  // the calling thread's, if it began one
  std::mutex measuring_mu_;
  std::map<std::thread::id, Measuring> measuring_;
  std::unique_ptr<TargetServers> servers_;  // with [target.serve]
};

}  // namespace arbor
