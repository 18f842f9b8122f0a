// The steps of one node (apply, build, check, bench, decide, profile). Each step ends with a
// Store::Apply that records its result and the next step, so a killed process resumes at the
// first step whose result was not recorded.
#include <algorithm>

#include "core/gate.h"
#include "core/orchestrator.h"
#include "util/duration.h"
#include "util/strings.h"

namespace arbor {
namespace {

std::vector<Sample> OfArm(const std::vector<Sample>& all, const std::string& arm) {
  std::vector<Sample> out;
  for (const auto& s : all) {
    if (s.arm == arm) out.push_back(s);
  }
  return out;
}

std::string TopComponents(const Profile& p) {
  std::vector<Component> c = p.components;
  std::stable_sort(c.begin(), c.end(),
                   [](const Component& a, const Component& b) { return a.share > b.share; });
  std::vector<std::string> parts;
  for (size_t i = 0; i < c.size() && i < 4; ++i) {
    parts.push_back(c[i].name + " " + FormatDouble(c[i].share * 100, 3) + "%");
  }
  return Join(parts, ", ");
}

}  // namespace

RunContext Orchestrator::Context(const Node& node, const std::string& label) const {
  RunContext ctx;
  ctx.node = node.id;
  ctx.worktree = worktree_;
  ctx.env = spec_.target.env;
  for (const auto& [k, v] : node.overlay) ctx.env[k] = v;
  ctx.label = label;
  return ctx;
}

Result<std::vector<Sample>> Orchestrator::SamplesOf(NodeId id) {
  return ports_.store->LoadSamples(id);
}

Status Orchestrator::Evaluate(NodeId id) {
  Node node = *tree_.Find(id);
  while (node.step != Step::kDone) {
    if (stop_requested_.load()) return {};
    Status st;
    switch (node.step) {
      case Step::kNone:
      case Step::kApply:
        st = StepApply(&node);
        break;
      case Step::kBuild:
        st = StepBuild(&node);
        break;
      case Step::kCheck:
        st = StepCheck(&node);
        break;
      case Step::kBench:
        st = StepBench(&node);
        break;
      case Step::kDecide:
        st = StepDecide(&node);
        break;
      case Step::kProfile:
        st = StepProfile(&node);
        break;
      case Step::kDone:
        break;
    }
    ARBOR_TRY(st);
  }
  return {};
}

Status Orchestrator::Finish(Node* node, Outcome outcome, const std::string& diagnosis,
                            const std::string& event_kind) {
  node->outcome = outcome;
  node->diagnosis = diagnosis;
  node->step = Step::kDone;
  node->finished_s = CampaignTime();
  if (node->id != kRootId) stats_.Observe(*node);
  ARBOR_TRY(Save(*node, {MakeEvent(node->id, event_kind, diagnosis)}));
  // The worktree is disposable once the outcome is recorded; kept states live in commits.
  if (prepared_node_ == node->id) {
    prepared_node_ = kNoNode;
    built_node_ = kNoNode;
  }
  return ports_.workspace->Release(node->id);
}

Status Orchestrator::StepApply(Node* node) {
  const Node* parent = tree_.Find(node->parent);
  ARBOR_CHECK(parent != nullptr, "node without parent");
  // A previous process may have died half-way through applying: always start from a fresh
  // worktree at the parent's commit.
  ARBOR_TRY(ports_.workspace->Release(node->id));
  auto wt = ports_.workspace->Prepare(node->id, parent->commit);
  if (!wt.ok()) return wt.error();
  worktree_ = *wt;
  prepared_node_ = node->id;
  built_node_ = kNoNode;

  const ActionSpec* action = catalog_.FindAction(node->action_id);
  if (action == nullptr) {
    return Finish(node, Outcome::kPruned,
                  "action '" + node->action_id + "' is no longer in the campaign file", "vetoed");
  }
  Task task;
  task.node = node->id;
  task.action = action;
  task.value = node->value;
  task.worktree = worktree_;
  task.parent_overlay = parent->overlay;
  task.base_env = spec_.target.env;
  SpecialistResult r = ports_.specialist->Implement(task);
  node->cost_s += r.duration_s;
  node->summary = r.summary;
  switch (r.status) {
    case SpecialistResult::Status::kSkipped:
      return Finish(node, Outcome::kSkipped, r.diagnosis, "skipped");
    case SpecialistResult::Status::kFailed:
      return Finish(node, Outcome::kCrashed, "apply failed: " + r.diagnosis, "crashed");
    case SpecialistResult::Status::kApplied:
      break;
  }
  node->overlay = r.overlay;
  std::string message = "arbor: " + node->CandidateKey() + " (node " + std::to_string(node->id) +
                        ")\n\n" + r.summary + "\n";
  auto commit = ports_.workspace->Snapshot(node->id, message, node->overlay);
  if (!commit.ok()) return commit.error();
  node->commit = *commit;
  node->step = Step::kBuild;
  return Save(*node, {});
}

Status Orchestrator::EnsureBuilt(Node* node, bool* failed) {
  *failed = false;
  if (built_node_ == node->id) return {};
  if (prepared_node_ != node->id) {
    auto wt = ports_.workspace->Prepare(node->id, node->commit);
    if (!wt.ok()) return wt.error();
    worktree_ = *wt;
    prepared_node_ = node->id;
  }
  StepResult r = ports_.target->Build(Context(*node, "build"));
  node->cost_s += r.duration_s;
  if (!r.ok()) {
    *failed = true;
    return Finish(node, Outcome::kCrashed, "build failed: " + DescribeStep(r), "crashed");
  }
  built_node_ = node->id;
  return {};
}

Status Orchestrator::StepBuild(Node* node) {
  built_node_ = kNoNode;  // the build step always builds
  bool failed = false;
  ARBOR_TRY(EnsureBuilt(node, &failed));
  if (failed) return {};
  node->step = Step::kCheck;
  return Save(*node, {MakeEvent(node->id, "built", "build ok")});
}

Status Orchestrator::StepCheck(Node* node) {
  bool failed = false;
  ARBOR_TRY(EnsureBuilt(node, &failed));
  if (failed) return {};
  Measurement m = ports_.target->Check(Context(*node, "check"));
  node->cost_s += m.step.duration_s;
  if (m.step.kind == ExitKind::kFailed) {
    return Finish(node, Outcome::kReverted, "accuracy: check failed (" + DescribeStep(m.step) + ")",
                  "reverted");
  }
  if (!m.step.ok()) {
    return Finish(node, Outcome::kCrashed, "check crashed: " + DescribeStep(m.step), "crashed");
  }
  std::vector<Sample> samples;
  std::string message = "check passed";
  if (m.value) {
    Sample s;
    s.node = node->id;
    s.arm = "check";
    s.value = *m.value;
    samples.push_back(s);
    message += ", accuracy " + FormatDouble(*m.value);
    if (node->id != kRootId) {
      auto root_samples = SamplesOf(kRootId);
      if (!root_samples.ok()) return root_samples.error();
      auto base = OfArm(*root_samples, "check");
      if (!base.empty() && base[0].value - *m.value > spec_.accuracy.max_drop) {
        return Finish(node, Outcome::kReverted,
                      "accuracy: dropped from " + FormatDouble(base[0].value) + " to " +
                          FormatDouble(*m.value) + " (max_drop " +
                          FormatDouble(spec_.accuracy.max_drop) + ")",
                      "reverted");
      }
    }
  }
  node->step = Step::kBench;
  return Save(*node, {MakeEvent(node->id, "checked", message)}, samples);
}

Status Orchestrator::StepBench(Node* node) {
  bool failed = false;
  ARBOR_TRY(EnsureBuilt(node, &failed));
  if (failed) return {};
  auto all = SamplesOf(node->id);
  if (!all.ok()) return all.error();
  std::vector<Sample> done = OfArm(*all, "self");
  int reps = std::max(1, spec_.metric.repetitions);
  // Samples already recorded survive a kill: only the missing repetitions run again.
  for (int rep = static_cast<int>(done.size()); rep < reps; ++rep) {
    if (stop_requested_.load()) return {};
    RunContext ctx = Context(*node, "bench-" + std::to_string(rep));
    ctx.repetition = rep;
    Measurement m = ports_.target->Bench(ctx);
    node->cost_s += m.step.duration_s;
    if (!m.step.ok() || !m.value) {
      std::string why = m.step.ok() ? "no metric in the output" : DescribeStep(m.step);
      return Finish(node, Outcome::kCrashed, "bench failed: " + why, "crashed");
    }
    Sample s;
    s.node = node->id;
    s.arm = "self";
    s.rep = rep;
    s.value = *m.value;
    s.extra = m.extra;
    done.push_back(s);
    std::vector<Event> events;
    if (rep + 1 == reps) {
      std::vector<double> values;
      for (const auto& d : done) values.push_back(d.value);
      node->metric = Median(values);
      node->step = Step::kDecide;
      events.push_back(MakeEvent(node->id, "measured",
                                 spec_.metric.name + " median " + FormatDouble(*node->metric) +
                                     " over " + std::to_string(reps) + " runs"));
    }
    ARBOR_TRY(Save(*node, std::move(events), {s}));
  }
  if (node->step == Step::kBench) {  // all samples were already there (resume)
    std::vector<double> values;
    for (const auto& d : done) values.push_back(d.value);
    node->metric = Median(values);
    node->step = Step::kDecide;
    ARBOR_TRY(Save(*node, {}));
  }
  return {};
}

Status Orchestrator::StepDecide(Node* node) {
  if (node->id == kRootId) {
    node->outcome = Outcome::kBaseline;
    node->step = Step::kProfile;
    return Save(*node, {});
  }
  auto parent_samples = SamplesOf(node->parent);
  if (!parent_samples.ok()) return parent_samples.error();
  auto own = SamplesOf(node->id);
  if (!own.ok()) return own.error();
  GateInput in;
  in.metric = &spec_.metric;
  in.critic = &spec_.critic;
  in.parent = OfArm(*parent_samples, "self");
  in.candidate = OfArm(*own, "self");
  Verdict v = ports_.gate->Judge(in);
  node->gain = v.gain;
  if (!v.keep) return Finish(node, Outcome::kReverted, v.reason, "reverted");
  node->outcome = Outcome::kKept;
  node->diagnosis = v.reason;
  node->step = Step::kProfile;
  node->finished_s = CampaignTime();
  stats_.Observe(*node);
  // Recorded first, promoted second: if the process dies in between, Reconcile() promotes.
  ARBOR_TRY(Save(*node, {MakeEvent(node->id, "kept", v.reason)}));
  return ports_.workspace->Promote(node->commit);
}

Status Orchestrator::StepProfile(Node* node) {
  bool failed = false;
  ARBOR_TRY(EnsureBuilt(node, &failed));
  if (failed) return {};
  ProfileResult r = ports_.target->Profile(Context(*node, "profile"));
  std::optional<Profile> profile;
  std::string message;
  if (r.step.ok() && r.profile) {
    profile = r.profile;
    message = "bottlenecks: " + TopComponents(*r.profile);
  } else if (r.step.ok()) {
    message = "no profile command: actions are scored against the whole program";
  } else {
    message = "profile failed (" + DescribeStep(r.step) + "); scoring keeps the last good profile";
  }
  node->step = Step::kDone;
  ARBOR_TRY(Save(*node, {MakeEvent(node->id, "reprofiled", message)}, {}, profile));
  if (prepared_node_ == node->id) {
    prepared_node_ = kNoNode;
    built_node_ = kNoNode;
  }
  return ports_.workspace->Release(node->id);
}

}  // namespace arbor
