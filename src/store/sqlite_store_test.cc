#include "store/sqlite_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "store/store_testing.h"

namespace arbor {
namespace {

using store_testing::RawExec;

using store_testing::ExpectSameNode;
using store_testing::FullNode;
using store_testing::RootNode;
using store_testing::ScratchDir;

std::unique_ptr<SqliteStore> OpenOrDie(const std::string& path,
                                       OpenMode mode = OpenMode::kReadWrite) {
  auto store = SqliteStore::Open(path, mode);
  EXPECT_TRUE(store.ok()) << store.error().message;
  return store.ok() ? std::move(store.value()) : nullptr;
}

Event MakeEvent(NodeId node, std::string kind, double t) {
  Event e;
  e.node = node;
  e.kind = std::move(kind);
  e.message = e.kind + " " + std::to_string(node);
  e.t = t;
  return e;
}

Sample MakeSample(NodeId node, std::string arm, int rep, double value) {
  Sample s;
  s.node = node;
  s.arm = std::move(arm);
  s.rep = rep;
  s.value = value;
  return s;
}

class SqliteStoreTest : public testing::Test {
 protected:
  void SetUp() override {
    store_ = OpenOrDie(path_);
    ASSERT_NE(store_, nullptr);
  }
  std::vector<Node> Nodes() {
    auto nodes = store_->LoadNodes();
    EXPECT_TRUE(nodes.ok()) << nodes.error().message;
    return nodes.ok() ? *nodes : std::vector<Node>{};
  }
  std::vector<Event> Events(NodeId node, int64_t after = 0, int limit = -1) {
    auto events = store_->LoadEvents(node, after, limit);
    EXPECT_TRUE(events.ok()) << events.error().message;
    return events.ok() ? *events : std::vector<Event>{};
  }

  ScratchDir dir_;
  std::string path_ = dir_.File("arbor.db");
  std::unique_ptr<SqliteStore> store_;
};

TEST_F(SqliteStoreTest, NewStoreIsEmpty) {
  auto meta = store_->LoadMeta();
  ASSERT_TRUE(meta.ok()) << meta.error().message;
  EXPECT_FALSE(meta->has_value());
  EXPECT_TRUE(Nodes().empty());
  EXPECT_TRUE(Events(kNoNode).empty());
  auto profile = store_->LoadProfile(kRootId);
  ASSERT_TRUE(profile.ok());
  EXPECT_FALSE(profile->has_value());
}

TEST_F(SqliteStoreTest, NodeRoundTripsEveryField) {
  Node root = RootNode();
  Node full = FullNode(2, kRootId);
  Node sparse;  // optional metric/gain absent, empty overlay, default score
  sparse.id = 3;
  sparse.parent = 2;
  sparse.action_id = "env.threads";
  ASSERT_TRUE(store_->Apply({.nodes = {root, full, sparse}}).ok());

  auto nodes = Nodes();
  ASSERT_EQ(nodes.size(), 3u);
  ExpectSameNode(root, nodes[0]);
  ExpectSameNode(full, nodes[1]);
  ExpectSameNode(sparse, nodes[2]);
  EXPECT_FALSE(nodes[2].metric.has_value());
  EXPECT_FALSE(nodes[2].gain.has_value());
}

TEST_F(SqliteStoreTest, NodeUpsertReplacesTheWholeRow) {
  ASSERT_TRUE(store_->Apply({.nodes = {RootNode(), FullNode(2, kRootId)}}).ok());
  Node changed = FullNode(2, kRootId);
  changed.outcome = Outcome::kReverted;
  changed.metric.reset();
  changed.overlay = {{"A", "1"}};
  changed.diagnosis = "regressed";
  ASSERT_TRUE(store_->Apply({.nodes = {changed}}).ok());
  auto nodes = Nodes();
  ASSERT_EQ(nodes.size(), 2u);
  ExpectSameNode(changed, nodes[1]);
}

TEST_F(SqliteStoreTest, AnUnknownRootCauseDoesNotFailTheLoad) {
  ASSERT_TRUE(store_->Apply({.nodes = {RootNode(), FullNode(2, kRootId)}}).ok());
  RawExec(path_,
          "UPDATE nodes SET critic = '{\"rca\":\"a_later_class\",\"evidence\":\"e\"}' "
          "WHERE id = 2");
  auto nodes = Nodes();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[1].critic.rca, RcaClass::kUnknown);
  EXPECT_EQ(nodes[1].critic.evidence, "e");
}

TEST_F(SqliteStoreTest, NodesLoadOrderedByIdAndChildMayPrecedeParent) {
  // Foreign keys are checked at COMMIT, so one mutation may list a child before its parent.
  ASSERT_TRUE(store_->Apply({.nodes = {FullNode(5, 3), FullNode(3, 1), RootNode()}}).ok());
  auto nodes = Nodes();
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].id, 1);
  EXPECT_EQ(nodes[1].id, 3);
  EXPECT_EQ(nodes[2].id, 5);
}

