#include "store/schema.h"

#include <charconv>
#include <iterator>

namespace arbor::store_schema {
namespace {

// Version 1. Every foreign key is DEFERRABLE INITIALLY DEFERRED: checked at COMMIT, so one
// Mutation may carry a node and its samples/events in any order, and a dangling reference
// still fails the whole transaction. kNoNode (0) is stored as NULL (root's parent,
// campaign-level events). REAL columns never hold NaN: Apply refuses it (SQLite would store
// NULL and an optional metric would silently read back as missing).
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE meta (
  key   TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE nodes (
  id         INTEGER PRIMARY KEY CHECK (id > 0),
  parent     INTEGER REFERENCES nodes(id) DEFERRABLE INITIALLY DEFERRED,
  action_id  TEXT NOT NULL,
  value      TEXT NOT NULL DEFAULT '',
  category   TEXT NOT NULL DEFAULT '',
  layer      TEXT NOT NULL DEFAULT '',
  outcome    TEXT NOT NULL,
  step       TEXT NOT NULL,
  seq        INTEGER NOT NULL DEFAULT 0,
  git_commit TEXT NOT NULL DEFAULT '',
  overlay    TEXT NOT NULL DEFAULT '{}',
  metric     REAL,
  gain       REAL,
  diagnosis  TEXT NOT NULL DEFAULT '',
  score      TEXT NOT NULL DEFAULT '{}',
  created_s  REAL NOT NULL DEFAULT 0,
  finished_s REAL NOT NULL DEFAULT 0,
  cost_s     REAL NOT NULL DEFAULT 0,
  summary    TEXT NOT NULL DEFAULT '',
  CHECK (parent IS NULL OR parent <> id)
);
CREATE INDEX nodes_parent ON nodes(parent);
CREATE INDEX nodes_outcome ON nodes(outcome);

-- The UNIQUE index leads with node_id, so it also serves "samples of a node" ordered by
-- (arm, rep); a separate samples(node_id) index would only slow down writes.
CREATE TABLE samples (
  node_id INTEGER NOT NULL REFERENCES nodes(id) DEFERRABLE INITIALLY DEFERRED,
  arm     TEXT NOT NULL,
  rep     INTEGER NOT NULL,
  value   REAL NOT NULL,
  extra   TEXT NOT NULL DEFAULT '{}',
  UNIQUE (node_id, arm, rep)
);

CREATE TABLE profiles (
  node_id INTEGER PRIMARY KEY REFERENCES nodes(id) DEFERRABLE INITIALLY DEFERRED,
  profile TEXT NOT NULL
);

-- AUTOINCREMENT: ids are never reused, so a reader's "after_id" cursor stays valid forever.
CREATE TABLE events (
  id      INTEGER PRIMARY KEY AUTOINCREMENT,
  node_id INTEGER REFERENCES nodes(id) DEFERRABLE INITIALLY DEFERRED,
  kind    TEXT NOT NULL,
  message TEXT NOT NULL DEFAULT '',
  data    TEXT NOT NULL DEFAULT '',
  t       REAL NOT NULL DEFAULT 0
);
CREATE INDEX events_node ON events(node_id, id);
)sql";

Status MigrateTo1(sqlite::Db& db) { return db.Exec(kSchemaV1); }

// Version 2: what the Critic concluded about each node (CriticNote as JSON, "{}" if nothing).
Status MigrateTo2(sqlite::Db& db) {
  return db.Exec("ALTER TABLE nodes ADD COLUMN critic TEXT NOT NULL DEFAULT '{}'");
}

// Version 3: Domain Specialists. What a specialist reported for a node (AgentNote as JSON,
// "{}" if nothing), the actions specialists proposed (ord keeps the order they were first
// recorded; an upsert replaces the spec only) and the prompts a specialist was given, one per
// (node, kind). A proposal round's prompt is recorded against the incumbent, which exists.
constexpr const char* kSchemaV3 = R"sql(
ALTER TABLE nodes ADD COLUMN agent TEXT NOT NULL DEFAULT '{}';

CREATE TABLE actions (
  id   TEXT PRIMARY KEY NOT NULL,
  ord  INTEGER NOT NULL,
  spec TEXT NOT NULL
);

CREATE TABLE prompts (
  node_id INTEGER NOT NULL REFERENCES nodes(id) DEFERRABLE INITIALLY DEFERRED,
  kind    TEXT NOT NULL,
  text    TEXT NOT NULL,
  PRIMARY KEY (node_id, kind)
);
)sql";

Status MigrateTo3(sqlite::Db& db) { return db.Exec(kSchemaV3); }

// Append-only: kMigrations[v] upgrades version v to v + 1.
constexpr Migration kMigrations[] = {
    &MigrateTo1,
    &MigrateTo2,
    &MigrateTo3,
};

constexpr const char* kHasMeta =
    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'";
constexpr const char* kHasTables = "SELECT count(*) FROM sqlite_master";
constexpr const char* kGetVersion = "SELECT value FROM meta WHERE key = 'schema_version'";
constexpr const char* kSetVersion =
    "INSERT INTO meta(key, value) VALUES('schema_version', ?) "
    "ON CONFLICT(key) DO UPDATE SET value = excluded.value";

Error TooNew(const std::string& path, int version, int known) {
  return MakeError(path + " has schema version " + std::to_string(version) +
                   ", newer than this arbor understands (" + std::to_string(known) +
                   "); use a newer arbor");
}

Error NotAStore(const std::string& path, const std::string& why) {
  return MakeError(path + " is not an arbor campaign store (" + why + ")");
}

// Runs `body` in one BEGIN IMMEDIATE transaction; rolls back when it fails.
template <typename F>
Status InTransaction(sqlite::Db& db, F body) {
  ARBOR_TRY(db.Exec("BEGIN IMMEDIATE"));
  Status s = body();
  if (s.ok()) s = db.Exec("COMMIT");
  if (!s.ok()) (void)db.Exec("ROLLBACK");  // the error to report is the first one
  return s;
}

}  // namespace

