#include "store/kb_store.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <utility>

#include "store/kb_schema.h"
#include "util/strings.h"

namespace arbor {
namespace {

using kb_schema::InTransaction;
using kb_schema::ReadEntry;

constexpr const char* kSetSuperseded = "UPDATE entries SET superseded_by = ?2 WHERE id = ?1";
constexpr const char* kAddConflict =
    "UPDATE entries SET conflict = CASE WHEN conflict = '' THEN ?2 "
    "ELSE conflict || '; ' || ?2 END WHERE id = ?1";
constexpr const char* kSetConflict = "UPDATE entries SET conflict = ?2 WHERE id = ?1";
constexpr const char* kClearDangling =
    "UPDATE entries SET superseded_by = 0 WHERE superseded_by <> 0 "
    "AND superseded_by NOT IN (SELECT id FROM entries)";
constexpr const char* kConflicted = "SELECT id, conflict FROM entries WHERE conflict <> ''";
constexpr const char* kUidExists = "SELECT 1 FROM entries WHERE uid = ?1";
constexpr const char* kExists = "SELECT 1 FROM entries WHERE id = ?1";
constexpr const char* kMaxId = "SELECT coalesce(max(id), 0) FROM entries";

// SQLite stores NaN as NULL and JSON cannot carry infinities: refuse both at the door.
Status CheckEntry(const KbEntry& e) {
  if (e.uid.empty()) return MakeError("an entry without uid");
  const std::string where = "entry " + e.uid + ": ";
  if (e.action_id.empty()) return MakeError(where + "empty action_id");
  if (e.outcome.empty()) return MakeError(where + "empty outcome");
  for (auto [v, field] :
       {std::pair{e.gain, "gain"}, std::pair{e.ci_low, "ci_low"}, std::pair{e.ci_high, "ci_high"},
        std::pair{e.implied_speedup, "implied_speedup"},
        std::pair{std::optional(e.prior_speedup), "prior_speedup"},
        std::pair{std::optional(e.target_share), "target_share"},
        std::pair{std::optional(e.cost_s), "cost_s"},
        std::pair{std::optional(e.recorded_at), "recorded_at"}}) {
    if (v && !std::isfinite(*v)) return MakeError(where + field + " is not a finite number");
  }
  return {};
}

// "kept +31%" / "reverted -2.5%" / "crashed".
std::string Describe(const KbEntry& e) {
  std::string out = e.outcome;
  if (!e.gain) return out;
  const double pct = *e.gain * 100;
  char buf[32];
  std::snprintf(buf, sizeof buf, std::fabs(pct) >= 10 ? " %+.0f%%" : " %+.1f%%", pct);
  return out + buf;
}

std::string ConflictNote(const KbEntry& self, const KbEntry& other) {
  return "diverges from #" + std::to_string(other.id) + " (#" + std::to_string(other.id) + " " +
         Describe(other) + " vs #" + std::to_string(self.id) + " " + Describe(self) + ")";
}

// The id a conflict note names ("diverges from #12 ..."), 0 when it names none.
int64_t NoteTarget(const std::string& clause) {
  constexpr std::string_view kPrefix = "diverges from #";
  if (!StartsWith(clause, kPrefix)) return 0;
  int64_t id = 0;
  std::from_chars(clause.data() + kPrefix.size(), clause.data() + clause.size(), id);
  return id;
}

std::string FilterWhere(const KbFilter& f, std::vector<std::variant<int64_t, std::string>>* b) {
  std::vector<std::string> parts;
  for (const auto& [column, value] :
       {std::pair{"action_id", &f.action}, std::pair{"category", &f.category},
        std::pair{"outcome", &f.outcome}}) {
    if (value->empty()) continue;
    parts.push_back(std::string(column) + " = ?");
    b->emplace_back(*value);
  }
  if (!f.campaign.empty()) {
    parts.push_back("(campaign = ? OR campaign_uid = ?)");
    b->emplace_back(f.campaign);
    b->emplace_back(f.campaign);
  }
  return Join(parts, " AND ");
}
}  // namespace

Result<std::unique_ptr<KbStore>> KbStore::Open(const std::string& path, OpenMode mode) {
  const bool read_only = mode == OpenMode::kReadOnly;
  std::error_code ec;
  if (read_only && !std::filesystem::exists(path, ec)) {
    return MakeError("no knowledge base at " + path);
  }
  if (!read_only) {
    auto parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) return MakeError("cannot create " + parent.string() + ": " + ec.message());
  }
  ARBOR_TRY_ASSIGN(auto db,
                   sqlite::Db::Open(path, read_only ? sqlite::OpenFlags::kReadOnly
                                                    : sqlite::OpenFlags::kReadWriteCreate));
  Status s = kb_schema::Configure(db, read_only);
  if (s.ok()) {
    if (read_only) {
      auto version = kb_schema::ReadVersion(db, path);
      if (!version.ok()) {
        s = version.error();
      } else if (*version == 0) {
        s = MakeError("no knowledge base at " + path + " (the file is empty)");
      }
    } else {
      s = kb_schema::Migrate(db, path);
    }
  }
  if (!s.ok()) {
    // Messages that already name the file stand alone.
    if (s.error().message.find(path) != std::string::npos) return s.error();
    return MakeError("knowledge base " + path + ": " + s.error().message);
  }
  return std::unique_ptr<KbStore>(new KbStore(path, mode, std::move(db)));
}