TEST_F(SqliteStoreTest, SamplesReplaceOnSameNodeArmRep) {
  Sample a = MakeSample(kRootId, "self", 0, 10);
  a.extra = {{"p99_ms", 12.5}, {"work", 1e6}, {"weird", -std::numeric_limits<double>::infinity()}};
  ASSERT_TRUE(store_
                  ->Apply({.nodes = {RootNode()},
                           .samples = {MakeSample(kRootId, "self", 1, 11), a,
                                       MakeSample(kRootId, "parent", 0, 9)}})
                  .ok());
  Sample replaced = MakeSample(kRootId, "self", 1, 42);
  replaced.extra = {{"p99_ms", 1}};
  ASSERT_TRUE(store_->Apply({.samples = {replaced}}).ok());

  auto samples = store_->LoadSamples(kRootId);
  ASSERT_TRUE(samples.ok()) << samples.error().message;
  ASSERT_EQ(samples->size(), 3u);  // ordered by arm, then rep
  EXPECT_EQ((*samples)[0].arm, "parent");
  EXPECT_EQ((*samples)[1].arm, "self");
  EXPECT_EQ((*samples)[1].rep, 0);
  EXPECT_EQ((*samples)[1].value, 10);
  EXPECT_EQ((*samples)[1].extra, a.extra);
  EXPECT_EQ((*samples)[1].node, kRootId);
  EXPECT_EQ((*samples)[2].rep, 1);
  EXPECT_EQ((*samples)[2].value, 42);
  EXPECT_EQ((*samples)[2].extra, replaced.extra);

  auto none = store_->LoadSamples(99);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_F(SqliteStoreTest, ProfileRoundTripsAndReplaces) {
  Profile p{.total_s = 1.84,
            .components = {{"matmul.qkv", "kernel", 0.41},
                           {"attention", "kernel", 0.22},
                           {"sampling", "application", 0.05}}};
  ASSERT_TRUE(store_->Apply({.nodes = {RootNode()}, .profiles = {{kRootId, p}}}).ok());
  auto got = store_->LoadProfile(kRootId);
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->total_s, 1.84);
  ASSERT_EQ((*got)->components.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*got)->components[i].name, p.components[i].name);
    EXPECT_EQ((*got)->components[i].layer, p.components[i].layer);
    EXPECT_EQ((*got)->components[i].share, p.components[i].share);
  }
  ASSERT_TRUE(store_->Apply({.profiles = {{kRootId, Profile{.total_s = 2}}}}).ok());
  got = store_->LoadProfile(kRootId);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->total_s, 2);
  EXPECT_TRUE((*got)->components.empty());
}

