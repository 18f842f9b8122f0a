// Where each command ran: a Target decorator that reports every run carrying an executor's job
// id (StepResult::job, set by a cluster executor; never by the local one), and the "job" event
// that records it on the node (docs/slurm.md).
#pragma once

#include <functional>
#include <string>

#include "core/model/model.h"
#include "core/model/ports.h"

namespace arbor {

class JobRecordingTarget : public Target {
 public:
  using OnRun = std::function<void(const RunContext&, const StepResult&)>;
  // `inner` is borrowed; `on_run` is called after each run whose result names a job.
  JobRecordingTarget(Target* inner, OnRun on_run) : inner_(inner), on_run_(std::move(on_run)) {}
  StepResult Build(const RunContext& ctx) override;
  Measurement Check(const RunContext& ctx) override;
  Measurement Bench(const RunContext& ctx) override;
  ProfileResult Profile(const RunContext& ctx) override;
  void BeginMeasurement(NodeId node) override { inner_->BeginMeasurement(node); }
  void EndMeasurement(NodeId node) override { inner_->EndMeasurement(node); }
  bool MeasurementsNeedTheMachine() const override { return inner_->MeasurementsNeedTheMachine(); }
  // Reports a run made through `inner` directly (a build lane's thread): the same as if it
  // had been made through this decorator, but on the caller's thread.
  void Note(const RunContext& ctx, const StepResult& r) const;

 private:
  Target* inner_;
  OnRun on_run_;
};

// The "job" event of one run: message "bench-2 ran as slurm job 41 on cn7 (ok)", data
// {"label":"bench-2","executor":"slurm","job":"41","host":"cn7","exit":"ok",
// "infrastructure":false} ("host" is "" when the executor could not tell). A job a killed run
// left adds "reconciled" ("adopted", "read", "requeued" or "rerun") and, for the last two,
// "previous_job" (StepResult::reconciled); the message says which.
Event JobEvent(NodeId node, const std::string& label, const StepResult& r);

}  // namespace arbor
