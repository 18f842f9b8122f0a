#include "specialists/builtin.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "core/critic/rca.h"
#include "exec/runner.h"

namespace arbor {
namespace {

namespace fs = std::filesystem;
using Verdict = SpecialistResult::Status;

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// A campaign folder with a git repository (two committed files) and a runs folder, removed at
// the end of each test.
class BuiltinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl =
        std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/arbor-spec-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    repo_ = root_ / "repo";
    fs::create_directories(repo_);
    Write(repo_ / "a.txt", "alpha\nbeta\ngamma\n");
    Write(repo_ / "b.txt", "one\ntwo\n");
    Sh("git init -q && git add -A && git -c user.email=t@example.com -c user.name=t "
       "commit -qm init");
    spec_.file = (root_ / "arbor.toml").string();
    spec_.target.build_timeout_s = 30;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  std::string Sh(const std::string& command) {
    std::map<std::string, std::string> env = {{"PATH", std::getenv("PATH")}};
    Result<CapturedRun> r = RunCaptured(command, repo_.string(), env);
    EXPECT_TRUE(r.ok() && r->result.ok()) << command << ": " << (r.ok() ? r->err : "");
    return r.ok() ? r->out : "";
  }

  // Writes the diff of `edit` (a shell command run in the repo) to patches/<name> and undoes it.
  std::string MakePatch(const std::string& name, const std::string& edit) {
    Sh(edit);
    Write(root_ / "patches" / name, Sh("git diff"));
    Sh("git checkout -q -- .");
    return (root_ / "patches" / name).string();
  }

  SpecialistResult Implement(const ApplySpec& apply, const std::string& value = "",
                             EnvOverlay parent = {}, EnvOverlay base = {}) {
    action_.id = "test.action";
    action_.apply = apply;
    Task task;
    task.node = 7;
    task.action = &action_;
    task.value = value;
    task.worktree = repo_.string();
    task.parent_overlay = std::move(parent);
    task.base_env = std::move(base);
    BuiltinSpecialist specialist(&spec_, (root_ / "runs").string(), policy_);
    return specialist.Implement(task);
  }