TEST_F(SqliteStoreTest, EventsAreOrderedAndFiltered) {
  Event stopped = MakeEvent(kNoNode, "stopped", 9);
  stopped.data = R"({"reason":"budget"})";
  ASSERT_TRUE(store_
                  ->Apply({.nodes = {RootNode(), FullNode(2, 1)},
                           .events = {MakeEvent(1, "proposed", 1), MakeEvent(2, "proposed", 2),
                                      MakeEvent(1, "measured", 3)}})
                  .ok());
  ASSERT_TRUE(store_->Apply({.events = {MakeEvent(2, "kept", 4), stopped}}).ok());

  auto all = Events(kNoNode);
  ASSERT_EQ(all.size(), 5u);
  for (size_t i = 1; i < all.size(); ++i) EXPECT_LT(all[i - 1].id, all[i].id);
  EXPECT_EQ(all[0].kind, "proposed");
  EXPECT_EQ(all[0].message, "proposed 1");
  EXPECT_EQ(all[0].t, 1);
  EXPECT_EQ(all[4].node, kNoNode);
  EXPECT_EQ(all[4].data, stopped.data);

  auto of_root = Events(1);
  ASSERT_EQ(of_root.size(), 2u);
  EXPECT_EQ(of_root[0].kind, "proposed");
  EXPECT_EQ(of_root[1].kind, "measured");

  auto after = Events(kNoNode, all[1].id);
  ASSERT_EQ(after.size(), 3u);
  EXPECT_EQ(after[0].id, all[2].id);

  auto limited = Events(kNoNode, 0, 2);
  ASSERT_EQ(limited.size(), 2u);
  EXPECT_EQ(limited[1].id, all[1].id);

  auto of_two_after = Events(2, all[1].id, 10);
  ASSERT_EQ(of_two_after.size(), 1u);
  EXPECT_EQ(of_two_after[0].kind, "kept");
  EXPECT_TRUE(Events(kNoNode, 0, 0).empty());
}

TEST_F(SqliteStoreTest, MetaRoundTrips) {
  CampaignMeta meta{.name = "tinyserve",
                    .seed = std::numeric_limits<unsigned long long>::max(),
                    .spec_hash = "abc123",
                    .state = CampaignState::kStopped,
                    .stop_reason = StopReason::kMaxNodes,
                    .elapsed_s = 1234.5678901234,
                    .explore_boost = 1.0 / 3,
                    .next_seq = 42};
  ASSERT_TRUE(store_->Apply({.meta = meta}).ok());
  meta.state = CampaignState::kFinished;
  ASSERT_TRUE(store_->Apply({.meta = meta}).ok());
  auto got = store_->LoadMeta();
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->name, meta.name);
  EXPECT_EQ((*got)->seed, meta.seed);
  EXPECT_EQ((*got)->spec_hash, meta.spec_hash);
  EXPECT_EQ((*got)->state, CampaignState::kFinished);
  EXPECT_EQ((*got)->stop_reason, meta.stop_reason);
  EXPECT_EQ((*got)->elapsed_s, meta.elapsed_s);
  EXPECT_EQ((*got)->explore_boost, meta.explore_boost);
  EXPECT_EQ((*got)->next_seq, meta.next_seq);
}

// Everything a failed Apply could have touched is still empty.
void ExpectNothingWritten(SqliteStore& store) {
  auto nodes = store.LoadNodes();
  ASSERT_TRUE(nodes.ok());
  EXPECT_TRUE(nodes->empty());
  auto events = store.LoadEvents(kNoNode, 0, -1);
  ASSERT_TRUE(events.ok());
  EXPECT_TRUE(events->empty());
  auto meta = store.LoadMeta();
  ASSERT_TRUE(meta.ok());
  EXPECT_FALSE(meta->has_value());
  auto samples = store.LoadSamples(kRootId);
  ASSERT_TRUE(samples.ok());
  EXPECT_TRUE(samples->empty());
  auto profile = store.LoadProfile(kRootId);
  ASSERT_TRUE(profile.ok());
  EXPECT_FALSE(profile->has_value());
}

Mutation ValidMutation() {
  return {.nodes = {RootNode()},
          .samples = {MakeSample(kRootId, "self", 0, 1)},
          .profiles = {{kRootId, Profile{.total_s = 1}}},
          .events = {MakeEvent(kRootId, "proposed", 0)},
          .meta = CampaignMeta{.name = "c"}};
}

