#include "dashboard/api.h"

#include <gtest/gtest.h>

#include <functional>
#include <future>
#include <thread>

#include "dashboard/server.h"

namespace arbor {
namespace {

using Json = nlohmann::json;
using Query = std::multimap<std::string, std::string>;

// An in-memory campaign that the test grows, counting what the API loads.
class FakeSource : public DashboardSource {
 public:
  FakeSource() {
    view.meta.name = "fake";
    view.metric_name = "ops";
    AddNode(Outcome::kBaseline, 100);
  }
  void AddNode(Outcome outcome, std::optional<double> metric) {
    Node n;
    n.id = static_cast<NodeId>(view.nodes.size()) + 1;
    n.parent = n.id == kRootId ? kNoNode : kRootId;
    n.action_id = n.id == kRootId ? "baseline" : "a" + std::to_string(n.id);
    n.outcome = outcome;
    n.seq = n.id == kRootId ? 0 : n.id;
    n.metric = metric;
    n.finished_s = static_cast<double>(n.id);
    view.nodes.push_back(n);
    events.push_back(Event{static_cast<int64_t>(events.size()) + 1, n.id, "dispatched",
                           "dispatched", "", n.finished_s});
  }

  Result<CampaignView> LoadView() override {
    ++view_loads;
    if (on_load_view) on_load_view();
    return view;
  }
  Result<std::vector<Event>> LoadEvents(int64_t after, int limit) override {
    std::vector<Event> out;
    for (const Event& e : events) {
      if (e.id > after && (limit < 0 || static_cast<int>(out.size()) < limit)) out.push_back(e);
    }
    return out;
  }
  Result<NodeDetail> LoadDetail(const Node& node) override {
    NodeDetail d;
    d.node = node;
    d.logs.push_back({"bench-1", "stderr", "oops"});
    if (node.outcome == Outcome::kCrashed) {
      d.failed_run = FailedRun{"build", "/c/runs/n3/build", "failed", {}, {"cc: error\\r"}};
    }
    return d;
  }
  Result<std::string> RenderPage(const CampaignView& v, const Json&, int64_t version) override {
    ++renders;
    return "<html>" + std::to_string(v.nodes.size()) + "@" + std::to_string(version) + "</html>";
  }
  double MinEffect() const override { return 0.02; }

