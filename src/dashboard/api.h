// DashboardApi: the live dashboard's routes over a read-only view of the campaign store.
//
// Routes (docs/report.md): "/" the page (the HTML report plus a polling script),
// "/api/status", "/api/tree?offset=&limit=", "/api/node/N", "/api/curve?max_points=",
// "/api/funnel", "/api/kept", "/api/noise", "/api/events?after=&limit=". Answers are JSON
// except "/". It never writes: the source is a read-only reader of the store.
//
// Freshness and cost: every request asks the source for the first event after the newest one
// seen (one indexed row). Only when there is one does it reload the nodes and feed the new
// events into its funnel, so a quiet 100k-node campaign costs each request a page of JSON, and
// a busy one at most one reload per change. The page's HTML is rendered once per version.
// Thread-safe: requests are served one at a time (an internal mutex).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/model.h"
#include "report/html.h"
#include "report/panels.h"
#include "report/views.h"
#include "util/result.h"

namespace arbor {

// One node with everything `arbor show` prints, plus its log tails.
struct NodeDetail {
  Node node;
  std::vector<Sample> samples;
  std::optional<Profile> profile;
  std::vector<Event> events;
  std::vector<LogExcerpt> logs;
};

// What the dashboard reads; app/ implements it over SqliteStore opened read-only.
class DashboardSource {
 public:
  virtual ~DashboardSource() = default;
  // Meta, nodes (in id order) and the spec's facts.
  virtual Result<CampaignView> LoadView() = 0;
  // Events with id > after, in id order; limit < 0 means all.
  virtual Result<std::vector<Event>> LoadEvents(int64_t after, int limit) = 0;
  // The samples, profile, events and log tails of a node of the current view.
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
  Status Refresh();  // with mu_ held
  ApiResponse Route(const std::string& path, const std::multimap<std::string, std::string>& query);

  DashboardSource* source_;
  std::mutex mu_;
  bool loaded_ = false;
  CampaignView view_;
  FunnelBuilder funnel_;
  std::string page_;  // cached HTML of version page_version_
  int64_t page_version_ = -1;
};

}  // namespace arbor