  fs::path root_;
  PatchPolicy policy_;
  fs::path repo_;
  CampaignSpec spec_;
  ActionSpec action_;
};

ApplySpec ApplyEnv(std::map<std::string, std::string> env) {
  ApplySpec a;
  a.kind = ApplySpec::Kind::kEnv;
  a.env = std::move(env);
  return a;
}
ApplySpec ApplyAppend(std::map<std::string, std::string> append) {
  ApplySpec a;
  a.kind = ApplySpec::Kind::kAppend;
  a.append = std::move(append);
  return a;
}
ApplySpec ApplyPatch(std::string patch) {
  ApplySpec a;
  a.kind = ApplySpec::Kind::kPatch;
  a.patch = std::move(patch);
  return a;
}
ApplySpec ApplyRun(std::string run) {
  ApplySpec a;
  a.kind = ApplySpec::Kind::kRun;
  a.run = std::move(run);
  return a;
}
ApplySpec ApplyAgent(std::string domain) {
  ApplySpec a;
  a.kind = ApplySpec::Kind::kAgent;
  a.agent = std::move(domain);
  a.goal = "Fuse RMSNorm into the next matmul";
  return a;
}

TEST_F(BuiltinTest, EnvSetsVariablesOnTopOfTheParentOverlay) {
  SpecialistResult r = Implement(ApplyEnv({{"TS_GEMM", "tiled"}}), "",
                                 {{"TS_GEMM", "naive"}, {"OMP_NUM_THREADS", "4"}});
  EXPECT_EQ(r.status, Verdict::kApplied);
  EXPECT_EQ(r.overlay, (EnvOverlay{{"TS_GEMM", "tiled"}, {"OMP_NUM_THREADS", "4"}}));
  EXPECT_EQ(r.summary, "set TS_GEMM=tiled");
  EXPECT_EQ(r.diagnosis, "");
  EXPECT_GE(r.duration_s, 0);
}

TEST_F(BuiltinTest, EnvSubstitutesTheValue) {
  SpecialistResult r = Implement(ApplyEnv({{"TS_TILE", "{value}"}, {"TS_MODE", "t{value}"}}), "32");
  EXPECT_EQ(r.status, Verdict::kApplied);
  EXPECT_EQ(r.overlay, (EnvOverlay{{"TS_TILE", "32"}, {"TS_MODE", "t32"}}));
  EXPECT_EQ(r.summary, "set TS_MODE=t32, TS_TILE=32");
}

TEST_F(BuiltinTest, AppendComposesParentThenBaseEnvThenEmpty) {
  SpecialistResult r =
      Implement(ApplyAppend({{"CFLAGS", " -O2"}, {"LDFLAGS", " -lm"}, {"EXTRA", "-x{value}"}}), "1",
                {{"CFLAGS", "-g"}, {"KEEP", "1"}}, {{"CFLAGS", "-O0"}, {"LDFLAGS", "-L/opt"}});
  EXPECT_EQ(r.status, Verdict::kApplied);
  EXPECT_EQ(r.overlay,
            (EnvOverlay{
                {"CFLAGS", "-g -O2"}, {"LDFLAGS", "-L/opt -lm"}, {"EXTRA", "-x1"}, {"KEEP", "1"}}));
  EXPECT_EQ(r.summary, "appended ' -O2' to CFLAGS, '-x1' to EXTRA, ' -lm' to LDFLAGS");
}

TEST_F(BuiltinTest, AppendSummaryForOneVariable) {
  SpecialistResult r = Implement(ApplyAppend({{"CFLAGS", " -O2"}}));
  EXPECT_EQ(r.overlay, (EnvOverlay{{"CFLAGS", " -O2"}}));
  EXPECT_EQ(r.summary, "appended ' -O2' to CFLAGS");
}

TEST_F(BuiltinTest, PatchAppliesInTheWorktree) {
  MakePatch("x.diff", "sed -i s/beta/BETA/ a.txt && echo three >> b.txt");
  SpecialistResult r =
      Implement(ApplyPatch((root_ / "patches" / "x.diff").string()), "", {{"TS_GEMM", "tiled"}});
  EXPECT_EQ(r.status, Verdict::kApplied) << r.diagnosis;
  EXPECT_EQ(r.summary, "applied patches/x.diff (2 files)");
  EXPECT_EQ(r.overlay, (EnvOverlay{{"TS_GEMM", "tiled"}}));
  EXPECT_EQ(Slurp(repo_ / "a.txt"), "alpha\nBETA\ngamma\n");
  EXPECT_EQ(Slurp(repo_ / "b.txt"), "one\ntwo\nthree\n");
}

TEST_F(BuiltinTest, PatchPathTakesTheValueAndMayBeRelativeToTheCampaignFile) {
  MakePatch("tile-16.diff", "sed -i s/gamma/g16/ a.txt");
  SpecialistResult r = Implement(ApplyPatch("patches/tile-{value}.diff"), "16");
  EXPECT_EQ(r.status, Verdict::kApplied) << r.diagnosis;
  EXPECT_EQ(r.summary, "applied patches/tile-16.diff (1 file)");
  EXPECT_EQ(Slurp(repo_ / "a.txt"), "alpha\nbeta\ng16\n");
}

TEST_F(BuiltinTest, PatchThatDoesNotApplyFails) {
  std::string patch = MakePatch("x.diff", "sed -i s/beta/BETA/ a.txt");
  Write(repo_ / "a.txt", "something else entirely\n");
  SpecialistResult r = Implement(ApplyPatch(patch), "", {{"A", "1"}});
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.diagnosis, "patch did not apply: error: patch failed: a.txt:1");
  EXPECT_EQ(r.summary, "did not apply patches/x.diff");
  EXPECT_EQ(r.overlay, (EnvOverlay{{"A", "1"}}));
  EXPECT_EQ(Slurp(repo_ / "b.txt"), "one\ntwo\n");
}

