// arbor_kb_bench: the knowledge base's cost at a campaign's start (Google Benchmark).
//
//   BM_KbPriors/N     KbPriors::Compute over N entries for a 60-action campaign (the issue's
//                     budget: < 5 ms at N = 100k)
//   BM_KbStoreLoad/N  reading those N entries back from a real SQLite knowledge base
//
// Entries come in blocks of 200 per campaign (as campaigns record them), over 4 hardware and
// 6 workload signatures, every outcome, with the spec's own action ids and categories plus as
// many unknown ones (skipped cheaply).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/knowledge/kb.h"
#include "store/kb_store.h"
#include "util/check.h"

namespace arbor::bench {
namespace {

constexpr int kActions = 60;
constexpr int kCategories = 12;

std::vector<ActionSpec> Actions() {
  std::vector<ActionSpec> out;
  for (int i = 0; i < kActions; ++i) {
    ActionSpec a;
    a.id = "cat" + std::to_string(i % kCategories) + ".action" + std::to_string(i);
    a.category = "cat" + std::to_string(i % kCategories);
    a.speedup = 1.2 + 0.1 * (i % 7);
    a.cost_s = 10 + i;
    a.content_hash = "h" + std::to_string(i);
    if (i % 10 == 0) a.values = {"1", "2", "4", "8"};
    out.push_back(a);
  }
  return out;
}

KbContext Context() {
  KbContext c;
  c.workload = ParseWorkload("campaign=bench bench=1");
  c.hardware.cpu_model = "cpu 0";
  c.hardware.cores = 8;
  c.now = 2e9;
  c.campaign_uid = "now";
  return c;
}

std::vector<KbEntry> Entries(int n) {
  std::mt19937_64 rng(42);
  std::vector<KbEntry> out;
  out.reserve(n);
  const char* outcomes[] = {"kept", "reverted", "reverted", "crashed"};
  for (int i = 0; i < n; ++i) {
    KbEntry e;
    e.id = i + 1;
    // A campaign records its nodes one after the other: blocks of 200 entries.
    int campaign = i / 200;
    e.campaign = "c" + std::to_string(campaign);
    e.campaign_uid = "u" + std::to_string(campaign);
    e.node = i;
    e.uid = e.campaign_uid + "/" + std::to_string(i);
    int a = static_cast<int>(rng() % (2 * kActions));  // half unknown to this campaign
    e.action_id = "cat" + std::to_string(a % kCategories) + ".action" + std::to_string(a);
    e.category = "cat" + std::to_string(a % (2 * kCategories));
    e.value = a % 10 == 0 ? std::to_string(1 << (rng() % 4)) : "";
    e.content_hash = rng() % 4 ? "h" + std::to_string(a) : "old";
    e.workload = ParseWorkload("campaign=bench bench=" + std::to_string(campaign % 6));
    e.hardware.cpu_model = "cpu " + std::to_string(campaign % 4);
    e.hardware.cores = 8;
    e.signature = 1 + (campaign % 6) * 4 + campaign % 4;  // as KbStore::Load numbers them
    e.outcome = outcomes[rng() % 4];
    e.accuracy_failure = e.outcome == "reverted" && rng() % 3 == 0;
    if (e.outcome != "crashed") e.gain = static_cast<double>(rng() % 1000) / 1000 - 0.3;
    e.prior_speedup = 1.5;
    e.target_share = 0.4;
    e.implied_speedup = ImpliedSpeedup(e.gain, e.target_share, Goal::kMax);
    e.cost_s = 30;
    e.rca = e.outcome == "crashed" ? "runtime_crash" : "";
    e.controlled = rng() % 5 != 0;
    // Recorded at the start of the campaign's process, spread over 400 days.
    e.recorded_at = 2e9 - static_cast<double>((campaign * 7919) % 400) * 86400;
    out.push_back(std::move(e));
  }
  return out;
}

void BM_KbPriors(benchmark::State& state) {
  std::vector<ActionSpec> actions = Actions();
  std::vector<KbEntry> entries = Entries(static_cast<int>(state.range(0)));
  KbContext context = Context();
  for (auto _ : state) {
    KbPriors p = KbPriors::Compute(entries, actions, context);
    benchmark::DoNotOptimize(p.size());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_KbPriors)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_KbStoreLoad(benchmark::State& state) {
  std::string path = std::filesystem::temp_directory_path() /
                     ("arbor-kb-bench-" + std::to_string(getpid()) + ".db");
  std::filesystem::remove(path);
  auto kb = KbStore::Open(path, OpenMode::kReadWrite);
  ARBOR_CHECK(kb.ok(), "open");
  ARBOR_CHECK((*kb)->Record(Entries(static_cast<int>(state.range(0)))).ok(), "record");
  std::vector<ActionSpec> actions = Actions();
  KbQuery q;
  for (const auto& a : actions) {
    q.action_ids.push_back(a.id);
    q.categories.push_back(a.category);
  }
  for (auto _ : state) {
    auto entries = (*kb)->Load(q);
    benchmark::DoNotOptimize(entries->size());
  }
  kb->reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}
BENCHMARK(BM_KbStoreLoad)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace arbor::bench

BENCHMARK_MAIN();
