// A scripted Specialist for the Orchestrator's specialist features (agents_orchestrator_test.cc,
// parallel_orchestrator_test.cc): agent actions are applied like env actions (so the toy target
// can measure them) and report backend "llm" with usage, a prompt and whatever the test's
// script adds (proposals, findings, failures). It records every Task and proposal request, and
// is safe to call from several threads at once (search.parallel > 1).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/model/ports.h"
#include "core/search/candidates.h"
#include "core/testing/toy_rig_testing.h"

namespace arbor::testing {

// What a Task carried, copied (Task::action points into the Orchestrator).
struct TaskRecord {
  NodeId node = kNoNode;
  std::string action_id;
  std::string value;
  std::string base_commit;
  TaskContext context;
  std::vector<std::string> known_actions;
};

class ScriptedSpecialist : public Specialist {
 public:
  // Called (under the lock) on the result of each Implement before it is returned.
  std::function<void(const Task&, SpecialistResult*)> script;
  // Called outside the lock before anything else: a delay to perturb thread timing.
  std::function<void(const Task&)> before;
  std::vector<std::string> domains;  // ProposingDomains()
  std::function<Proposal(const ProposeRequest&)> propose;
  // The first `gather` Implement calls each wait until all of them have arrived (at most
  // `gather_timeout`): `gathered` then tells whether they were in flight together.
  int gather = 0;
  std::chrono::milliseconds gather_timeout{5000};

  SpecialistResult Implement(const Task& task) override {
    if (before) before(task);
    std::unique_lock<std::mutex> lock(mu_);
    TaskRecord rec{task.node,        task.action->id, task.value,
                   task.base_commit, task.context,    task.known_actions};
    tasks_.push_back(rec);
    int index = arrived_++;
    if (index < gather) {
      cv_.notify_all();
      bool all = cv_.wait_for(lock, gather_timeout, [&] { return arrived_ >= gather; });
      if (!all) gathered_ = false;
    }
    SpecialistResult r;
    r.duration_s = 0.5;
    r.overlay = task.parent_overlay;
    ApplySpec apply = SubstituteValue(task.action->apply, task.value);
    for (const auto& [k, v] : apply.env) r.overlay[k] = v;
    for (const auto& [k, v] : apply.append) r.overlay[k] += v;
    r.summary = "applied " + task.action->id;
    if (apply.kind == ApplySpec::Kind::kAgent) {
      r.backend = SpecialistBackend::kLlm;
      r.prompt = "implement " + task.action->id + " for node " + std::to_string(task.node);
      r.usage = AgentUsage{10, 5, 0.25, 1};
    } else {
      r.backend = SpecialistBackend::kBuiltin;
    }
    if (script) script(task, &r);
    return r;
  }

  std::vector<std::string> ProposingDomains() const override { return domains; }

  Proposal Propose(const ProposeRequest& request) override {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(request);
    if (propose) return propose(request);
    return Specialist::Propose(request);
  }

  std::vector<TaskRecord> tasks() const {
    std::lock_guard<std::mutex> lock(mu_);
    return tasks_;
  }
  std::vector<ProposeRequest> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  bool gathered() const {
    std::lock_guard<std::mutex> lock(mu_);
    return gathered_ && arrived_ >= gather;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<TaskRecord> tasks_;
  std::vector<ProposeRequest> requests_;
  int arrived_ = 0;
  bool gathered_ = true;
};

}  // namespace arbor::testing

namespace arbor::toy {

// The toy rig with the scripted specialist, and look-ups into what its campaign recorded.
struct AgentRig : Rig {
  testing::ScriptedSpecialist scripted;
  Result<RunSummary> Run() {
    Ports p = ports();
    p.specialist = &scripted;
    Orchestrator o(spec, p);
    return o.Run();
  }
  ActionSpec* Action(const std::string& id) {
    for (ActionSpec& a : spec.actions) {
      if (a.id == id) return &a;
    }
    return nullptr;
  }
  const Node* NodeOf(const std::string& key) const {
    for (const auto& [id, n] : store.nodes) {
      if (n.CandidateKey() == key) return &n;
    }
    return nullptr;
  }
  std::vector<Event> EventsOf(const std::string& kind) const {
    std::vector<Event> out;
    for (const Event& e : store.events()) {
      if (e.kind == kind) out.push_back(e);
    }
    return out;
  }
  std::vector<testing::TaskRecord> TasksFor(const std::string& action_id) const {
    std::vector<testing::TaskRecord> out;
    for (const testing::TaskRecord& t : scripted.tasks()) {
      if (t.action_id == action_id) out.push_back(t);
    }
    return out;
  }
};

}  // namespace arbor::toy
