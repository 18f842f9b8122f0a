// The store's schema and its migrations.
//
// The schema version lives in meta('schema_version'). kMigrations[v] takes a database from
// version v to v + 1 (version 0 is an empty file); each runs in its own BEGIN IMMEDIATE
// transaction together with the version bump, so a kill -9 mid-upgrade leaves the previous
// version intact and the next open simply retries. Migrations are append-only: a released
// migration is never edited, a change of schema is a new entry. A database whose version is
// newer than this binary's table is refused rather than guessed at.
#pragma once

#include <span>
#include <string>

#include "store/sqlite_db.h"
#include "util/result.h"

namespace arbor::store_schema {

using Migration = Status (*)(sqlite::Db& db);

// The version this binary writes and understands.
int CurrentVersion();

// The released migrations, kMigrations[v] upgrading version v to v + 1; a prefix of it builds a
// store of an older version (tests of upgrades with real data).
std::span<const Migration> Migrations();

// The version recorded in `db`: 0 for an empty database, an Error for an SQLite file that is
// not an arbor store. `path` only names the file in messages.
Result<int> ReadVersion(sqlite::Db& db, const std::string& path);

// Upgrades `db` to CurrentVersion() (no-op when it is already there); Error when the file is
// newer than this binary, is not an arbor store, or a migration fails.
Status Migrate(sqlite::Db& db, const std::string& path);

// For read-only opens, which never migrate: OK only when `db` is at CurrentVersion(); an
// empty file is "no campaign state at PATH", an older one must be opened read-write first.
Status CheckReadable(sqlite::Db& db, const std::string& path);

// Migrate() with an explicit migration table, so that tests can exercise upgrades and
// failures with a table of their own.
Status MigrateWith(sqlite::Db& db, const std::string& path, std::span<const Migration> migrations);

}  // namespace arbor::store_schema
