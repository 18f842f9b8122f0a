#include <benchmark/benchmark.h>

#include <numeric>
#include <vector>
static void BM_Sum(benchmark::State& state) {
  std::vector<int> v(state.range(0), 1);
  for (auto _ : state) benchmark::DoNotOptimize(std::accumulate(v.begin(), v.end(), 0));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Sum)->Arg(64)->Arg(4096);
static void BM_Copy(benchmark::State& state) {
  std::vector<char> a(1 << 16), b(1 << 16);
  for (auto _ : state) {
    std::copy(a.begin(), a.end(), b.begin());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * a.size());
  state.counters["blocks"] = 16;
}
BENCHMARK(BM_Copy)->Unit(benchmark::kMicrosecond);
static void BM_Fails(benchmark::State& state) {
  for (auto _ : state) {
    state.SkipWithError("no input file");
    break;
  }
}
BENCHMARK(BM_Fails);
BENCHMARK_MAIN();
