#include "bench/search/arbor_policy.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <set>

#include "core/critic/critic_gate.h"
#include "core/critic/gate.h"
#include "core/knowledge/kb.h"
#include "core/orchestrator/orchestrator.h"
#include "core/tree/tree.h"
#include "fakes/fakes.h"

namespace arbor::search {
namespace {

// printf onto the end of `out`.
void Appendf(std::string* out, const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  if (n > 0) {
    const size_t at = out->size();
    out->resize(at + static_cast<size_t>(n) + 1);
    std::vsnprintf(out->data() + at, static_cast<size_t>(n) + 1, format, again);
    out->resize(at + static_cast<size_t>(n));
  }
  va_end(again);
}

}  // namespace

namespace {

// The landscape behind the Target port: every benchmark run and check the engine asks for is
// the next reading of the run's stream (Evaluator), so the engine and the hand-written policies
// see the same noise model. Crashes look like a real crash (SIGABRT, or SIGILL for an action
// run without its prerequisite), accuracy failures like a failing check; every run reports the
// work it did, as the campaign's metric.work declares.
class LandscapeTarget : public Target {
 public:
  explicit LandscapeTarget(Evaluator* ev) : ev_(ev) {}

  StepResult Build(const RunContext&) override { return Step(); }
  Measurement Check(const RunContext& ctx) override {
    Measurement m{Step(), {}, {}};
    if (!ev_->Check(Of(ctx))) {
      m.step.kind = ExitKind::kFailed;
      m.step.exit_code = 1;
      m.step.detail = "exit code 1";
      m.step.tail = "accuracy: generated output differs from the reference";
      accuracy_nodes_.insert(ctx.node);
    }
    return m;
  }
  Measurement Bench(const RunContext& ctx) override {
    Measurement m{Step(), {}, {}};
    std::optional<double> v = ev_->Run(Of(ctx));
    if (!v) {
      const bool sigill = ev_->landscape().CrashSignal(Of(ctx)) == 4;
      m.step.kind = ExitKind::kSignaled;
      m.step.signal = sigill ? 4 : 6;
      m.step.detail = sigill ? "killed by signal 4 (SIGILL)" : "killed by signal 6 (SIGABRT)";
      m.step.tail = sigill ? "Illegal instruction" : "Aborted";
      crash_nodes_.insert(ctx.node);
      return m;
    }
    m.value = *v;
    m.extra["work"] = ev_->landscape().Work(Of(ctx));
    return m;
  }
  ProfileResult Profile(const RunContext& ctx) override {
    return ProfileResult{Step(), ev_->landscape().TrueProfile(Of(ctx))};
  }
  int crashes() const { return static_cast<int>(crash_nodes_.size()); }
  int accuracy_failures() const { return static_cast<int>(accuracy_nodes_.size()); }

 private:
  static StepResult Step() {
    StepResult r;
    r.duration_s = 1;  // every step costs the same: the priors' costs decide, as declared
    return r;
  }
  Config Of(const RunContext& ctx) const { return ev_->landscape().ConfigFromEnv(ctx.env); }

