#include "faults_plan.h"

#include <algorithm>
#include <utility>

namespace arbor::stress {
namespace {

uint64_t SplitMix(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

const char* FaultKindName(FaultKind kind) {
  switch (kind) {
    case FaultKind::kHang:
      return "hang";
    case FaultKind::kTermIgnored:
      return "term_ignored";
    case FaultKind::kDoubleFork:
      return "double_fork";
    case FaultKind::kForkBomb:
      return "fork_bomb";
    case FaultKind::kMemoryHog:
      return "memory_hog";
    case FaultKind::kOutputFlood:
      return "output_flood";
    case FaultKind::kCloseStdout:
      return "close_stdout";
    case FaultKind::kExitWithChildren:
      return "exit_with_children";
  }
  return "?";
}

std::string Fault::ExpectedClass() const {
  switch (kind) {
    case FaultKind::kHang:
    case FaultKind::kTermIgnored:
      return "timeout";
    case FaultKind::kForkBomb:
      return "resource_limit";
    case FaultKind::kMemoryHog:
      return "out_of_memory";
    default:
      // The command survives its own fault and then fails the way its step fails: a compiler
      // error, a check's verdict, a benchmark that printed no metric.
      return step == "build" ? "build_error" : step == "check" ? "accuracy" : "bad_output";
  }
}

std::vector<Fault> PlanFaults(int count, uint64_t seed, const std::string& run_id) {
  uint64_t state = seed;
  std::vector<FaultKind> kinds;
  for (int i = 0; i < count; ++i) kinds.push_back(static_cast<FaultKind>(i % kFaultKinds));
  for (size_t i = kinds.size(); i > 1; --i) {  // Fisher-Yates with the seeded generator
    std::swap(kinds[i - 1], kinds[SplitMix(&state) % i]);
  }
  static const char* const kSteps[] = {"build", "check", "bench"};
  std::vector<Fault> faults;
  for (int i = 0; i < count; ++i) {
    Fault f;
    f.index = i + 1;
    f.kind = kinds[static_cast<size_t>(i)];
    f.step = kSteps[SplitMix(&state) % 3];
    f.mark = "arbfault-" + run_id + "-" + std::to_string(f.index);
    faults.push_back(std::move(f));
  }
  return faults;
}

// FAULT = "MARK:STEP:KIND"; a step that is not the faulty one behaves: build and check succeed,
// bench prints the metric. Long-lived processes carry MARK as their $0 (argv[0] of `sh -c`).
const char kFaultScript[] =
    R"SH(# faults.sh STEP: the target's build, check and bench, misbehaving as $FAULT says.
step=$1
mark=${FAULT%%:*}
rest=${FAULT#*:}
fstep=${rest%%:*}
kind=${rest#*:}
if [ -z "$FAULT" ] || [ "$fstep" != "$step" ]; then
  if [ "$step" = bench ]; then echo '{"v": 1}'; fi
  exit 0
fi
# How the step fails once the fault is over (for the faults that do not end the command).
fail() {
  case $step in
    build) echo "faults.c:1:1: error: $kind ($mark)" >&2; exit 1 ;;
    check) echo "FAIL: result mismatch after $kind ($mark)" >&2; exit 1 ;;
    *) echo "bench: no result after $kind"; exit 0 ;;
  esac
}
case $kind in
  hang)
    sh -c 'sleep 100000; :' "$mark" ;;
  term_ignored)
    trap '' TERM
    sh -c 'while :; do sleep 1; done' "$mark" ;;
  double_fork)
    # The middle shell exits at once: the setsid daemon is re-parented, in a session of its own.
    sh -c 'setsid sh -c "sleep 100000; :" "$0" & exit 0' "$mark"
    sleep 0.05
    fail ;;
  fork_bomb)
    # Every shell starts copies of itself until fork fails (and the failing one exits): the
    # processes churn at the pids limit until they are killed.
    export BOMB='while :; do sh -c "$BOMB" "$0" 2>/dev/null & done'
    while :; do sh -c "$BOMB" "$mark" 2>/dev/null & done ;;
  memory_hog)
    perl -e 'my @a; push @a, "x" x 1e6 while 1' "$mark"
    exit $? ;;
  output_flood)
    head -c 32000000 /dev/zero | tr '\0' x
    head -c 32000000 /dev/zero | tr '\0' y >&2
    echo
    echo >&2
    fail ;;
  close_stdout)
    exec >&- 2>&-
    sh -c 'sleep 0.3; :' "$mark"
    fail ;;
  exit_with_children)
    for i in 1 2 3; do sh -c 'sleep 100000; :' "$mark" & done
    fail ;;
esac
echo "faults.sh: unknown fault '$FAULT'" >&2
exit 99
)SH";

std::string FaultCampaign(const std::string& name, const std::vector<Fault>& faults) {
  std::string values;
  for (const Fault& f : faults) values += (values.empty() ? "\"" : ", \"") + f.Value() + "\"";
  // Short timeouts (a hang costs 2 s + the 2 s grace), limits the faults run into, and a Critic
  // that neither prunes nor pauses: every fault must be run, however many failed before it.
  return "[campaign]\nname = \"" + name + "\"\nworkspace = \".\"\nseed = 1\n\n" +
         "[target]\nbuild = \"sh faults.sh build\"\ncheck = \"sh faults.sh check\"\n"
         "bench = \"sh faults.sh bench\"\ntimeout = \"2s\"\nmemory_limit = \"200M\"\n"
         "max_processes = 32\noutput_limit = \"1M\"\n\n"
         "[metric]\nname = \"v\"\nsource = \"json:v\"\nrepetitions = 1\n\n"
         "[search]\nmax_nodes = " +
         std::to_string(faults.size() + 1) +
         "\nmax_time = \"10h\"\nplateau = 1000000\nreprofile = false\nrevisit = false\n\n"
         "[critic]\nconstraints = false\ncircuit_breaker = 1000000\nrecheck = false\n\n"
         "[[action]]\nid = \"fault\"\nlayer = \"application\"\ncategory = \"fault\"\n"
         "speedup = 2.0\nvalues = [" +
         values + "]\napply = { env = { FAULT = \"{value}\" } }\n";
}

}  // namespace arbor::stress
