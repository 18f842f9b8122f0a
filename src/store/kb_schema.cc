#include "store/kb_schema.h"

#include <charconv>
#include <iterator>
#include <optional>
#include <utility>

#include "store/schema.h"  // store_schema::Migration

namespace arbor::kb_schema {
namespace {

// Version 1. superseded_by is 0 for a live entry (no foreign key: Forget clears dangling
// ones itself). hardware is HardwareSignature::Encode(), workload EncodeWorkload(): the
// conflict lookup compares them as text. AUTOINCREMENT: ids are never reused after Forget.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE kb_meta (
  key   TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE entries (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  uid              TEXT NOT NULL UNIQUE,
  campaign         TEXT NOT NULL DEFAULT '',
  campaign_uid     TEXT NOT NULL DEFAULT '',
  node             INTEGER NOT NULL DEFAULT 0,
  action_id        TEXT NOT NULL,
  value            TEXT NOT NULL DEFAULT '',
  category         TEXT NOT NULL DEFAULT '',
  layer            TEXT NOT NULL DEFAULT '',
  content_hash     TEXT NOT NULL DEFAULT '',
  workload         TEXT NOT NULL DEFAULT '',
  hardware         TEXT NOT NULL DEFAULT '',
  path_hash        TEXT NOT NULL DEFAULT '',
  outcome          TEXT NOT NULL,
  accuracy_failure INTEGER NOT NULL DEFAULT 0,
  gain             REAL,
  ci_low           REAL,
  ci_high          REAL,
  prior_speedup    REAL NOT NULL DEFAULT 1,
  target_share     REAL NOT NULL DEFAULT 0,
  implied_speedup  REAL,
  cost_s           REAL NOT NULL DEFAULT 0,
  rca              TEXT NOT NULL DEFAULT '',
  lesson           TEXT NOT NULL DEFAULT '',
  controlled       INTEGER NOT NULL DEFAULT 0,
  recorded_at      REAL NOT NULL DEFAULT 0,
  superseded_by    INTEGER NOT NULL DEFAULT 0,
  conflict         TEXT NOT NULL DEFAULT ''
);
CREATE INDEX entries_action ON entries(action_id);
CREATE INDEX entries_category ON entries(category);
CREATE INDEX entries_campaign ON entries(campaign_uid);
)sql";

Status MigrateTo1(sqlite::Db& db) { return db.Exec(kSchemaV1); }
// Append-only: kMigrations[v] upgrades version v to v + 1.
constexpr store_schema::Migration kMigrations[] = {&MigrateTo1};
constexpr int kVersion = static_cast<int>(std::size(kMigrations));

constexpr const char* kHasMeta =
    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'kb_meta'";
constexpr const char* kHasTables = "SELECT count(*) FROM sqlite_master";
constexpr const char* kGetVersion = "SELECT value FROM kb_meta WHERE key = 'schema_version'";
constexpr const char* kSetVersion =
    "INSERT INTO kb_meta(key, value) VALUES('schema_version', ?1) "
    "ON CONFLICT(key) DO UPDATE SET value = excluded.value";
}  // namespace

#define KB_COLUMNS                                                                             \
  "uid, campaign, campaign_uid, node, action_id, value, category, layer, content_hash, "       \
  "workload, hardware, path_hash, outcome, accuracy_failure, gain, ci_low, ci_high, "          \
  "prior_speedup, target_share, cost_s, rca, lesson, controlled, recorded_at, superseded_by, " \
  "conflict, implied_speedup"
const char* const kSelectAll = "SELECT id, " KB_COLUMNS " FROM entries";
const char* const kInsert =
    "INSERT INTO entries(" KB_COLUMNS
    ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
    "?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, 0, '', ?25)";
const char* const kSameContext =
    "SELECT id, " KB_COLUMNS
    " FROM entries WHERE action_id = ?1 AND value = ?2 AND content_hash = ?3 AND workload = ?4"
    " AND hardware = ?5 AND path_hash = ?6 AND superseded_by = 0 AND id <> ?7 ORDER BY id";

int CurrentVersion() { return kVersion; }

