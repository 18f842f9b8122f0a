// What a Slurm job leaves for a later Arbor (app/slurm_jobs.h): step keys, the request and
// status files, the batch script that writes them, the sbatch line, and reconciliation
// against a stand-in squeue/scancel. A real cluster runs in tests/integration/slurm_test.cc.
#include "app/slurm_jobs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "app/slurm.h"
#include "exec/runner.h"
#include "util/escape.h"

namespace arbor {
namespace {
namespace fs = std::filesystem;

std::string TempDir(const std::string& name) {
  std::string dir = fs::temp_directory_path() / (name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir + "/bin");
  return dir;
}

void Write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

std::string Read(const std::string& path) {
  auto r = ReadFileBounded(path);
  return r.ok() ? *r : "<missing>";
}

void Executable(const std::string& path, const std::string& script) {
  Write(path, script);
  fs::permissions(path, fs::perms::owner_all);
}

TEST(SlurmStepKey, SameStepSameKeyOtherStepOtherKey) {
  EnvOverlay env = {{"FAST", "1"}};
  std::string key = SlurmStepKey(7, "build", "make", "/s/wt/7", env);
  EXPECT_EQ(key.rfind("n7-build-", 0), 0u) << key;
  EXPECT_EQ(key.size(), std::string("n7-build-").size() + 8);
  EXPECT_EQ(key, SlurmStepKey(7, "build", "make", "/s/wt/7", env)) << "a replay maps to it";
  EXPECT_NE(key, SlurmStepKey(8, "build", "make", "/s/wt/7", env));
  EXPECT_NE(key, SlurmStepKey(7, "build-base", "make", "/s/wt/7", env));
  EXPECT_NE(key, SlurmStepKey(7, "build", "make -j2", "/s/wt/7", env));
  EXPECT_NE(key, SlurmStepKey(7, "build", "make", "/s/wt/6", env));
  EXPECT_NE(key, SlurmStepKey(7, "build", "make", "/s/wt/7", {{"FAST", "2"}}));
  // A/B arms and repetitions are in the label; the warm-up's "base--1" stays a file name.
  EXPECT_NE(SlurmStepKey(7, "base-0", "b", "/w", {}), SlurmStepKey(7, "cand-0", "b", "/w", {}));
  EXPECT_EQ(SlurmStepKey(7, "a/b c", "b", "/w", {}).rfind("n7-a_b_c-", 0), 0u);
}

TEST(SlurmJobFiles, StatusIsOneCompleteLineElseLostWithAReason) {
  EXPECT_EQ(*ParseJobStatus("exit 0\n"), 0);
  EXPECT_EQ(*ParseJobStatus("exit 139\n"), 139);
  EXPECT_EQ(ParseJobStatus("").error().message, "its status file is empty");
  EXPECT_EQ(ParseJobStatus("exit 3").error().message, "its status file was cut short ('exit 3')");
  EXPECT_EQ(ParseJobStatus("ex").error().message, "its status file was cut short ('ex')");
  EXPECT_EQ(ParseJobStatus("exit x\n").error().message, "its status file is malformed ('exit x')");
  EXPECT_FALSE(ParseJobStatus("exit 256\n").ok());
  EXPECT_FALSE(ParseJobStatus("exit \n").ok());
  EXPECT_FALSE(ParseJobStatus("exit 1\nexit 2\n").ok());
}

TEST(SlurmJobFiles, RequestRoundTripsAndACutShortOneIsRefused) {
  JobRequest r{"n7-build-0123abcd", "n7/build", "/s/wt/7", "12:3.4", 600, 1764500000.25, false};
  std::string text = FormatJobRequest(r);
  auto back = ParseJobRequest(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->key, r.key);
  EXPECT_EQ(back->comment, r.comment);
  EXPECT_EQ(back->worktree_id, r.worktree_id);
  EXPECT_EQ(back->timeout_s, 600);
  EXPECT_DOUBLE_EQ(back->submitted, r.submitted);
  EXPECT_FALSE(back->measurement);
  EXPECT_FALSE(back->queue_timeout_s.has_value());
  r.queue_timeout_s = 1200;
  back = ParseJobRequest(FormatJobRequest(r));
  ASSERT_TRUE(back.ok() && back->queue_timeout_s.has_value());
  EXPECT_EQ(*back->queue_timeout_s, 1200);
  auto cut = ParseJobRequest(text.substr(0, text.find("submitted")));
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().message, "request file: no submitted (cut short?)");
  EXPECT_EQ(ParseJobRequest("key k\ncomment c\ntimeout_s x\nsubmitted 1\nmeasurement 0\n")
                .error()
                .message,
            "request file: bad timeout_s 'x'");
}

TEST(SlurmJobFiles, WorktreeIdentityChangesWhenTheWorktreeIsRecreated) {
  std::string dir = TempDir("arbor-wt-id");
  Write(dir + "/wt/.git", "gitdir: x\n");
  std::string before = WorktreeIdentity(dir + "/wt");
  EXPECT_FALSE(before.empty());
  EXPECT_EQ(before, WorktreeIdentity(dir + "/wt"));
  fs::remove_all(dir + "/wt");
  Write(dir + "/wt/keep", "");  // the old inode is likely free again: only mtime may differ
  usleep(2000);
  Write(dir + "/wt/.git", "gitdir: x\n");
  EXPECT_NE(before, WorktreeIdentity(dir + "/wt"));
  EXPECT_EQ(WorktreeIdentity(dir + "/none"), "");
  fs::remove_all(dir);
}

// The batch script, run as Slurm's batch step would run it: the job folder gets the job, the
// first output_limit_bytes of each stream (the rest drained, the command not blocked) and the
// status, written last; the limits apply to the command inside the job.
TEST(SlurmJobFiles, BatchScriptKeepsTheResultInTheJobFolder) {
  std::string dir = TempDir("arbor-batch");
  fs::create_directories(dir + "/job");
  SlurmRequest r;
  r.job_name = "arbor-toy-0123abcd";
  r.comment = "n3/build";
  r.cwd = dir;
  r.job_id_file = dir + "/slurm-job";
  r.job_dir = dir + "/job";
  r.output_limit_bytes = 6;
  r.memory_limit_mb = 512;
  // The pause between the two writes makes them two reads of the pipe: the cap counts bytes,
  // not reads.
  r.command = "echo \"it's out\"; echo err1 >&2; sleep 0.3; echo err2 >&2; ulimit -v; exit 3";
  Write(dir + "/job/script", SlurmBatchScript(r));
  const std::map<std::string, std::string> env = {
      {"PATH", "/usr/bin:/bin"}, {"SLURM_JOB_ID", "77"}, {"SLURMD_NODENAME", "cn7"}};
  auto run = RunCaptured("/bin/sh " + ShellQuote(dir + "/job/script"), dir, env);
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->result.exit_code, 3) << run->err;
  EXPECT_EQ(run->out, "") << "the output is the job folder's";
  EXPECT_EQ(Read(dir + "/job/job"), "77 cn7 0\n");
  EXPECT_EQ(Read(dir + "/slurm-job"), "77 cn7 0\n");
  EXPECT_EQ(Read(dir + "/job/stdout"), "it's o") << "the first 6 bytes";
  EXPECT_EQ(Read(dir + "/job/stderr"), "err1\ne");
  EXPECT_EQ(Read(dir + "/job/status"), "exit 3\n");
  EXPECT_FALSE(fs::exists(dir + "/job/status.tmp"));
  // A flood beyond the cap is drained: the command ends, its status is its own.
  r.output_limit_bytes = 1000;
  r.memory_limit_mb.reset();
  r.command = "head -c 5000000 /dev/zero; echo done >&2";
  Write(dir + "/job/script", SlurmBatchScript(r));
  run = RunCaptured("/bin/sh " + ShellQuote(dir + "/job/script"), dir, env);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->result.exit_code, 0);
  EXPECT_EQ(fs::file_size(dir + "/job/stdout"), 1000u);
  EXPECT_EQ(Read(dir + "/job/stderr"), "done\n");
  // A background process holding the output open: the copies are stopped a few seconds after
  // the command ended (the bound is far below the sleep's), and the status is the command's.
  r.command = "echo x; (sleep 60) & exit 4";
  Write(dir + "/job/script", SlurmBatchScript(r));
  run = RunCaptured("/bin/sh " + ShellQuote(dir + "/job/script"), dir, env, 40);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->result.status, RunResult::Status::kExited) << "the script waited for the sleep";
  EXPECT_EQ(Read(dir + "/job/status"), "exit 4\n");
  EXPECT_EQ(Read(dir + "/job/stdout"), "x\n");
  // A command killed by a signal: the shell's 128+N, read back as that signal.
  r.command = "kill -SEGV $$";
  Write(dir + "/job/script", SlurmBatchScript(r));
  run = RunCaptured("/bin/sh " + ShellQuote(dir + "/job/script"), dir, env);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->result.exit_code, 139);
  EXPECT_EQ(Read(dir + "/job/status"), "exit 139\n");
  fs::remove_all(dir);
}