TEST_F(SqliteStoreTest, ApplyIsAtomicOnForeignKeyFailure) {
  Mutation m = ValidMutation();
  m.samples.push_back(MakeSample(404, "self", 0, 1));  // no such node
  Status s = store_->Apply(m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("FOREIGN KEY"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find(path_), std::string::npos) << s.error().message;
  ExpectNothingWritten(*store_);
  // The connection is usable afterwards: no transaction was left open.
  EXPECT_TRUE(store_->Apply(ValidMutation()).ok());
}

TEST_F(SqliteStoreTest, ApplyIsAtomicOnNaN) {
  Mutation m = ValidMutation();
  Node bad = FullNode(2, kRootId);
  bad.metric = std::nan("");
  m.nodes.push_back(bad);
  Status s = store_->Apply(m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("node 2: metric is NaN"), std::string::npos)
      << s.error().message;
  ExpectNothingWritten(*store_);

  m = ValidMutation();
  m.samples.push_back(MakeSample(kRootId, "self", 1, std::nan("")));
  EXPECT_FALSE(store_->Apply(m).ok());
  ExpectNothingWritten(*store_);
}

TEST_F(SqliteStoreTest, ApplyIsAtomicOnConstraintAndBadEventData) {
  Mutation m = ValidMutation();
  m.nodes.push_back(FullNode(0, kRootId));  // CHECK (id > 0)
  EXPECT_FALSE(store_->Apply(m).ok());
  ExpectNothingWritten(*store_);

  m = ValidMutation();
  Event e = MakeEvent(kRootId, "measured", 1);
  e.data = "[1, 2";
  m.events.push_back(e);
  Status s = store_->Apply(m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("not a JSON object"), std::string::npos);
  ExpectNothingWritten(*store_);
}

TEST_F(SqliteStoreTest, ReopenSeesEverything) {
  Mutation m = ValidMutation();
  m.nodes.push_back(FullNode(2, kRootId));
  ASSERT_TRUE(store_->Apply(m).ok());
  store_.reset();
  store_ = OpenOrDie(path_);
  ASSERT_NE(store_, nullptr);
  auto nodes = Nodes();
  ASSERT_EQ(nodes.size(), 2u);
  ExpectSameNode(FullNode(2, kRootId), nodes[1]);
  EXPECT_EQ(Events(kNoNode).size(), 1u);
  auto meta = store_->LoadMeta();
  ASSERT_TRUE(meta.ok() && meta->has_value());
  EXPECT_EQ((*meta)->name, "c");
  auto samples = store_->LoadSamples(kRootId);
  ASSERT_TRUE(samples.ok());
  EXPECT_EQ(samples->size(), 1u);
  auto profile = store_->LoadProfile(kRootId);
  ASSERT_TRUE(profile.ok());
  EXPECT_TRUE(profile->has_value());
}

TEST_F(SqliteStoreTest, IntegrityCheckAndCheckpoint) {
  ASSERT_TRUE(store_->Apply(ValidMutation()).ok());
  auto check = store_->IntegrityCheck();
  ASSERT_TRUE(check.ok()) << check.error().message;
  EXPECT_EQ(*check, "ok");
  // LoadProfile stops after one row: its statement must be reset, or the read transaction it
  // holds would keep the checkpoint from truncating the log.
  ASSERT_TRUE(store_->LoadProfile(kRootId).ok());
  ASSERT_TRUE(store_->LoadNodes().ok());
  ASSERT_TRUE(store_->Checkpoint().ok());
  EXPECT_EQ(std::filesystem::file_size(path_ + "-wal"), 0u);  // TRUNCATE with no readers
}

TEST(SqliteStoreOpenTest, ReadOnlyOpenOfMissingFileFailsWithoutCreatingIt) {
  ScratchDir dir;
  const std::string path = dir.File("arbor.db");
  auto store = SqliteStore::Open(path, OpenMode::kReadOnly);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().message, "no campaign state at " + path);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(SqliteStoreOpenTest, ReadOnlyOpenOfEmptyFileFails) {
  ScratchDir dir;
  const std::string path = dir.File("arbor.db");
  std::ofstream(path).close();
  auto store = SqliteStore::Open(path, OpenMode::kReadOnly);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find("no campaign state at"), std::string::npos);
}