TEST_F(BuiltinTest, PatchRefusedByThePolicyNeverReachesGit) {
  // Creates ../outside.txt next to the repository: git itself would refuse it too, but the
  // policy must answer first, naming its rule.
  Write(root_ / "patches" / "escape.diff",
        "diff --git a/../outside.txt b/../outside.txt\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/../outside.txt\n@@ -0,0 +1 @@\n+pwned\n");
  SpecialistResult r =
      Implement(ApplyPatch((root_ / "patches" / "escape.diff").string()), "", {{"A", "1"}});
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.diagnosis, "patch policy: path-traversal: \"../outside.txt\" leaves the worktree");
  EXPECT_EQ(r.summary, "refused patches/escape.diff");
  EXPECT_EQ(r.overlay, (EnvOverlay{{"A", "1"}}));
  EXPECT_FALSE(fs::exists(root_ / "outside.txt"));
}

TEST_F(BuiltinTest, PatchOutsideTheAllowlistIsRefused) {
  std::string patch = MakePatch("x.diff", "echo three >> b.txt");
  policy_.allow = {"a.txt"};
  SpecialistResult r = Implement(ApplyPatch(patch));
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.diagnosis, "patch policy: outside-allowlist: \"b.txt\" matches none of a.txt");
  EXPECT_EQ(Slurp(repo_ / "b.txt"), "one\ntwo\n");
}

TEST_F(BuiltinTest, MissingPatchFileFails) {
  std::string missing = (root_ / "patches" / "missing.diff").string();
  SpecialistResult r = Implement(ApplyPatch(missing));
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.diagnosis,
            "patch did not apply: cannot read " + missing + ": No such file or directory");
}

TEST_F(BuiltinTest, RunChangesTheWorktreeWithTheNodeEnvironment) {
  SpecialistResult r = Implement(
      ApplyRun(
          "sed -i s/alpha/{value}/ a.txt && echo \"$ARBOR_NODE $MODE $BASE $ARBOR_WORKTREE\" > "
          "env.txt && echo out && echo err >&2"),
      "ALPHA", {{"MODE", "fast"}}, {{"MODE", "slow"}, {"BASE", "b"}});
  EXPECT_EQ(r.status, Verdict::kApplied) << r.diagnosis;
  EXPECT_EQ(Slurp(repo_ / "a.txt"), "ALPHA\nbeta\ngamma\n");
  EXPECT_EQ(Slurp(repo_ / "env.txt"), "7 fast b " + repo_.string() + "\n");
  EXPECT_EQ(r.overlay, (EnvOverlay{{"MODE", "fast"}}));
  EXPECT_EQ(r.summary,
            "ran: sed -i s/alpha/ALPHA/ a.txt && echo \"$ARBOR_NODE $MODE $BASE $ARBOR_WORK ...");
  EXPECT_EQ(Slurp(root_ / "runs" / "n7" / "apply" / "stdout"), "out\n");
  EXPECT_EQ(Slurp(root_ / "runs" / "n7" / "apply" / "stderr"), "err\n");
}

TEST_F(BuiltinTest, RunSummaryShowsTheFirstLineOfAMultiLineScript) {
  SpecialistResult r = Implement(ApplyRun("\ntouch one\ntouch two\n"));
  EXPECT_EQ(r.status, Verdict::kApplied) << r.diagnosis;
  EXPECT_EQ(r.summary, "ran: touch one ...");
  EXPECT_TRUE(fs::exists(repo_ / "two"));
}

TEST_F(BuiltinTest, RunFailureReportsExitCodeAndLastStderrLine) {
  SpecialistResult r = Implement(
      ApplyRun("echo first >&2; echo 'sed: bad pattern' >&2; echo >&2; exit 3"), "", {{"A", "1"}});
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.diagnosis, "apply command exited with code 3: sed: bad pattern");
  EXPECT_EQ(r.overlay, (EnvOverlay{{"A", "1"}}));
}

TEST_F(BuiltinTest, RunFailureWithoutStderr) {
  SpecialistResult r = Implement(ApplyRun("exit 1"));
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.diagnosis, "apply command exited with code 1");
}

TEST_F(BuiltinTest, RunKilledBySignal) {
  SpecialistResult r = Implement(ApplyRun("kill -9 $$"));
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.diagnosis, "apply command was killed by signal 9");
}