// sbatch submits and prints only the job id (--parsable), and writes Slurm's own
// lines to the job folder; the script is the folder's.
TEST(SlurmJobFiles, SbatchCommandLine) {
  ExecutorSpec e;
  e.kind = ExecutorSpec::Kind::kSlurm;
  e.partition = "cpu";
  e.extra = {"--qos=high"};
  SlurmRequest r;
  r.job_name = "arbor-toy-0123abcd";
  r.comment = "n3/build";
  r.cwd = "/shared/wt";
  r.job_dir = "/shared/state/jobs/n3-build-1a2b3c4d";
  r.timeout_s = 120;
  EXPECT_EQ(SbatchCommand(e, r),
            "exec sbatch --parsable --job-name=arbor-toy-0123abcd --comment=n3/build "
            "--nodes=1 --ntasks=1 --partition=cpu --no-requeue --chdir=/shared/wt --export=ALL "
            "--time=0:03:00 --qos=high --output=/shared/state/jobs/n3-build-1a2b3c4d/slurm.out "
            "--error=/shared/state/jobs/n3-build-1a2b3c4d/slurm.err "
            "/shared/state/jobs/n3-build-1a2b3c4d/script");
  r.job_dir = "/x/50%/j";  // sbatch would expand %j: a literal % is doubled
  EXPECT_NE(SbatchCommand(e, r).find("--output=/x/50%%/j/slurm.out"), std::string::npos);
  r.exclusive = true;  // a profile's job
  EXPECT_NE(SbatchCommand(e, r).find(" --partition=cpu --exclusive --no-requeue "),
            std::string::npos);
  e.exclusive_bench = false;
  EXPECT_EQ(SbatchCommand(e, r).find("--exclusive"), std::string::npos);
}