Error KbStore::Fail(const std::string& what, const Error& e) const {
  return MakeError("knowledge base " + path_ + ": " + what + ": " + e.message);
}

Result<int64_t> KbStore::MaxId() {
  std::lock_guard lock(mu_);
  auto text = db_.QueryText(kMaxId);
  if (!text.ok()) return Fail("max id", text.error());
  return static_cast<int64_t>(std::strtoll(text->c_str(), nullptr, 10));
}

Result<std::vector<KbEntry>> KbStore::Select(const std::string& where,
                                             const std::vector<Bind>& binds,
                                             const std::string& tail) {
  std::string sql = kb_schema::kSelectAll;
  if (!where.empty()) sql += " WHERE " + where;
  sql += " " + tail;
  // Ad-hoc SQL (the filters vary), so not Db::Use's cache of literals.
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_.raw(), sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    sqlite3_finalize(raw);
    return MakeError(db_.LastError() + " (preparing: " + sql + ")");
  }
  sqlite::StmtPtr owned(raw);
  sqlite::ScopedStmt s(db_.raw(), raw);
  for (size_t i = 0; i < binds.size(); ++i) {
    std::visit([&](const auto& v) { s.Bind(static_cast<int>(i + 1), v); }, binds[i]);
  }
  std::vector<KbEntry> out;
  for (;;) {
    ARBOR_TRY_ASSIGN(auto row, s.Step());
    if (!row) break;
    ARBOR_TRY_ASSIGN(auto e, ReadEntry(s));
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::vector<KbEntry>> KbStore::Load(const KbQuery& query) {
  std::vector<std::string> parts;
  std::vector<Bind> binds;
  std::vector<std::string> match;
  for (const auto& [column, values] :
       {std::pair{"action_id", &query.action_ids}, std::pair{"category", &query.categories}}) {
    if (values->empty()) continue;
    std::string in = std::string(column) + " IN (";
    for (size_t i = 0; i < values->size(); ++i) {
      in += i == 0 ? "?" : ", ?";
      binds.emplace_back((*values)[i]);
    }
    match.push_back(in + ")");
  }
  if (!match.empty()) parts.push_back("(" + Join(match, " OR ") + ")");
  if (query.max_id > 0) {
    parts.push_back("id <= ?");
    binds.emplace_back(query.max_id);
  }
  if (!query.exclude_campaign_uid.empty()) {
    parts.push_back("campaign_uid <> ?");
    binds.emplace_back(query.exclude_campaign_uid);
  }
  std::lock_guard lock(mu_);
  auto r = Select(Join(parts, " AND "), binds, "ORDER BY id");
  if (!r.ok()) return Fail("load", r.error());
  // Number the distinct (workload, hardware) pairs: priors then compare signatures once per
  // pair (core/knowledge/kb.h KbEntry::signature).
  std::unordered_map<std::string, int> signatures;
  for (KbEntry& e : *r) {
    std::string key = EncodeWorkload(e.workload) + '\n' + e.hardware.Encode();
    e.signature = signatures.try_emplace(std::move(key), signatures.size() + 1).first->second;
  }
  return r;
}

Result<std::vector<KbEntry>> KbStore::List(const KbFilter& filter) {
  std::vector<Bind> binds;
  std::string where = FilterWhere(filter, &binds);
  binds.emplace_back(filter.limit < 0 ? int64_t{-1} : filter.limit);
  binds.emplace_back(std::max<int64_t>(filter.offset, 0));
  std::lock_guard lock(mu_);
  auto r = Select(where, binds, "ORDER BY id LIMIT ? OFFSET ?");
  if (!r.ok()) return Fail("list", r.error());
  return r;
}

Result<std::optional<KbEntry>> KbStore::Get(int64_t id) {
  std::lock_guard lock(mu_);
  auto r = Select("id = ?", {id}, "");
  if (!r.ok()) return Fail("get #" + std::to_string(id), r.error());
  if (r->empty()) return std::optional<KbEntry>();
  return std::optional<KbEntry>(std::move(r->front()));
}

Status KbStore::Record(const std::vector<KbEntry>& entries) {
  ARBOR_TRY(Import(entries));
  return {};
}

Result<KbImportResult> KbStore::Import(const std::vector<KbEntry>& entries) {
  for (const KbEntry& e : entries) ARBOR_TRY(CheckEntry(e));
  std::lock_guard lock(mu_);
  if (mode_ == OpenMode::kReadOnly) return MakeError("knowledge base " + path_ + " is read-only");
  auto r = InTransaction(db_, [&] { return InsertLocked(entries); });
  if (!r.ok()) return Fail("record", r.error());
  return r;
}

Result<KbImportResult> KbStore::InsertLocked(const std::vector<KbEntry>& entries) {
  KbImportResult result;
  for (const KbEntry& in : entries) {
    // Looked up rather than INSERT OR IGNORE, which would burn an AUTOINCREMENT id per
    // duplicate and leave gaps in the ids users type.
    ARBOR_TRY_ASSIGN(auto known, db_.Use(kUidExists));
    ARBOR_TRY_ASSIGN(auto row, known.Bind(1, in.uid).Step());
    if (row) {
      ++result.duplicates;
      continue;
    }
    ARBOR_TRY_ASSIGN(auto s, db_.Use(kb_schema::kInsert));
    kb_schema::BindEntry(s, in);
    if (Status r = s.Run(); !r.ok()) return MakeError("entry " + in.uid + ": " + r.error().message);
    ++result.inserted;
    // Compared as it reads back (sorted workload and ISA, cleaned text), like its peers.
    KbEntry e = in;
    e.id = sqlite3_last_insert_rowid(db_.raw());
    e.workload = ParseWorkload(EncodeWorkload(in.workload));
    e.hardware = HardwareSignature::Decode(in.hardware.Encode()).value_or(in.hardware);
    e.superseded_by = 0;
    e.conflict.clear();
    ARBOR_TRY(DetectConflicts(e));
  }
  return result;
}

// The rules are core's (Compare); this applies them to the live entries of e's context.
Status KbStore::DetectConflicts(const KbEntry& e) {
  std::vector<KbEntry> others;
  {
    ARBOR_TRY_ASSIGN(auto s, db_.Use(kb_schema::kSameContext));
    s.Bind(1, e.action_id).Bind(2, e.value).Bind(3, e.content_hash);
    s.Bind(4, EncodeWorkload(e.workload)).Bind(5, e.hardware.Encode()).Bind(6, e.path_hash);
    s.Bind(7, e.id);
    for (;;) {
      ARBOR_TRY_ASSIGN(auto row, s.Step());
      if (!row) break;
      ARBOR_TRY_ASSIGN(auto other, ReadEntry(s));
      if (SameContext(e, other)) others.push_back(std::move(other));
    }
  }
  auto set_superseded = [&](int64_t id, int64_t by) -> Status {
    ARBOR_TRY_ASSIGN(auto u, db_.Use(kSetSuperseded));
    return u.Bind(1, id).Bind(2, by).Run();
  };
  // Replaced on arrival: a superseded entry takes no part in conflicts.
  for (const KbEntry& o : others) {
    if (Compare(e, o) == KbRelation::kSupersededBy) return set_superseded(e.id, o.id);
  }
  for (const KbEntry& o : others) {
    const KbRelation rel = Compare(e, o);
    if (rel == KbRelation::kSupersedes) ARBOR_TRY(set_superseded(o.id, e.id));
    if (rel != KbRelation::kConflict) continue;
    for (const auto& [self, other] : {std::pair{&e, &o}, std::pair{&o, &e}}) {
      ARBOR_TRY_ASSIGN(auto u, db_.Use(kAddConflict));
      ARBOR_TRY(u.Bind(1, self->id).Bind(2, ConflictNote(*self, *other)).Run());
    }
  }
  return {};
}

Result<int64_t> KbStore::Forget(const KbFilter& filter) {
  if (filter.empty()) return MakeError("forget: an empty filter (use ForgetAll)");
  std::vector<Bind> binds;
  std::string where = FilterWhere(filter, &binds);
  return Delete("forget", where, binds);
}

Result<int64_t> KbStore::ForgetIds(const std::vector<int64_t>& ids) {
  if (ids.empty()) return int64_t{0};
  std::vector<Bind> binds(ids.begin(), ids.end());
  std::vector<std::string> marks(ids.size(), "?");
  return Delete("forget", "id IN (" + Join(marks, ", ") + ")", binds);
}

Result<int64_t> KbStore::ForgetAll() { return Delete("forget all", "1", {}); }

Result<int64_t> KbStore::Delete(const char* what, const std::string& where,
                                const std::vector<Bind>& binds) {
  std::lock_guard lock(mu_);
  if (mode_ == OpenMode::kReadOnly) return MakeError("knowledge base " + path_ + " is read-only");
  auto r = InTransaction(db_, [&]() -> Result<int64_t> {
    const std::string sql = "DELETE FROM entries WHERE " + where;
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db_.raw(), sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
      sqlite3_finalize(raw);
      return MakeError(db_.LastError());
    }
    sqlite::StmtPtr owned(raw);
    int64_t deleted = 0;
    {
      sqlite::ScopedStmt s(db_.raw(), raw);
      for (size_t i = 0; i < binds.size(); ++i) {
        std::visit([&](const auto& v) { s.Bind(static_cast<int>(i + 1), v); }, binds[i]);
      }
      ARBOR_TRY(s.Run());
      deleted = sqlite3_changes(db_.raw());
    }
    ARBOR_TRY(RepairAfterDelete());
    return deleted;
  });
  if (!r.ok()) return Fail(what, r.error());
  return r;
}

