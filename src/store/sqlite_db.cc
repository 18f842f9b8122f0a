#include "store/sqlite_db.h"

#include <utility>

namespace arbor::sqlite {

ScopedStmt& ScopedStmt::Bind(int i, int64_t v) {
  sqlite3_bind_int64(stmt_, i, v);
  return *this;
}

ScopedStmt& ScopedStmt::Bind(int i, double v) {
  sqlite3_bind_double(stmt_, i, v);
  return *this;
}

ScopedStmt& ScopedStmt::Bind(int i, std::string_view v) {
  // A non-null pointer even for "" so that an empty string binds as '' and not as NULL.
  sqlite3_bind_text64(stmt_, i, v.empty() ? "" : v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return *this;
}

ScopedStmt& ScopedStmt::BindNull(int i) {
  sqlite3_bind_null(stmt_, i);
  return *this;
}

Result<bool> ScopedStmt::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return MakeError(std::string(sqlite3_errmsg(db_)) + " (in: " + sqlite3_sql(stmt_) + ")");
}

Status ScopedStmt::Run() {
  ARBOR_TRY(Step());
  return {};
}

std::string_view ScopedStmt::Text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  if (p == nullptr) return {};
  return {p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col))};
}

Result<Db> Db::Open(const std::string& path, OpenFlags flags) {
  // NOMUTEX: the store serialises all use of a connection itself, so sqlite's own
  // per-call mutex would be pure overhead on the hot path.
  int f = SQLITE_OPEN_NOMUTEX;
  f |= flags == OpenFlags::kReadOnly ? SQLITE_OPEN_READONLY
                                     : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, f, nullptr);
  Db db(raw);  // owns the handle even when opening failed
  if (rc != SQLITE_OK) {
    return MakeError("cannot open " + path + ": " +
                     (raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  }
  sqlite3_extended_result_codes(raw, 1);
  return db;
}

Status Db::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_.get(), sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err != nullptr ? err : LastError();
    sqlite3_free(err);
    return MakeError(msg);
  }
  return {};
}

Result<ScopedStmt> Db::Use(const char* sql) {
  auto it = cache_.find(sql);
  if (it == cache_.end()) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v3(db_.get(), sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr) !=
        SQLITE_OK) {
      return MakeError(LastError() + " (preparing: " + sql + ")");
    }
    it = cache_.emplace(sql, StmtPtr(stmt)).first;
  }
  return ScopedStmt(db_.get(), it->second.get());
}

Result<std::string> Db::QueryText(const char* sql) {
  ARBOR_TRY_ASSIGN(auto stmt, Use(sql));
  ARBOR_TRY_ASSIGN(auto row, stmt.Step());
  return row ? std::string(stmt.Text(0)) : std::string();
}

Result<std::string> Db::IntegrityCheck() {
  ARBOR_TRY_ASSIGN(auto s, Use("PRAGMA integrity_check"));
  std::string out;
  for (;;) {
    ARBOR_TRY_ASSIGN(auto row, s.Step());
    if (!row) break;
    if (!out.empty()) out += '\n';
    out += s.Text(0);
  }
  return out;
}

}  // namespace arbor::sqlite
