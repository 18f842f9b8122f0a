// arbor_engine_bench: the engine's own overhead per node and the cold-resume time, over a real
// SqliteStore pre-populated with a synthetic campaign of N finished nodes (synthetic_campaign.h).
//
// A plain main rather than Google Benchmark: the targets are about the distribution of
// per-node times inside one long run (median, p99) and about a one-shot resume, not about a
// repeated micro-operation. The real Orchestrator runs with no-op ports (FakeWorkspace,
// FakeSpecialist, an instant Target, MedianGate, FakeClock as the campaign clock), so what is
// timed is select + score + persist. The per-node time is the interval between successive
// "dispatched" events (the last one ends at "stopped"), on the steady clock (wall) and on the
// thread's CPU clock (what the engine itself spent, whatever else the machine runs).
//
// Exits non-zero only on errors; missed targets are reported, never fatal.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/synthetic_campaign.h"
#include "core/critic/critic_gate.h"
#include "core/critic/gate.h"
#include "core/orchestrator/orchestrator.h"
#include "core/search/candidates.h"
#include "fakes/fakes.h"
#include "store/sqlite_store.h"
#include "util/strings.h"

namespace arbor::bench {
namespace {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// A moment on both clocks.
struct Mark {
  SteadyClock::time_point wall;
  double cpu_ms = 0;
  static Mark Now() { return Mark{SteadyClock::now(), ThreadCpuMs()}; }
};
double WallMs(const Mark& a, const Mark& b) {
  return std::chrono::duration<double, std::milli>(b.wall - a.wall).count();
}
double CpuMs(const Mark& a, const Mark& b) { return b.cpu_ms - a.cpu_ms; }

struct Options {
  std::vector<int> sizes = {1000, 10000, 100000};
  int nodes = 500;  // nodes dispatched per size
  int resume_runs = 5;
  double budget_s = 120;  // per size: the measured run stops dispatching after this long
  std::string dir;        // default: a fresh temp dir, removed at the end
  bool keep = false;
};

// Instant build/check/profile; the metric is deterministic noise around 100 from the node id,
// so some candidates beat the incumbent and are kept (and re-profiled).
class NoopTarget : public Target {
 public:
  StepResult Build(const RunContext&) override { return Ok(); }
  Measurement Check(const RunContext&) override { return Measurement{Ok(), {}, {}}; }
  Measurement Bench(const RunContext& ctx) override {
    Measurement m{Ok(), {}, {}};
    m.value = 100 * (0.9 + 0.2 * Unit(static_cast<uint64_t>(ctx.node) * 7919 + ctx.repetition));
    return m;
  }
  ProfileResult Profile(const RunContext& ctx) override {
    return ProfileResult{Ok(), SyntheticProfile(static_cast<uint64_t>(ctx.node))};
  }

 private:
  static StepResult Ok() {
    StepResult r;
    r.duration_s = 0.01;
    return r;
  }
};

// Marks "dispatched" and the final "stopped". Asks `orchestrator` (when set) to stop at the
// first dispatch made at or after `deadline`.
class TimingSink : public EventSink {
 public:
  void OnEvent(const Event& e) override {
    if (e.kind == "kept") ++kept;
    if (e.kind != "dispatched" && e.kind != "stopped") return;
    marks.push_back(Mark::Now());
    if (orchestrator != nullptr && e.kind == "dispatched" && marks.back().wall >= deadline) {
      deadline_hit = true;
      orchestrator->RequestStop();
    }
  }
  void OnProgress(const Progress&) override {}

