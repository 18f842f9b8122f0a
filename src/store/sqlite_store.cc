#include "store/sqlite_store.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "store/critic_json.h"
#include "store/meta_codec.h"
#include "store/schema.h"
#include "store/store_json.h"

namespace arbor {
namespace {

// Every statement is a distinct literal: sqlite::Db caches prepared statements by address.
constexpr const char* kBegin = "BEGIN IMMEDIATE";
constexpr const char* kCommit = "COMMIT";
constexpr const char* kRollback = "ROLLBACK";

constexpr const char* kUpsertNode = R"sql(
INSERT INTO nodes(id, parent, action_id, value, category, layer, outcome, step, seq,
                  git_commit, overlay, metric, gain, diagnosis, score, created_s, finished_s,
                  cost_s, summary, critic, agent)
VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,
       ?20, ?21)
ON CONFLICT(id) DO UPDATE SET
  parent = excluded.parent, action_id = excluded.action_id, value = excluded.value,
  category = excluded.category, layer = excluded.layer, outcome = excluded.outcome,
  step = excluded.step, seq = excluded.seq, git_commit = excluded.git_commit,
  overlay = excluded.overlay, metric = excluded.metric, gain = excluded.gain,
  diagnosis = excluded.diagnosis, score = excluded.score, created_s = excluded.created_s,
  finished_s = excluded.finished_s, cost_s = excluded.cost_s, summary = excluded.summary,
  critic = excluded.critic, agent = excluded.agent)sql";

// DO UPDATE rather than INSERT OR REPLACE: REPLACE deletes the old row first, which would
// also swallow unrelated constraint failures on the way.
constexpr const char* kUpsertSample = R"sql(
INSERT INTO samples(node_id, arm, rep, value, extra) VALUES(?1, ?2, ?3, ?4, ?5)
ON CONFLICT(node_id, arm, rep) DO UPDATE SET value = excluded.value, extra = excluded.extra)sql";

constexpr const char* kUpsertProfile = R"sql(
INSERT INTO profiles(node_id, profile) VALUES(?1, ?2)
ON CONFLICT(node_id) DO UPDATE SET profile = excluded.profile)sql";

constexpr const char* kInsertEvent =
    "INSERT INTO events(node_id, kind, message, data, t) VALUES(?1, ?2, ?3, ?4, ?5)";

constexpr const char* kUpsertMeta = R"sql(
INSERT INTO meta(key, value) VALUES(?1, ?2)
ON CONFLICT(key) DO UPDATE SET value = excluded.value)sql";

// Error unless the connection is configured as the store's durability promise needs.
Status Configure(sqlite::Db& db, OpenMode mode) {
  // A writer holds the lock for one short transaction; waiting beats failing with BUSY.
  sqlite3_busy_timeout(db.raw(), 5000);
  ARBOR_TRY(db.Exec("PRAGMA foreign_keys = ON"));
  if (mode == OpenMode::kReadOnly) return db.Exec("PRAGMA query_only = ON");
  // WAL: readers (status, dashboard) never block the campaign and vice versa, and a commit
  // is one append to the log. synchronous=NORMAL skips the fsync per commit: a committed
  // transaction is in the OS page cache when COMMIT returns, so it survives kill -9 of this
  // process; only an OS crash or power loss can drop the last commits (never corrupt).
  ARBOR_TRY_ASSIGN(auto journal, db.QueryText("PRAGMA journal_mode = WAL"));
  if (journal != "wal")
    return MakeError("cannot switch to WAL mode (journal_mode=" + journal + ")");
  return db.Exec("PRAGMA synchronous = NORMAL");
}

// The NULL convention for kNoNode (root's parent, campaign-level events).
void BindNode(sqlite::ScopedStmt& s, int i, NodeId id) {
  if (id == kNoNode) {
    s.BindNull(i);
  } else {
    s.Bind(i, static_cast<int64_t>(id));
  }
}

void BindOptional(sqlite::ScopedStmt& s, int i, const std::optional<double>& v) {
  if (v) {
    s.Bind(i, *v);
  } else {
    s.BindNull(i);
  }
}

