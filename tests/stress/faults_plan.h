// The fault campaign of the process-hygiene stress test (tests/stress/faults_stress.cc): which
// faults are injected, the shell script that injects them, the campaign that runs it, and the
// root-cause class the Critic is expected to give each one (docs/reliability/faults.md).
//
// A fault is one misbehaviour of one step (build, check or bench) of one node, selected by the
// node's action value "MARK:STEP:KIND". MARK ("arbfault-RUN-N") is unique per fault and appears
// in the environment of every process the faulty step starts (FAULT=...) and in the argv of the
// long-lived ones, so that a scan of /proc finds whatever a fault left behind.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace arbor::stress {

enum class FaultKind {
  kHang,              // sleeps forever: the step's timeout must end it
  kTermIgnored,       // ignores SIGTERM (it and its children): the grace period's SIGKILL must
  kDoubleFork,        // a setsid daemon re-parented away from the command, holding its pipes
  kForkBomb,          // self-replicating shells churning at the pids limit
  kMemoryHog,         // allocates until the memory limit stops it
  kOutputFlood,       // tens of MB on stdout and stderr
  kCloseStdout,       // closes stdout and stderr early and keeps working
  kExitWithChildren,  // exits while its children run on, holding the pipes
};
constexpr int kFaultKinds = 8;

const char* FaultKindName(FaultKind kind);

struct Fault {
  int index = 0;
  FaultKind kind = FaultKind::kHang;
  std::string step;  // "build", "check" or "bench"
  std::string mark;  // unique: arbfault-RUN-INDEX
  std::string Value() const { return mark + ":" + step + ":" + FaultKindName(kind); }
  // The Critic's class for this fault ("timeout", "out_of_memory", ...).
  std::string ExpectedClass() const;
};

// `count` faults; each kind appears count/8 times or once more (so a run of at least 8 covers
// every kind), in a seeded random order, each in a seeded random step.
std::vector<Fault> PlanFaults(int count, uint64_t seed, const std::string& run_id);

// The script the campaign's build, check and bench run (`sh faults.sh STEP`).
extern const char kFaultScript[];

// A campaign whose one action has the faults' values: every node is one fault.
std::string FaultCampaign(const std::string& name, const std::vector<Fault>& faults);

}  // namespace arbor::stress