  std::vector<Mark> marks;
  Orchestrator* orchestrator = nullptr;
  SteadyClock::time_point deadline = SteadyClock::time_point::max();
  bool deadline_hit = false;
  int kept = 0;
};

struct Distribution {
  double median = 0, p90 = 0, p99 = 0, max = 0;
};

Distribution Summarize(std::vector<double> v) {
  Distribution d;
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  auto rank = [&](double q) {  // nearest rank
    size_t i = static_cast<size_t>(q * static_cast<double>(v.size()) + 0.999999);
    return v[std::clamp<size_t>(i, 1, v.size()) - 1];
  };
  d.median = rank(0.5);
  d.p90 = rank(0.9);
  d.p99 = rank(0.99);
  d.max = v.back();
  return d;
}

double MedianOf(std::vector<double> v) { return Summarize(std::move(v)).median; }

struct SizeResult {
  int n = 0;
  size_t catalog = 0;
  size_t scored = 0;  // applicable candidates at the incumbent after the run
  double populate_s = 0;
  double db_mb = 0;
  Distribution wall;  // per node, ms
  Distribution cpu;
  int intervals = 0;
  int kept = 0;
  double resume_ms = 0;  // median: open → first dispatched
  double resume_cpu_ms = 0;
  double open_ms = 0;  // medians of the breakdown
  double load_ms = 0;  // LoadMeta + LoadNodes
  double tree_ms = 0;  // Tree::Upsert of every node
};

// --critic measures the Critic's protocol (warm-up, interleaved pairs, confirmation: more
// store writes per node); the default is the foundations' engine overhead the targets were set
// for: select + score + persist with the plain median gate.
bool g_critic = false;

struct Harness {
  testing::FakeWorkspace workspace;
  NoopTarget target;
  testing::FakeSpecialist specialist;
  MedianGate median_gate;
  CriticGate critic_gate;
  testing::FakeClock clock;
  TimingSink sink;
  Ports Wire(Store* store) {
    Gate* gate = g_critic ? static_cast<Gate*>(&critic_gate) : &median_gate;
    return Ports{store, &workspace, &target, &specialist, gate, &clock, &sink};
  }
};

void RemoveDb(const fs::path& db) {
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
}

Result<std::unique_ptr<SqliteStore>> OpenStore(const fs::path& db) {
  return SqliteStore::Open(db.string(), OpenMode::kReadWrite);
}

// Cold resume: a fresh copy of the pristine store each run, timed from SqliteStore::Open to
// the first "dispatched" event of a new Orchestrator (load, tree, stats, reconcile, score,
// persist the first choice). Then the loading steps alone, for the breakdown.
Status MeasureResume(const CampaignSpec& spec, const fs::path& pristine, const fs::path& db,
                     int runs, SizeResult* out) {
  std::vector<double> total, total_cpu, open, load, tree;
  for (int run = 0; run < runs; ++run) {
    RemoveDb(db);
    fs::copy_file(pristine, db);
    Harness h;
    const Mark t0 = Mark::Now();
    auto store = OpenStore(db);
    if (!store.ok()) return store.error();
    Orchestrator orchestrator(spec, h.Wire(store->get()));
    h.sink.orchestrator = &orchestrator;
    h.sink.deadline = SteadyClock::time_point::min();  // stop at the first dispatch
    auto summary = orchestrator.Run();
    if (!summary.ok()) return summary.error();
    if (h.sink.marks.empty()) return MakeError("resume: nothing was dispatched");
    total.push_back(WallMs(t0, h.sink.marks.front()));
    total_cpu.push_back(CpuMs(t0, h.sink.marks.front()));
  }
  for (int run = 0; run < runs; ++run) {
    RemoveDb(db);
    fs::copy_file(pristine, db);
    Mark t0 = Mark::Now();
    auto store = OpenStore(db);
    if (!store.ok()) return store.error();
    Mark t1 = Mark::Now();
    open.push_back(WallMs(t0, t1));
    auto meta = (*store)->LoadMeta();
    if (!meta.ok()) return meta.error();
    auto nodes = (*store)->LoadNodes();
    if (!nodes.ok()) return nodes.error();
    Mark t2 = Mark::Now();
    load.push_back(WallMs(t1, t2));
    Tree t;
    for (const Node& n : *nodes) t.Upsert(n);
    tree.push_back(WallMs(t2, Mark::Now()));
  }
  RemoveDb(db);
  out->resume_ms = MedianOf(total);
  out->resume_cpu_ms = MedianOf(total_cpu);
  out->open_ms = MedianOf(open);
  out->load_ms = MedianOf(load);
  out->tree_ms = MedianOf(tree);
  return {};
}

// The measured run: up to `nodes` new nodes dispatched by the real Orchestrator over the store,
// fewer when the time budget runs out first (the interrupted last dispatch is not counted).
Status MeasurePerNode(const CampaignSpec& spec, const fs::path& db, double budget_s,
                      SizeResult* out) {
  Harness h;
  const Mark t0 = Mark::Now();
  auto store = OpenStore(db);
  if (!store.ok()) return store.error();
  Orchestrator orchestrator(spec, h.Wire(store->get()));
  h.sink.orchestrator = &orchestrator;
  h.sink.deadline = t0.wall + std::chrono::duration_cast<SteadyClock::duration>(
                                  std::chrono::duration<double>(budget_s));
  auto summary = orchestrator.Run();
  if (!summary.ok()) return summary.error();
  std::vector<Mark> marks = h.sink.marks;
  if (h.sink.deadline_hit) {
    marks.pop_back();  // "stopped" right after the last dispatch: not a node's interval
  } else if (summary->stop_reason != StopReason::kMaxNodes) {
    return MakeError("the measured run stopped early: " +
                     std::string(StopReasonName(summary->stop_reason)));
  }
  if (marks.size() < 2) return MakeError("the measured run completed no node");
  std::vector<double> wall, cpu;
  for (size_t i = 1; i < marks.size(); ++i) {
    wall.push_back(WallMs(marks[i - 1], marks[i]));
    cpu.push_back(CpuMs(marks[i - 1], marks[i]));
  }
  out->wall = Summarize(wall);
  out->cpu = Summarize(cpu);
  out->intervals = static_cast<int>(wall.size());
  out->kept = h.sink.kept;
  out->scored = orchestrator.ScoreCandidates().size();
  return {};
}

Result<SizeResult> MeasureSize(const Options& opt, const fs::path& base, int n) {
  SizeResult r;
  r.n = n;
  SyntheticShape shape;
  shape.critic = g_critic;
  shape.nodes = n;
  CampaignSpec spec = SyntheticSpec(shape, opt.nodes);
  spec.critic.enabled = g_critic;
  r.catalog = Catalog(spec.actions).All().size();
  const fs::path dir = base / ("n" + std::to_string(n));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path db = dir / "arbor.db";
  const fs::path pristine = dir / "pristine.db";
  {
    const Mark t0 = Mark::Now();
    auto store = OpenStore(db);
    if (!store.ok()) return store.error();
    ARBOR_TRY(PopulateStore(store->get(), shape, /*batch=*/1000));
    ARBOR_TRY((*store)->Checkpoint());
    r.populate_s = WallMs(t0, Mark::Now()) / 1000;
  }
  fs::copy_file(db, pristine);
  r.db_mb = static_cast<double>(fs::file_size(pristine)) / (1024.0 * 1024.0);
  ARBOR_TRY(MeasureResume(spec, pristine, dir / "resume.db", opt.resume_runs, &r));
  ARBOR_TRY(MeasurePerNode(spec, db, opt.budget_s, &r));
  return r;
}

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

void PrintTable(const std::vector<SizeResult>& results, const Options& opt) {
  std::printf(
      "\nper node: between successive 'dispatched' events, up to %d nodes or %gs per "
      "size; wall = steady clock, cpu = thread CPU time\n",
      opt.nodes, opt.budget_s);
  std::printf(
      "resume: SqliteStore::Open -> first 'dispatched' of a new Orchestrator, median of "
      "%d; open, load (meta+nodes), tree: those steps alone\n",
      opt.resume_runs);
  std::printf("all times in ms except fill (s)\n\n");
  std::printf("%7s %7s %6s %6s %6s | %4s %9s %9s %9s %9s %9s %9s %4s | %8s %8s %6s %7s %7s\n",
              "nodes", "catalog", "scored", "fill", "db_MB", "n", "wall_med", "wall_p90",
              "wall_p99", "wall_max", "cpu_med", "cpu_p99", "kept", "resume", "res_cpu", "open",
              "load", "tree");
  for (const SizeResult& r : results) {
    std::printf(
        "%7d %7zu %6zu %6s %6s | %4d %9s %9s %9s %9s %9s %9s %4d | %8s %8s %6s %7s %7s\n", r.n,
        r.catalog, r.scored, Fixed(r.populate_s, 1).c_str(), Fixed(r.db_mb, 1).c_str(), r.intervals,
        Fixed(r.wall.median, 3).c_str(), Fixed(r.wall.p90, 3).c_str(), Fixed(r.wall.p99, 3).c_str(),
        Fixed(r.wall.max, 3).c_str(), Fixed(r.cpu.median, 3).c_str(), Fixed(r.cpu.p99, 3).c_str(),
        r.kept, Fixed(r.resume_ms, 1).c_str(), Fixed(r.resume_cpu_ms, 1).c_str(),
        Fixed(r.open_ms, 1).c_str(), Fixed(r.load_ms, 1).c_str(), Fixed(r.tree_ms, 1).c_str());
  }
}

const SizeResult* Find(const std::vector<SizeResult>& results, int n) {
  for (const SizeResult& r : results) {
    if (r.n == n) return &r;
  }
  return nullptr;
}

void Verdict(const char* what, double value, double limit, const char* unit) {
  std::printf("  %-40s %12s %-2s (limit %s) %s\n", what, Fixed(value, 3).c_str(), unit,
              Fixed(limit, 0).c_str(), value <= limit ? "MET" : "MISSED");
}

void PrintTargets(const std::vector<SizeResult>& results) {
  std::printf("\ntargets:\n");
  const SizeResult* k1 = Find(results, 1000);
  const SizeResult* k10 = Find(results, 10000);
  const SizeResult* k100 = Find(results, 100000);
  if (k10 != nullptr) {
    Verdict("per-node median at 10k nodes (wall)", k10->wall.median, 1, "ms");
    Verdict("per-node p99 at 10k nodes (wall)", k10->wall.p99, 10, "ms");
  }
  if (k1 != nullptr && k100 != nullptr) {
    Verdict("per-node median 100k / 1k (wall)", k100->wall.median / k1->wall.median, 2, "x");
    Verdict("per-node median 100k / 1k (cpu)", k100->cpu.median / k1->cpu.median, 2, "x");
  }
  if (k100 != nullptr) Verdict("cold resume at 100k nodes (wall)", k100->resume_ms / 1000, 2, "s");
}

Result<Options> ParseArgs(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* flag) -> std::optional<std::string> {
      const std::string prefix = std::string(flag) + "=";
      if (!StartsWith(arg, prefix)) return std::nullopt;
      return arg.substr(prefix.size());
    };
    if (auto v = value("--sizes")) {
      opt.sizes.clear();
      for (const std::string& s : Split(*v, ',')) opt.sizes.push_back(std::stoi(s));
    } else if (auto v = value("--nodes")) {
      opt.nodes = std::stoi(*v);
    } else if (auto v = value("--resume-runs")) {
      opt.resume_runs = std::stoi(*v);
    } else if (auto v = value("--budget")) {
      opt.budget_s = std::stod(*v);
    } else if (auto v = value("--dir")) {
      opt.dir = *v;
    } else if (arg == "--critic") {
      g_critic = true;
    } else if (arg == "--keep") {
      opt.keep = true;
    } else {
      return MakeError("unknown argument '" + arg +
                       "' (usage: arbor_engine_bench [--sizes=1000,10000,100000] [--nodes=500] "
                       "[--resume-runs=5] [--budget=SECONDS] [--dir=PATH] [--critic] [--keep])");
    }
  }
  if (opt.nodes < 2 || opt.resume_runs < 1 || opt.budget_s <= 0) {
    return MakeError("need --nodes >= 2, --resume-runs >= 1, --budget > 0");
  }
  return opt;
}

