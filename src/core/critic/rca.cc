#include "core/critic/rca.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <span>
#include <utility>
#include <vector>

#include "util/name_table.h"
#include "util/strings.h"

namespace arbor {
namespace {

constexpr std::array<std::pair<RcaClass, RcaEffect>, 13> kEffectOf = {{
    {RcaClass::kBuildError, RcaEffect::kRetryOnce},
    {RcaClass::kDependency, RcaEffect::kBlockDependency},
    {RcaClass::kPrerequisite, RcaEffect::kAwaitPrerequisite},
    {RcaClass::kRuntimeCrash, RcaEffect::kRetryOnce},
    {RcaClass::kOutOfMemory, RcaEffect::kPruneDirection},
    {RcaClass::kResourceLimit, RcaEffect::kPruneDirection},
    {RcaClass::kTimeout, RcaEffect::kPruneDirection},
    {RcaClass::kAccuracy, RcaEffect::kPruneDirection},
    {RcaClass::kGuard, RcaEffect::kPruneDirection},
    {RcaClass::kFlaky, RcaEffect::kRerun},
    {RcaClass::kBadOutput, RcaEffect::kNone},
    {RcaClass::kInfrastructure, RcaEffect::kRequeue},
    {RcaClass::kUnknown, RcaEffect::kNone},
}};

constexpr NameTable<RcaEffect, 7> kEffects = {{
    {RcaEffect::kAwaitPrerequisite, "await_prerequisite"},
    {RcaEffect::kRequeue, "requeue"},
    {RcaEffect::kRetryOnce, "retry_once"},
    {RcaEffect::kPruneDirection, "prune_direction"},
    {RcaEffect::kBlockDependency, "block_dependency"},
    {RcaEffect::kRerun, "rerun"},
    {RcaEffect::kNone, "none"},
}};

constexpr NameTable<FailedStage, 8> kStages = {{
    {FailedStage::kApply, "apply"},
    {FailedStage::kBuild, "build"},
    {FailedStage::kCheck, "check"},
    {FailedStage::kBench, "bench"},
    {FailedStage::kProfile, "profile"},
    {FailedStage::kGate, "gate"},
    {FailedStage::kAccuracy, "accuracy"},
    {FailedStage::kInfrastructure, "infrastructure"},
}};

constexpr size_t kMaxEvidenceLines = 3;
constexpr size_t kMaxLineChars = 240;

using Needles = std::span<const std::string_view>;

bool Has(std::string_view line, std::string_view needle) {
  return line.find(needle) != std::string_view::npos;
}
bool HasAny(std::string_view line, Needles needles) {
  return std::any_of(needles.begin(), needles.end(), [&](auto n) { return Has(line, n); });
}
std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "src/a.cc:12:5: error: …" or "a.cc:12: error: …": a compiler diagnostic in any step's output.
bool IsCompilerDiagnostic(std::string_view line) {
  const size_t pos = line.find(": error:");
  if (pos == std::string_view::npos) return false;
  size_t i = pos;
  bool digit = false;
  while (i > 0 && (std::isdigit(static_cast<unsigned char>(line[i - 1])) || line[i - 1] == ':')) {
    digit |= line[i - 1] != ':';
    --i;
  }
  return digit && i > 0 && line[i] == ':';
}

class Output {
 public:
  explicit Output(std::string_view text) {
    for (std::string& raw : Split(text, '\n')) {
      std::string line = Trim(raw);
      if (line.empty()) continue;
      if (line.size() > kMaxLineChars) line = line.substr(0, kMaxLineChars) + "…";
      lines_.push_back(std::move(line));
    }
  }
  // Up to three lines matching `match`, in output order.
  template <typename Match>
  std::vector<std::string> Find(Match match) const {
    std::vector<std::string> out;
    for (const std::string& l : lines_) {
      if (match(l) && out.size() < kMaxEvidenceLines) out.push_back(l);
    }
    return out;
  }
  std::vector<std::string> FindAny(Needles needles) const {
    return Find([&](const std::string& l) { return HasAny(l, needles); });
  }
  std::vector<std::string> Last(size_t n) const {
    const size_t from = lines_.size() > n ? lines_.size() - n : 0;
    return {lines_.begin() + static_cast<std::ptrdiff_t>(from), lines_.end()};
  }

