#include "store/schema.h"

#include <gtest/gtest.h>

#include "store/sqlite_store.h"
#include "store/store_testing.h"

namespace arbor::store_schema {
namespace {

using store_testing::ScratchDir;

Status AddWidgets(sqlite::Db& db) { return db.Exec("CREATE TABLE widgets(x)"); }
Status AddGadgetsThenFail(sqlite::Db& db) {
  ARBOR_TRY(db.Exec("CREATE TABLE gadgets(x)"));
  return MakeError("boom");
}
Status MakeMeta(sqlite::Db& db) {
  return db.Exec("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)");
}

sqlite::Db OpenDb(const std::string& path) {
  auto db = sqlite::Db::Open(path, sqlite::OpenFlags::kReadWriteCreate);
  EXPECT_TRUE(db.ok());
  return std::move(db.value());
}

TEST(SchemaTest, FreshFileMigratesToCurrentVersionIdempotently) {
  ScratchDir dir;
  const std::string path = dir.File("s.db");
  sqlite::Db db = OpenDb(path);
  auto v0 = ReadVersion(db, path);
  ASSERT_TRUE(v0.ok());
  EXPECT_EQ(*v0, 0);
  ASSERT_TRUE(Migrate(db, path).ok());
  ASSERT_TRUE(Migrate(db, path).ok());
  auto v = ReadVersion(db, path);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, CurrentVersion());
  EXPECT_GE(CurrentVersion(), 1);
}

TEST(SchemaTest, UpgradesStepByStepFromAnOlderVersion) {
  ScratchDir dir;
  const std::string path = dir.File("s.db");
  sqlite::Db db = OpenDb(path);
  const Migration v1[] = {&MakeMeta};
  ASSERT_TRUE(MigrateWith(db, path, v1).ok());
  const Migration v2[] = {&MakeMeta, &AddWidgets};
  ASSERT_TRUE(MigrateWith(db, path, v2).ok());
  auto v = ReadVersion(db, path);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 2);
  EXPECT_TRUE(db.Exec("INSERT INTO widgets VALUES(1)").ok());
}

TEST(SchemaTest, AFailedMigrationLeavesThePreviousVersionIntact) {
  ScratchDir dir;
  const std::string path = dir.File("s.db");
  sqlite::Db db = OpenDb(path);
  const Migration table[] = {&MakeMeta, &AddGadgetsThenFail};
  Status s = MigrateWith(db, path, table);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("migration to schema version 2 failed: boom"), std::string::npos)
      << s.error().message;
  auto v = ReadVersion(db, path);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 1);
  EXPECT_FALSE(db.Exec("INSERT INTO gadgets VALUES(1)").ok());  // rolled back with it
}

TEST(SchemaTest, NewerVersionIsRefused) {
  ScratchDir dir;
  const std::string path = dir.File("s.db");
  sqlite::Db db = OpenDb(path);
  const Migration v2[] = {&MakeMeta, &AddWidgets};
  ASSERT_TRUE(MigrateWith(db, path, v2).ok());
  const Migration v1[] = {&MakeMeta};
  Status s = MigrateWith(db, path, v1);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("schema version 2, newer than this arbor understands (1)"),
            std::string::npos)
      << s.error().message;
}

// A store written by the released version-2 schema (before Domain Specialists) upgrades in
// place: its rows keep their data, nodes read an empty agent note, and the new tables work.
TEST(SchemaTest, AVersion2StoreMigratesToTheCurrentVersionWithItsData) {
  ScratchDir dir;
  const std::string path = dir.File("arbor.db");
  {
    sqlite::Db db = OpenDb(path);
    ASSERT_TRUE(MigrateWith(db, path, Migrations().first(2)).ok());
    ASSERT_TRUE(db.Exec("INSERT INTO nodes(id, action_id, outcome, step, critic) "
                        "VALUES(1, 'baseline', 'baseline', 'done', '{\"rca\":\"build_error\"}')")
                    .ok());
    ASSERT_TRUE(db.Exec("INSERT INTO meta(key, value) VALUES('campaign.name', 'old')").ok());
  }
  auto read_only = SqliteStore::Open(path, OpenMode::kReadOnly);
  ASSERT_FALSE(read_only.ok());
  EXPECT_NE(read_only.error().message.find("schema version 2; open it read-write once"),
            std::string::npos)
      << read_only.error().message;

  auto store = SqliteStore::Open(path, OpenMode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto nodes = (*store)->LoadNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ((*nodes)[0].critic.rca, RcaClass::kBuildError);
  EXPECT_TRUE((*nodes)[0].agent.empty());
  auto meta = (*store)->LoadMeta();
  ASSERT_TRUE(meta.ok() && meta->has_value());
  EXPECT_EQ((*meta)->llm_prompt_tokens, 0);
  EXPECT_EQ((*meta)->proposed_at, 0);
  auto actions = (*store)->LoadActions();
  ASSERT_TRUE(actions.ok()) << actions.error().message;
  EXPECT_TRUE(actions->empty());

  ActionSpec proposed;
  proposed.id = "kernel.prefetch";
  ASSERT_TRUE(
      (*store)->Apply({.actions = {proposed}, .prompts = {{kRootId, "propose:kernel", "p"}}}).ok());
  auto prompts = (*store)->LoadPrompts(kRootId);
  ASSERT_TRUE(prompts.ok());
  EXPECT_EQ(prompts->size(), 1u);
  store->reset();

  sqlite::Db db = OpenDb(path);
  auto v = ReadVersion(db, path);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, CurrentVersion());
  EXPECT_EQ(CurrentVersion(), 3);
}

}  // namespace
}  // namespace arbor::store_schema
