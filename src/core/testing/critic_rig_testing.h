// The Critic-in-the-loop tests' rig: the real Orchestrator and CriticGate over fakes, with
// helpers to find nodes and count events (critic_orchestrator_test.cc, revisit_test.cc).
#pragma once

#include <string>
#include <vector>

#include "core/critic/critic_gate.h"
#include "core/orchestrator/orchestrator.h"
#include "fakes/fakes.h"

namespace arbor::critic_rig {

using testing::FakeClock;
using testing::FakeSpecialist;
using testing::FakeStore;
using testing::FakeTarget;
using testing::FakeWorkspace;

inline ActionSpec Env(std::string id, std::string var, std::string value = "1",
                      std::vector<std::string> targets = {}, double speedup = 1.3) {
  ActionSpec a;
  a.id = id;
  a.layer = "runtime";
  a.category = id.substr(0, id.find('.'));
  a.targets = std::move(targets);
  a.speedup = speedup;
  a.cost_s = 10;
  a.apply.kind = ApplySpec::Kind::kEnv;
  a.apply.env[var] = value;
  return a;
}

struct Rig {
  CampaignSpec spec;
  FakeStore store;
  FakeWorkspace ws;
  FakeTarget target;
  FakeSpecialist specialist;
  CriticGate gate;
  FakeClock clock;
  testing::FakeKnowledgeBase* kb = nullptr;  // optional
  Rig() {
    spec.name = "c";
    spec.metric.repetitions = 5;
    spec.search.max_nodes = 30;
    spec.critic.min_effect = 0.01;
  }
  Result<RunSummary> Run() {
    KbContext context;
    context.campaign_uid = "c-uid";
    Orchestrator o(spec,
                   Ports{&store, &ws, &target, &specialist, &gate, &clock, nullptr, kb, context});
    return o.Run();
  }
  const Node* ByKey(const std::string& key) const {
    for (const auto& [id, n] : store.nodes) {
      if (n.CandidateKey() == key && n.outcome != Outcome::kPruned) return &n;
    }
    return nullptr;
  }
  std::vector<const Node*> All(const std::string& key) const {
    std::vector<const Node*> out;
    for (const auto& [id, n] : store.nodes) {
      if (n.CandidateKey() == key) out.push_back(&n);
    }
    return out;
  }
  // The tree the run stored (the Orchestrator's own is gone with it).
  Tree StoredTree() const {
    Tree tree;
    for (const auto& [id, n] : store.nodes) tree.Upsert(n);
    return tree;
  }
  int Events(const std::string& kind) const {
    int n = 0;
    for (const auto& e : store.events()) n += e.kind == kind;
    return n;
  }
};

}  // namespace arbor::critic_rig