 private:
  std::vector<std::string> lines_;
};

std::string SignalName(int sig) {
  switch (sig) {
    case 4:
      return "SIGILL";
    case 6:
      return "SIGABRT";
    case 7:
      return "SIGBUS";
    case 8:
      return "SIGFPE";
    case 9:
      return "SIGKILL";
    case 11:
      return "SIGSEGV";
    case 15:
      return "SIGTERM";
    default:
      return "signal " + std::to_string(sig);
  }
}

bool IsCrashSignal(int sig) { return sig == 4 || sig == 6 || sig == 7 || sig == 8 || sig == 11; }

// The token that ends right before `pos` (after the last space), without quotes or colons.
std::string TokenBefore(std::string_view line, size_t pos) {
  std::string_view head = line.substr(0, pos);
  const size_t start = head.find_last_of(" \t");
  std::string token(start == std::string_view::npos ? head : head.substr(start + 1));
  while (!token.empty() && (token.back() == ':' || token.back() == '\'')) token.pop_back();
  return token;
}
std::string Between(std::string_view line, std::string_view open, char close) {
  const size_t a = line.find(open);
  if (a == std::string_view::npos) return "";
  const size_t b = line.find(close, a + open.size());
  const size_t from = a + open.size();
  return std::string(line.substr(from, b == std::string_view::npos ? b : b - from));
}

// What is missing, read from the dependency line.
std::string DependencySubject(std::string_view line) {
  if (Has(line, "cannot find -l")) return "lib" + Between(line, "cannot find -l", ':');
  for (std::string_view marker : {": cannot open shared object file", ": command not found",
                                  ": not found", ": No such file or directory"}) {
    const size_t pos = line.find(marker);
    if (pos != std::string_view::npos) return TokenBefore(line, pos);
  }
  if (Has(line, "version `")) return Between(line, "version `", '\'');
  if (Has(line, "No module named '")) return Between(line, "No module named '", '\'');
  for (std::string_view marker : {"undefined symbol: ", "Could NOT find "}) {
    const size_t pos = line.find(marker);
    if (pos == std::string_view::npos) continue;
    std::string rest(line.substr(pos + marker.size()));
    return rest.substr(0, rest.find_first_of(" \t("));
  }
  return "";
}

Diagnosis Make(RcaClass cls, std::vector<std::string> evidence, std::string suggestion) {
  Diagnosis d;
  d.cls = cls;
  d.effect = EffectOf(cls);
  d.evidence = Join(evidence, "\n");
  d.suggestion = std::move(suggestion);
  return d;
}

constexpr std::string_view kOomNeedles[] = {
    "std::bad_alloc", "Cannot allocate memory", "out of memory", "Out of memory", "OutOfMemory",
    "MemoryError",    "memory exhausted"};
// fork()/clone() failing with EAGAIN: the process-count limit (or the kernel's) was reached.
// "Cannot fork" (dash), "fork: retry: Resource temporarily unavailable" (bash), "can't fork"
// (busybox, perl), pthread_create or a thread pool failing with EAGAIN.
bool IsProcessLimitLine(std::string_view line) {
  const std::string lower = Lower(line);
  const bool eagain = Has(lower, "resource temporarily unavailable");
  const bool spawn = Has(lower, "fork") || Has(lower, "pthread_create") || Has(lower, "clone") ||
                     Has(lower, "thread") || Has(lower, "spawn");
  return Has(lower, "cannot fork") || Has(lower, "can't fork") || Has(lower, "fork failed") ||
         Has(lower, "too many processes") || (eagain && spawn);
}

constexpr std::string_view kDependencyNeedles[] = {"cannot open shared object file",
                                                   "command not found",
                                                   "version `GLIBC",
                                                   "undefined symbol:",
                                                   "ModuleNotFoundError",
                                                   "No module named",
                                                   "cannot find -l",
                                                   "Could NOT find",
                                                   "error while loading shared libraries"};
constexpr std::string_view kPrerequisiteNeedles[] = {"Illegal instruction",
                                                     "illegal instruction",
                                                     "unrecognized command-line option",
                                                     "unrecognized command line option",
                                                     "unsupported instruction",
                                                     "not supported on this CPU",
                                                     "is not supported by this CPU",
                                                     "CPU does not support"};
constexpr std::string_view kBuildPrimary[] = {"error:", "undefined reference",
                                              "multiple definition of", "error[E"};
constexpr std::string_view kBuildSecondary[] = {
    "ld returned",          "collect2",    "make: ***", "make[",
    "ninja: build stopped", "CMake Error", "Error 1"};
constexpr std::string_view kCrashNeedles[] = {"Segmentation fault",
                                              "Assertion",
                                              "assertion failed",
                                              "terminate called",
                                              "Aborted",
                                              "core dumped",
                                              "AddressSanitizer",
                                              "Sanitizer",
                                              "runtime error:",
                                              "panicked at",
                                              "Traceback (most recent call last)",
                                              "Floating point exception",
                                              "Bus error",
                                              "Illegal instruction",
                                              "stack smashing",
                                              "double free",
                                              "free(): invalid"};
constexpr std::string_view kAccuracyNeedles[] = {"mismatch", "MISMATCH", "FAIL",     "Fail",
                                                 "fail",     "expected", "Expected", "differ",
                                                 "accuracy", "wrong",    "incorrect"};

}  // namespace

std::string_view RcaEffectName(RcaEffect e) { return NameIn(kEffects, e); }

std::optional<RcaEffect> ParseRcaEffect(std::string_view s) { return ParseIn(kEffects, s); }

RcaEffect EffectOf(RcaClass c) {
  for (const auto& [cls, effect] : kEffectOf) {
    if (cls == c) return effect;
  }
  return RcaEffect::kNone;
}

std::string_view FailedStageName(FailedStage s) { return NameIn(kStages, s); }

Diagnosis Classify(const RcaInput& in) {
  const StepResult& r = in.result;
  const Output out(in.output_tail.empty() ? r.tail : in.output_tail);
  int sig = r.kind == ExitKind::kSignaled ? r.signal : 0;
  if (r.kind == ExitKind::kFailed && r.exit_code > 128 && r.exit_code < 160) {
    sig = r.exit_code - 128;  // `sh -c` reports a child killed by N as 128 + N
  }
  const bool exited = r.kind == ExitKind::kFailed && sig == 0;
  std::vector<std::string> tail = out.Last(2);
  if (!r.detail.empty()) tail.insert(tail.begin(), r.detail);
  if (tail.size() > kMaxEvidenceLines) tail.resize(kMaxEvidenceLines);

  if (in.passed_on_rerun) {
    return Make(RcaClass::kFlaky, tail,
                "passed when run again: rerun once; if it recurs, "
                "stabilise the step before trusting its verdicts");
  }
  if (in.guard_violation || in.step == FailedStage::kGate) {
    return Make(RcaClass::kGuard, tail.empty() ? std::vector<std::string>{"guard violated"} : tail,
                "the change trades a guard metric for the objective: prune this direction");
  }
  if (r.infrastructure) {
    std::vector<std::string> ev = {r.detail.empty() ? "the executor lost the run" : r.detail};
    for (const std::string& l : out.Last(1)) ev.push_back(l);
    return Make(RcaClass::kInfrastructure, ev,
                "the run was lost where it ran (" + (r.executor.empty() ? "executor" : r.executor) +
                    "), not by the change: the node runs once more; not counted against the "
                    "action");
  }
  if (r.kind == ExitKind::kSpawnError) {
    return Make(RcaClass::kInfrastructure, tail,
                "the command could not be started: check the runner, disk and permissions; "
                "the node runs once more; not counted against the action");
  }
  if (r.kind == ExitKind::kTimedOut) {
    std::vector<std::string> ev = {std::string(FailedStageName(in.step)) + " timed out" +
                                   (r.detail.empty() ? "" : " (" + r.detail + ")")};
    for (const std::string& l : out.Last(2)) ev.push_back(l);
    return Make(RcaClass::kTimeout, ev,
                "the change made the step hang or far slower: prune this direction (or raise "
                "the step's timeout if the baseline is close to it)");
  }
  if (r.kind == ExitKind::kBadOutput) {
    std::vector<std::string> ev = {r.detail.empty() ? "output unreadable" : r.detail};
    for (const std::string& l : out.Last(1)) ev.push_back(l);
    return Make(RcaClass::kBadOutput, ev,
                "the command succeeded but its metric/profile could not be read: check that "
                "the change keeps the output format (metric source)");
  }
  if (std::vector<std::string> ev = out.FindAny(kOomNeedles);
      !ev.empty() || (sig == 9 && in.memory_limited)) {
    if (ev.empty()) ev = {"killed by SIGKILL under the memory limit"};
    return Make(RcaClass::kOutOfMemory, ev,
                "the change needs more memory than allowed: prune this direction or reduce its "
                "footprint (buffers, batch, threads)");
  }
  if (std::vector<std::string> ev = out.Find(IsProcessLimitLine); !ev.empty()) {
    return Make(RcaClass::kResourceLimit, ev,
                "the change starts more processes or threads than allowed (target.max_processes "
                "or the system's limit): prune this direction or bound its parallelism");
  }
  // A missing prerequisite: the instruction set, or an option the toolchain does not take. The
  // same change may run once something else is on the path (an ISA flag, a newer toolchain
  // setting), so it waits for the path to change instead of being banned.
  if (std::vector<std::string> ev = out.FindAny(kPrerequisiteNeedles); sig == 4 || !ev.empty()) {
    if (sig == 4) ev.insert(ev.begin(), "killed by SIGILL");
    if (ev.size() > kMaxEvidenceLines) ev.resize(kMaxEvidenceLines);
    return Make(RcaClass::kPrerequisite, ev,
                "the change needs a prerequisite the path lacks (instruction set, option "
                "support): blocked until the path changes, then retried");
  }
  auto dependency_line = [&](const std::string& l) {
    if (Has(l, "ld.lld:") || Has(l, "ld: error:"))
      return false;  // lld "undefined symbol": a link error
    return HasAny(l, kDependencyNeedles) || (Has(l, "fatal error:") && Has(l, "No such file")) ||
           (Has(l, "No such file or directory") && (r.exit_code == 127 || Has(l, "exec")));
  };
  if (std::vector<std::string> ev = out.Find(dependency_line);
      !ev.empty() || (exited && (r.exit_code == 127 || r.exit_code == 126))) {
    if (ev.empty()) {
      static constexpr std::string_view kShell[] = {"not found", "Permission denied"};
      ev = out.FindAny(kShell);
    }
    Diagnosis d = Make(RcaClass::kDependency, ev.empty() ? tail : ev,
                       "install or expose what is missing; block only the actions that need it");
    if (!ev.empty()) d.subject = DependencySubject(ev.front());
    if (!d.subject.empty()) {
      d.suggestion = "'" + d.subject +
                     "' is missing or the wrong version: install or expose "
                     "it; block only the actions that need it";
    }
    return d;
  }
  if (in.step == FailedStage::kBuild && r.kind == ExitKind::kFailed) {
    std::vector<std::string> ev = out.FindAny(kBuildPrimary);
    if (ev.empty()) ev = out.FindAny(kBuildSecondary);
    return Make(RcaClass::kBuildError, ev.empty() ? tail : ev,
                "the change does not compile or link: one constrained retry with this "
                "diagnosis");
  }
  if (std::vector<std::string> ev = out.Find([](const std::string& l) {
        return IsCompilerDiagnostic(l) || Has(l, "undefined reference") || Has(l, "ld returned");
      });
      !ev.empty() && exited) {
    return Make(RcaClass::kBuildError, ev,
                "the " + std::string(FailedStageName(in.step)) +
                    " step compiles code that does not build: one constrained "
                    "retry with this diagnosis");
  }
  const bool checked = in.step == FailedStage::kCheck || in.step == FailedStage::kAccuracy;
  std::vector<std::string> crash_lines = out.FindAny(kCrashNeedles);
  if (IsCrashSignal(sig) || (exited && !checked && !crash_lines.empty())) {
    for (std::string& l : crash_lines) {  // a Python traceback: its last line names the error
      if (StartsWith(l, "Traceback")) l = out.Last(1).front();
    }
    if (sig != 0) crash_lines.insert(crash_lines.begin(), "killed by " + SignalName(sig));
    if (crash_lines.size() > kMaxEvidenceLines) crash_lines.resize(kMaxEvidenceLines);
    return Make(RcaClass::kRuntimeCrash, crash_lines,
                "the change crashes at run time: one constrained retry with this diagnosis");
  }
  if (sig == 9) {
    return Make(RcaClass::kOutOfMemory, {"killed by SIGKILL without a memory limit"},
                "most likely the kernel's OOM killer: prune this direction or reduce its "
                "footprint");
  }
  if (checked && (exited || in.step == FailedStage::kAccuracy)) {
    std::vector<std::string> ev = out.FindAny(kAccuracyNeedles);
    return Make(RcaClass::kAccuracy, ev.empty() ? tail : ev,
                "the change breaks correctness: prune this direction");
  }
  std::vector<std::string> ev = out.Find([](const std::string& l) {
    const std::string lower = Lower(l);
    return Has(lower, "error") || Has(lower, "fail");
  });
  if (sig != 0) ev.insert(ev.begin(), "killed by " + SignalName(sig));
  if (ev.size() > kMaxEvidenceLines) ev.resize(kMaxEvidenceLines);
  return Make(RcaClass::kUnknown, ev.empty() ? tail : ev,
              in.step == FailedStage::kApply
                  ? "the action could not be applied on this node's state"
                  : "no known cause: see the step's log");
}

std::string DescribeDiagnosis(const Diagnosis& d) {
  std::string first = d.evidence.substr(0, d.evidence.find('\n'));
  std::string s = std::string(RcaClassName(d.cls)) + " → " + std::string(RcaEffectName(d.effect));
  if (!first.empty()) s += ": " + first;
  return s;
}

}  // namespace arbor