TEST_F(BuiltinTest, RunTimesOutAtTheBuildTimeout) {
  spec_.target.build_timeout_s = 0.5;
  SpecialistResult r = Implement(ApplyRun("echo waiting >&2; sleep 31"));
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.diagnosis, "apply command timed out after 500ms: waiting");
  EXPECT_LT(r.duration_s, 10);
  EXPECT_GE(r.duration_s, 0.4);
}

TEST_F(BuiltinTest, AgentWithoutBackendIsSkipped) {
  SpecialistResult r = Implement(ApplyAgent("kernel"), "", {{"A", "1"}});
  EXPECT_EQ(r.status, Verdict::kSkipped);
  EXPECT_EQ(r.diagnosis,
            "no specialist backend configured for domain 'kernel': add [specialists.kernel] "
            "with backend = \"command\" or \"llm\"");
  EXPECT_EQ(r.overlay, (EnvOverlay{{"A", "1"}}));

  spec_.specialists["kernel"] = SpecialistSpec{"kernel", SpecialistBackend::kBuiltin};
  EXPECT_EQ(Implement(ApplyAgent("kernel")).diagnosis, r.diagnosis);
}

TEST_F(BuiltinTest, AgentOfAnotherBackendIsLeftToTheRouter) {
  spec_.specialists["kernel"] = SpecialistSpec{"kernel", SpecialistBackend::kLlm};
  spec_.specialists["build"] = SpecialistSpec{"build", SpecialistBackend::kCommand, "my-agent"};
  SpecialistResult r = Implement(ApplyAgent("kernel"));
  EXPECT_EQ(r.status, Verdict::kSkipped);
  EXPECT_EQ(r.diagnosis,
            "the builtin specialist does not run backend 'llm': agent actions go through the "
            "SpecialistRouter (specialists/router.h)");
  EXPECT_EQ(Implement(ApplyAgent("build")).diagnosis,
            "the builtin specialist does not run backend 'command': agent actions go through the "
            "SpecialistRouter (specialists/router.h)");
}

// A preloaded library that is not installed: the loader would ignore it and the benchmark would
// measure the program without it. The apply fails with the loader's own words, which the
// Critic's root-cause analysis reads as a missing dependency (core/critic/rca.h), not a crash.
TEST_F(BuiltinTest, PreloadingALibraryThatIsNotThereFailsAsAMissingDependency) {
  const std::string missing = (root_ / "no" / "libjemalloc.so.2").string();
  SpecialistResult r = Implement(ApplyEnv({{"LD_PRELOAD", missing}}), "", {{"A", "1"}});
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.overlay, (EnvOverlay{{"A", "1"}}));
  EXPECT_EQ(r.diagnosis, "LD_PRELOAD: " + missing +
                             ": cannot open shared object file: No such file or directory (the "
                             "dynamic loader would ignore it and the benchmark would run without "
                             "it)");
  RcaInput in;
  in.step = FailedStage::kApply;
  in.result.kind = ExitKind::kFailed;
  in.result.exit_code = 1;
  in.result.detail = r.diagnosis;
  in.result.tail = r.diagnosis;
  Diagnosis d = Classify(in);
  EXPECT_EQ(d.cls, RcaClass::kDependency);
  EXPECT_EQ(d.effect, RcaEffect::kBlockDependency);
  EXPECT_EQ(d.subject, missing);

  // Appended after an existing entry, the same; a library that exists and a bare soname pass.
  Write(root_ / "lib" / "libfake.so", "");
  const std::string present = (root_ / "lib" / "libfake.so").string();
  r = Implement(ApplyAppend({{"LD_PRELOAD", ":" + missing}}), "", {{"LD_PRELOAD", present}});
  EXPECT_EQ(r.status, Verdict::kFailed);
  r = Implement(ApplyEnv({{"LD_PRELOAD", present + " libc.so.6"}}));
  EXPECT_EQ(r.status, Verdict::kApplied);
  // Under Slurm the library is looked for on the compute node, not here.
  spec_.executor.kind = ExecutorSpec::Kind::kSlurm;
  r = Implement(ApplyEnv({{"LD_PRELOAD", missing}}));
  EXPECT_EQ(r.status, Verdict::kApplied);
}

}  // namespace
}  // namespace arbor
