// tinyserve: a small transformer inference server, the target of Arbor's demo campaign.
//
//   tinyserve --bench          serve the workload; one JSON line with throughput, latency, work
//   tinyserve --check          replay the stored reference; exit 0 iff accurate
//   tinyserve --profile        like --bench, then Arbor's profile JSON (component shares)
//   tinyserve --gen-reference  write reference.txt (baseline build, default knobs only)
//   tinyserve --serve --port P [--daemon]   the engine behind HTTP on 127.0.0.1 (serving.h)
// Options: --reference FILE, --requests N (bench/profile workload size), --min-time SECONDS.
// Knobs are TS_* environment variables (knobs.h); see README.md.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "buffer.h"
#include "engine.h"
#include "knobs.h"
#include "model.h"
#include "profiler.h"
#include "reference.h"
#include "server.h"
#include "serving.h"
#include "thread_pool.h"

#ifndef TS_REFERENCE_FILE
#define TS_REFERENCE_FILE "reference.txt"
#endif

namespace tinyserve {
namespace {

constexpr uint64_t kWorkloadSeed = 7;
constexpr int kBenchRequests = 24;
constexpr int kCheckRequests = 12;
// A step matches when the token is the reference's and both logit statistics are within
// kLogitTolerance; --check passes when at least kPassFraction of the steps match.
constexpr float kLogitTolerance = 0.1f;
constexpr double kPassFraction = 0.95;
// Profile components below this share are folded into "other" (perf --percent-limit).
constexpr double kFoldShare = 0.03;

enum class Mode { kBench, kCheck, kProfile, kGenReference, kServe };

struct Options {
  Mode mode = Mode::kBench;
  std::string reference = TS_REFERENCE_FILE;
  int requests = kBenchRequests;
  double min_time = 0.5;
  int port = 0;         // --serve
  bool daemon = false;  // --serve --daemon
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "tinyserve: %s\nusage: tinyserve --bench|--check|--profile|--gen-reference "
               "[--reference FILE] [--requests N] [--min-time SECONDS] | --serve --port P "
               "[--daemon]\n",
               why);
  std::exit(2);
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  bool mode_seen = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    Mode m;
    if (a == "--bench") {
      m = Mode::kBench;
    } else if (a == "--check") {
      m = Mode::kCheck;
    } else if (a == "--profile") {
      m = Mode::kProfile;
    } else if (a == "--gen-reference") {
      m = Mode::kGenReference;
    } else if (a == "--serve") {
      m = Mode::kServe;
    } else if (a == "--port") {
      o.port = std::atoi(value().c_str());
      continue;
    } else if (a == "--daemon") {
      o.daemon = true;
      continue;
    } else if (a == "--reference") {
      o.reference = value();
      continue;
    } else if (a == "--requests") {
      o.requests = std::max(1, std::atoi(value().c_str()));
      continue;
    } else if (a == "--min-time") {
      o.min_time = std::atof(value().c_str());
      continue;
    } else {
      Usage(("unknown argument " + a).c_str());
    }
    if (mode_seen) Usage("give exactly one mode");
    o.mode = m;
    mode_seen = true;
  }
  if (!mode_seen) Usage("no mode given");
  if (o.mode == Mode::kServe && o.port <= 0) Usage("--serve needs --port P");
  return o;
}

// LD_PRELOAD of a missing library only makes ld.so print a warning; a run that was meant to
// measure another allocator must not silently measure glibc malloc instead.
void CheckPreloadedAllocator() {
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload == nullptr) return;
  std::string list = preload;
  for (char& c : list) c = c == ':' ? ' ' : c;
  size_t pos = 0;
  while (pos < list.size()) {
    size_t end = list.find(' ', pos);
    if (end == std::string::npos) end = list.size();
    const std::string lib = list.substr(pos, end - pos);
    if (!lib.empty() && lib[0] == '/' && access(lib.c_str(), R_OK) != 0) {
      std::fprintf(stderr, "tinyserve: LD_PRELOAD library %s is missing; install it\n",
                   lib.c_str());
      std::exit(3);
    }
    pos = end + 1;
  }
  if (std::strstr(preload, "jemalloc") == nullptr) return;
  if (dlsym(RTLD_DEFAULT, "mallctl") == nullptr) {
    std::fprintf(stderr,
                 "tinyserve: LD_PRELOAD names jemalloc (%s) but it is not loaded; install "
                 "libjemalloc2\n",
                 preload);
    std::exit(3);
  }
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

