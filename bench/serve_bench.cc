// arbor_serve_bench: what the live dashboard's API costs on a large campaign, in process
// (DashboardApi over the real read-only SqliteStore source, no HTTP), on a synthetic finished
// campaign of N nodes (synthetic_campaign.h, with samples, profiles and every event).
//
// Times, per size: the first request (loads the nodes and feeds every event to the funnel),
// then the median and p99 of repeated requests to each endpoint while nothing changes, then
// a request right after one new event (a reload). With --write=DB it only writes the store
// to DB (for timing `arbor serve` over HTTP; docs/benchmarks.md has the curl loop).
//
// A plain main like engine_bench.cc. Exits non-zero only on errors.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "app/dashboard_source.h"
#include "bench/synthetic_campaign.h"
#include "store/sqlite_store.h"

namespace arbor::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Query = std::multimap<std::string, std::string>;

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double TimeOne(DashboardApi& api, const std::string& path, const Query& q, size_t* bytes) {
  auto t0 = Clock::now();
  ApiResponse r = api.Handle(path, q);
  auto t1 = Clock::now();
  if (r.status != 200)
    std::fprintf(stderr, "%s: HTTP %d %s\n", path.c_str(), r.status, r.body.c_str());
  if (bytes != nullptr) *bytes = r.body.size();
  return Ms(t0, t1);
}

int Run(int nodes, const std::string& write_to) {
  SyntheticShape shape;
  shape.nodes = nodes;
  fs::path dir = write_to.empty()
                     ? fs::temp_directory_path() / ("arbor-serve-bench-" + std::to_string(nodes))
                     : fs::path(write_to).parent_path();
  fs::create_directories(dir);
  const std::string db = write_to.empty() ? (dir / "arbor.db").string() : write_to;
  fs::remove(db);
  {
    auto writer = SqliteStore::Open(db, OpenMode::kReadWrite);
    if (!writer.ok()) return std::fprintf(stderr, "%s\n", writer.error().message.c_str()), 1;
    Status s = PopulateStore(writer->get(), shape, 1000);
    if (!s.ok()) return std::fprintf(stderr, "%s\n", s.error().message.c_str()), 1;
  }
  if (!write_to.empty()) {
    std::printf("wrote %d nodes to %s\n", nodes, db.c_str());
    return 0;
  }

  auto reader = SqliteStore::Open(db, OpenMode::kReadOnly);
  if (!reader.ok()) return 1;
  OpenedCampaign campaign;
  campaign.spec = SyntheticSpec(shape, 0);
  campaign.spec.workspace = dir.string();
  campaign.paths.db = db;
  campaign.paths.runs = (dir / "runs").string();
  campaign.store = std::move(*reader);
  auto source = MakeStoreSource(&campaign);
  DashboardApi api(source.get());

  std::printf("nodes %d\n", nodes);
  std::printf("  first request (load + funnel)  %8.1f ms\n",
              TimeOne(api, "/api/status", {}, nullptr));
  const std::string mid = std::to_string(nodes / 2);
  const std::vector<std::pair<std::string, Query>> endpoints = {
      {"/api/status", {}},
      {"/api/tree", {{"offset", mid}, {"limit", "100"}}},
      {"/api/tree", {{"offset", mid}, {"limit", "1000"}}},
      {"/api/node/" + mid, {}},
      {"/api/curve", {}},
      {"/api/funnel", {}},
      {"/api/kept", {}},
      {"/api/events", {{"after", mid}, {"limit", "100"}}},
      {"/", {}},
  };
  for (const auto& [path, q] : endpoints) {
    std::vector<double> ms;
    size_t bytes = 0;
    for (int i = 0; i < 30; ++i) ms.push_back(TimeOne(api, path, q, &bytes));
    std::sort(ms.begin(), ms.end());
    std::string label = path;
    if (q.count("limit")) label += "?limit=" + q.find("limit")->second;
    std::printf("  %-26s median %7.2f ms  p99 %7.2f ms  max %7.2f ms  %8zu bytes\n", label.c_str(),
                ms[ms.size() / 2], ms[ms.size() * 99 / 100], ms.back(), bytes);
  }
  {
    auto writer = SqliteStore::Open(db, OpenMode::kReadWrite);
    if (!writer.ok()) return 1;
    Mutation m;
    m.events.push_back(Event{0, kRootId, "reprofiled", "bench", "", 1});
    if (!(*writer)->Apply(m).ok()) return 1;
  }
  std::printf("  after one new event (reload)   %8.1f ms\n",
              TimeOne(api, "/api/status", {}, nullptr));
  fs::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace arbor::bench

int main(int argc, char** argv) {
  std::vector<int> sizes = {1000, 10000, 100000};
  std::string write_to;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--sizes=", 0) == 0) {
      sizes.clear();
      std::string list = a.substr(8);
      for (size_t at = 0; at <= list.size();) {
        size_t comma = list.find(',', at);
        if (comma == std::string::npos) comma = list.size();
        sizes.push_back(std::stoi(list.substr(at, comma - at)));
        at = comma + 1;
      }
    } else if (a.rfind("--write=", 0) == 0) {
      write_to = a.substr(8);
    } else {
      std::fprintf(stderr, "usage: arbor_serve_bench [--sizes=1000,10000,100000] [--write=DB]\n");
      return 2;
    }
  }
  for (int n : sizes) {
    if (int rc = arbor::bench::Run(n, write_to); rc != 0) return rc;
    if (!write_to.empty()) break;
  }
  return 0;
}
