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
                  cost_s, summary, critic)
VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,
       ?20)
ON CONFLICT(id) DO UPDATE SET
  parent = excluded.parent, action_id = excluded.action_id, value = excluded.value,
  category = excluded.category, layer = excluded.layer, outcome = excluded.outcome,
  step = excluded.step, seq = excluded.seq, git_commit = excluded.git_commit,
  overlay = excluded.overlay, metric = excluded.metric, gain = excluded.gain,
  diagnosis = excluded.diagnosis, score = excluded.score, created_s = excluded.created_s,
  finished_s = excluded.finished_s, cost_s = excluded.cost_s, summary = excluded.summary,
  critic = excluded.critic)sql";

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

constexpr const char* kSelectMeta = "SELECT key, value FROM meta";

constexpr const char* kSelectNodes = R"sql(
SELECT id, parent, action_id, value, category, layer, outcome, step, seq, git_commit,
       overlay, metric, gain, diagnosis, score, created_s, finished_s, cost_s, summary, critic
FROM nodes ORDER BY id)sql";

// Node ids are dense (1, 2, ...), so max(id) is a good capacity hint and costs one b-tree
// descent, where count(*) would read a whole index.
constexpr const char* kMaxNodeId = "SELECT coalesce(max(id), 0) FROM nodes";

constexpr const char* kSelectSamples =
    "SELECT arm, rep, value, extra FROM samples WHERE node_id = ?1 ORDER BY arm, rep";

constexpr const char* kSelectProfile = "SELECT profile FROM profiles WHERE node_id = ?1";

constexpr const char* kSelectEventsAll =
    "SELECT id, node_id, kind, message, data, t FROM events WHERE id > ?1 ORDER BY id LIMIT ?2";
constexpr const char* kSelectEventsOfNode =
    "SELECT id, node_id, kind, message, data, t FROM events "
    "WHERE node_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3";

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
  auto journal = db.QueryText("PRAGMA journal_mode = WAL");
  if (!journal.ok()) return journal.error();
  if (*journal != "wal")
    return MakeError("cannot switch to WAL mode (journal_mode=" + *journal + ")");
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

Result<Node> ReadNode(const sqlite::ScopedStmt& s) {
  Node n;
  n.id = s.Int(0);
  n.parent = s.IsNull(1) ? kNoNode : s.Int(1);
  n.action_id = s.Text(2);
  n.value = s.Text(3);
  n.category = s.Text(4);
  n.layer = s.Text(5);
  auto outcome = ParseOutcome(s.Text(6));
  if (!outcome)
    return MakeError("node " + std::to_string(n.id) + " has unknown outcome '" +
                     std::string(s.Text(6)) + "'");
  n.outcome = *outcome;
  auto step = ParseStep(s.Text(7));
  if (!step)
    return MakeError("node " + std::to_string(n.id) + " has unknown step '" +
                     std::string(s.Text(7)) + "'");
  n.step = *step;
  n.seq = s.Int(8);
  n.commit = s.Text(9);
  auto overlay = store_json::DecodeOverlay(s.Text(10));
  if (!overlay.ok())
    return MakeError("node " + std::to_string(n.id) + ": " + overlay.error().message);
  n.overlay = std::move(*overlay);
  if (!s.IsNull(11)) n.metric = s.Double(11);
  if (!s.IsNull(12)) n.gain = s.Double(12);
  n.diagnosis = s.Text(13);
  auto score = store_json::DecodeScore(s.Text(14));
  if (!score.ok()) return MakeError("node " + std::to_string(n.id) + ": " + score.error().message);
  n.score = *score;
  n.created_s = s.Double(15);
  n.finished_s = s.Double(16);
  n.cost_s = s.Double(17);
  n.summary = s.Text(18);
  auto critic = store_json::DecodeCritic(s.Text(19));
  if (!critic.ok())
    return MakeError("node " + std::to_string(n.id) + ": " + critic.error().message);
  n.critic = std::move(*critic);
  return n;
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
  auto db = sqlite::Db::Open(
      path, read_only ? sqlite::OpenFlags::kReadOnly : sqlite::OpenFlags::kReadWriteCreate);
  if (!db.ok()) return db.error();
  Status configured = Configure(*db, mode);
  if (!configured.ok()) return MakeError("store " + path + ": " + configured.error().message);
  ARBOR_TRY(read_only ? store_schema::CheckReadable(*db, path) : store_schema::Migrate(*db, path));
  return std::unique_ptr<SqliteStore>(new SqliteStore(path, mode, std::move(*db)));
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
  return {};
}