struct BenchResult {
  double seconds = 0;                // serving-thread CPU time
  std::vector<double> pass_seconds;  // per pass: throughput uses the median pass
  double wall_seconds = 0;           // for the profile, whose component timers use the wall clock
  int passes = 0;
  std::vector<double> latencies;
  std::vector<RequestResult> first;
};

// Throughput is the workload's tokens over the median pass time (robust to one disturbed pass).
// The serving thread's CPU clock. That thread never sleeps while serving (it computes, or
// spins while workers finish their part), so its clock is the wall time the run would take on
// an idle machine; time the scheduler gives to other processes is not counted.
double ServingClock() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

BenchResult Serve(Server* server, const std::vector<Request>& requests, double min_time) {
  BenchResult b;
  Profiler::Get().Reset();
  const double start = ServingClock();
  const auto wall_start = std::chrono::steady_clock::now();
  do {
    const double pass_start = ServingClock();
    std::vector<RequestResult> results = server->RunPass(requests, PassOptions{});
    b.pass_seconds.push_back(ServingClock() - pass_start);
    for (const RequestResult& r : results) b.latencies.push_back(r.latency_s);
    if (b.passes++ == 0) b.first = std::move(results);
    b.seconds = ServingClock() - start;
  } while (b.seconds < min_time);
  b.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return b;
}

// Fraction of the reference's requests whose free-running tokens equal the reference.
double TokenMatch(const Reference& ref, const std::vector<Request>& requests,
                  const std::vector<RequestResult>& results) {
  int total = 0, same = 0;
  const auto tokens = ref.Tokens();
  for (size_t i = 0; i < requests.size(); ++i) {
    auto it = tokens.find(requests[i].id);
    if (it == tokens.end()) continue;
    ++total;
    same += results[i].tokens == it->second ? 1 : 0;
  }
  return total == 0 ? 0 : static_cast<double>(same) / total;
}

void PrintProfile(double total) {
  std::string out = "{\"total_s\": " + std::to_string(total) + ", \"components\": [";
  double shown = 0;
  bool first = true;
  for (int c = 0; c < static_cast<int>(Component::kCount); ++c) {
    const double share = Profiler::Get().Seconds(static_cast<Component>(c)) / total;
    if (share < kFoldShare) continue;
    shown += share;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s{\"name\": \"%s\", \"layer\": \"%s\", \"share\": %.4f}",
                  first ? "" : ", ", ComponentName(static_cast<Component>(c)),
                  ComponentLayer(static_cast<Component>(c)), share);
    out += buf;
    first = false;
  }
  char buf[120];
  std::snprintf(buf, sizeof buf, "%s{\"name\": \"other\", \"layer\": \"other\", \"share\": %.4f}",
                first ? "" : ", ", std::max(0.0, 1.0 - shown));
  out += buf;
  std::printf("%s]}\n", out.c_str());
}

int Check(Server* server, const std::vector<Request>& requests, const Reference& ref) {
  const auto forced = ref.Tokens();
  PassOptions opt;
  opt.forced = &forced;
  opt.with_lse = true;
  std::vector<RequestResult> results = server->RunPass(requests, opt);
  long total = 0, good = 0;
  double worst = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    auto it = ref.steps.find(requests[i].id);
    if (it == ref.steps.end()) continue;
    const std::vector<SampleInfo>& want = it->second;
    const std::vector<SampleInfo>& got = results[i].steps;
    for (size_t s = 0; s < want.size(); ++s) {
      ++total;
      if (s >= got.size()) continue;
      const double err = std::max(std::fabs(got[s].lse - want[s].lse),
                                  std::fabs(results[i].steps[s].logit - want[s].logit));
      const bool same_token = got[s].token == want[s].token;
      // A different token makes its logit incomparable: judge the log-sum-exp alone then.
      const double judged = same_token ? err : std::fabs(got[s].lse - want[s].lse);
      worst = std::max(worst, judged);
      if (same_token && err <= kLogitTolerance) ++good;
      if (std::getenv("TS_DEBUG_CHECK") != nullptr && !(same_token && err <= kLogitTolerance)) {
        std::fprintf(
            stderr,
            "req %d (k=%d) step %zu: token %d vs %d, logit %.4f vs %.4f, lse %.4f vs %.4f\n",
            requests[i].id, requests[i].sampling.top_k, s, got[s].token, want[s].token,
            got[s].logit, want[s].logit, got[s].lse, want[s].lse);
      }
    }
  }
  const double match = total == 0 ? 0 : static_cast<double>(good) / total;
  std::printf("{\"accuracy\": {\"match\": %.4f, \"steps\": %ld, \"max_logit_err\": %.3g}}\n", match,
              total, worst);
  return match >= kPassFraction ? 0 : 1;
}

