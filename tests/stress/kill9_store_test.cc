// The kill -9 driver's store checks can fail: each violation they exist for, written by hand
// into a small SQLite file with the columns the driver reads, is reported.
#include "kill9_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

namespace arbor::stress {
namespace {

class StoreFile {
 public:
  StoreFile() {
    path_ = (std::filesystem::temp_directory_path() /
             ("kill9-store-test-" + std::to_string(getpid()) + ".db"))
                .string();
    std::filesystem::remove(path_);
    Exec(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
        "CREATE TABLE nodes (id INTEGER PRIMARY KEY, parent INTEGER, action_id TEXT, "
        "  value TEXT DEFAULT '', outcome TEXT, step TEXT, seq INTEGER DEFAULT 0, "
        "  git_commit TEXT DEFAULT '', metric REAL);"
        "CREATE TABLE samples (node_id INTEGER, arm TEXT, rep INTEGER, value REAL, "
        "  extra TEXT DEFAULT '{}');"
        "CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, node_id INTEGER, kind TEXT);"
        "INSERT INTO meta VALUES ('campaign.state', 'running');"
        "INSERT INTO nodes VALUES (1, NULL, 'baseline', '', 'baseline', 'done', 0, 'c1', 10);"
        "INSERT INTO nodes VALUES (2, 1, 'a', '', 'kept', 'done', 1, 'c2', 20);"
        "INSERT INTO nodes VALUES (3, 2, 'b', 'x', 'running', 'bench', 2, '', NULL);"
        "INSERT INTO samples VALUES (1, 'self', 0, 10, '{}'), (3, 'self', 0, 5, '{}');"
        "INSERT INTO events (node_id, kind) VALUES (1, 'measured'), (3, 'checked');");
  }
  ~StoreFile() { std::filesystem::remove(path_); }
  void Exec(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << err;
    sqlite3_free(err);
    sqlite3_close(db);
  }
  StoreSnapshot Read() const { return ReadStore(path_); }
  std::vector<std::string> Check() const {
    std::vector<std::string> out;
    CheckStore(Read(), &out);
    return out;
  }

 private:
  std::string path_;
};

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

TEST(Kill9StoreTest, ASoundStorePassesAndIsReadBack) {
  StoreFile f;
  StoreSnapshot s = f.Read();
  EXPECT_EQ(s.integrity, "ok");
  EXPECT_EQ(s.nodes.size(), 3u);
  EXPECT_EQ(s.samples.size(), 2u);
  EXPECT_EQ(s.last_event, "checked");
  EXPECT_EQ(s.state, "running");
  EXPECT_EQ(s.Incumbent(), 2);
  EXPECT_EQ(s.Finished(), 2u);
  EXPECT_TRUE(f.Check().empty()) << Joined(f.Check());
}

// The baseline and a kept node are decided before their profile is stored: not half-written.
TEST(Kill9StoreTest, ADecidedNodeAwaitingItsProfileIsNotHalfWritten) {
  StoreFile f;
  f.Exec("UPDATE nodes SET step = 'profile' WHERE id IN (1, 2)");
  EXPECT_TRUE(f.Check().empty()) << Joined(f.Check());
  f.Exec("UPDATE nodes SET outcome = 'reverted' WHERE id = 2");
  EXPECT_NE(Joined(f.Check()).find("half-written"), std::string::npos);
}

TEST(Kill9StoreTest, HalfWrittenNodesAreReported) {
  StoreFile f;
  f.Exec("INSERT INTO nodes VALUES (4, 2, 'c', '', 'reverted', 'bench', 3, '', NULL)");
  f.Exec("INSERT INTO nodes VALUES (5, 2, 'd', '', 'running', 'done', 4, '', NULL)");
  f.Exec("INSERT INTO nodes VALUES (6, 2, 'e', '', 'kept', 'done', 5, '', NULL)");
  std::string found = Joined(f.Check());
  EXPECT_NE(found.find("node #4 (c, reverted at step bench): half-written"), std::string::npos)
      << found;
  EXPECT_NE(found.find("node #5 (d, running at step done): half-written"), std::string::npos);
  EXPECT_NE(found.find("node #6 (e, kept at step done): kept without a commit"), std::string::npos);
}

TEST(Kill9StoreTest, DuplicatesOrphansAndSecondRootsAreReported) {
  StoreFile f;
  f.Exec("INSERT INTO nodes VALUES (4, 2, 'b', 'x', 'reverted', 'done', 3, '', NULL)");
  f.Exec("INSERT INTO nodes VALUES (5, 9, 'z', '', 'reverted', 'done', 4, '', NULL)");
  f.Exec("INSERT INTO nodes VALUES (6, NULL, 'baseline', '', 'baseline', 'done', 0, 'c', 1)");
  f.Exec("INSERT INTO samples VALUES (8, 'self', 0, 1, '{}')");
  std::string found = Joined(f.Check());
  EXPECT_NE(found.find("node #4 (b[x], reverted at step done): duplicated"), std::string::npos)
      << found;
  EXPECT_NE(found.find("node #5 (z, reverted at step done): parent missing"), std::string::npos);
  EXPECT_NE(found.find("a second root"), std::string::npos);
  EXPECT_NE(found.find("sample of missing node #8"), std::string::npos);
}

TEST(Kill9StoreTest, LostOrChangedSamplesAndFinishedNodesAreReported) {
  StoreFile f;
  StoreSnapshot before = f.Read();
  f.Exec("DELETE FROM samples WHERE node_id = 3");
  f.Exec("UPDATE samples SET value = 11 WHERE node_id = 1");
  f.Exec("UPDATE nodes SET outcome = 'reverted', metric = 21 WHERE id = 2");
  std::vector<std::string> out;
  CheckPreserved(before, f.Read(), &out);
  std::string found = Joined(out);
  EXPECT_NE(found.find("sample node #3 arm self rep 0 (5) was lost"), std::string::npos) << found;
  EXPECT_NE(found.find("sample node #1 arm self rep 0 changed from 10 to 11"), std::string::npos);
  EXPECT_NE(found.find("finished node #2 (a, kept) became #1 a reverted"), std::string::npos);
  EXPECT_NE(found.find("metric changed from 20 to 21"), std::string::npos);
  // A node in flight may still change; only finished ones are held.
  f.Exec("UPDATE nodes SET step = 'decide' WHERE id = 3");
  out.clear();
  CheckPreserved(f.Read(), f.Read(), &out);
  EXPECT_TRUE(out.empty()) << Joined(out);
}

TEST(Kill9StoreTest, TheTreeSignatureNamesParentActionValueAndOutcome) {
  StoreFile f;
  EXPECT_EQ(TreeSignature(f.Read()),
            "#1 <- #0 baseline: baseline\n#2 <- #1 a: kept\n#3 <- #2 b[x]: running\n");
}

TEST(Kill9StoreTest, AMissingFileIsNoStoreAndAnUnreadableOneIsReported) {
  StoreSnapshot none = ReadStore("/nonexistent/arbor.db");
  EXPECT_FALSE(none.exists);
  std::string junk = (std::filesystem::temp_directory_path() / "kill9-junk.db").string();
  FILE* out = std::fopen(junk.c_str(), "w");
  ASSERT_NE(out, nullptr);
  std::fputs(std::string(8192, 'x').c_str(), out);
  std::fclose(out);
  std::vector<std::string> found;
  CheckStore(ReadStore(junk), &found);
  std::filesystem::remove(junk);
  EXPECT_FALSE(found.empty());
}

}  // namespace
}  // namespace arbor::stress
