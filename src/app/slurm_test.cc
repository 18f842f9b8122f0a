// The Slurm executor's pure parts: the srun command line, and what srun's messages (copied
// from Slurm 22.05 runs on this machine) say about a job Slurm ended. The command line is also
// run, through a stand-in `srun` that drops its options, to prove the wrapper's quoting, the
// job-id file and the in-job limits. A real cluster runs in tests/integration/slurm_test.cc.
#include "app/slurm.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "exec/runner.h"

namespace arbor {
namespace {

ExecutorSpec Slurm() {
  ExecutorSpec e;
  e.kind = ExecutorSpec::Kind::kSlurm;
  e.shared_dir = "/";
  return e;
}

// An executable `dir`/bin/`name` running `script` (a stand-in for a Slurm client command).
void StandIn(const std::string& dir, const std::string& name, const std::string& script) {
  namespace fs = std::filesystem;
  fs::create_directories(dir + "/bin");
  std::ofstream(dir + "/bin/" + name) << script;
  fs::permissions(dir + "/bin/" + name, fs::perms::owner_all);
}

SlurmRequest Request(const std::string& command) {
  SlurmRequest r;
  r.job_name = "arbor-toy-0123abcd";
  r.comment = "n3/bench-1";
  r.cwd = "/shared/wt";
  r.job_id_file = "/shared/runs/n3/bench-1/slurm-job";
  r.command = command;
  r.timeout_s = 120;
  return r;
}

TEST(SlurmCommand, CarriesTheCampaignOptionsAndExclusiveBenchmarks) {
  ExecutorSpec e = Slurm();
  e.partition = "gpu";
  e.account = "perf";
  e.gres = "gpu:1";
  e.constraint = "a100";
  e.extra = {"--qos=high"};
  SlurmRequest r = Request("./bench");
  std::string build = SrunCommand(e, r);
  EXPECT_EQ(build.rfind("exec srun --job-name=arbor-toy-0123abcd --comment=n3/bench-1 "
                        "--nodes=1 --ntasks=1 --partition=gpu --account=perf --constraint=a100 "
                        "--chdir=/shared/wt --export=ALL --time=0:03:00 --gres=gpu:1 "
                        "--qos=high /bin/sh -c ",
                        0),
            0u)
      << build;
  r.exclusive = true;
  EXPECT_NE(SrunCommand(e, r).find(" --exclusive "), std::string::npos);
  e.exclusive_bench = false;
  EXPECT_EQ(SrunCommand(e, r).find("--exclusive"), std::string::npos);
  e.time_limit_s = 30;
  EXPECT_NE(SrunCommand(e, r).find("--time=0:01:00 "), std::string::npos);
}

// [executor.build] and the like: a build job gets its own partition and options, without the
// benchmarks' gres; the measurement's allocation keeps [executor]'s.
TEST(SlurmCommand, EachRoleGetsItsOwnHardware) {
  ExecutorSpec e = Slurm();
  e.partition = "gpu";
  e.gres = "gpu:1";
  e.extra = {"--qos=high"};
  ExecutorSpec::RoleOptions build;
  build.partition = "cpu";
  build.gres = "";
  build.extra = {"--cpus-per-task=32"};
  e.roles["build"] = build;
  SlurmRequest r = Request("make");
  r.job_dir = "/shared/jobs/k";
  std::string sbatch = SbatchCommand(e.For("build"), r);
  EXPECT_NE(sbatch.find(" --partition=cpu "), std::string::npos) << sbatch;
  EXPECT_EQ(sbatch.find("--gres"), std::string::npos) << sbatch;
  EXPECT_NE(sbatch.find(" --qos=high --cpus-per-task=32 "), std::string::npos) << sbatch;
  std::string salloc = SallocCommand(e.For("bench"), "arbor-toy-0123abcd", "n3/measure");
  EXPECT_NE(salloc.find(" --partition=gpu "), std::string::npos) << salloc;
  EXPECT_NE(salloc.find(" --gres=gpu:1 --qos=high"), std::string::npos) << salloc;
  EXPECT_EQ(salloc.find("cpus-per-task"), std::string::npos) << salloc;
}

// A measurement's benchmarks share one allocation: salloc holds the node (exclusive, with the
// campaign's job options); each run is a step of it, without the job-level options.
TEST(SlurmCommand, MeasurementAllocationAndItsSteps) {
  ExecutorSpec e = Slurm();
  e.partition = "gpu";
  e.gres = "gpu:1";
  e.extra = {"--cpus-per-task=4"};
  EXPECT_EQ(SallocCommand(e, "arbor-toy-0123abcd", "n3/measure"),
            "salloc --no-shell --job-name=arbor-toy-0123abcd --comment=n3/measure --nodes=1 "
            "--ntasks=1 --partition=gpu --exclusive --gres=gpu:1 --cpus-per-task=4");
  e.time_limit_s = 600;
  e.exclusive_bench = false;
  EXPECT_EQ(SallocCommand(e, "j", "n3/measure"),
            "salloc --no-shell --job-name=j --comment=n3/measure --nodes=1 --ntasks=1 "
            "--partition=gpu --time=0:10:00 --gres=gpu:1 --cpus-per-task=4");
  SlurmRequest r = Request("./bench");
  r.exclusive = true;
  r.allocation = "45";
  EXPECT_EQ(SrunCommand(e, r).rfind("exec srun --jobid=45 --nodes=1 --ntasks=1 --chdir=/shared/wt "
                                    "--export=ALL --time=0:10:00 --gres=gpu:1 "
                                    "--cpus-per-task=4 /bin/sh -c ",
                                    0),
            0u)
      << SrunCommand(e, r);
  EXPECT_EQ(GrantedAllocation("salloc: Pending job allocation 45\n"
                              "salloc: job 45 queued and waiting for resources\n"
                              "salloc: job 45 has been allocated resources\n"
                              "salloc: Granted job allocation 45\n"),
            "45");
  EXPECT_EQ(GrantedAllocation("salloc: error: Job submit/allocate failed: Invalid partition\n"),
            "");
  EXPECT_EQ(GrantedAllocation("Granted job allocation 9 (printed by a command)\n"), "");
}

TEST(SlurmCommand, TimeIsRoundedUpToWholeMinutes) {
  EXPECT_EQ(SlurmTime(1), "0:01:00");
  EXPECT_EQ(SlurmTime(60), "0:01:00");
  EXPECT_EQ(SlurmTime(61), "0:02:00");
  EXPECT_EQ(SlurmTime(3 * 3600 + 1), "3:01:00");
}

TEST(SlurmCommand, JobNameIsPerCampaignState) {
  EXPECT_EQ(SlurmJobName("toy", "/a/.arbor/toy"), SlurmJobName("toy", "/a/.arbor/toy"));
  EXPECT_NE(SlurmJobName("toy", "/a/.arbor/toy"), SlurmJobName("toy", "/b/.arbor/toy"));
  EXPECT_EQ(SlurmJobName("toy", "/a/.arbor/toy").rfind("arbor-toy-", 0), 0u);
}

// The command line as the runner runs it, with a stand-in srun: options dropped, the rest run
// with SLURM_JOB_ID=77. Quotes, $ and the limits must arrive intact.
TEST(SlurmCommand, WrapperRunsTheCommandRecordsTheJobAndAppliesLimits) {
  namespace fs = std::filesystem;
  std::string dir = fs::temp_directory_path() / ("arbor-slurm-test-" + std::to_string(getpid()));
  StandIn(dir, "srun",
          "#!/bin/sh\nwhile [ \"${1#--}\" != \"$1\" ]; do shift; done\n"
          "SLURMD_NODENAME=cn7 SLURM_JOB_ID=77 exec \"$@\"\n");
  SlurmRequest r = Request("echo \"it's $X\"; ulimit -v; ulimit -t");
  r.job_id_file = dir + "/slurm-job";
  r.memory_limit_mb = 512;
  r.cpu_limit_s = 30;
  auto run = RunCaptured(SrunCommand(Slurm(), r), dir,
                         {{"PATH", dir + "/bin:/usr/bin:/bin"}, {"X", "a b"}});
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_TRUE(run->result.ok()) << run->err;
  EXPECT_EQ(run->out, "it's a b\n524288\n30\n");
  auto id = ReadFileBounded(dir + "/slurm-job");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, "77 cn7 0\n");
  fs::remove_all(dir);
}

// squeue's tab-separated lines become jobs; a failing squeue is one line naming its error.
TEST(SlurmJobs, ListedFromSqueueOrOneLineWhenSlurmCannotBeAsked) {
  namespace fs = std::filesystem;
  std::string dir = fs::temp_directory_path() / ("arbor-squeue-test-" + std::to_string(getpid()));
  StandIn(dir, "squeue",
          "#!/bin/sh\n"
          "[ -e \"$0.fail\" ] && { echo 'slurm_load_jobs error: Unable to contact' >&2; exit 1; }\n"
          "echo \"$*\" > \"$0.args\"\n"
          "printf '41\\tRUNNING\\tn3/bench-2\\t0:07\\tcn7\\tgpu\\n'\n"
          "printf '42\\tPENDING\\t(null)\\t0:00\\t\\n'\n");
  std::map<std::string, std::string> env = {{"PATH", dir + "/bin:/usr/bin:/bin"}};
  auto jobs = ListSlurmJobs("arbor-toy-0123abcd", env);
  ASSERT_TRUE(jobs.ok()) << jobs.error().message;
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].id, "41");
  EXPECT_EQ((*jobs)[0].state, "RUNNING");
  EXPECT_EQ((*jobs)[0].comment, "n3/bench-2");
  EXPECT_EQ((*jobs)[0].elapsed, "0:07");
  EXPECT_EQ((*jobs)[0].nodes, "cn7");
  EXPECT_EQ((*jobs)[0].partition, "gpu");
  EXPECT_EQ((*jobs)[1].comment, "");
  EXPECT_EQ((*jobs)[1].nodes, "");
  EXPECT_EQ((*jobs)[1].partition, "") << "an old squeue line without the field";
  auto args = ReadFileBounded(dir + "/bin/squeue.args");
  ASSERT_TRUE(args.ok());
  EXPECT_NE(args->find("--name=arbor-toy-0123abcd"), std::string::npos) << *args;
  std::ofstream(dir + "/bin/squeue.fail") << "";
  auto failed = ListSlurmJobs("arbor-toy-0123abcd", env);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message, "squeue failed: slurm_load_jobs error: Unable to contact");
  EXPECT_EQ(CancelSlurmJobs("arbor-toy-0123abcd", env), -1);
  fs::remove_all(dir);
}

