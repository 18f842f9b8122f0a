#include "bench/synthetic_campaign.h"

#include <algorithm>
#include <string>
#include <utility>

#include "util/check.h"

namespace arbor::bench {
namespace {

constexpr double kRootMetric = 100;
constexpr double kChainStep = 0.1;       // metric gained per kept level
constexpr double kCrashShare = 0.25;     // of the non-chain nodes
constexpr double kSecondsPerNode = 2.0;  // campaign clock between dispatches

std::string ChainId(int k) { return "chain.k" + std::to_string(k); }
std::string WideId(int w) { return "wide.w" + std::to_string(w); }
std::string ChainCategory(int k) { return "cat" + std::to_string(k % 10); }
std::string WideCategory(int w) { return "wide" + std::to_string(w % 5); }

int ChainSiblings(const SyntheticShape& s) {
  return std::min(s.nodes - 1 - s.depth, (kChainValues - 1) * s.depth);
}
int WideSiblings(const SyntheticShape& s) { return s.nodes - 1 - s.depth - ChainSiblings(s); }
int WideValues(const SyntheticShape& s) {
  return (WideSiblings(s) + s.spare_candidates + kWideActions - 1) / kWideActions;
}

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Builds the record of one finished node; `parent` supplies overlay and metric.
class Emitter {
 public:
  explicit Emitter(const std::function<void(NodeRecord&&)>& emit) : emit_(emit) {}

  void Root() {
    NodeRecord r;
    Node& n = r.node;
    n.id = kRootId;
    n.action_id = "baseline";
    n.outcome = Outcome::kBaseline;
    n.step = Step::kDone;
    n.commit = "c0";
    n.metric = kRootMetric;
    Finish(&r, kRootMetric, "dispatched");
    r.profile = SyntheticProfile(n.id);
    r.events.push_back(Ev(n, "reprofiled", "bottlenecks: comp0 12.5%, comp1 12.5%"));
    emit_(std::move(r));
  }

  // A child of `parent` running (action, value); kept when `kept`.
  void Child(const Node& parent, const std::string& action, const std::string& category,
             const std::string& var, const std::string& value, bool kept) {
    NodeRecord r;
    Node& n = r.node;
    n.id = ++last_id_;
    n.parent = parent.id;
    n.action_id = action;
    n.value = value;
    n.category = category;
    n.layer = "env";
    n.step = Step::kDone;
    n.seq = n.id - 1;
    n.commit = "c" + std::to_string(n.id);
    n.overlay = parent.overlay;
    n.overlay[var] = value;
    n.summary = "applied " + action;
    n.cost_s = 1.5;
    const double u = Unit(static_cast<uint64_t>(n.id));
    n.score.g = 0.01 + 0.02 * u;
    n.score.c = 60;
    n.score.exploit = 0.5 + 0.5 * u;
    n.score.bonus = 0.3;
    n.score.h = n.score.exploit + n.score.bonus;
    const double parent_metric = parent.metric.value_or(kRootMetric);
    double metric = parent_metric * (0.95 + 0.05 * u);
    if (kept) metric = parent_metric + kChainStep;
    n.metric = metric;
    n.gain = (metric - parent_metric) / parent_metric;
    n.created_s = static_cast<double>(n.id) * kSecondsPerNode;
    const std::string key = n.CandidateKey();
    r.events.push_back(Ev(n, "proposed", key + ": h=" + std::to_string(n.score.h)));
    Finish(&r, metric, "dispatched");
    if (kept) {
      n.outcome = Outcome::kKept;
      n.diagnosis = "median " + std::to_string(metric) + " vs " + std::to_string(parent_metric);
      r.events.push_back(Ev(n, "kept", n.diagnosis));
      r.profile = SyntheticProfile(n.id);
      r.events.push_back(Ev(n, "reprofiled", "bottlenecks: comp0 12.5%, comp1 12.5%"));
    } else if (Unit(Mix(n.id)) < kCrashShare) {
      n.outcome = Outcome::kCrashed;
      n.diagnosis = "bench failed: killed by signal 11 (SIGSEGV)";
      r.events.push_back(Ev(n, "crashed", n.diagnosis));
    } else {
      n.outcome = Outcome::kReverted;
      n.diagnosis = "median " + std::to_string(metric) + " vs " + std::to_string(parent_metric) +
                    " (below min_effect 1.0%)";
      r.events.push_back(Ev(n, "reverted", n.diagnosis));
    }
    n.finished_s = n.created_s + 1.5;
    emit_(std::move(r));
  }