// A stand-in squeue lists job 50 (adopted: running) once, then "ends" it by writing its
// status; 51 is known to Slurm but no folder claims it (cancelled).
TEST(SlurmReconcile, AdoptsReadsRequeuesAndCancels) {
  std::string dir = TempDir("arbor-reconcile");
  const std::string jobs = dir + "/jobs";
  auto request = [&](const std::string& key, const std::string& comment, bool measurement) {
    JobRequest r{key, comment, dir, "", 600, static_cast<double>(time(nullptr)), measurement};
    Write(jobs + "/" + key + "/request", FormatJobRequest(r));
  };
  request("n2-build-00000000", "n2/build", false);  // running: adopted
  Write(jobs + "/n2-build-00000000/job", "50 cn7 0\n");
  request("n3-check-00000000", "n3/check", false);  // finished while no Arbor ran
  Write(jobs + "/n3-check-00000000/job", "48 cn7 0\n");
  Write(jobs + "/n3-check-00000000/status", "exit 1\n");
  request("n4-profile-00000000", "n4/profile", false);  // gone without a result
  Write(jobs + "/n4-profile-00000000/job", "47 cn7 0\n");
  request("n5-build-00000000", "n5/build", false);  // a status cut short
  Write(jobs + "/n5-build-00000000/job", "46 cn7 0\n");
  Write(jobs + "/n5-build-00000000/status", "exi");
  request("n6-bench-0-00000000", "n6/bench-0", true);  // a measurement's: redone
  Executable(dir + "/bin/squeue",
             "#!/bin/sh\n"
             "if [ -e \"$0.seen\" ]; then printf 'exit 0\\n' > '" +
                 jobs +
                 "/n2-build-00000000/status'; exit 0; fi\n"
                 "touch \"$0.seen\"\n"
                 "printf '50\\tRUNNING\\tn2/build\\t0:07\\tcn7\\n'\n"
                 "printf '51\\tRUNNING\\tn6/measure\\t0:07\\tcn7\\n'\n");
  Executable(dir + "/bin/scancel", "#!/bin/sh\necho \"$*\" >> \"$0.log\"\n");
  std::vector<std::string> said;
  auto rec = ReconcileSlurmJobs(
      jobs, "arbor-toy-0123abcd", {{"PATH", dir + "/bin:/usr/bin:/bin"}}, [] { return false; },
      [&](const std::string& line) { said.push_back(line); });
  ASSERT_TRUE(rec.ok()) << rec.error().message;
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0],
            "arbor: adopting Slurm job 50 (node 2 build) a previous run left: waiting for it to "
            "end");
  ASSERT_EQ(rec->left.size(), 4u) << "the measurement's folder is not claimable";
  EXPECT_FALSE(fs::exists(jobs + "/n6-bench-0-00000000"));
  const LeftJob& adopted = rec->left.at("n2-build-00000000");
  EXPECT_TRUE(adopted.adopted && adopted.finished);
  EXPECT_EQ(adopted.exit_code, 0);
  EXPECT_EQ(adopted.host, "cn7");
  const LeftJob& read = rec->left.at("n3-check-00000000");
  EXPECT_TRUE(read.finished && !read.adopted);
  EXPECT_EQ(read.exit_code, 1);
  const LeftJob& lost = rec->left.at("n4-profile-00000000");
  EXPECT_FALSE(lost.finished);
  EXPECT_EQ(lost.why,
            "Slurm job 47 ended without a result (cancelled, lost with its node, or killed)");
  const LeftJob& cut = rec->left.at("n5-build-00000000");
  EXPECT_FALSE(cut.finished);
  EXPECT_EQ(cut.why, "Slurm job 46: its status file was cut short ('exi')");
  EXPECT_EQ(Read(dir + "/bin/scancel.log"), "51\n");
  EXPECT_EQ(rec->Summary(),
            "adopted Slurm job(s) 50 (node 2 build), read 1 finished job(s), re-queued 2 lost "
            "job(s), cancelled 1 Slurm job(s) a previous run left");
  fs::remove_all(dir);
}