int CurrentVersion() { return static_cast<int>(std::size(kMigrations)); }

std::span<const Migration> Migrations() { return kMigrations; }

Result<int> ReadVersion(sqlite::Db& db, const std::string& path) {
  auto has_meta = db.QueryText(kHasMeta);
  if (!has_meta.ok()) return MakeError(path + ": " + has_meta.error().message);
  if (*has_meta == "0") {
    auto tables = db.QueryText(kHasTables);
    if (!tables.ok()) return MakeError(path + ": " + tables.error().message);
    if (*tables != "0") return NotAStore(path, "it holds other tables");
    return 0;
  }
  auto text = db.QueryText(kGetVersion);
  if (!text.ok()) return MakeError(path + ": " + text.error().message);
  int version = 0;
  const char* end = text->data() + text->size();
  auto [p, ec] = std::from_chars(text->data(), end, version);
  if (text->empty() || ec != std::errc() || p != end || version <= 0) {
    return NotAStore(path, "schema_version is '" + *text + "'");
  }
  return version;
}

Status CheckReadable(sqlite::Db& db, const std::string& path) {
  ARBOR_TRY_ASSIGN(auto version, ReadVersion(db, path));
  const int known = CurrentVersion();
  if (version == 0) return MakeError("no campaign state at " + path + " (the store is empty)");
  if (version > known) return TooNew(path, version, known);
  if (version < known) {
    return MakeError(path + " has schema version " + std::to_string(version) +
                     "; open it read-write once (arbor run/resume) to upgrade it to " +
                     std::to_string(known));
  }
  return {};
}

Status Migrate(sqlite::Db& db, const std::string& path) {
  return MigrateWith(db, path, kMigrations);
}

Status MigrateWith(sqlite::Db& db, const std::string& path, std::span<const Migration> migrations) {
  const int known = static_cast<int>(migrations.size());
  // Fast path without the write lock: an up-to-date store is the common case, and another
  // process (a running campaign) may hold the lock for a while.
  auto current = ReadVersion(db, path);
  if (current.ok() && *current == known) return {};
  for (;;) {
    // The version is re-read inside each transaction: another process may be upgrading the
    // same file concurrently, and the IMMEDIATE lock makes exactly one of them do each step.
    bool done = false;
    Status s = InTransaction(db, [&]() -> Status {
      ARBOR_TRY_ASSIGN(auto version, ReadVersion(db, path));
      if (version > known) return TooNew(path, version, known);
      if (version == known) {
        done = true;
        return {};
      }
      Status m = migrations[version](db);
      if (!m.ok()) {
        return MakeError(path + ": migration to schema version " + std::to_string(version + 1) +
                         " failed: " + m.error().message);
      }
      ARBOR_TRY_ASSIGN(auto set, db.Use(kSetVersion));
      return set.Bind(1, std::to_string(version + 1)).Run();
    });
    if (!s.ok() || done) return s;
  }
}

}  // namespace arbor::store_schema
