#include "core/critic/rca.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace arbor {
namespace {

StepResult Failed(int code) {
  StepResult r;
  r.kind = ExitKind::kFailed;
  r.exit_code = code;
  r.detail = "exit code " + std::to_string(code);
  return r;
}

StepResult Signaled(int sig) {
  StepResult r;
  r.kind = ExitKind::kSignaled;
  r.signal = sig;
  return r;
}

StepResult Kind(ExitKind k, const std::string& detail) {
  StepResult r;
  r.kind = k;
  r.detail = detail;
  return r;
}

struct Case {
  std::string name;
  RcaInput in;
  RcaClass cls;
  std::string evidence;  // must appear in the diagnosis' evidence
  RcaEffect effect;
  std::string subject = "";
};

RcaInput In(FailedStage step, StepResult result, const std::string& output) {
  RcaInput in;
  in.step = step;
  in.result = std::move(result);
  in.output_tail = output;
  return in;
}

std::vector<Case> Cases() {
  std::vector<Case> cases = {
      {"g++ error",
       In(FailedStage::kBuild, Failed(1),
          "In file included from src/main.cc:3:\n"
          "src/kernel.h:42:10: error: 'tile_size' was not declared in this scope\n"
          "   42 |   return tile_size * 2;\n"
          "ninja: build stopped: subcommand failed.\n"),
       RcaClass::kBuildError, "src/kernel.h:42:10: error: 'tile_size' was not declared",
       RcaEffect::kRetryOnce},
      {"ld undefined reference",
       In(FailedStage::kBuild, Failed(2),
          "/usr/bin/ld: CMakeFiles/bench.dir/main.cc.o: in function `main':\n"
          "main.cc:(.text+0x1d): undefined reference to `Kernel::Run()'\n"
          "collect2: error: ld returned 1 exit status\n"
          "make[2]: *** [CMakeFiles/bench.dir/build.make:97: bench] Error 1\n"),
       RcaClass::kBuildError, "undefined reference to `Kernel::Run()'", RcaEffect::kRetryOnce},
      {"missing .so",
       In(FailedStage::kBench, Failed(127),
          "./build/bench: error while loading shared libraries: libtbb.so.12: cannot open shared "
          "object file: No such file or directory\n"),
       RcaClass::kDependency, "libtbb.so.12: cannot open shared object file",
       RcaEffect::kBlockDependency, "libtbb.so.12"},
      {"command not found, exit 127",
       In(FailedStage::kBench, Failed(127), "sh: 1: hyperfine: not found\n"), RcaClass::kDependency,
       "hyperfine: not found", RcaEffect::kBlockDependency, "hyperfine"},
      {"bash command not found",
       In(FailedStage::kBuild, Failed(127), "bash: line 1: nvcc: command not found\n"),
       RcaClass::kDependency, "nvcc: command not found", RcaEffect::kBlockDependency, "nvcc"},
      {"glibc version",
       In(FailedStage::kBench, Failed(1),
          "./bench: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found (required "
          "by ./bench)\n"),
       RcaClass::kDependency, "GLIBC_2.38", RcaEffect::kBlockDependency, "GLIBC_2.38"},
      {"python module",
       In(FailedStage::kCheck, Failed(1),
          "Traceback (most recent call last):\n  File \"check.py\", line 2, in <module>\n"
          "ModuleNotFoundError: No module named 'numpy'\n"),
       RcaClass::kDependency, "No module named 'numpy'", RcaEffect::kBlockDependency, "numpy"},
      {"missing header",
       In(FailedStage::kBuild, Failed(1),
          "src/io.cc:1:10: fatal error: zstd.h: No such file or directory\n"
          "compilation terminated.\n"),
       RcaClass::kDependency, "fatal error: zstd.h", RcaEffect::kBlockDependency, "zstd.h"},
      {"missing -l",
       In(FailedStage::kBuild, Failed(1), "/usr/bin/ld: cannot find -lnuma: No such file\n"),
       RcaClass::kDependency, "cannot find -lnuma", RcaEffect::kBlockDependency, "libnuma"},
      {"illegal instruction", In(FailedStage::kBench, Signaled(4), "starting run\n"),
       RcaClass::kPrerequisite, "killed by SIGILL", RcaEffect::kAwaitPrerequisite},
      {"illegal instruction via the shell",
       In(FailedStage::kBench, Failed(132), "Illegal instruction\n"), RcaClass::kPrerequisite,
       "Illegal instruction", RcaEffect::kAwaitPrerequisite},
      {"unsupported compiler option",
       In(FailedStage::kBuild, Failed(1), "g++: error: unrecognized command-line option '-mfoo'\n"),
       RcaClass::kPrerequisite, "unrecognized command-line option", RcaEffect::kAwaitPrerequisite},
      {"segfault", In(FailedStage::kBench, Signaled(11), "starting run\n"), RcaClass::kRuntimeCrash,
       "killed by SIGSEGV", RcaEffect::kRetryOnce},
      {"segfault via the shell",
       In(FailedStage::kBench, Failed(139), "Segmentation fault (core dumped)\n"),
       RcaClass::kRuntimeCrash, "Segmentation fault (core dumped)", RcaEffect::kRetryOnce},
      {"abort with assertion",
       In(FailedStage::kBench, Signaled(6),
          "bench: src/pool.cc:88: void Pool::Put(int): Assertion `n < cap_' failed.\n"),
       RcaClass::kRuntimeCrash, "Assertion `n < cap_' failed.", RcaEffect::kRetryOnce},
      {"bad_alloc",
       In(FailedStage::kBench, Signaled(6),
          "terminate called after throwing an instance of 'std::bad_alloc'\n"
          "  what():  std::bad_alloc\n"),
       RcaClass::kOutOfMemory, "std::bad_alloc", RcaEffect::kPruneDirection},
      {"compiler out of memory",
       In(FailedStage::kBuild, Failed(1),
          "cc1plus: out of memory allocating 65536 bytes after a total of 2147479552 bytes\n"),
       RcaClass::kOutOfMemory, "cc1plus: out of memory", RcaEffect::kPruneDirection},
      {"fork bomb under the process limit in the check (not an accuracy verdict)",
       In(FailedStage::kCheck, Failed(2), "comparing\nsh: 1: Cannot fork\n"),
       RcaClass::kResourceLimit, "sh: 1: Cannot fork", RcaEffect::kPruneDirection},
      {"bash fork retry in the build",
       In(FailedStage::kBuild, Failed(254),
          "bash: fork: retry: Resource temporarily unavailable\n"),
       RcaClass::kResourceLimit, "fork: retry", RcaEffect::kPruneDirection},
      {"thread creation failing",
       In(FailedStage::kBench, Failed(1),
          "error: pthread_create: Resource temporarily unavailable\n"),
       RcaClass::kResourceLimit, "pthread_create", RcaEffect::kPruneDirection},
      {"sanitizer",
       In(FailedStage::kBench, Failed(1),
          "==123==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x6\n"),
       RcaClass::kRuntimeCrash, "AddressSanitizer: heap-buffer-overflow", RcaEffect::kRetryOnce},
      {"python exception in the bench",
       In(FailedStage::kBench, Failed(1),
          "Traceback (most recent call last):\n  File \"bench.py\", line 9, in <module>\n"
          "ZeroDivisionError: division by zero\n"),
       RcaClass::kRuntimeCrash, "ZeroDivisionError: division by zero", RcaEffect::kRetryOnce},
      {"timeout",
       In(FailedStage::kBench, Kind(ExitKind::kTimedOut, "limit 600s"), "iteration 9123\n"),
       RcaClass::kTimeout, "bench timed out (limit 600s)", RcaEffect::kPruneDirection},
      {"checksum mismatch",
       In(FailedStage::kCheck, Failed(1),
          "comparing output\nchecksum mismatch: got 0x1f3a expected 0x9c01\n"),
       RcaClass::kAccuracy, "checksum mismatch: got 0x1f3a expected 0x9c01",
       RcaEffect::kPruneDirection},
      {"python assert in the check is a verdict",
       In(FailedStage::kCheck, Failed(1), "AssertionError: max abs diff 0.31 > 1e-3\n"),
       RcaClass::kAccuracy, "max abs diff 0.31", RcaEffect::kPruneDirection},
      {"metric missing",
       In(FailedStage::kBench, Kind(ExitKind::kBadOutput, "metric 'tok_per_s' not found in stdout"),
          "done\n"),
       RcaClass::kBadOutput, "metric 'tok_per_s' not found", RcaEffect::kNone},
      {"spawn error",
       In(FailedStage::kBuild,
          Kind(ExitKind::kSpawnError, "cannot create /tmp/x/out: No space left"), ""),
       RcaClass::kInfrastructure, "No space left", RcaEffect::kRequeue},
      {"unknown exit", In(FailedStage::kBench, Failed(3), "warming up\nbye\n"), RcaClass::kUnknown,
       "exit code 3", RcaEffect::kNone},
  };
  RcaInput oom = In(FailedStage::kBench, Signaled(9), "allocating arena\n");
  oom.memory_limited = true;
  cases.push_back({"SIGKILL under memory limit", oom, RcaClass::kOutOfMemory,
                   "killed by SIGKILL under the memory limit", RcaEffect::kPruneDirection});
  RcaInput flaky = In(FailedStage::kBench, Signaled(11), "Segmentation fault\n");
  flaky.passed_on_rerun = true;
  cases.push_back({"flaky", flaky, RcaClass::kFlaky, "Segmentation fault", RcaEffect::kRerun});
  RcaInput guard = In(FailedStage::kGate, StepResult{}, "");
  guard.result.detail = "guard p99_ms 300 > max 250";
  cases.push_back(
      {"guard", guard, RcaClass::kGuard, "guard p99_ms 300 > max 250", RcaEffect::kPruneDirection});
  return cases;
}

TEST(RcaTest, ClassifiesRealisticOutputs) {
  for (const Case& c : Cases()) {
    const Diagnosis d = Classify(c.in);
    EXPECT_EQ(RcaClassName(d.cls), RcaClassName(c.cls)) << c.name << "\n" << d.evidence;
    EXPECT_NE(d.evidence.find(c.evidence), std::string::npos) << c.name << ": evidence was\n"
                                                              << d.evidence;
    EXPECT_EQ(d.effect, c.effect) << c.name;
    EXPECT_EQ(d.effect, EffectOf(d.cls)) << c.name;
    EXPECT_FALSE(d.suggestion.empty()) << c.name;
    EXPECT_EQ(d.subject, c.subject) << c.name;
    int lines = 1;
    for (char ch : d.evidence) lines += ch == '\n';
    EXPECT_LE(lines, 3) << c.name;
  }
}

TEST(RcaTest, EvidenceIsTheMostTellingLinesFirst) {
  const Diagnosis d = Classify(In(FailedStage::kBuild, Failed(2),
                                  "/usr/bin/ld: main.o: in function `main':\n"
                                  "main.cc:(.text+0x1d): undefined reference to `Run()'\n"
                                  "collect2: error: ld returned 1 exit status\n"
                                  "make: *** [Makefile:4: bench] Error 1\n"));
  EXPECT_EQ(d.evidence,
            "main.cc:(.text+0x1d): undefined reference to `Run()'\n"
            "collect2: error: ld returned 1 exit status");
  EXPECT_EQ(DescribeDiagnosis(d),
            "build_error → retry_once: main.cc:(.text+0x1d): undefined reference to `Run()'");
}

TEST(RcaTest, UsesTheStepTailWhenNoOutputIsGiven) {
  RcaInput in;
  in.step = FailedStage::kBench;
  in.result = Signaled(8);
  in.result.tail = "Floating point exception\n";
  const Diagnosis d = Classify(in);
  EXPECT_EQ(d.cls, RcaClass::kRuntimeCrash);
  EXPECT_EQ(d.evidence, "killed by SIGFPE\nFloating point exception");
}

TEST(RcaTest, CompilerDiagnosticsOutsideTheBuildStep) {
  // A bench command that compiles (make run): a compiler error is still a build error…
  EXPECT_EQ(Classify(In(FailedStage::kBench, Failed(2), "gen.cc:7:3: error: expected ';'\n")).cls,
            RcaClass::kBuildError);
  // …but a program printing "error:" is not.
  EXPECT_EQ(Classify(In(FailedStage::kBench, Failed(1), "error: device busy\n")).cls,
            RcaClass::kUnknown);
}

// A run the executor lost (a cluster job cancelled, preempted, over its time limit) is
// infrastructure whatever its exit kind, and says so with the executor's own line.
TEST(RcaTest, ExecutorLossIsInfrastructure) {
  for (ExitKind kind : {ExitKind::kTimedOut, ExitKind::kSignaled, ExitKind::kFailed}) {
    RcaInput in;
    in.step = FailedStage::kBench;
    in.result.kind = kind;
    in.result.signal = 15;
    in.result.infrastructure = true;
    in.result.executor = "slurm";
    in.result.detail = "Slurm job 4 exceeded its Slurm time limit";
    in.output_tail = "Segmentation fault\n";  // the executor's verdict outranks the output
    Diagnosis d = Classify(in);
    EXPECT_EQ(d.cls, RcaClass::kInfrastructure) << ExitKindName(kind);
    EXPECT_EQ(d.effect, RcaEffect::kRequeue);
    EXPECT_EQ(d.evidence.rfind("Slurm job 4 exceeded", 0), 0u) << d.evidence;
    EXPECT_NE(d.suggestion.find("(slurm)"), std::string::npos) << d.suggestion;
  }
  RcaInput same;
  same.step = FailedStage::kBench;
  same.result.kind = ExitKind::kTimedOut;
  EXPECT_EQ(Classify(same).cls, RcaClass::kTimeout) << "without the flag: the command's timeout";
}

TEST(RcaTest, NamesRoundTrip) {
  for (RcaClass c : {RcaClass::kBuildError,
                     RcaClass::kDependency,
                     RcaClass::kPrerequisite,
                     RcaClass::kRuntimeCrash,
                     RcaClass::kOutOfMemory,
                     RcaClass::kResourceLimit,
                     RcaClass::kTimeout,
                     RcaClass::kAccuracy,
                     RcaClass::kGuard,
                     RcaClass::kFlaky,
                     RcaClass::kBadOutput,
                     RcaClass::kInfrastructure,
                     RcaClass::kUnknown,
                     RcaClass::kNone,
                     RcaClass::kNoGain,
                     RcaClass::kNotConfirmed,
                     RcaClass::kInflation,
                     RcaClass::kAnomaly,
                     RcaClass::kAnomalousIncumbent,
                     RcaClass::kFlakyIncumbent}) {
    EXPECT_EQ(ParseRcaClass(RcaClassName(c)), c);
  }
  // The stored and printed words: a store written before the enum reads back the same.
  EXPECT_EQ(RcaClassName(RcaClass::kNone), "");
  EXPECT_EQ(RcaClassName(RcaClass::kNoGain), "no_gain");
  EXPECT_EQ(RcaClassName(RcaClass::kNotConfirmed), "not_confirmed");
  EXPECT_EQ(RcaClassName(RcaClass::kAnomalousIncumbent), "anomalous_incumbent");
  EXPECT_EQ(RcaClassName(RcaClass::kFlakyIncumbent), "flaky_incumbent");
  EXPECT_EQ(EffectOf(RcaClass::kNoGain), RcaEffect::kNone) << "a verdict is recorded only";
  for (RcaEffect e :
       {RcaEffect::kRetryOnce, RcaEffect::kPruneDirection, RcaEffect::kBlockDependency,
        RcaEffect::kRerun, RcaEffect::kRequeue, RcaEffect::kAwaitPrerequisite, RcaEffect::kNone}) {
    EXPECT_EQ(ParseRcaEffect(RcaEffectName(e)), e);
  }
  EXPECT_EQ(RcaClassName(RcaClass::kOutOfMemory), "out_of_memory");
  EXPECT_EQ(RcaEffectName(RcaEffect::kBlockDependency), "block_dependency");
  EXPECT_FALSE(ParseRcaClass("segfault").has_value());
  EXPECT_FALSE(ParseRcaEffect("").has_value());
}

}  // namespace
}  // namespace arbor