TEST(SlurmVerdict, NoVerdictForAnOrdinaryRunOrACrashOfTheCommand) {
  EXPECT_EQ(ReadSlurmVerdict("").kind, SlurmVerdict::Kind::kNone);
  SlurmVerdict crash = ReadSlurmVerdict("srun: error: arbornode: task 0: Segmentation fault\n");
  EXPECT_EQ(crash.kind, SlurmVerdict::Kind::kNone);
  StepResult r;
  r.kind = ExitKind::kSignaled;
  r.signal = 11;
  ApplySlurmVerdict(crash, "41", &r);
  EXPECT_EQ(r.kind, ExitKind::kSignaled);
  EXPECT_FALSE(r.infrastructure);
  EXPECT_EQ(r.job, "41");
  EXPECT_EQ(r.executor, "slurm");
}

TEST(SlurmVerdict, ScancelIsAnInfrastructureFailureNamingTheJob) {
  const std::string err =
      "srun: Job step aborted: Waiting up to 4 seconds for job step to finish.\n"
      "slurmstepd-arbornode: error: *** STEP 1.0 ON arbornode CANCELLED AT "
      "2026-11-30T06:11:17 ***\n"
      "srun: error: arbornode: task 0: Terminated\n";
  SlurmVerdict v = ReadSlurmVerdict(err);
  EXPECT_EQ(v.kind, SlurmVerdict::Kind::kCancelled);
  EXPECT_EQ(v.job, "1");
  StepResult r;
  r.kind = ExitKind::kSignaled;
  r.signal = 15;
  ApplySlurmVerdict(v, "", &r);
  EXPECT_TRUE(r.infrastructure);
  EXPECT_EQ(r.kind, ExitKind::kSignaled);
  EXPECT_EQ(r.job, "1");
  EXPECT_EQ(r.detail.rfind("Slurm job 1 was cancelled (scancel): slurmstepd-arbornode: error: "
                           "*** STEP 1.0 ON arbornode CANCELLED AT",
                           0),
            0u)
      << r.detail;
}