  CampaignView view;
  std::vector<Event> events;
  int view_loads = 0;
  int renders = 0;
  std::function<void()> on_load_view;
};

Json Get(DashboardApi& api, const std::string& path, const Query& q = {}) {
  ApiResponse r = api.Handle(path, q);
  EXPECT_EQ(r.status, 200) << path << ": " << r.body;
  EXPECT_EQ(r.content_type, "application/json");
  return Json::parse(r.body);
}

TEST(DashboardApi, StatusCarriesTheVersionAndReloadsOnlyWhenTheStoreMoved) {
  FakeSource source;
  DashboardApi api(&source);
  Json s = Get(api, "/api/status");
  EXPECT_EQ(s["campaign"], "fake");
  EXPECT_EQ(s["nodes"]["total"], 1);
  EXPECT_EQ(s["version"], 1);
  Get(api, "/api/status");
  Get(api, "/api/tree");
  EXPECT_EQ(source.view_loads, 1) << "nothing new: no reload";
  source.AddNode(Outcome::kKept, 120);
  s = Get(api, "/api/status");
  EXPECT_EQ(s["nodes"]["total"], 2);
  EXPECT_EQ(s["version"], 2);
  EXPECT_EQ(source.view_loads, 2);
}

TEST(DashboardApi, OtherRequestsAnswerFromTheOldSnapshotDuringAReload) {
  FakeSource source;
  DashboardApi api(&source);
  EXPECT_EQ(Get(api, "/api/status")["nodes"]["total"], 1);
  source.AddNode(Outcome::kKept, 120);
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  source.on_load_view = [&] {
    entered.set_value();
    released.wait();
  };
  Json reloaded;
  std::thread loader([&] { reloaded = Get(api, "/api/status"); });
  entered.get_future().wait();
  EXPECT_EQ(Get(api, "/api/status")["nodes"]["total"], 1) << "answered while the reload waits";
  release.set_value();
  loader.join();
  EXPECT_EQ(reloaded["nodes"]["total"], 2);
  source.on_load_view = nullptr;
  EXPECT_EQ(Get(api, "/api/status")["nodes"]["total"], 2);
}

TEST(DashboardApi, TreeIsPaginatedAndBounded) {
  FakeSource source;
  for (int i = 0; i < 2500; ++i) source.AddNode(Outcome::kReverted, 90);
  DashboardApi api(&source);
  Json page = Get(api, "/api/tree", {{"offset", "100"}, {"limit", "50"}});
  EXPECT_EQ(page["total"], 2501);
  ASSERT_EQ(page["nodes"].size(), 50u);
  EXPECT_EQ(page["nodes"][0]["id"], 101);
  EXPECT_EQ(Get(api, "/api/tree")["nodes"].size(), DashboardApi::kDefaultLimit);
  EXPECT_EQ(Get(api, "/api/tree", {{"limit", "100000"}})["nodes"].size(), DashboardApi::kMaxLimit);
  EXPECT_EQ(api.Handle("/api/tree", {{"limit", "-1"}}).status, 400);
  EXPECT_EQ(api.Handle("/api/tree", {{"offset", "x"}}).status, 400);
  Json curve = Get(api, "/api/curve", {{"max_points", "100"}});
  EXPECT_LE(curve["points"].size(), 100u);
  EXPECT_EQ(curve["evaluated"], 2500);
}

TEST(DashboardApi, NodeDetailsEventsAndPanels) {
  FakeSource source;
  source.AddNode(Outcome::kKept, 150);
  source.AddNode(Outcome::kCrashed, std::nullopt);
  DashboardApi api(&source);
  Json node = Get(api, "/api/node/2");
  EXPECT_EQ(node["id"], 2);
  ASSERT_EQ(node["logs"].size(), 1u);
  EXPECT_EQ(node["logs"][0]["tail"], "oops");
  EXPECT_TRUE(node["failed_run"].is_null()) << node.dump();
  // A failed node carries its failed run: where the logs are and the visible tails.
  Json crashed = Get(api, "/api/node/3");
  EXPECT_EQ(crashed["failed_run"]["label"], "build") << crashed.dump();
  EXPECT_EQ(crashed["failed_run"]["exit"], "failed");
  EXPECT_EQ(crashed["failed_run"]["stderr"]["path"], "/c/runs/n3/build/stderr");
  EXPECT_EQ(crashed["failed_run"]["stderr"]["tail"], Json::array({"cc: error\\r"}));
  EXPECT_EQ(crashed["failed_run"]["stdout"]["tail"], Json::array());
  EXPECT_EQ(api.Handle("/api/node/99", {}).status, 404);
  EXPECT_EQ(api.Handle("/api/node/x", {}).status, 400);

  Json events = Get(api, "/api/events", {{"after", "1"}});
  ASSERT_EQ(events["events"].size(), 2u);
  EXPECT_EQ(events["events"][0]["node"], 2);
  EXPECT_EQ(events["last"], 3);
  EXPECT_TRUE(Get(api, "/api/events", {{"after", "3"}})["events"].empty());

  EXPECT_EQ(Get(api, "/api/kept")["nodes"].size(), 1u);
  EXPECT_EQ(Get(api, "/api/noise")["min_effect"], 0.02);
  EXPECT_EQ(Get(api, "/api/funnel")["events"], 3);
  EXPECT_EQ(Get(api, "/api/curve")["keeps"].size(), 1u);
  EXPECT_EQ(api.Handle("/api/nothing", {}).status, 404);
}

TEST(DashboardApi, PageIsRenderedOncePerVersion) {
  FakeSource source;
  DashboardApi api(&source);
  ApiResponse page = api.Handle("/", {});
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(page.body, "<html>1@1</html>");
  api.Handle("/", {});
  EXPECT_EQ(source.renders, 1);
  source.AddNode(Outcome::kReverted, 99);
  EXPECT_EQ(api.Handle("/", {}).body, "<html>2@2</html>");
  EXPECT_EQ(source.renders, 2);
}

TEST(DashboardServer, LoopbackAndTokens) {
  EXPECT_TRUE(IsLoopback("127.0.0.1"));
  EXPECT_TRUE(IsLoopback("127.1.2.3"));
  EXPECT_TRUE(IsLoopback("localhost"));
  EXPECT_TRUE(IsLoopback("::1"));
  EXPECT_FALSE(IsLoopback("0.0.0.0"));
  EXPECT_FALSE(IsLoopback("192.168.1.5"));
  EXPECT_FALSE(IsLoopback("evil.example"));
  EXPECT_TRUE(TokenAccepted("", "", ""));
  EXPECT_TRUE(TokenAccepted("s3cret", "Bearer s3cret", ""));
  EXPECT_TRUE(TokenAccepted("s3cret", "", "s3cret"));
  EXPECT_FALSE(TokenAccepted("s3cret", "Bearer s3cre", ""));
  EXPECT_FALSE(TokenAccepted("s3cret", "s3cret", ""));
  EXPECT_FALSE(TokenAccepted("s3cret", "", "s3cret2"));
  EXPECT_FALSE(TokenAccepted("s3cret", "", ""));
}

TEST(DashboardServer, RefusesANonLoopbackBindWithoutAToken) {
  FakeSource source;
  DashboardApi api(&source);
  ServeOptions options;
  options.bind = "0.0.0.0";
  Status s = ServeDashboard(options, &api, stdout);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, 2);
}

}  // namespace
}  // namespace arbor