Status SqliteStore::WriteNode(const Node& n) {
  Status valid = CheckNode(n);
  if (!valid.ok()) return MakeError("node " + std::to_string(n.id) + ": " + valid.error().message);
  auto s = db_.Use(kUpsertNode);
  if (!s.ok()) return s.error();
  s->Bind(1, static_cast<int64_t>(n.id));
  BindNode(*s, 2, n.parent);
  s->Bind(3, n.action_id).Bind(4, n.value).Bind(5, n.category).Bind(6, n.layer);
  s->Bind(7, OutcomeName(n.outcome)).Bind(8, StepName(n.step));
  s->Bind(9, static_cast<int64_t>(n.seq)).Bind(10, n.commit);
  s->Bind(11, store_json::EncodeOverlay(n.overlay));
  BindOptional(*s, 12, n.metric);
  BindOptional(*s, 13, n.gain);
  s->Bind(14, n.diagnosis).Bind(15, store_json::EncodeScore(n.score));
  s->Bind(16, n.created_s).Bind(17, n.finished_s).Bind(18, n.cost_s).Bind(19, n.summary);
  s->Bind(20, store_json::EncodeCritic(n.critic));
  Status r = s->Run();
  if (!r.ok()) return MakeError("node " + std::to_string(n.id) + ": " + r.error().message);
  return {};
}

Status SqliteStore::WriteSample(const Sample& sample) {
  const std::string where = "sample (node " + std::to_string(sample.node) + ", arm '" + sample.arm +
                            "', rep " + std::to_string(sample.rep) + ")";
  Status valid = RequireNumber(sample.value, "value");
  if (!valid.ok()) return MakeError(where + ": " + valid.error().message);
  auto s = db_.Use(kUpsertSample);
  if (!s.ok()) return s.error();
  s->Bind(1, static_cast<int64_t>(sample.node)).Bind(2, sample.arm);
  s->Bind(3, static_cast<int64_t>(sample.rep)).Bind(4, sample.value);
  s->Bind(5, store_json::EncodeNumbers(sample.extra));
  Status r = s->Run();
  if (!r.ok()) return MakeError(where + ": " + r.error().message);
  return {};
}

Status SqliteStore::WriteProfile(NodeId node, const Profile& p) {
  auto s = db_.Use(kUpsertProfile);
  if (!s.ok()) return s.error();
  s->Bind(1, static_cast<int64_t>(node)).Bind(2, store_json::EncodeProfile(p));
  Status r = s->Run();
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
  auto s = db_.Use(kInsertEvent);
  if (!s.ok()) return s.error();
  BindNode(*s, 1, e.node);
  s->Bind(2, e.kind).Bind(3, e.message).Bind(4, e.data).Bind(5, e.t);
  Status r = s->Run();
  if (!r.ok()) return MakeError(where + ": " + r.error().message);
  return {};
}

Status SqliteStore::WriteMeta(const CampaignMeta& meta) {
  for (const auto& [key, value] : meta_codec::Encode(meta)) {
    auto s = db_.Use(kUpsertMeta);
    if (!s.ok()) return s.error();
    Status r = s->Bind(1, key).Bind(2, value).Run();
    if (!r.ok()) return MakeError("meta '" + key + "': " + r.error().message);
  }
  return {};
}

Result<std::optional<CampaignMeta>> SqliteStore::LoadMeta() {
  std::lock_guard lock(mu_);
  auto s = db_.Use(kSelectMeta);
  if (!s.ok()) return Fail("load meta", s.error());
  meta_codec::Rows rows;
  for (;;) {
    auto row = s->Step();
    if (!row.ok()) return Fail("load meta", row.error());
    if (!*row) break;
    rows.emplace_back(s->Text(0), s->Text(1));
  }
  auto meta = meta_codec::Decode(rows);
  if (!meta.ok()) return Fail("load meta", meta.error());
  return meta;
}

