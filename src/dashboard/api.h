// DashboardApi: the live dashboard's routes over a read-only view of the campaign store.
//
// Routes (docs/report.md): "/" the page (the HTML report plus a polling script),
// "/api/status", "/api/tree?offset=&limit=", "/api/node/N", "/api/curve?max_points=",
// "/api/funnel", "/api/kept", "/api/noise", "/api/events?after=&limit=". Answers are JSON
// except "/". It never writes: the source is a read-only reader of the store.
//
// Freshness and cost: every request asks the source for the first event after the newest one
// seen (one indexed row). Only when there is one is a new snapshot loaded (nodes, meta, and
// the new events fed into the funnel); while one request probes or loads, the others answer
// from the previous snapshot at once. Bodies that aggregate the whole tree (status, curve, kept
// path, funnel, the page) are computed once per snapshot; pages of the tree are sliced per request.
// Thread-safe: httplib serves requests from several threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "report/html.h"
#include "report/panels.h"
#include "report/views.h"
#include "util/result.h"

namespace arbor {

// One node with everything `arbor show` prints (its failed run included), plus its log tails.
struct NodeDetail {
  Node node;
  std::vector<Sample> samples;
  std::optional<Profile> profile;
  std::vector<Event> events;
  std::vector<LogExcerpt> logs;
  std::optional<FailedRun> failed_run;
};

// What the dashboard reads; app/ implements it over SqliteStore opened read-only.
class DashboardSource {
 public:
  virtual ~DashboardSource() = default;
  // Meta, nodes (in id order) and the spec's facts.
  virtual Result<CampaignView> LoadView() = 0;
  // Events with id > after, in id order; limit < 0 means all.
  virtual Result<std::vector<Event>> LoadEvents(int64_t after, int limit) = 0;
  // The samples, profile, events, log tails and failed run of a node of the current view.
  virtual Result<NodeDetail> LoadDetail(const Node& node) = 0;
  // The page for a snapshot: the report of `view` with its funnel, live, at `version`.
  virtual Result<std::string> RenderPage(const CampaignView& view, const nlohmann::json& funnel,
                                         int64_t version) = 0;
  // [critic] min_effect, for the noise panel.
  virtual double MinEffect() const = 0;
};

struct ApiResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

class DashboardApi {
 public:
  static constexpr size_t kDefaultLimit = 100;
  static constexpr size_t kMaxLimit = 1000;
  static constexpr size_t kDefaultCurvePoints = 500;
  static constexpr size_t kMaxCurvePoints = 5000;

  explicit DashboardApi(DashboardSource* source) : source_(source) {}

  // `path` without the query string; `query` the decoded parameters.
  ApiResponse Handle(const std::string& path, const std::multimap<std::string, std::string>& query);

 private:
  // An immutable view of the store at one event id, with the bodies computed from it so far.
  struct Snapshot {
    CampaignView view;
    nlohmann::json funnel;
    int64_t version = 0;
    std::mutex mu;  // guards `bodies`
    std::map<std::string, std::string> bodies;
    std::mutex page_mu;  // one page render at a time per snapshot
  };
  // The newest snapshot, reloading first when the store moved on (unless another request is
  // already probing or reloading and a snapshot exists: then the current one is returned).
  Result<std::shared_ptr<Snapshot>> Current();
  Result<std::shared_ptr<Snapshot>> Reload();  // with reload_mu_ held
  ApiResponse Route(Snapshot& snap, const std::string& path,
                    const std::multimap<std::string, std::string>& query);
  // The body cached under `key` in `snap`, computing it with `make` the first time.
  template <typename Make>
  std::string Cached(Snapshot& snap, const std::string& key, Make make);

  DashboardSource* source_;
  std::mutex reload_mu_;  // one reload at a time; guards funnel_
  FunnelBuilder funnel_;
  std::mutex mu_;  // guards snap_
  std::shared_ptr<Snapshot> snap_;
};

}  // namespace arbor