// The wait on a batch job's folder against a stand-in squeue that always lists job 60: the
// ends are decided by the folder and the deadlines, whatever the machine's speed.
TEST(SlurmAwait, EndsByStatusQueueLimitTimeoutOrDisappearance) {
  std::string dir = TempDir("arbor-await");
  const std::string job = dir + "/job";
  fs::create_directories(job);
  Executable(dir + "/bin/squeue", "#!/bin/sh\nprintf '60\\tPENDING\\tn2/build\\t0:01\\t\\n'\n");
  const std::map<std::string, std::string> env = {{"PATH", dir + "/bin:/usr/bin:/bin"}};
  // Pending (no job record) past the queue limit; the step's timeout alone would not end it.
  EXPECT_EQ(AwaitSlurmJob(job, "60", "j", {SteadyNow(), 3600, 0.3}, env), JobEnd::kQueueTimedOut);
  // Started: the step's timeout counts from the start, and runs out.
  Write(job + "/job", "60 cn7 0\n");
  EXPECT_EQ(AwaitSlurmJob(job, "60", "j", {SteadyNow(), 0.3, 3600.0}, env), JobEnd::kTimedOut);
  // Without a queue limit, from submission: a job submitted long ago is already out of time.
  fs::remove(job + "/job");
  EXPECT_EQ(AwaitSlurmJob(job, "60", "j", {SteadyNow() - 10, 5, std::nullopt}, env),
            JobEnd::kTimedOut);
  // A status ends the wait, before any deadline.
  Write(job + "/status", "exit 0\n");
  EXPECT_EQ(AwaitSlurmJob(job, "60", "j", {SteadyNow(), 3600, 3600.0}, env), JobEnd::kFinished);
  // Gone from squeue without a status, slurmstepd having said why: one look is enough.
  fs::remove(job + "/status");
  Write(job + "/slurm.err",
        "slurmstepd-cn7: error: *** JOB 61 ON cn7 CANCELLED AT 2026-11-30T16:03:32 ***\n");
  EXPECT_EQ(AwaitSlurmJob(job, "61", "j", {SteadyNow(), 3600, std::nullopt}, env), JobEnd::kGone);
  fs::remove_all(dir);
}

TEST(SlurmReconcile, NothingLeftSaysNothing) {
  std::string dir = TempDir("arbor-reconcile-none");
  Executable(dir + "/bin/squeue", "#!/bin/sh\nexit 0\n");
  auto rec = ReconcileSlurmJobs(
      dir + "/jobs", "j", {{"PATH", dir + "/bin:/usr/bin:/bin"}}, [] { return false; },
      [](const std::string&) {});
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec->Summary(), "");
  EXPECT_EQ(DescribeComment("n12/bench-3"), "node 12 bench-3");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace arbor
