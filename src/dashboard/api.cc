// DashboardApi (declared in dashboard/api.h).
#include "dashboard/api.h"

#include <algorithm>
#include <charconv>
#include <memory>
#include <mutex>
#include <utility>

namespace arbor {
namespace {

using Json = nlohmann::json;

// Invalid UTF-8 from logs or diagnoses must not make a response fail.
std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

ApiResponse JsonResponse(const Json& j, int status = 200) {
  return ApiResponse{status, "application/json", Dump(j)};
}

ApiResponse ErrorResponse(int status, const std::string& message) {
  return JsonResponse(Json{{"error", message}}, status);
}

// A non-negative integer query parameter: `fallback` when absent, nullopt when malformed.
std::optional<int64_t> Param(const std::multimap<std::string, std::string>& query,
                             const std::string& key, int64_t fallback) {
  auto it = query.find(key);
  if (it == query.end() || it->second.empty()) return fallback;
  int64_t v = 0;
  const std::string& s = it->second;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

Json EventJson(const Event& e) {
  Json j = {{"id", e.id},
            {"node", e.node == kNoNode ? Json(nullptr) : Json(e.node)},
            {"kind", e.kind},
            {"message", e.message},
            {"t", e.t}};
  if (!e.data.empty()) {
    Json data = Json::parse(e.data, nullptr, false);
    j["data"] = data.is_discarded() ? Json(e.data) : data;
  }
  return j;
}

}  // namespace

Result<std::shared_ptr<DashboardApi::Snapshot>> DashboardApi::Current() {
  std::shared_ptr<Snapshot> snap;
  {
    std::lock_guard lock(mu_);
    snap = snap_;
  }
  if (snap != nullptr) {
    // One request at a time looks for news; the others answer from the snapshot they have
    // rather than queue behind a reload (the store serialises its queries).
    std::unique_lock reload(reload_mu_, std::try_to_lock);
    if (!reload.owns_lock()) return snap;
    ARBOR_TRY_ASSIGN(auto probe, source_->LoadEvents(snap->version, 1));
    if (probe.empty()) return snap;
    return Reload();
  }
  std::lock_guard reload(reload_mu_);
  {
    std::lock_guard lock(mu_);
    if (snap_ != nullptr) return snap_;  // loaded while this request waited
  }
  return Reload();
}

Result<std::shared_ptr<DashboardApi::Snapshot>> DashboardApi::Reload() {
  // Events first, then the view: the view is then at least as new as the funnel, and any
  // event written in between makes the next request reload again.
  ARBOR_TRY_ASSIGN(auto events, source_->LoadEvents(funnel_.last_event_id(), -1));
  ARBOR_TRY_ASSIGN(auto view, source_->LoadView());
  for (const Event& e : events) funnel_.Add(e);
  auto snap = std::make_shared<Snapshot>();
  snap->view = std::move(view);
  snap->funnel = funnel_.Json(snap->view.nodes);
  snap->version = funnel_.last_event_id();
  std::lock_guard lock(mu_);
  snap_ = snap;
  return snap;
}

template <typename Make>
std::string DashboardApi::Cached(Snapshot& snap, const std::string& key, Make make) {
  {
    std::lock_guard lock(snap.mu);
    auto it = snap.bodies.find(key);
    if (it != snap.bodies.end()) return it->second;
  }
  std::string body = make();
  std::lock_guard lock(snap.mu);
  return snap.bodies.emplace(key, std::move(body)).first->second;
}

ApiResponse DashboardApi::Handle(const std::string& path,
                                 const std::multimap<std::string, std::string>& query) {
  auto snap = Current();
  if (!snap.ok()) return ErrorResponse(503, "cannot read the store: " + snap.error().message);
  return Route(**snap, path, query);
}

ApiResponse DashboardApi::Route(Snapshot& snap, const std::string& path,
                                const std::multimap<std::string, std::string>& query) {
  const CampaignView& view = snap.view;
  auto json = [&](const std::string& key, auto make) {
    return ApiResponse{200, "application/json", Cached(snap, key, [&] { return Dump(make()); })};
  };
  if (path == "/" || path == "/index.html") {
    std::lock_guard page(snap.page_mu);
    {
      std::lock_guard lock(snap.mu);
      auto it = snap.bodies.find("/");
      if (it != snap.bodies.end()) return ApiResponse{200, "text/html; charset=utf-8", it->second};
    }
    auto html = source_->RenderPage(view, snap.funnel, snap.version);
    if (!html.ok()) return ErrorResponse(500, html.error().message);
    return ApiResponse{200, "text/html; charset=utf-8",
                       Cached(snap, "/", [&] { return std::move(*html); })};
  }
  if (path == "/api/status") {
    return json(path, [&] {
      Json j = StatusJson(view);
      j["version"] = snap.version;
      return j;
    });
  }
  if (path == "/api/tree") {
    auto offset = Param(query, "offset", 0);
    auto limit = Param(query, "limit", kDefaultLimit);
    if (!offset || !limit) return ErrorResponse(400, "offset and limit are non-negative integers");
    size_t n = std::min(static_cast<size_t>(*limit), kMaxLimit);
    return JsonResponse(TreePageJson(view.nodes, static_cast<size_t>(*offset), n));
  }
  if (path.rfind("/api/node/", 0) == 0) {
    std::string id_text = path.substr(10);
    int64_t id = 0;
    auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
    if (ec != std::errc() || end != id_text.data() + id_text.size()) {
      return ErrorResponse(400, "node ids are integers");
    }
    auto node = std::find_if(view.nodes.begin(), view.nodes.end(),
                             [id](const Node& n) { return n.id == id; });
    if (node == view.nodes.end()) return ErrorResponse(404, "no node #" + id_text);
    auto detail = source_->LoadDetail(*node);
    if (!detail.ok()) return ErrorResponse(503, detail.error().message);
    const NodeDetail& d = *detail;
    Json j =
        ShowJson(d.node, d.samples, d.profile, d.events, d.failed_run ? &*d.failed_run : nullptr);
    Json logs = Json::array();
    for (const LogExcerpt& l : d.logs) {
      logs.push_back({{"run", l.label}, {"stream", l.stream}, {"tail", l.text}});
    }
    j["logs"] = std::move(logs);
    return JsonResponse(j);
  }
  if (path == "/api/curve") {
    auto points = Param(query, "max_points", kDefaultCurvePoints);
    if (!points) return ErrorResponse(400, "max_points is a non-negative integer");
    size_t n = std::min(static_cast<size_t>(*points), kMaxCurvePoints);
    return json(path + "?" + std::to_string(n), [&] { return CurveJson(view, n); });
  }
  if (path == "/api/funnel") return json(path, [&] { return snap.funnel; });
  if (path == "/api/kept") return json(path, [&] { return KeptPathJson(view.nodes); });
  if (path == "/api/noise") return JsonResponse(NoiseJson(view.meta, source_->MinEffect()));
  if (path == "/api/events") {
    auto after = Param(query, "after", 0);
    auto limit = Param(query, "limit", kDefaultLimit);
    if (!after || !limit) return ErrorResponse(400, "after and limit are non-negative integers");
    int n = static_cast<int>(std::min(static_cast<size_t>(*limit), kMaxLimit));
    auto events = source_->LoadEvents(*after, n);
    if (!events.ok()) return ErrorResponse(503, events.error().message);
    Json list = Json::array();
    int64_t last = *after;
    for (const Event& e : *events) {
      list.push_back(EventJson(e));
      last = std::max(last, e.id);
    }
    return JsonResponse(Json{{"events", std::move(list)}, {"last", last}});
  }
  return ErrorResponse(404, "no such page: " + path);
}

}  // namespace arbor