// Superseded entries whose replacement is gone become live; notes naming it are dropped.
Status KbStore::RepairAfterDelete() {
  ARBOR_TRY(db_.Exec(kClearDangling));
  std::vector<std::pair<int64_t, std::string>> conflicted;
  {
    ARBOR_TRY_ASSIGN(auto s, db_.Use(kConflicted));
    for (;;) {
      ARBOR_TRY_ASSIGN(auto row, s.Step());
      if (!row) break;
      conflicted.emplace_back(s.Int(0), std::string(s.Text(1)));
    }
  }
  for (const auto& [id, text] : conflicted) {
    std::vector<std::string> kept;
    for (const std::string& clause : Split(text, ';')) {
      std::string c = Trim(clause);
      if (const int64_t target = NoteTarget(c); target != 0) {
        ARBOR_TRY_ASSIGN(auto s, db_.Use(kExists));
        ARBOR_TRY_ASSIGN(auto row, s.Bind(1, target).Step());
        if (!row) continue;
      }
      kept.push_back(c);
    }
    std::string repaired = Join(kept, "; ");
    if (repaired == text) continue;
    ARBOR_TRY_ASSIGN(auto u, db_.Use(kSetConflict));
    ARBOR_TRY(u.Bind(1, id).Bind(2, repaired).Run());
  }
  return {};
}

Result<std::string> KbStore::IntegrityCheck() {
  std::lock_guard lock(mu_);
  auto r = db_.IntegrityCheck();
  if (!r.ok()) return Fail("integrity check", r.error());
  return r;
}

}  // namespace arbor