int Main(int argc, char** argv) {
  auto opt = ParseArgs(argc, argv);
  if (!opt.ok()) {
    std::fprintf(stderr, "arbor_engine_bench: %s\n", opt.error().message.c_str());
    return 2;
  }
  const bool temp = opt->dir.empty();
  const fs::path base =
      temp ? fs::temp_directory_path() / ("arbor_engine_bench." + std::to_string(getpid()))
           : fs::path(opt->dir);
  fs::create_directories(base);
  std::vector<SizeResult> results;
  int rc = 0;
  for (int n : opt->sizes) {
    std::fprintf(stderr, "arbor_engine_bench: %d nodes...\n", n);
    auto r = MeasureSize(*opt, base, n);
    if (!r.ok()) {
      std::fprintf(stderr, "arbor_engine_bench: %d nodes: %s\n", n, r.error().message.c_str());
      rc = 1;
      break;
    }
    results.push_back(*r);
    if (!opt->keep) fs::remove_all(base / ("n" + std::to_string(n)));
  }
  PrintTable(results, *opt);
  PrintTargets(results);
  if (temp && !opt->keep) fs::remove_all(base);
  return rc;
}

}  // namespace
}  // namespace arbor::bench

int main(int argc, char** argv) {
  try {
    return arbor::bench::Main(argc, argv);
  } catch (const std::exception& e) {  // std::filesystem, std::stoi
    std::fprintf(stderr, "arbor_engine_bench: %s\n", e.what());
    return 1;
  }
}
