// CurveJson, FunnelBuilder, KeptPathJson, NoiseJson, TreePageJson (declared in report/panels.h).
#include "report/panels.h"

#include <algorithm>
#include <array>
#include <utility>

#include "core/model/event_kind.h"
#include "report/format.h"
#include "report/tree_index.h"

namespace arbor {
namespace {

using report::OptionalNumber;

bool Evaluated(const Node& n) {
  if (n.id == kRootId || n.seq == 0) return false;
  return n.outcome == Outcome::kKept || n.outcome == Outcome::kReverted ||
         n.outcome == Outcome::kCrashed;
}

// A metric value at `speedup` relative to `from` (speedups are > 1 when better).
std::optional<double> MetricAt(Goal goal, std::optional<double> from, std::optional<double> s) {
  if (!from || !s || *s <= 0) return std::nullopt;
  return goal == Goal::kMax ? *from * *s : *from / *s;
}

// The stage that an event closes, or nullptr for events that are not steps of a node.
const char* StageClosedBy(EventKind kind) {
  static constexpr std::array<std::pair<EventKind, const char*>, 7> kStages = {{
      {EventKind::kBuilt, "apply+build"},
      {EventKind::kChecked, "check"},
      {EventKind::kMeasured, "benchmark"},
      {EventKind::kKept, "decide"},
      {EventKind::kReverted, "decide"},
      {EventKind::kCrashed, "failed step"},
      {EventKind::kReprofiled, "profile"},
  }};
  for (const auto& [event, stage] : kStages) {
    if (kind == event) return stage;
  }
  return nullptr;
}

}  // namespace

nlohmann::json CurveJson(const CampaignView& view, size_t max_points) {
  const Node* root = nullptr;
  std::vector<const Node*> evaluated;
  for (const Node& n : view.nodes) {
    if (n.id == kRootId) root = &n;
    if (Evaluated(n)) evaluated.push_back(&n);
  }
  std::sort(evaluated.begin(), evaluated.end(), [](const Node* a, const Node* b) {
    if (a->finished_s != b->finished_s) return a->finished_s < b->finished_s;
    return a->seq < b->seq;
  });

  std::optional<double> baseline = root != nullptr ? root->metric : std::nullopt;
  std::optional<double> best = baseline;
  nlohmann::json keeps = nlohmann::json::array();
  nlohmann::json points = nlohmann::json::array();
  const size_t stride =
      max_points == 0 ? evaluated.size() + 1 : (evaluated.size() + max_points - 1) / max_points;
  for (size_t i = 0; i < evaluated.size(); ++i) {
    const Node& n = *evaluated[i];
    const auto count = static_cast<int64_t>(i + 1);
    if (n.outcome == Outcome::kKept) {
      nlohmann::json& k = keeps.emplace_back(nlohmann::json::object());
      k["node"] = n.id;
      k["action"] = n.CandidateKey();
      k["n"] = count;
      k["t"] = n.finished_s;
      k["metric"] = OptionalNumber(n.metric);
      k["speedup"] = OptionalNumber(report::Speedup(view.goal, best, n.metric));
      k["ci_low"] = OptionalNumber(n.critic.ci_low);
      k["ci_high"] = OptionalNumber(n.critic.ci_high);
      k["metric_low"] = OptionalNumber(MetricAt(view.goal, best, n.critic.ci_low));
      k["metric_high"] = OptionalNumber(MetricAt(view.goal, best, n.critic.ci_high));
      k["confirmed"] = n.critic.confirmed;
      if (n.metric) best = n.metric;
    }
    if (stride > 0 && i % stride == 0) {
      nlohmann::json& p = points.emplace_back(nlohmann::json::object());
      p["node"] = n.id;
      p["n"] = count;
      p["t"] = n.finished_s;
      p["metric"] = OptionalNumber(n.metric);
      p["outcome"] = OutcomeName(n.outcome);
    }
  }

  nlohmann::json final_run = nullptr;
  if (view.meta.final_node != kNoNode && view.meta.final_node != kRootId) {
    final_run = {{"node", view.meta.final_node},
                 {"speedup", view.meta.final_speedup},
                 {"ci_low", view.meta.final_ci_low},
                 {"ci_high", view.meta.final_ci_high}};
  }
  nlohmann::json out = nlohmann::json::object();
  out["metric"] = view.metric_name;
  out["goal"] = view.goal == Goal::kMax ? "max" : "min";
  out["baseline"] = OptionalNumber(baseline);
  out["evaluated"] = evaluated.size();
  out["elapsed_s"] = view.meta.elapsed_s;
  out["keeps"] = std::move(keeps);
  out["points"] = std::move(points);
  out["points_total"] = evaluated.size();
  out["final"] = std::move(final_run);
  return out;
}

void FunnelBuilder::Add(const Event& e) {
  last_event_id_ = std::max(last_event_id_, e.id);
  ++events_;
  ++counts_[e.kind];
  if (e.node == kNoNode) return;
  const EventKind kind = KindOf(e);
  if (kind == EventKind::kDispatched) {
    last_t_[e.node] = e.t;
    return;
  }
  const char* stage = StageClosedBy(kind);
  if (stage == nullptr) return;
  auto it = last_t_.find(e.node);
  if (it == last_t_.end()) return;  // dispatched before the events we saw: no start time
  seconds_[stage] += std::max(0.0, e.t - it->second);
  it->second = e.t;
}

nlohmann::json FunnelBuilder::Json(const std::vector<Node>& nodes) const {
  int64_t pruned = 0;
  int64_t skipped = 0;
  int64_t confirmed = 0;
  int64_t kept_now = 0;
  for (const Node& n : nodes) {
    pruned += n.outcome == Outcome::kPruned ? 1 : 0;
    skipped += n.outcome == Outcome::kSkipped ? 1 : 0;
    confirmed += n.critic.confirmed && n.id != kRootId ? 1 : 0;
    kept_now += n.outcome == Outcome::kKept && n.id != kRootId ? 1 : 0;
  }
  auto count = [&](const char* kind) {
    auto it = counts_.find(kind);
    return it == counts_.end() ? int64_t{0} : it->second;
  };
  const std::array<std::pair<const char*, int64_t>, 10> stages = {{
      {"proposed", count("proposed")},
      {"vetoed", count("vetoed")},
      {"pruned", pruned},
      {"skipped", skipped},
      {"dispatched", count("dispatched")},
      {"built", count("built")},
      {"checked", count("checked")},
      {"measured", count("measured")},
      {"kept", std::max(kept_now, count("kept"))},
      {"confirmed", confirmed},
  }};
  nlohmann::json out = nlohmann::json::object();
  nlohmann::json& list = out["stages"] = nlohmann::json::array();
  for (const auto& [stage, n] : stages) list.push_back({{"stage", stage}, {"count", n}});
  nlohmann::json& time = out["time_s"] = nlohmann::json::array();
  for (const char* stage :
       {"apply+build", "check", "benchmark", "decide", "profile", "failed step"}) {
    auto it = seconds_.find(stage);
    time.push_back({{"stage", stage}, {"seconds", it == seconds_.end() ? 0.0 : it->second}});
  }
  out["events"] = events_;
  return out;
}

nlohmann::json KeptPathJson(const std::vector<Node>& nodes) {
  report::TreeIndex index(nodes);
  nlohmann::json list = nlohmann::json::array();
  for (size_t pos : index.IncumbentPath()) {
    const Node& n = index.at(pos);
    if (n.id == kRootId || n.outcome == Outcome::kBaseline) continue;
    nlohmann::json& j = list.emplace_back(nlohmann::json::object());
    j["node"] = n.id;
    j["action"] = n.action_id;
    j["values"] = report::OptionalString(n.value);
    j["layer"] = n.layer;
    j["category"] = n.category;
    j["metric"] = OptionalNumber(n.metric);
    j["gain"] = OptionalNumber(n.gain);
    j["ci_low"] = OptionalNumber(n.critic.ci_low);
    j["ci_high"] = OptionalNumber(n.critic.ci_high);
    j["confirmed"] = n.critic.confirmed;
    j["cost_s"] = n.cost_s;
    j["commit"] = n.commit;
  }
  nlohmann::json out = nlohmann::json::object();
  out["nodes"] = std::move(list);
  return out;
}

nlohmann::json NoiseJson(const CampaignMeta& meta, double min_effect) {
  const bool ran = meta.repetitions > 0;
  return {{"cv", ran ? nlohmann::json(meta.noise_cv) : nlohmann::json(nullptr)},
          {"mde", ran ? nlohmann::json(meta.noise_mde) : nlohmann::json(nullptr)},
          {"repetitions", ran ? nlohmann::json(meta.repetitions) : nlohmann::json(nullptr)},
          {"min_effect", min_effect}};
}

nlohmann::json TreePageJson(const std::vector<Node>& nodes, size_t offset, size_t limit) {
  nlohmann::json list = nlohmann::json::array();
  auto add = [&](const Node& n) { report::FillTreeNodeJson(n, list.emplace_back(nullptr)); };
  size_t total = nodes.size();
  // The store returns nodes in strictly increasing id order: slice directly. Anything else
  // goes through the index (which also drops duplicated ids).
  const bool by_id =
      std::adjacent_find(nodes.begin(), nodes.end(),
                         [](const Node& a, const Node& b) { return a.id >= b.id; }) == nodes.end();
  if (by_id) {
    for (size_t i = offset; i < nodes.size() && i - offset < limit; ++i) add(nodes[i]);
  } else {
    report::TreeIndex index(nodes);
    const auto& order = index.ById();
    total = order.size();
    for (size_t i = offset; i < order.size() && i - offset < limit; ++i) add(index.at(order[i]));
  }
  return {{"total", total}, {"offset", offset}, {"limit", limit}, {"nodes", std::move(list)}};
}

nlohmann::json AnomaliesJson(const std::vector<Node>& nodes) {
  auto has = [](const Node& n, const char* flag) {
    return std::find(n.critic.flags.begin(), n.critic.flags.end(), flag) != n.critic.flags.end();
  };
  std::vector<const Node*> found;
  for (const Node& n : nodes) {
    if (has(n, "anomaly")) found.push_back(&n);
  }
  std::sort(found.begin(), found.end(), [](const Node* a, const Node* b) { return a->id < b->id; });
  nlohmann::json out = nlohmann::json::array();
  for (const Node* n : found) {
    out.push_back({{"node", n->id},
                   {"parent", n->parent},
                   {"action", n->CandidateKey()},
                   {"outcome", std::string(OutcomeName(n->outcome))},
                   {"rca", RcaClassName(n->critic.rca)},
                   {"unkept", has(*n, "unkept")},
                   {"diagnosis", n->diagnosis}});
  }
  return out;
}

}  // namespace arbor