Result<std::vector<Node>> SqliteStore::LoadNodes() {
  std::lock_guard lock(mu_);
  std::vector<Node> nodes;
  // Growing a vector of 100k Nodes reallocates ~17 times and dominated the allocator's time.
  if (auto hint = db_.QueryText(kMaxNodeId); hint.ok()) {
    nodes.reserve(std::min<size_t>(std::strtoull(hint->c_str(), nullptr, 10), 1 << 24));
  }
  auto s = db_.Use(kSelectNodes);
  if (!s.ok()) return Fail("load nodes", s.error());
  for (;;) {
    auto row = s->Step();
    if (!row.ok()) return Fail("load nodes", row.error());
    if (!*row) break;
    auto node = ReadNode(*s);
    if (!node.ok()) return Fail("load nodes", node.error());
    nodes.push_back(std::move(*node));
  }
  return nodes;
}

Result<std::vector<Sample>> SqliteStore::LoadSamples(NodeId node) {
  std::lock_guard lock(mu_);
  auto s = db_.Use(kSelectSamples);
  if (!s.ok()) return Fail("load samples", s.error());
  s->Bind(1, static_cast<int64_t>(node));
  std::vector<Sample> samples;
  for (;;) {
    auto row = s->Step();
    if (!row.ok()) return Fail("load samples", row.error());
    if (!*row) break;
    Sample sample;
    sample.node = node;
    sample.arm = s->Text(0);
    sample.rep = static_cast<int>(s->Int(1));
    sample.value = s->Double(2);
    auto extra = store_json::DecodeNumbers(s->Text(3));
    if (!extra.ok()) return Fail("load samples of node " + std::to_string(node), extra.error());
    sample.extra = std::move(*extra);
    samples.push_back(std::move(sample));
  }
  return samples;
}

Result<std::optional<Profile>> SqliteStore::LoadProfile(NodeId node) {
  std::lock_guard lock(mu_);
  auto s = db_.Use(kSelectProfile);
  if (!s.ok()) return Fail("load profile", s.error());
  s->Bind(1, static_cast<int64_t>(node));
  auto row = s->Step();
  if (!row.ok()) return Fail("load profile", row.error());
  if (!*row) return std::optional<Profile>();
  auto profile = store_json::DecodeProfile(s->Text(0));
  if (!profile.ok()) return Fail("load profile of node " + std::to_string(node), profile.error());
  return std::optional<Profile>(std::move(*profile));
}

Result<std::vector<Event>> SqliteStore::LoadEvents(NodeId node, int64_t after_id, int limit) {
  std::lock_guard lock(mu_);
  auto s = db_.Use(node == kNoNode ? kSelectEventsAll : kSelectEventsOfNode);
  if (!s.ok()) return Fail("load events", s.error());
  // SQLite treats a negative LIMIT as no limit, which is what a negative `limit` means here.
  const int first = node == kNoNode ? 1 : 2;
  if (node != kNoNode) s->Bind(1, static_cast<int64_t>(node));
  s->Bind(first, after_id);
  s->Bind(first + 1, static_cast<int64_t>(limit));
  std::vector<Event> events;
  for (;;) {
    auto row = s->Step();
    if (!row.ok()) return Fail("load events", row.error());
    if (!*row) break;
    Event e;
    e.id = s->Int(0);
    e.node = s->IsNull(1) ? kNoNode : s->Int(1);
    e.kind = s->Text(2);
    e.message = s->Text(3);
    e.data = s->Text(4);
    e.t = s->Double(5);
    events.push_back(std::move(e));
  }
  return events;
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

// WIP (wip/agents): the store helper replaces these with the schema-v3 tables.
Result<std::vector<ActionSpec>> SqliteStore::LoadActions() {
  return std::vector<ActionSpec>{};
}
Result<std::vector<Mutation::Prompt>> SqliteStore::LoadPrompts(NodeId) {
  return std::vector<Mutation::Prompt>{};
}

}  // namespace arbor