// SQLite stores a bound NaN as NULL; refusing it keeps "no metric" and "a broken metric"
// apart. NaN in a REAL column is a bug upstream (e.g. the median of nothing).
Status RequireNumber(double v, const char* field) {
  if (std::isnan(v)) return MakeError(std::string(field) + " is NaN");
  return {};
}

Status CheckNode(const Node& n) {
  for (auto [v, field] : {std::pair{n.created_s, "created_s"},
                          std::pair{n.finished_s, "finished_s"}, std::pair{n.cost_s, "cost_s"}}) {
    ARBOR_TRY(RequireNumber(v, field));
  }
  if (n.metric) ARBOR_TRY(RequireNumber(*n.metric, "metric"));
  if (n.gain) ARBOR_TRY(RequireNumber(*n.gain, "gain"));
  return {};
}

}  // namespace

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path, OpenMode mode) {
  const bool read_only = mode == OpenMode::kReadOnly;
  std::error_code ec;
  // sqlite would only say "unable to open database file"; a missing store is a normal state
  // for `arbor status` before the first run and deserves a message that says so.
  if (read_only && !std::filesystem::exists(path, ec)) {
    return MakeError("no campaign state at " + path);
  }
  ARBOR_TRY_ASSIGN(auto db,
                   sqlite::Db::Open(path, read_only ? sqlite::OpenFlags::kReadOnly
                                                    : sqlite::OpenFlags::kReadWriteCreate));
  Status configured = Configure(db, mode);
  if (!configured.ok()) return MakeError("store " + path + ": " + configured.error().message);
  ARBOR_TRY(read_only ? store_schema::CheckReadable(db, path) : store_schema::Migrate(db, path));
  return std::unique_ptr<SqliteStore>(new SqliteStore(path, mode, std::move(db)));
}

Error SqliteStore::Fail(const std::string& what, const Error& e) const {
  return MakeError("store " + path_ + ": " + what + ": " + e.message);
}

Status SqliteStore::Apply(const Mutation& m) {
  std::lock_guard lock(mu_);
  if (mode_ == OpenMode::kReadOnly) return MakeError("store " + path_ + " is open read-only");
  auto begin = db_.Use(kBegin);
  if (!begin.ok()) return Fail("apply", begin.error());
  Status s = begin->Run();
  if (s.ok()) s = ApplyLocked(m);
  if (s.ok()) {
    auto commit = db_.Use(kCommit);
    s = commit.ok() ? commit->Run() : Status(commit.error());
  }
  // A failed COMMIT (deferred foreign keys, BUSY) leaves the transaction open; some I/O
  // errors roll it back already. Roll back whatever is still open; the first error is the
  // one to report.
  if (!s.ok() && sqlite3_get_autocommit(db_.raw()) == 0) {
    if (auto rollback = db_.Use(kRollback); rollback.ok()) (void)rollback->Run();
  }
  if (!s.ok()) return Fail("apply", s.error());
  return {};
}

Status SqliteStore::ApplyLocked(const Mutation& m) {
  for (const Node& n : m.nodes) ARBOR_TRY(WriteNode(n));
  for (const Sample& s : m.samples) ARBOR_TRY(WriteSample(s));
  for (const auto& [node, profile] : m.profiles) ARBOR_TRY(WriteProfile(node, profile));
  for (const Event& e : m.events) ARBOR_TRY(WriteEvent(e));
  if (m.meta) ARBOR_TRY(WriteMeta(*m.meta));
  for (const ActionSpec& a : m.actions) ARBOR_TRY(WriteAction(a));
  for (const Mutation::Prompt& p : m.prompts) ARBOR_TRY(WritePrompt(p));
  return {};
}