TEST(SqliteStoreOpenTest, ReadOnlyCannotWriteButSeesTheWriter) {
  ScratchDir dir;
  const std::string path = dir.File("arbor.db");
  auto writer = OpenOrDie(path);
  ASSERT_TRUE(writer->Apply({.nodes = {RootNode()}}).ok());
  auto reader = OpenOrDie(path, OpenMode::kReadOnly);
  ASSERT_NE(reader, nullptr);

  Status s = reader->Apply({.nodes = {FullNode(2, kRootId)}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("read-only"), std::string::npos);
  EXPECT_FALSE(reader->Checkpoint().ok());

  // A dashboard's view: commits of the running campaign show up in the open reader.
  ASSERT_TRUE(writer->Apply({.nodes = {FullNode(3, kRootId)}}).ok());
  auto nodes = reader->LoadNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[1].id, 3);
}

TEST(SqliteStoreOpenTest, StoreFromAFutureSchemaIsRefused) {
  ScratchDir dir;
  const std::string path = dir.File("arbor.db");
  ASSERT_NE(OpenOrDie(path), nullptr);
  RawExec(path, "UPDATE meta SET value = '999' WHERE key = 'schema_version'");
  for (OpenMode mode : {OpenMode::kReadWrite, OpenMode::kReadOnly}) {
    auto store = SqliteStore::Open(path, mode);
    ASSERT_FALSE(store.ok());
    EXPECT_NE(store.error().message.find("schema version 999, newer than this arbor"),
              std::string::npos)
        << store.error().message;
  }
}

TEST(SqliteStoreOpenTest, ForeignFilesAreRefused) {
  ScratchDir dir;
  const std::string other = dir.File("other.db");
  RawExec(other, "CREATE TABLE t(x)");
  auto store = SqliteStore::Open(other, OpenMode::kReadWrite);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find("not an arbor campaign store"), std::string::npos)
      << store.error().message;

  const std::string garbage = dir.File("garbage.db");
  std::ofstream(garbage) << std::string(8192, 'x');
  EXPECT_FALSE(SqliteStore::Open(garbage, OpenMode::kReadWrite).ok());
  EXPECT_FALSE(SqliteStore::Open(garbage, OpenMode::kReadOnly).ok());
}

// The queries other modules run most (children of a node, nodes by outcome) and the store's
// own per-node reads use an index and need no sort step.
TEST(SqliteStoreOpenTest, HotQueriesUseIndexes) {
  ScratchDir dir;
  const std::string path = dir.File("arbor.db");
  ASSERT_NE(OpenOrDie(path), nullptr);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const char* queries[] = {
      "SELECT id FROM nodes WHERE parent = 1",
      "SELECT id FROM nodes WHERE outcome = 'kept'",
      "SELECT arm, rep, value, extra FROM samples WHERE node_id = 1 ORDER BY arm, rep",
      "SELECT * FROM events WHERE node_id = 1 AND id > 5 ORDER BY id LIMIT 10",
      "SELECT profile FROM profiles WHERE node_id = 1",
      "SELECT kind, text FROM prompts WHERE node_id = 1 ORDER BY kind",
  };
  for (const char* q : queries) {
    std::string plan;
    sqlite3_stmt* stmt = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, (std::string("EXPLAIN QUERY PLAN ") + q).c_str(), -1, &stmt,
                                 nullptr),
              SQLITE_OK);
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      plan += reinterpret_cast<const char*>(sqlite3_column_text(stmt, 3));
      plan += "; ";
    }
    sqlite3_finalize(stmt);
    EXPECT_NE(plan.find("SEARCH"), std::string::npos) << q << " -> " << plan;
    EXPECT_EQ(plan.find("SCAN"), std::string::npos) << q << " -> " << plan;
    EXPECT_EQ(plan.find("TEMP B-TREE"), std::string::npos) << q << " -> " << plan;
  }
  sqlite3_close(db);
}

}  // namespace
}  // namespace arbor
