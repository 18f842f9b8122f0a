// The final validation (ConfirmFinal): when a campaign stops, the state it hands over is
// checked kCleanRuns times and measured interleaved against the baseline, so that the reported
// speedup has a measured interval (not a product of per-step ones) and a flaky keep is un-kept
// before the user gets it.
#include <algorithm>
#include <optional>

#include "core/critic/plausibility.h"
#include "core/orchestrator/orchestrator.h"
#include "util/strings.h"

namespace arbor {

Status Orchestrator::ConfirmFinal() {
  NodeId best_id = tree_.Incumbent();
  if (!critic_ || best_id == kRootId || best_id == kNoNode || meta_.final_node == best_id) {
    return {};
  }
  Node best = *tree_.Find(best_id);
  const Node& root = *tree_.Find(kRootId);
  // The best node's worktree may be held as the A/B base (it was the incumbent): set up the
  // baseline's worktree first, then the best node's own, so neither release undoes the other.
  if (!cursor_.IsBase(root.id)) {
    if (cursor_.base() != kNoNode) ARBOR_TRY(ports_.workspace->Release(cursor_.base()));
    // One worktree per node: releasing the base released the current one when they are one.
    if (cursor_.base() == cursor_.current()) cursor_.ForgetCurrent();
    cursor_.BaseReleased();
    ARBOR_TRY_ASSIGN(auto wt, ports_.workspace->Prepare(root.id, root.commit));
    StepResult r = ports_.target->Build(ContextAt(root, wt, "build-final-base"));
    if (!r.ok()) return {};
    cursor_.BaseBuilt(root.id, wt);
  }
  if (!cursor_.IsBuilt(best.id)) {
    ARBOR_TRY_ASSIGN(auto wt, ports_.workspace->Prepare(best.id, best.commit));
    cursor_.Prepared(best.id, wt);
    StepResult r = ports_.target->Build(Context(best, "build-final"));
    if (!r.ok()) return {};  // it built when it was kept; nothing to confirm now
    cursor_.Built(best.id);
  }
  // The final validation: the state handed to the user must not fail its check now and then
  // (a change failing a few checks in ten can pass the two it gets before its keep). A failure
  // un-keeps the path down to a state that passes as often (recheck.cc), which is validated next.
  if (spec_.critic.recheck) {
    for (int i = 0; i < kCleanRuns; ++i) {
      if (stop_requested_.load()) return {};
      const std::string label = "check-final-" + std::to_string(i);
      Measurement m = ports_.target->Check(Context(best, label));
      if (m.step.kind == ExitKind::kSignaled) {
        // As in StepCheck: a killed check runs once more before it is believed.
        m = ports_.target->Check(Context(best, label + "-rerun"));
      }
      if (!StateFailed(m.step)) continue;
      ARBOR_TRY_ASSIGN(const bool unkept,
                       UnkeepFlakyPath(best.id, Recheck::kCheck, m.step, nullptr));
      if (unkept) return ConfirmFinal();
      break;  // the baseline fails as often: the environment's, not the path's
    }
  }
  ARBOR_TRY_ASSIGN(auto all, SamplesOf(best.id));
  std::vector<Sample> base = SamplesOfArm(all, "final-base");
  std::vector<Sample> cand = SamplesOfArm(all, "final-cand");
  const int reps = protocol_.FinalPairs(Repetitions());
  std::optional<MeasurementScope> scope;
  if (static_cast<int>(std::min(base.size(), cand.size())) < reps) {
    scope.emplace(ports_.target, best.id);
  }
  while (static_cast<int>(std::min(base.size(), cand.size())) < reps) {
    if (stop_requested_.load()) return {};
    int i = static_cast<int>(std::min(base.size(), cand.size()));
    const bool base_first = MeasurementProtocol::BaseRunsFirst(i);
    for (bool is_base : {base_first, !base_first}) {
      auto& arm = is_base ? base : cand;
      if (static_cast<int>(arm.size()) > i) continue;
      const Node& who = is_base ? root : best;
      RunContext ctx =
          ContextAt(who, is_base ? cursor_.base_worktree() : cursor_.worktree(),
                    std::string(is_base ? "final-base-" : "final-cand-") + std::to_string(i));
      ctx.node = best.id;
      ctx.repetition = i;
      Measurement m = ports_.target->Bench(ctx);
      if (!is_base && StateFailed(m.step) && spec_.critic.recheck) {
        // The best state's own run failed: it crashes now and then; hand over a clean one.
        scope.reset();
        ARBOR_TRY_ASSIGN(const bool unkept,
                         UnkeepFlakyPath(best.id, Recheck::kBench, m.step, nullptr));
        if (unkept) return ConfirmFinal();
        scope.emplace(ports_.target, best.id);
      }
      if (!m.step.ok() || !m.value) {  // reported without an interval, and said so
        meta_.final_node = best.id;
        return Save(best, {MakeEvent(best.id, "measured",
                                     "final confirmation failed (" + DescribeStep(m.step) +
                                         "); the speedup is reported without an interval")});
      }
      Sample s{best.id, is_base ? "final-base" : "final-cand", i, *m.value, m.extra};
      arm.push_back(s);
      ARBOR_TRY(Save(best, {}, {s}));
    }
  }
  // The best re-measured an order of magnitude off its kept value: it was an anomaly, and the
  // campaign's result is the state before it (which gets its own final confirmation).
  const double now = Median(SampleValues(cand));
  if (best.metric && DisagreesByOrders(*best.metric, now)) {
    scope.reset();  // what follows builds and checks: outside the measurement
    ARBOR_TRY(UnkeepAnomalousIncumbent(best.id, now, nullptr));
    return ConfirmFinal();
  }
  const FinalFigures f =
      protocol_.JudgeFinal(base, cand, spec_.seed * 2654435761ULL + static_cast<uint64_t>(best.id));
  meta_.final_node = best.id;
  meta_.final_speedup = f.speedup;
  meta_.final_ci_low = f.ci_low;
  meta_.final_ci_high = f.ci_high;
  return Save(best, {MakeEvent(best.id, "measured",
                               "final confirmation against the baseline: ×" +
                                   FormatDouble(f.speedup, 4) + " (95% CI ×" +
                                   FormatDouble(f.ci_low, 4) + "–×" + FormatDouble(f.ci_high, 4) +
                                   ", " + std::to_string(reps) + " interleaved pairs)")});
}

}  // namespace arbor
