// arbor_micro_bench: Google Benchmark micro-benchmarks of what the Orchestrator does on every
// iteration: scoring a large candidate set, classifying the catalog at a deep incumbent, the
// tree queries behind them, building the tree on resume, and glob matching of profile targets.
// Trees and catalogs come from bench/synthetic_campaign.h (the same shape arbor_engine_bench
// stores), so `/N` is the number of nodes in the campaign.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/synthetic_campaign.h"
#include "core/search/candidates.h"
#include "core/search/scoring.h"
#include "core/tree/tree.h"
#include "util/check.h"
#include "util/strings.h"

namespace arbor::bench {
namespace {

// A synthetic campaign of n nodes as a tree, with its spec and catalog; built once per n.
struct Fixture {
  CampaignSpec spec;
  std::unique_ptr<Catalog> catalog;
  Tree tree;
  NodeId incumbent = kNoNode;
};

const Fixture& FixtureOf(int n) {
  static std::map<int, std::unique_ptr<Fixture>> cache;
  auto& f = cache[n];
  if (!f) {
    f = std::make_unique<Fixture>();
    SyntheticShape shape;
    shape.nodes = n;
    f->spec = SyntheticSpec(shape, 500);
    f->catalog = std::make_unique<Catalog>(f->spec.actions);
    f->tree = BuildTree(shape, &f->incumbent);
  }
  return *f;
}

void BM_ScoreOneAndNormalize(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  SyntheticShape shape;
  shape.nodes = 1000;
  const CampaignSpec spec = SyntheticSpec(shape, 500);
  std::vector<ScoreInput> inputs(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    ScoreInput& in = inputs[static_cast<size_t>(i)];
    in.action = &spec.actions[static_cast<size_t>(i) % spec.actions.size()];
    in.g = 0.01 + 0.05 * Unit(static_cast<uint64_t>(i));
    in.r_acc = 0.02;
    in.r_crash = 0.05;
    in.cost_s = 30 + 60 * Unit(static_cast<uint64_t>(i) + 1);
    in.reference_cost_s = 60;
    in.m_gap = 1.2;
    in.total_tries = 100000;
    in.category_tries = i % 1000;
  }
  std::vector<ScoreTerms> terms;
  for (auto _ : state) {
    terms.clear();
    for (const ScoreInput& in : inputs) terms.push_back(ScoreOne(in, Formula::kPaper, 0.6));
    NormalizeScores(&terms);
    benchmark::DoNotOptimize(terms.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_ScoreOneAndNormalize)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_ExpectedGain(benchmark::State& state) {
  const Profile profile = SyntheticProfile(1);
  const std::vector<std::string> targets = {"comp3*", "libfoo?.so"};
  for (auto _ : state) benchmark::DoNotOptimize(ExpectedGain(profile, targets, 1.2));
}
BENCHMARK(BM_ExpectedGain);

void BM_ClassifyAtIncumbent(benchmark::State& state) {
  const Fixture& f = FixtureOf(static_cast<int>(state.range(0)));
  std::vector<Candidate> applicable;
  std::vector<Exclusion> excluded;
  for (auto _ : state) {
    applicable.clear();
    excluded.clear();
    f.catalog->Classify(f.tree, f.incumbent, &applicable, &excluded);
    benchmark::DoNotOptimize(applicable.data());
  }
  state.counters["catalog"] = static_cast<double>(f.catalog->All().size());
  state.counters["applicable"] = static_cast<double>(applicable.size());
}
BENCHMARK(BM_ClassifyAtIncumbent)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

// What ScoreCandidates asks for: the applicable candidates only. The catalog's path cache is
// warm after the first iteration, so this is the steady-state per-iteration cost.
void BM_ApplicableAtIncumbent(benchmark::State& state) {
  const Fixture& f = FixtureOf(static_cast<int>(state.range(0)));
  std::vector<Candidate> applicable;
  for (auto _ : state) {
    applicable.clear();
    f.catalog->Classify(f.tree, f.incumbent, &applicable, nullptr);
    benchmark::DoNotOptimize(applicable.data());
  }
  state.counters["catalog"] = static_cast<double>(f.catalog->All().size());
  state.counters["applicable"] = static_cast<double>(applicable.size());
}
BENCHMARK(BM_ApplicableAtIncumbent)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMicrosecond);

// One search iteration's tree work: a new (reverted) child under the incumbent, then the
// applicable candidates again (the cache catches up through Tree::Changes()).
void BM_NewChildThenApplicable(benchmark::State& state) {
  const Fixture& f = FixtureOf(static_cast<int>(state.range(0)));
  Tree tree = f.tree;
  const Catalog catalog(f.spec.actions);
  std::vector<Candidate> applicable;
  catalog.Classify(tree, f.incumbent, &applicable, nullptr);
  size_t next = 0;
  for (auto _ : state) {
    ARBOR_CHECK(!applicable.empty(), "the catalog ran out of candidates");
    const Candidate c = applicable[next++ % applicable.size()];
    Node n;
    n.id = tree.MaxId() + 1;
    n.parent = f.incumbent;
    n.action_id = c.action->id;
    n.value = c.value;
    n.seq = n.id;
    n.outcome = Outcome::kReverted;
    n.step = Step::kDone;
    tree.Upsert(std::move(n));
    applicable.clear();
    catalog.Classify(tree, f.incumbent, &applicable, nullptr);
    benchmark::DoNotOptimize(applicable.data());
  }
}
BENCHMARK(BM_NewChildThenApplicable)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Iterations(1000)
    ->Unit(benchmark::kMicrosecond);

// The per-iteration tree queries of Orchestrator::Run/Save/ScoreCandidates.
void BM_TreeIncumbent(benchmark::State& state) {
  const Fixture& f = FixtureOf(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(f.tree.Incumbent());
}
BENCHMARK(BM_TreeIncumbent)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);

void BM_TreeFinishedCount(benchmark::State& state) {
  const Fixture& f = FixtureOf(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(f.tree.FinishedCount());
}
BENCHMARK(BM_TreeFinishedCount)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);

void BM_TreeTrailingNonKept(benchmark::State& state) {
  const Fixture& f = FixtureOf(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(f.tree.TrailingNonKept());
}
BENCHMARK(BM_TreeTrailingNonKept)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMicrosecond);

void BM_TreeTriedAlongPath(benchmark::State& state) {
  const Fixture& f = FixtureOf(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(f.tree.TriedAlongPath(f.incumbent).size());
}
BENCHMARK(BM_TreeTriedAlongPath)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);

void BM_TreeUpsert(benchmark::State& state) {
  SyntheticShape shape;
  shape.nodes = static_cast<int>(state.range(0));
  std::vector<Node> nodes;
  GenerateCampaign(shape, [&](NodeRecord&& r) { nodes.push_back(std::move(r.node)); });
  for (auto _ : state) {
    auto tree = std::make_unique<Tree>();
    for (const Node& n : nodes) tree->Upsert(n);
    benchmark::DoNotOptimize(tree->size());
    state.PauseTiming();
    tree.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_TreeUpsert)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_GlobMatch(benchmark::State& state) {
  const std::vector<std::string> patterns = {"comp3*", "libfoo?.so", "kernel.[ab]*", "*"};
  const std::vector<std::string> names = {"comp3", "comp31_inner", "libfoo1.so", "kernel.attn",
                                          "io.read"};
  for (auto _ : state) {
    int hits = 0;
    for (const auto& p : patterns) {
      for (const auto& n : names) hits += GlobMatch(p, n) ? 1 : 0;
    }
    benchmark::DoNotOptimize(hits);
  }
  state.SetItemsProcessed(state.iterations() *
                          static_cast<int64_t>(patterns.size() * names.size()));
}
BENCHMARK(BM_GlobMatch);

}  // namespace
}  // namespace arbor::bench

BENCHMARK_MAIN();