  Evaluator* ev_;
  std::set<NodeId> crash_nodes_;
  std::set<NodeId> accuracy_nodes_;
};

KbContext Context(const std::string& uid) {
  KbContext c;
  c.hardware.cpu_model = "search-bench";
  c.hardware.cores = 2;
  c.now = 1e9;
  c.campaign_uid = uid;
  return c;
}

struct Campaign {
  testing::FakeStore store;
  int crashes = 0;
  int accuracy_failures = 0;
  uint64_t runs = 0;
  std::string stop;
  std::string error;
};

void RunCampaign(const ArborVariant& v, const Landscape& l, uint64_t seed, int budget,
                 KnowledgeBase* kb, const std::string& uid, Campaign* out) {
  CampaignSpec spec = l.ToCampaignSpec(seed, budget);
  spec.critic.enabled = v.critic;
  spec.search.reprofile = v.reprofile;
  spec.critic.constraints = v.constraints;
  if (!v.ucb) spec.search.explore = 0;
  spec.search.revisit = v.revisit;
  spec.search.pairs = v.pairs;
  spec.search.branches = v.branches;
  spec.critic.recheck = v.recheck;
  spec.search.formula = v.formula;
  Evaluator ev(l, seed);
  LandscapeTarget target(&ev);
  testing::FakeWorkspace ws;
  testing::FakeSpecialist specialist;
  CriticGate critic_gate;
  MedianGate median_gate;
  testing::FakeClock clock;
  Gate* gate = v.critic ? static_cast<Gate*>(&critic_gate) : &median_gate;
  Orchestrator o(
      spec, Ports{&out->store, &ws, &target, &specialist, gate, &clock, nullptr, kb, Context(uid)});
  auto summary = o.Run();
  if (!summary.ok()) out->error = summary.error().message;
  if (summary.ok()) out->stop = StopReasonName(summary->stop_reason);
  out->crashes = target.crashes();
  out->accuracy_failures = target.accuracy_failures();
  out->runs = ev.runs();
}

}  // namespace

std::vector<ArborVariant> ArborVariants() {
  std::vector<ArborVariant> out(11);
  out[0].name = "arbor";
  out[1].name = "arbor-no-critic";
  out[1].critic = false;
  out[2].name = "arbor-no-reprofile";
  out[2].reprofile = false;
  out[3].name = "arbor-no-constraints";
  out[3].constraints = false;
  out[4].name = "arbor-no-ucb";
  out[4].ucb = false;
  out[5].name = "arbor-seed-literal";
  out[5].formula = Formula::kSeedLiteral;
  out[6].name = "arbor-no-revisit";
  out[6].revisit = false;
  out[7].name = "arbor-no-recheck";
  out[7].recheck = false;
  out[8].name = "arbor-warm-kb";
  out[8].warm_kb = true;
  out[9].name = "arbor-no-pairs";
  out[9].pairs = false;
  out[10].name = "arbor-hillclimb";
  out[10].branches = false;
  return out;
}

RunResult ArborPolicy::Run(const Landscape& l, uint64_t seed, int budget) {
  RunResult r;
  testing::FakeKnowledgeBase kb;
  KnowledgeBase* kb_port = nullptr;
  if (v_.warm_kb) {
    // One earlier campaign on the same landscape, with its own seed and noise stream, fills
    // the knowledge base; its results are not scored.
    Campaign earlier;
    RunCampaign(v_, l, seed ^ 0x5bd1e995u, budget, &kb, "earlier", &earlier);
    if (!earlier.error.empty()) {
      r.error = "warm-up campaign: " + earlier.error;
      return r;
    }
    kb_port = &kb;
  }
  Campaign c;
  RunCampaign(v_, l, seed, budget, kb_port, "measured", &c);
  r.crashes = c.crashes;
  r.accuracy_failures = c.accuracy_failures;
  r.runs = c.runs;
  r.stop = c.stop;
  r.error = c.error;
  // The state after each evaluation: the last kept node so far, in dispatch order.
  std::vector<const Node*> done;
  for (const auto& [id, n] : c.store.nodes) {
    if (IsEvaluated(n)) done.push_back(&n);
  }
  std::sort(done.begin(), done.end(), [](const Node* a, const Node* b) { return a->seq < b->seq; });
  if (v_.trace) {
    // One write per campaign, so that traces of runs in parallel (--jobs) do not interleave.
    std::string text;
    Appendf(&text, "%s %s seed %llu: %s\n", v_.name.c_str(), l.name.c_str(),
            static_cast<unsigned long long>(seed),
            std::string(StopReasonName(c.store.LoadMeta().value()->stop_reason)).c_str());
    Tree tree;
    for (const auto& [id, n] : c.store.nodes) tree.Upsert(n);
    for (const Node* n : done) {
      const std::optional<Move> move = MoveOf(*n);
      // A branch node names the node it builds on; a flat pair its companion.
      const std::string with = tree.IsBranch(*n)  ? " on #" + std::to_string(n->parent)
                               : CompanionKey(*n) ? " with " + *CompanionKey(*n)
                                                  : "";
      Appendf(&text, "  #%ld %-32s %-8s true %.1f  [%s%s] %s\n", static_cast<long>(n->id),
              n->CandidateKey().c_str(), std::string(OutcomeName(n->outcome)).c_str(),
              l.TrueValue(l.ConfigFromEnv(n->overlay)),
              move ? std::string(MoveName(*move)).c_str() : "new", with.c_str(),
              n->diagnosis.c_str());
    }
    // Where the gap to the optimum comes from: each choice of the optimum the final state
    // lacks, with every node that tried that action and how it ended.
    const Optimum best = FindOptimum(l);
    Config final_state;
    for (const Node* n : done) {
      if (n->outcome == Outcome::kKept) final_state = l.ConfigFromEnv(n->overlay);
    }
    Appendf(&text, "  optimum %.1f, handed %.1f\n", best.value, l.TrueValue(final_state));
    for (const auto& [id, value] : best.config) {
      auto it = final_state.find(id);
      if (it != final_state.end() && it->second == value) continue;
      std::string fates;
      for (const auto& [nid, n] : c.store.nodes) {
        if (n.action_id != id) continue;
        fates +=
            " #" + std::to_string(nid) + (n.value.empty() ? "" : "[" + n.value + "]") + ":" +
            std::string(OutcomeName(n.outcome)) +
            (n.critic.rca == RcaClass::kNone ? "" : "/" + std::string(RcaClassName(n.critic.rca)));
      }
      // Its marginal worth both ways: added to what was handed, and taken out of the optimum.
      Config with = final_state;
      with[id] = value;
      Config without = best.config;
      without.erase(id);
      Appendf(
          &text,
          "  missing %s=%s (handed %s; +%.2f%% on the handed state, %.2f%% of the optimum):%s\n",
          id.c_str(), value.c_str(), it == final_state.end() ? "off" : it->second.c_str(),
          100 * (l.TrueValue(with) / l.TrueValue(final_state) - 1),
          100 * (1 - l.TrueValue(without) / best.value),
          fates.empty() ? " never tried" : fates.c_str());
    }
    // A choice handed that the optimum lacks, and what taking it out would change: a useless
    // companion of a kept pair is near 0, a change that later keeps made harmful is above.
    for (const auto& [id, value] : final_state) {
      if (best.config.count(id)) continue;
      Config without = final_state;
      without.erase(id);
      Appendf(&text, "  extra %s=%s (%+.2f%% without it)\n", id.c_str(), value.c_str(),
              100 * (l.TrueValue(without) / l.TrueValue(final_state) - 1));
    }
    // What the Critic's constraints vetoed is no evaluation, but often why a campaign ends.
    for (const auto& [id, n] : c.store.nodes) {
      if (n.outcome != Outcome::kPruned) continue;
      Appendf(&text, "  #%ld %-32s pruned under #%ld: %s\n", static_cast<long>(id),
              n.CandidateKey().c_str(), static_cast<long>(n.parent), n.diagnosis.c_str());
    }
    std::fputs(text.c_str(), stderr);
  }
  Config state;
  for (const Node* n : done) {
    if (n->outcome == Outcome::kKept) state = l.ConfigFromEnv(n->overlay);
    r.states.push_back(state);
  }
  return r;
}

}  // namespace arbor::search