// 0 for an empty file; an Error for an SQLite file that is not a knowledge base.
Result<int> ReadVersion(sqlite::Db& db, const std::string& path) {
  ARBOR_TRY_ASSIGN(auto has_meta, db.QueryText(kHasMeta));
  if (has_meta == "0") {
    ARBOR_TRY_ASSIGN(auto tables, db.QueryText(kHasTables));
    if (tables != "0") return MakeError(path + " is not an arbor knowledge base");
    return 0;
  }
  ARBOR_TRY_ASSIGN(auto text, db.QueryText(kGetVersion));
  int version = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), version);
  if (ec != std::errc() || p != text.data() + text.size() || version <= 0) {
    return MakeError(path + " is not an arbor knowledge base (schema_version '" + text + "')");
  }
  if (version > kVersion) {
    return MakeError(path + " has knowledge-base schema version " + std::to_string(version) +
                     ", newer than this arbor understands (" + std::to_string(kVersion) +
                     "); use a newer arbor");
  }
  return version;
}

Status Migrate(sqlite::Db& db, const std::string& path) {
  auto current = ReadVersion(db, path);  // fast path without the write lock
  if (current.ok() && *current == kVersion) return {};
  // Re-read under the lock: another process may be creating the same file right now.
  return InTransaction(db, [&]() -> Status {
    ARBOR_TRY_ASSIGN(auto version, ReadVersion(db, path));
    for (int v = version; v < kVersion; ++v) ARBOR_TRY(kMigrations[v](db));
    ARBOR_TRY_ASSIGN(auto set, db.Use(kSetVersion));
    return set.Bind(1, std::to_string(kVersion)).Run();
  });
}

Status Configure(sqlite::Db& db, bool read_only) {
  // Writers hold the lock for one short transaction; two campaigns queue rather than fail.
  sqlite3_busy_timeout(db.raw(), 10000);
  if (read_only) return db.Exec("PRAGMA query_only = ON");
  ARBOR_TRY_ASSIGN(auto journal, db.QueryText("PRAGMA journal_mode = WAL"));
  if (journal != "wal") return MakeError("cannot switch to WAL (journal_mode=" + journal + ")");
  return db.Exec("PRAGMA synchronous = NORMAL");
}

Result<KbEntry> ReadEntry(const sqlite::ScopedStmt& s) {
  KbEntry e;
  e.id = s.Int(0);
  e.uid = s.Text(1);
  e.campaign = s.Text(2);
  e.campaign_uid = s.Text(3);
  e.node = s.Int(4);
  e.action_id = s.Text(5);
  e.value = s.Text(6);
  e.category = s.Text(7);
  e.layer = s.Text(8);
  e.content_hash = s.Text(9);
  e.workload = ParseWorkload(std::string(s.Text(10)));
  auto hw = HardwareSignature::Decode(std::string(s.Text(11)));
  if (!hw) {
    return MakeError("entry #" + std::to_string(e.id) + " has malformed hardware '" +
                     std::string(s.Text(11)) + "'");
  }
  e.hardware = std::move(*hw);
  e.path_hash = s.Text(12);
  e.outcome = s.Text(13);
  e.accuracy_failure = s.Int(14) != 0;
  if (!s.IsNull(15)) e.gain = s.Double(15);
  if (!s.IsNull(16)) e.ci_low = s.Double(16);
  if (!s.IsNull(17)) e.ci_high = s.Double(17);
  e.prior_speedup = s.Double(18);
  e.target_share = s.Double(19);
  e.cost_s = s.Double(20);
  e.rca = s.Text(21);
  e.lesson = s.Text(22);
  e.controlled = s.Int(23) != 0;
  e.recorded_at = s.Double(24);
  e.superseded_by = s.Int(25);
  e.conflict = s.Text(26);
  if (!s.IsNull(27)) e.implied_speedup = s.Double(27);
  return e;
}

void BindEntry(sqlite::ScopedStmt& s, const KbEntry& e) {
  s.Bind(1, e.uid).Bind(2, e.campaign).Bind(3, e.campaign_uid).Bind(4, e.node);
  s.Bind(5, e.action_id).Bind(6, e.value).Bind(7, e.category).Bind(8, e.layer);
  s.Bind(9, e.content_hash).Bind(10, EncodeWorkload(e.workload));
  s.Bind(11, e.hardware.Encode()).Bind(12, e.path_hash).Bind(13, e.outcome);
  s.Bind(14, int64_t{e.accuracy_failure});
  for (auto [i, v] : {std::pair{15, e.gain}, std::pair{16, e.ci_low}, std::pair{17, e.ci_high},
                      std::pair{25, e.implied_speedup}}) {
    if (v) {
      s.Bind(i, *v);
    } else {
      s.BindNull(i);
    }
  }
  s.Bind(18, e.prior_speedup).Bind(19, e.target_share).Bind(20, e.cost_s);
  s.Bind(21, e.rca).Bind(22, e.lesson).Bind(23, int64_t{e.controlled});
  s.Bind(24, e.recorded_at);
}

}  // namespace arbor::kb_schema
