// tsload: the load generator of tinyserve's served mode (serving.h).
//
//   tsload --port P [--requests N] [--concurrency C]   N requests (ids 0..N-1 of the workload)
//                                                      from C concurrent clients; one JSON line
//   tsload --port P --health                           exit 0 iff the server answers /health
//   tsload --port P --shutdown                         ask the server to exit (graceful stop)
//
// The JSON line: {"throughput": {"tok_per_s"}, "latency": {"p50_ms", "p99_ms"},
// "work": {"tokens", "requests"}}. Throughput is the tokens served over the run's wall time and
// latency each request's wall time as its client saw it (queueing included): what a user of
// the server measures, so a loaded machine moves it more than tinyserve --bench's CPU clock.
// Any failed request fails the run (exit 1) with the reason on stderr.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "http.h"

namespace {

using WallClock = std::chrono::steady_clock;

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "tsload: %s\nusage: tsload --port P [--requests N] [--concurrency C] | --health | "
               "--shutdown\n",
               why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  int port = 0, requests = 24, concurrency = 1;
  bool health = false, shutdown = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] {
      if (i + 1 >= argc) Usage(("missing value after " + a).c_str());
      return std::atoi(argv[++i]);
    };
    if (a == "--port") {
      port = value();
    } else if (a == "--requests") {
      requests = std::max(1, value());
    } else if (a == "--concurrency") {
      concurrency = std::max(1, value());
    } else if (a == "--health") {
      health = true;
    } else if (a == "--shutdown") {
      shutdown = true;
    } else {
      Usage(("unknown argument " + a).c_str());
    }
  }
  if (port <= 0) Usage("--port is required (the campaign passes $ARBOR_PORT)");
  if (health) return tinyserve::http::Get(port, "/health", nullptr) == 200 ? 0 : 1;
  if (shutdown) return tinyserve::http::Get(port, "/shutdown", nullptr) == 200 ? 0 : 1;

  std::atomic<int> next{0};
  std::atomic<long> tokens{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::vector<double> latencies_ms;
  const auto start = WallClock::now();
  std::vector<std::thread> clients;
  for (int c = 0; c < std::min(concurrency, requests); ++c) {
    clients.emplace_back([&] {
      for (int id; !failed && (id = next++) < requests;) {
        const auto t0 = WallClock::now();
        std::string body;
        const int status = tinyserve::http::Get(port, "/generate?id=" + std::to_string(id), &body);
        const double ms = std::chrono::duration<double, std::milli>(WallClock::now() - t0).count();
        const char* field = std::strstr(body.c_str(), "\"tokens\": ");
        if (status != 200 || field == nullptr) {
          std::fprintf(stderr, "tsload: request %d to 127.0.0.1:%d failed (%s)\n", id, port,
                       status < 0 ? "no answer" : ("status " + std::to_string(status)).c_str());
          failed = true;
          return;
        }
        tokens += std::atol(field + 10);
        std::lock_guard<std::mutex> lock(mu);
        latencies_ms.push_back(ms);
      }
    });
  }
  for (std::thread& t : clients) t.join();
  if (failed) return 1;
  const double wall_s = std::chrono::duration<double>(WallClock::now() - start).count();
  std::printf(
      "{\"throughput\": {\"tok_per_s\": %.2f}, \"latency\": {\"p50_ms\": %.2f, \"p99_ms\": %.2f}, "
      "\"work\": {\"tokens\": %ld, \"requests\": %d}}\n",
      static_cast<double>(tokens) / wall_s, Percentile(latencies_ms, 0.5),
      Percentile(latencies_ms, 0.99), tokens.load(), requests);
  return 0;
}
