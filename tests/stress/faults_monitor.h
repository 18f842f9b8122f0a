// What the fault stress driver observes: processes carrying a fault's mark, status latency,
// root-cause classes and events, and the summary table it prints.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "faults_plan.h"

namespace arbor::stress {

// Live processes (not zombies) by the fault mark found in their argv or environment.
struct Scan {
  std::map<std::string, std::vector<std::string>> by_mark;  // mark -> "PID argv..."
  std::vector<std::string> Alive(const std::string& mark) const;
  bool AnyFaultAlive() const { return !by_mark.empty(); }
};

class Monitor {
 public:
  explicit Monitor(const std::vector<Fault>& faults);
  Scan ScanProcesses() const;

 private:
  std::string prefix_;  // "arbfault-RUN-"
};

// Pids cgroups named after Arbor process `arbor_pid` still present under /sys/fs/cgroup.
std::vector<std::string> LeftoverCgroups(pid_t arbor_pid);

class Stats {
 public:
  void AddLeftovers(const Fault& f, const std::vector<std::string>& procs);
  void AddStatus(bool answered, double latency_s, bool during_fault, const std::string& why);
  void AddClass(const Fault& f, const std::string& cls, const std::string& detail);
  void AddEvents(const std::string& jsonl);

  int leftovers() const;
  int misclassified() const { return static_cast<int>(misclassified_.size()); }
  int unanswered() const { return static_cast<int>(unanswered_.size()); }
  int classified() const { return classified_; }
  std::string LeftoverDetails() const;
  std::string MisclassifiedDetails() const;
  std::string UnansweredDetails() const;
  std::string Summary(int faults, uint64_t seed, double wall_s) const;

 private:
  struct PerKind {
    int faults = 0;
    int leftovers = 0;
    std::map<std::string, int> classes;
    std::map<std::string, int> steps;
  };
  std::map<FaultKind, PerKind> kinds_;
  std::vector<std::string> leftover_details_;
  std::vector<std::string> misclassified_;
  std::vector<std::string> unanswered_;
  std::vector<double> latency_all_;
  std::vector<double> latency_fault_;
  int classified_ = 0;
  int events_ = 0;
  double max_event_gap_s_ = 0;
};

}  // namespace arbor::stress