  NodeId last_id() const { return last_id_; }

 private:
  // Samples and the events of the build/check/bench steps.
  void Finish(NodeRecord* r, double metric, const char* first_event) {
    Node& n = r->node;
    r->events.push_back(Ev(n, first_event, "on top of node " + std::to_string(n.parent)));
    r->events.push_back(Ev(n, "built", "build ok"));
    r->events.push_back(Ev(n, "checked", "check passed"));
    for (int rep = 0; rep < 3; ++rep) {
      Sample s;
      s.node = n.id;
      s.rep = rep;
      s.value = metric * (0.995 + 0.01 * Unit(Mix(n.id * 3 + rep)));
      r->samples.push_back(s);
    }
    r->events.push_back(Ev(n, "measured", "throughput median " + std::to_string(metric)));
  }

  Event Ev(const Node& n, const char* kind, std::string message) {
    Event e;
    e.node = n.id;
    e.kind = kind;
    e.message = std::move(message);
    e.t = static_cast<double>(n.id) * kSecondsPerNode + 0.1 * static_cast<double>(++event_seq_ % 8);
    return e;
  }

  const std::function<void(NodeRecord&&)>& emit_;
  NodeId last_id_ = kRootId;
  int64_t event_seq_ = 0;
};

}  // namespace

double Unit(uint64_t key) { return static_cast<double>(Mix(key) >> 11) * 0x1.0p-53; }

Profile SyntheticProfile(uint64_t salt) {
  Profile p;
  p.total_s = 10 + Unit(salt);
  for (int i = 0; i < 8; ++i) {
    p.components.push_back(Component{"comp" + std::to_string(i), i < 4 ? "cpu" : "io", 0.125});
  }
  return p;
}

CampaignSpec SyntheticSpec(const SyntheticShape& shape, int extra_nodes) {
  CampaignSpec spec;
  spec.name = "engine-bench";
  spec.file = "/nonexistent/arbor.toml";
  spec.workspace = "/nonexistent";
  spec.target.env = {{"OMP_PROC_BIND", "close"}};
  spec.metric.name = "throughput";
  spec.metric.repetitions = 1;
  spec.search.max_nodes = shape.nodes - 1 + extra_nodes;
  spec.search.max_time_s = 1e12;
  spec.search.plateau = 1 << 28;
  for (int k = 0; k < kChainActions; ++k) {
    ActionSpec a;
    a.id = ChainId(k);
    a.layer = "env";
    a.category = ChainCategory(k);
    a.targets = {"comp" + std::to_string(k % 8)};
    a.speedup = 1.05 + 0.01 * (k % 10);
    a.cost_s = 30 + k;
    a.risk_crash = 0.05;
    a.apply.env = {{"ARBOR_K" + std::to_string(k), "{value}"}};
    for (int v = 0; v < kChainValues; ++v) a.values.push_back(std::to_string(v));
    spec.actions.push_back(std::move(a));
  }
  const int wide_values = WideValues(shape);
  for (int w = 0; w < kWideActions; ++w) {
    ActionSpec a;
    a.id = WideId(w);
    a.layer = "env";
    a.category = WideCategory(w);
    a.targets = {"comp" + std::to_string(w % 8) + "*", "libfoo?.so"};
    a.speedup = 1.1 + 0.02 * w;
    a.cost_s = 60;
    a.risk_accuracy = 0.02;
    a.apply.env = {{"ARBOR_W" + std::to_string(w), "{value}"}};
    for (int v = 0; v < wide_values; ++v) a.values.push_back(std::to_string(v));
    spec.actions.push_back(std::move(a));
  }
  return spec;
}

void GenerateCampaign(const SyntheticShape& shape, const std::function<void(NodeRecord&&)>& emit) {
  ARBOR_CHECK(shape.depth >= 1 && shape.depth <= kChainActions, "depth out of range");
  ARBOR_CHECK(shape.nodes > shape.depth, "fewer nodes than the chain");
  Node chain;  // the current chain node (a copy: records are moved into `emit`)
  const std::function<void(NodeRecord &&)> keep_chain = [&](NodeRecord&& r) {
    if (r.node.outcome == Outcome::kKept || r.node.id == kRootId) chain = r.node;
    emit(std::move(r));
  };
  Emitter e(keep_chain);
  e.Root();
  int chain_left = ChainSiblings(shape);
  const int wide = WideSiblings(shape);
  const int levels = shape.depth + 1;
  int64_t wide_cursor = 0;
  for (int level = 0; level < levels; ++level) {
    const Node parent = chain;
    if (level < shape.depth) {
      for (int v = 1; v < kChainValues && chain_left > 0; ++v, --chain_left) {
        e.Child(parent, ChainId(level), ChainCategory(level), "ARBOR_K" + std::to_string(level),
                std::to_string(v), false);
      }
    }
    const int here = wide / levels + (level < wide % levels ? 1 : 0);
    for (int i = 0; i < here; ++i, ++wide_cursor) {
      const int w = static_cast<int>(wide_cursor % kWideActions);
      e.Child(parent, WideId(w), WideCategory(w), "ARBOR_W" + std::to_string(w),
              std::to_string(wide_cursor / kWideActions), false);
    }
    if (level < shape.depth) {
      e.Child(parent, ChainId(level), ChainCategory(level), "ARBOR_K" + std::to_string(level), "0",
              true);
    }
  }
  ARBOR_CHECK(e.last_id() == shape.nodes, "generated " + std::to_string(e.last_id()) +
                                              " nodes instead of " + std::to_string(shape.nodes));
}

CampaignMeta SyntheticMeta(const SyntheticShape& shape) {
  CampaignMeta meta;
  meta.name = "engine-bench";
  meta.no_critic = shape.critic ? 0 : 1;
  meta.seed = 1;
  meta.state = CampaignState::kStopped;
  meta.stop_reason = StopReason::kInterrupted;
  meta.elapsed_s = shape.nodes * kSecondsPerNode;
  meta.next_seq = shape.nodes;
  return meta;
}

Status PopulateStore(Store* store, const SyntheticShape& shape, int batch) {
  Mutation m;
  int in_batch = 0;
  Status status;
  GenerateCampaign(shape, [&](NodeRecord&& r) {
    if (!status.ok()) return;
    if (r.profile) m.profiles.emplace_back(r.node.id, std::move(*r.profile));
    m.nodes.push_back(std::move(r.node));
    for (auto& s : r.samples) m.samples.push_back(std::move(s));
    for (auto& ev : r.events) m.events.push_back(std::move(ev));
    if (++in_batch == batch) {
      status = store->Apply(m);
      m = Mutation{};
      in_batch = 0;
    }
  });
  ARBOR_TRY(status);
  m.meta = SyntheticMeta(shape);
  return store->Apply(m);
}

Tree BuildTree(const SyntheticShape& shape, NodeId* incumbent) {
  Tree tree;
  GenerateCampaign(shape, [&](NodeRecord&& r) { tree.Upsert(r.node); });
  if (incumbent != nullptr) *incumbent = tree.Incumbent();
  return tree;
}

}  // namespace arbor::bench
