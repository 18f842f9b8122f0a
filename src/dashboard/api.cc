// DashboardApi (declared in dashboard/api.h).
#include "dashboard/api.h"

#include <algorithm>
#include <charconv>
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

Status DashboardApi::Refresh() {
  auto probe = source_->LoadEvents(funnel_.last_event_id(), 1);
  if (!probe.ok()) return probe.error();
  if (loaded_ && probe->empty()) return {};
  // Events first, then the view: the view is then at least as new as the funnel, and any
  // event written in between makes the next request reload again.
  auto events = source_->LoadEvents(funnel_.last_event_id(), -1);
  if (!events.ok()) return events.error();
  auto view = source_->LoadView();
  if (!view.ok()) return view.error();
  for (const Event& e : *events) funnel_.Add(e);
  view_ = std::move(*view);
  loaded_ = true;
  return {};
}

ApiResponse DashboardApi::Handle(const std::string& path,
                                 const std::multimap<std::string, std::string>& query) {
  std::lock_guard lock(mu_);
  Status fresh = Refresh();
  if (!fresh.ok()) return ErrorResponse(503, "cannot read the store: " + fresh.error().message);
  return Route(path, query);
}

ApiResponse DashboardApi::Route(const std::string& path,
                                const std::multimap<std::string, std::string>& query) {
  const int64_t version = funnel_.last_event_id();
  if (path == "/" || path == "/index.html") {
    if (page_version_ != version || page_.empty()) {
      auto page = source_->RenderPage(view_, funnel_.Json(view_.nodes), version);
      if (!page.ok()) return ErrorResponse(500, page.error().message);
      page_ = std::move(*page);
      page_version_ = version;
    }
    return ApiResponse{200, "text/html; charset=utf-8", page_};
  }
  if (path == "/api/status") {
    Json j = StatusJson(view_);
    j["version"] = version;
    return JsonResponse(j);
  }
  if (path == "/api/tree") {
    auto offset = Param(query, "offset", 0);
    auto limit = Param(query, "limit", kDefaultLimit);
    if (!offset || !limit) return ErrorResponse(400, "offset and limit are non-negative integers");
    size_t n = std::min(static_cast<size_t>(*limit), kMaxLimit);
    return JsonResponse(TreePageJson(view_.nodes, static_cast<size_t>(*offset), n));
  }
  if (path.rfind("/api/node/", 0) == 0) {
    std::string id_text = path.substr(10);
    int64_t id = 0;
    auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
    if (ec != std::errc() || end != id_text.data() + id_text.size()) {
      return ErrorResponse(400, "node ids are integers");
    }
    auto node = std::find_if(view_.nodes.begin(), view_.nodes.end(),
                             [id](const Node& n) { return n.id == id; });
    if (node == view_.nodes.end()) return ErrorResponse(404, "no node #" + id_text);
    auto detail = source_->LoadDetail(*node);
    if (!detail.ok()) return ErrorResponse(503, detail.error().message);
    const NodeDetail& d = *detail;
    Json j = ShowJson(d.node, d.samples, d.profile, d.events);
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
    return JsonResponse(CurveJson(view_, std::min(static_cast<size_t>(*points), kMaxCurvePoints)));
  }
  if (path == "/api/funnel") return JsonResponse(funnel_.Json(view_.nodes));
  if (path == "/api/kept") return JsonResponse(KeptPathJson(view_.nodes));
  if (path == "/api/noise") return JsonResponse(NoiseJson(view_.meta, source_->MinEffect()));
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
