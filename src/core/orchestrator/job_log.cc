#include "core/orchestrator/job_log.h"

#include "util/escape.h"

namespace arbor {
namespace {

// "; adopted from a killed run" and the like, for a job a killed run left.
std::string Reconciled(const StepResult& r) {
  if (r.reconciled == "adopted") return "; adopted: it outlived a killed run";
  if (r.reconciled == "read") return "; read back: it finished while no run was watching";
  if (r.reconciled == "rerun") {
    return "; re-run: job " + r.previous_job +
           " of a killed run finished, but its worktree was "
           "recreated since";
  }
  if (r.reconciled == "requeued") {
    return "; re-run: job " + (r.previous_job.empty() ? "?" : r.previous_job) +
           " of a killed run was lost";
  }
  return "";
}

}  // namespace

void JobRecordingTarget::Note(const RunContext& ctx, const StepResult& r) const {
  if (!r.job.empty() && on_run_) on_run_(ctx, r);
}

StepResult JobRecordingTarget::Build(const RunContext& ctx) {
  StepResult r = inner_->Build(ctx);
  Note(ctx, r);
  return r;
}

Measurement JobRecordingTarget::Check(const RunContext& ctx) {
  Measurement m = inner_->Check(ctx);
  Note(ctx, m.step);
  return m;
}

Measurement JobRecordingTarget::Bench(const RunContext& ctx) {
  Measurement m = inner_->Bench(ctx);
  Note(ctx, m.step);
  return m;
}

ProfileResult JobRecordingTarget::Profile(const RunContext& ctx) {
  ProfileResult p = inner_->Profile(ctx);
  Note(ctx, p.step);
  return p;
}

Event JobEvent(NodeId node, const std::string& label, const StepResult& r) {
  Event e;
  e.node = node;
  e.kind = "job";
  std::string exit(ExitKindName(r.kind));
  std::string executor = r.executor.empty() ? "executor" : r.executor;
  e.message = label + " ran as " + executor + " job " + r.job +
              (r.host.empty() ? "" : " on " + r.host) + " (" + exit +
              (r.infrastructure ? ", lost by the infrastructure" : "") + Reconciled(r) + ")";
  e.data = "{\"label\":" + JsonString(label) + ",\"executor\":" + JsonString(executor) +
           ",\"job\":" + JsonString(r.job) + ",\"host\":" + JsonString(r.host) +
           ",\"exit\":" + JsonString(exit) +
           ",\"infrastructure\":" + (r.infrastructure ? "true" : "false") +
           (r.step_key.empty() ? "" : ",\"key\":" + JsonString(r.step_key)) +
           (r.reconciled.empty() ? "" : ",\"reconciled\":" + JsonString(r.reconciled)) +
           (r.previous_job.empty() ? "" : ",\"previous_job\":" + JsonString(r.previous_job)) + "}";
  return e;
}

}  // namespace arbor