Status SqliteStore::WriteNode(const Node& n) {
  Status valid = CheckNode(n);
  if (!valid.ok()) return MakeError("node " + std::to_string(n.id) + ": " + valid.error().message);
  ARBOR_TRY_ASSIGN(auto s, db_.Use(kUpsertNode));
  s.Bind(1, static_cast<int64_t>(n.id));
  BindNode(s, 2, n.parent);
  s.Bind(3, n.action_id).Bind(4, n.value).Bind(5, n.category).Bind(6, n.layer);
  s.Bind(7, OutcomeName(n.outcome)).Bind(8, StepName(n.step));
  s.Bind(9, static_cast<int64_t>(n.seq)).Bind(10, n.commit);
  s.Bind(11, store_json::EncodeOverlay(n.overlay));
  BindOptional(s, 12, n.metric);
  BindOptional(s, 13, n.gain);
  s.Bind(14, n.diagnosis).Bind(15, store_json::EncodeScore(n.score));
  s.Bind(16, n.created_s).Bind(17, n.finished_s).Bind(18, n.cost_s).Bind(19, n.summary);
  s.Bind(20, store_json::EncodeCritic(n.critic)).Bind(21, store_json::EncodeAgent(n.agent));
  Status r = s.Run();
  if (!r.ok()) return MakeError("node " + std::to_string(n.id) + ": " + r.error().message);
  return {};
}

Status SqliteStore::WriteSample(const Sample& sample) {
  const std::string where = "sample (node " + std::to_string(sample.node) + ", arm '" + sample.arm +
                            "', rep " + std::to_string(sample.rep) + ")";
  Status valid = RequireNumber(sample.value, "value");
  if (!valid.ok()) return MakeError(where + ": " + valid.error().message);
  ARBOR_TRY_ASSIGN(auto s, db_.Use(kUpsertSample));
  s.Bind(1, static_cast<int64_t>(sample.node)).Bind(2, sample.arm);
  s.Bind(3, static_cast<int64_t>(sample.rep)).Bind(4, sample.value);
  s.Bind(5, store_json::EncodeNumbers(sample.extra));
  Status r = s.Run();
  if (!r.ok()) return MakeError(where + ": " + r.error().message);
  return {};
}

Status SqliteStore::WriteProfile(NodeId node, const Profile& p) {
  ARBOR_TRY_ASSIGN(auto s, db_.Use(kUpsertProfile));
  s.Bind(1, static_cast<int64_t>(node)).Bind(2, store_json::EncodeProfile(p));
  Status r = s.Run();
  if (!r.ok())
    return MakeError("profile of node " + std::to_string(node) + ": " + r.error().message);
  return {};
}

Status SqliteStore::WriteEvent(const Event& e) {
  const std::string where = "event '" + e.kind + "' of node " + std::to_string(e.node);
  if (!store_json::IsEmptyOrJsonObject(e.data)) {
    return MakeError(where + ": data is not a JSON object: " + e.data.substr(0, 80));
  }
  Status valid = RequireNumber(e.t, "t");
  if (!valid.ok()) return MakeError(where + ": " + valid.error().message);
  ARBOR_TRY_ASSIGN(auto s, db_.Use(kInsertEvent));
  BindNode(s, 1, e.node);
  s.Bind(2, e.kind).Bind(3, e.message).Bind(4, e.data).Bind(5, e.t);
  Status r = s.Run();
  if (!r.ok()) return MakeError(where + ": " + r.error().message);
  return {};
}

Status SqliteStore::WriteMeta(const CampaignMeta& meta) {
  for (const auto& [key, value] : meta_codec::Encode(meta)) {
    ARBOR_TRY_ASSIGN(auto s, db_.Use(kUpsertMeta));
    Status r = s.Bind(1, key).Bind(2, value).Run();
    if (!r.ok()) return MakeError("meta '" + key + "': " + r.error().message);
  }
  return {};
}

Result<std::string> SqliteStore::IntegrityCheck() {
  std::lock_guard lock(mu_);
  auto r = db_.IntegrityCheck();
  if (!r.ok()) return Fail("integrity check", r.error());
  return r;
}

Status SqliteStore::Checkpoint() {
  std::lock_guard lock(mu_);
  if (mode_ == OpenMode::kReadOnly) return MakeError("store " + path_ + " is open read-only");
  const int rc =
      sqlite3_wal_checkpoint_v2(db_.raw(), nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr);
  // BUSY: a reader still uses part of the log; what could be copied was, the rest follows at
  // a later checkpoint. Not a failure of the store.
  if (rc != SQLITE_OK && rc != SQLITE_BUSY) return Fail("checkpoint", MakeError(db_.LastError()));
  return {};
}

}  // namespace arbor
