// Thin RAII layer over the sqlite3 C API, private to the store module.
//
// Db owns one connection and a cache of prepared statements keyed by their SQL text; the
// statements are prepared once with SQLITE_PREPARE_PERSISTENT and reused, because Apply and
// the loads run on every step of a campaign. Db::Use() hands out a ScopedStmt that resets the
// statement and clears its bindings when it goes out of scope: a statement left mid-iteration
// would keep a read transaction open and stall WAL checkpoints and writers.
//
// Nothing here is thread-safe; SqliteStore serialises access with its own mutex.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "util/result.h"

namespace arbor::sqlite {

struct StmtDeleter {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using StmtPtr = std::unique_ptr<sqlite3_stmt, StmtDeleter>;

// A borrowed, cached statement; resets itself on destruction. Bind indexes start at 1,
// column indexes at 0 (as in sqlite3).
class ScopedStmt {
 public:
  ScopedStmt(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ScopedStmt(ScopedStmt&& o) noexcept : db_(o.db_), stmt_(std::exchange(o.stmt_, nullptr)) {}
  ScopedStmt(const ScopedStmt&) = delete;
  ScopedStmt& operator=(const ScopedStmt&) = delete;
  ScopedStmt& operator=(ScopedStmt&&) = delete;
  ~ScopedStmt() {
    if (stmt_ == nullptr) return;
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  ScopedStmt& Bind(int i, int64_t v);
  ScopedStmt& Bind(int i, double v);
  ScopedStmt& Bind(int i, std::string_view v);  // copied by sqlite (SQLITE_TRANSIENT)
  ScopedStmt& BindNull(int i);

  // Advances: true when a row is available, false when done, Error with sqlite's message.
  Result<bool> Step();
  // Runs a statement that returns no rows (or ignores them).
  Status Run();

  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Double(int col) const { return sqlite3_column_double(stmt_, col); }
  // Valid until the next Step() or the end of this ScopedStmt.
  std::string_view Text(int col) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

enum class OpenFlags { kReadWriteCreate, kReadOnly };

class Db {
 public:
  static Result<Db> Open(const std::string& path, OpenFlags flags);

  Db(Db&&) noexcept = default;
  Db& operator=(Db&&) noexcept = default;
  ~Db() = default;

  // Runs one or more statements without parameters (schema, pragmas).
  Status Exec(const char* sql);
  // The cached prepared statement for `sql`; `sql` must outlive the Db (use literals).
  Result<ScopedStmt> Use(const char* sql);
  // First column of the first row of `sql` as text ("" when there is no row).
  Result<std::string> QueryText(const char* sql);
  // "ok", or the problems PRAGMA integrity_check found, one per line.
  Result<std::string> IntegrityCheck();

  sqlite3* raw() const { return db_.get(); }
  std::string LastError() const { return sqlite3_errmsg(db_.get()); }

 private:
  struct DbDeleter {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };
  explicit Db(sqlite3* db) : db_(db) {}

  // Members die in reverse order: the cached statements are finalised before the connection
  // closes. Keyed by the literal's address: each SQL text in the store is a distinct literal.
  std::unique_ptr<sqlite3, DbDeleter> db_;
  std::unordered_map<const char*, StmtPtr> cache_;
};

}  // namespace arbor::sqlite