TEST(SlurmVerdict, TimeLimitIsATimeout) {
  const std::string err =
      "slurmstepd-arbornode: error: *** STEP 2.0 ON arbornode CANCELLED AT 2026-11-30T06:12:44 "
      "DUE TO TIME LIMIT ***\n"
      "srun: Job step aborted: Waiting up to 4 seconds for job step to finish.\n"
      "srun: error: arbornode: task 0: Terminated\n";
  StepResult r;
  r.kind = ExitKind::kSignaled;
  ApplySlurmVerdict(ReadSlurmVerdict(err), "2", &r);
  EXPECT_EQ(r.kind, ExitKind::kTimedOut);
  EXPECT_TRUE(r.infrastructure);
  EXPECT_EQ(r.detail.rfind("Slurm job 2 exceeded its Slurm time limit: ", 0), 0u) << r.detail;
}

TEST(SlurmVerdict, ANamedReasonWinsOverAPlainCancel) {
  const std::string err =
      "slurmstepd: error: *** STEP 9.0 ON n1 CANCELLED AT 2026-01-01T00:00:00 ***\n"
      "slurmstepd: error: *** JOB 9 ON n1 CANCELLED AT 2026-01-01T00:00:00 DUE TO PREEMPTION "
      "***\n";
  EXPECT_EQ(ReadSlurmVerdict(err).kind, SlurmVerdict::Kind::kPreempted);
  EXPECT_EQ(ReadSlurmVerdict("srun: error: Node failure on n4\n").kind,
            SlurmVerdict::Kind::kNodeFailure);
  SlurmVerdict refused = ReadSlurmVerdict(
      "srun: error: Unable to allocate resources: Invalid partition name specified\n");
  EXPECT_EQ(refused.kind, SlurmVerdict::Kind::kRefused);
  StepResult r;
  r.kind = ExitKind::kFailed;
  r.exit_code = 1;
  ApplySlurmVerdict(refused, "", &r);
  EXPECT_EQ(r.kind, ExitKind::kSpawnError);
  EXPECT_NE(r.detail.find("Invalid partition name"), std::string::npos);
  // sbatch's refusal (a build, check or profile), as Slurm 22.05 prints it.
  EXPECT_EQ(ReadSlurmVerdict("sbatch: error: Memory specification can not be satisfied\n"
                             "sbatch: error: Batch job submission failed: Requested node "
                             "configuration is not available\n")
                .kind,
            SlurmVerdict::Kind::kRefused);
}

TEST(SlurmVerdict, OutputOfTheCommandCannotForgeAVerdict) {
  // Only srun's and slurmstepd's lines count: a program printing "CANCELLED" is not Slurm.
  EXPECT_EQ(ReadSlurmVerdict("*** JOB 3 ON n1 CANCELLED AT noon ***\n").kind,
            SlurmVerdict::Kind::kNone);
}

}  // namespace
}  // namespace arbor
