// The dashboard over a real SQLite store: a 100k-node campaign answers pages of the tree and
// bounded aggregates (speed is measured in bench/serve_bench.cc, not asserted here).
#include "app/dashboard_source.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "store/store_testing.h"

namespace arbor {
namespace {

constexpr int kNodes = 100000;

// A flat campaign: the root and kNodes - 1 finished children, every 1000th kept.
void Populate(SqliteStore* store) {
  Mutation m;
  m.nodes.push_back(store_testing::RootNode());
  for (NodeId id = 2; id <= kNodes; ++id) {
    Node n;
    n.id = id;
    n.parent = kRootId;
    n.action_id = "knob.a" + std::to_string(id % 60);
    n.value = std::to_string(id);
    n.outcome = id % 1000 == 0 ? Outcome::kKept : Outcome::kReverted;
    n.step = Step::kDone;
    n.seq = id;
    n.metric = 100.0 + static_cast<double>(id % 97);
    n.finished_s = static_cast<double>(id);
    n.diagnosis = "regressed";
    m.nodes.push_back(std::move(n));
    m.events.push_back(Event{0, id, "dispatched", "on top of node 1", "", 0.5 * id});
    if (m.nodes.size() == 10000) {
      ASSERT_TRUE(store->Apply(m).ok());
      m = Mutation{};
    }
  }
  m.meta = CampaignMeta{};
  m.meta->name = "big";
  m.meta->state = CampaignState::kFinished;
  ASSERT_TRUE(store->Apply(m).ok());
}

TEST(DashboardOverStore, HundredThousandNodesArePaginatedAndAggregated) {
  store_testing::ScratchDir dir;
  const std::string db = dir.File("arbor.db");
  {
    auto writer = SqliteStore::Open(db, OpenMode::kReadWrite);
    ASSERT_TRUE(writer.ok());
    Populate(writer->get());
  }
  auto reader = SqliteStore::Open(db, OpenMode::kReadOnly);
  ASSERT_TRUE(reader.ok());
  OpenedCampaign campaign;
  campaign.spec.name = "big";
  campaign.spec.workspace = dir.File("ws");
  campaign.paths.db = db;
  campaign.paths.runs = dir.File("ws/.arbor/big/runs");
  campaign.store = std::move(*reader);
  auto source = MakeStoreSource(&campaign);
  DashboardApi api(source.get());

  auto get = [&](const std::string& path, const std::multimap<std::string, std::string>& q) {
    ApiResponse r = api.Handle(path, q);
    EXPECT_EQ(r.status, 200) << path << ": " << r.body.substr(0, 200);
    return r;
  };
  nlohmann::json page =
      nlohmann::json::parse(get("/api/tree", {{"offset", "50000"}, {"limit", "1000"}}).body);
  EXPECT_EQ(page["total"], kNodes);
  ASSERT_EQ(page["nodes"].size(), 1000u);
  EXPECT_EQ(page["nodes"][0]["id"], 50001);
  EXPECT_EQ(page["nodes"][999]["id"], 51000);

  nlohmann::json status = nlohmann::json::parse(get("/api/status", {}).body);
  EXPECT_EQ(status["nodes"]["total"], kNodes);
  EXPECT_EQ(status["version"], kNodes - 1);

  nlohmann::json curve = nlohmann::json::parse(get("/api/curve", {}).body);
  EXPECT_EQ(curve["evaluated"], kNodes - 1);
  EXPECT_LE(curve["points"].size(), DashboardApi::kDefaultCurvePoints);
  EXPECT_EQ(curve["keeps"].size(), 100u);  // ids 1000, 2000, ..., 100000

  nlohmann::json node = nlohmann::json::parse(get("/api/node/77777", {}).body);
  EXPECT_EQ(node["id"], 77777);
  ASSERT_EQ(node["events"].size(), 1u);

  // The page stays bounded: no layout, the kept path and the newest rows only.
  std::string html = get("/", {}).body;
  EXPECT_NE(html.find("No tree layout"), std::string::npos);
  EXPECT_NE(html.find("Showing "), std::string::npos);
  EXPECT_LT(html.size(), 20u << 20);
}

}  // namespace
}  // namespace arbor
