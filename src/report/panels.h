// The panels of the HTML report and of the live dashboard's JSON API (docs/report.md):
// anytime curve, funnel, kept path, noise, and a page of the tree.
//
// Pure functions over model values, like views.h: no I/O, no clock. The JSON shapes are the
// dashboard's API; fields may be added, never renamed. Every function is linear in the number
// of nodes (or events) plus sorting, so a 100k-node campaign is fine; the ones whose output
// would grow with the tree take a bound (`max_points`, `limit`).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/model/model.h"
#include "core/model/spec.h"
#include "report/views.h"

namespace arbor {

// The anytime curve: the best confirmed metric against nodes evaluated and against campaign
// time. Evaluated nodes are those that ran to a verdict (kept, reverted, crashed; not the
// root), ordered by when their verdict came (finished_s, then seq). The best value only moves
// at a keep, so "keeps" (with the Critic's interval, as a speedup ratio and as a metric band)
// defines the step line exactly; "points" are the evaluated nodes' own metrics, thinned evenly
// to at most `max_points` (keeps are always in "keeps").
// {"metric", "goal", "baseline", "evaluated", "elapsed_s",
//  "keeps": [{"node", "action", "n", "t", "metric", "speedup", "ci_low", "ci_high",
//             "metric_low", "metric_high", "confirmed"}],
//  "points": [{"node", "n", "t", "metric", "outcome"}], "points_total",
//  "final": {"node", "speedup", "ci_low", "ci_high"} or null}
nlohmann::json CurveJson(const CampaignView& view, size_t max_points);

// Accumulates the funnel from the event log, one event at a time, so a live server can feed
// it only the events it has not seen. Time per stage is the gap between a node's consecutive
// step events, charged to the stage that the later event closes ("built" closes apply+build,
// "checked" the check, "measured" the benchmark, "kept"/"reverted" the decision, "crashed"
// whichever stage failed, "reprofiled" the profile).
class FunnelBuilder {
 public:
  void Add(const Event& e);
  int64_t last_event_id() const { return last_event_id_; }
  // {"stages": [{"stage", "count"}], "time_s": [{"stage", "seconds"}], "events"}. Counts of
  // pruned, skipped and confirmed come from the nodes (they are states, not events).
  nlohmann::json Json(const std::vector<Node>& nodes) const;

 private:
  int64_t last_event_id_ = 0;
  int64_t events_ = 0;
  std::map<std::string, int64_t> counts_;      // by event kind
  std::map<std::string, double> seconds_;      // by stage
  std::unordered_map<NodeId, double> last_t_;  // node -> time of its latest step event
};

// The incumbent path, root excluded: {"nodes": [{"node", "action", "values", "layer",
// "category", "metric", "gain", "ci_low", "ci_high", "confirmed", "cost_s", "commit"}]}.
nlohmann::json KeptPathJson(const std::vector<Node>& nodes);

// Nodes the Critic found an anomaly on (flag "anomaly": a gain beyond the plausibility bound,
// or an incumbent un-kept when re-measured an order of magnitude off; docs/critic.md), by id:
// [{"node", "parent", "action", "outcome", "rca", "unkept", "diagnosis"}].
nlohmann::json AnomaliesJson(const std::vector<Node>& nodes);

// The noise pre-flight: {"cv", "mde", "repetitions", "min_effect"}; null values before the
// pre-flight ran (repetitions 0).
nlohmann::json NoiseJson(const CampaignMeta& meta, double min_effect);

// Nodes [offset, offset + limit) in id order, each shaped as in `arbor tree --format json`:
// {"total", "offset", "limit", "nodes": [...]}.
nlohmann::json TreePageJson(const std::vector<Node>& nodes, size_t offset, size_t limit);

}  // namespace arbor
