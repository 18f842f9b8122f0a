// The knowledge base's table, its versioning and its row codec, private to the store module
// (store/kb_store.h is the interface).
//
// The schema version lives in kb_meta('schema_version') (a table of its own name, so that a
// campaign store, whose version lives in `meta`, is never mistaken for a knowledge base).
// kMigrations[v] takes a file from version v to v + 1 inside one BEGIN IMMEDIATE transaction
// with the version bump; migrations are append-only. A newer file is refused.
#pragma once

#include <string>

#include "core/knowledge/kb.h"
#include "store/sqlite_db.h"
#include "util/result.h"

namespace arbor::kb_schema {

// Statements over every column, in ReadEntry()'s order (SelectAll/SameContext) and
// BindEntry()'s (Insert: ?1..?25, superseded_by 0 and conflict '').
extern const char* const kSelectAll;
extern const char* const kInsert;
// Live entries of one context: ?1 action_id, ?2 value, ?3 content_hash, ?4 workload,
// ?5 hardware, ?6 path_hash, except id ?7.
extern const char* const kSameContext;

int CurrentVersion();
// busy_timeout, and for read-write: WAL and synchronous=NORMAL; read-only: query_only.
Status Configure(sqlite::Db& db, bool read_only);
// 0 for an empty file; an Error for a file that is not a knowledge base or is too new.
Result<int> ReadVersion(sqlite::Db& db, const std::string& path);
// Creates or upgrades the schema to CurrentVersion(); safe against a concurrent Migrate.
Status Migrate(sqlite::Db& db, const std::string& path);

Result<KbEntry> ReadEntry(const sqlite::ScopedStmt& s);
void BindEntry(sqlite::ScopedStmt& s, const KbEntry& e);

// Runs `body` (returning a Result) in one BEGIN IMMEDIATE transaction: committed when it
// succeeds, rolled back when it or the COMMIT fails (the first error is returned).
template <typename F>
auto InTransaction(sqlite::Db& db, F body) -> decltype(body()) {
  ARBOR_TRY_ASSIGN(auto begin, db.Use("BEGIN IMMEDIATE"));
  if (Status s = begin.Run(); !s.ok()) return s.error();
  auto result = body();
  if (result.ok()) {
    auto commit = db.Use("COMMIT");
    Status s = commit.ok() ? commit->Run() : Status(commit.error());
    if (s.ok()) return result;
    result = s.error();
  }
  // A failed COMMIT may leave the transaction open; some I/O errors roll it back already.
  if (sqlite3_get_autocommit(db.raw()) == 0) {
    if (auto rollback = db.Use("ROLLBACK"); rollback.ok()) (void)rollback->Run();
  }
  return result;
}

}  // namespace arbor::kb_schema