int Main(int argc, char** argv) {
  const Options opt = ParseArgs(argc, argv);
  CheckPreloadedAllocator();
  const Knobs knobs = ReadKnobs();
  SetHugePages(knobs.hugepages);
  ModelConfig cfg;
  std::unique_ptr<Model> model = BuildModel(cfg, knobs);
  ThreadPool pool(knobs.threads, knobs.pin);
  Engine engine(*model, knobs, &pool);
  Server server(&engine, *model, knobs);

  std::vector<Request> workload =
      MakeWorkload(std::max(opt.requests, kCheckRequests), kWorkloadSeed, cfg.vocab);
  std::vector<Request> checked(workload.begin(), workload.begin() + kCheckRequests);
  workload.resize(opt.requests);

  std::string error;
  switch (opt.mode) {
    case Mode::kServe:
      return ServeHttp(&server, workload, opt.port, opt.daemon);
    case Mode::kGenReference: {
      if (!knobs.IsDefault()) Usage("--gen-reference needs the default knobs (no TS_* set)");
      PassOptions po;
      po.with_lse = true;
      std::vector<RequestResult> results = server.RunPass(checked, po);
      Reference ref;
      ref.parameters = ParameterCount(*model);
      for (size_t i = 0; i < checked.size(); ++i) ref.steps[checked[i].id] = results[i].steps;
      if (!WriteReference(opt.reference, ref, &error)) Usage(error.c_str());
      std::fprintf(stderr, "tinyserve: wrote %s (%zu requests)\n", opt.reference.c_str(),
                   checked.size());
      return 0;
    }
    case Mode::kCheck: {
      auto ref = ReadReference(opt.reference, &error);
      if (!ref) {
        std::fprintf(stderr, "tinyserve: %s\n", error.c_str());
        return 1;
      }
      if (ref->parameters != ParameterCount(*model)) {
        std::fprintf(stderr, "tinyserve: the reference is for another model\n");
        return 1;
      }
      return Check(&server, checked, *ref);
    }
    case Mode::kBench:
    case Mode::kProfile: {
      BenchResult b = Serve(&server, workload, opt.min_time);
      const long tokens = WorkloadTokens(workload);
      if (opt.mode == Mode::kProfile) {
        PrintProfile(b.wall_seconds);
        return 0;
      }
      auto ref = ReadReference(opt.reference, &error);
      std::string match = "null";
      if (ref) {
        // The first requests of the workload are the checked ones.
        std::vector<Request> head(
            workload.begin(), workload.begin() + std::min<size_t>(workload.size(), kCheckRequests));
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.4f", TokenMatch(*ref, head, b.first));
        match = buf;
      }
      std::printf(
          "{\"throughput\": {\"tok_per_s\": %.2f}, \"latency\": {\"p50_ms\": %.2f, "
          "\"p99_ms\": %.2f}, \"work\": {\"tokens\": %ld, \"passes\": %d}, "
          "\"accuracy\": {\"match\": %s}, \"params\": %ld, \"knobs\": \"%s\"}\n",
          static_cast<double>(tokens) / Percentile(b.pass_seconds, 0.5),
          Percentile(b.latencies, 0.5) * 1e3, Percentile(b.latencies, 0.99) * 1e3, tokens, b.passes,
          match.c_str(), ParameterCount(*model), knobs.Describe().c_str());
      return 0;
    }
  }
  return 2;
}

}  // namespace
}  // namespace tinyserve

int main(int argc, char** argv) { return tinyserve::Main(argc, argv); }
