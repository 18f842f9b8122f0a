// The core tests' toy landscape: a spec, a fake target that implements it, and a rig of fakes
// to run the Orchestrator on (shared by orchestrator_test.cc and kb_orchestrator_test.cc).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/critic/critic_gate.h"
#include "core/orchestrator/orchestrator.h"
#include "fakes/fakes.h"

namespace arbor::toy {

using testing::FakeClock;
using testing::FakeSpecialist;
using testing::FakeStore;
using testing::FakeTarget;
using testing::FakeWorkspace;

inline ActionSpec EnvAction(std::string id, std::string var, std::vector<std::string> targets = {},
                            double speedup = 1.5) {
  ActionSpec a;
  a.id = id;
  a.layer = "application";
  a.category = id.substr(0, id.find('.'));
  a.targets = std::move(targets);
  a.speedup = speedup;
  a.cost_s = 10;
  a.apply.kind = ApplySpec::Kind::kEnv;
  a.apply.env[var] = "1";
  return a;
}

// A small landscape: FAST is a real win; SLOW regresses; CRASH crashes the bench; BAD breaks
// the check; the agent action has no backend; FMT only matters once FAST moved the bottleneck
// to "format"; TUNE requires FAST.
inline CampaignSpec ToySpec() {
  CampaignSpec s;
  s.name = "t";
  s.metric.repetitions = 3;
  s.search.max_nodes = 20;
  s.critic.min_effect = 0.05;
  // The tests built on this landscape assert each candidate's one verdict; revisiting reverted
  // ideas once everything was tried has its own tests (critic_orchestrator_test.cc).
  s.search.revisit = false;
  s.actions.push_back(EnvAction("algo.fast", "FAST", {"compute"}, 3));
  s.actions.push_back(EnvAction("sched.slow", "SLOW", {"compute"}, 1.5));
  s.actions.push_back(EnvAction("mem.crash", "CRASH", {"compute"}, 1.4));
  s.actions.push_back(EnvAction("math.bad", "BAD", {"compute"}, 1.3));
  ActionSpec agent = EnvAction("kernel.agent", "X", {"compute"}, 1.2);
  agent.apply.kind = ApplySpec::Kind::kAgent;
  agent.apply.agent = "kernel";
  s.actions.push_back(agent);
  s.actions.push_back(EnvAction("io.fmt", "FMT", {"format"}, 3));
  ActionSpec tune = EnvAction("algo.tune", "TUNE", {"compute"}, 1.3);
  tune.requires_ = {"algo.fast"};
  s.actions.push_back(tune);
  return s;
}

inline void InstallToy(FakeTarget* t) {
  t->metric = [](const EnvOverlay& env) -> std::optional<double> {
    if (env.count("CRASH")) return std::nullopt;
    double v = 100;
    if (env.count("FAST")) v *= 2.5;
    if (env.count("SLOW")) v *= 0.7;
    if (env.count("FAST") && env.count("FMT")) v *= 1.6;
    if (env.count("FAST") && env.count("TUNE")) v *= 1.2;
    return v;
  };
  t->check_ok = [](const EnvOverlay& env) { return env.count("BAD") == 0; };
  t->profile = [](const EnvOverlay& env) {
    Profile p;
    if (env.count("FAST") && !env.count("FMT")) {
      p.components = {{"compute", "kernel", 0.4}, {"format", "application", 0.6}};
    } else {
      p.components = {{"compute", "kernel", 1.0}};
    }
    return p;
  };
}

struct Rig {
  CampaignSpec spec = ToySpec();
  FakeStore store;
  FakeWorkspace ws;
  FakeTarget target;
  FakeSpecialist specialist;
  CriticGate critic_gate;
  MedianGate median_gate;
  FakeClock clock;
  Rig() { InstallToy(&target); }
  Gate* gate() { return spec.critic.enabled ? static_cast<Gate*>(&critic_gate) : &median_gate; }
  testing::FakeKnowledgeBase* kb = nullptr;  // optional
  KbContext kb_context;
  Ports ports() {
    return Ports{&store, &ws, &target, &specialist, gate(), &clock, nullptr, kb, kb_context};
  }
  Result<RunSummary> Run() {
    Orchestrator o(spec, ports());
    return o.Run();
  }
};

inline std::map<std::string, Outcome> Outcomes(const FakeStore& store) {
  std::map<std::string, Outcome> out;
  for (const auto& [id, n] : store.nodes) out[n.CandidateKey()] = n.outcome;
  return out;
}

}  // namespace arbor::toy
