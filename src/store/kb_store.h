// KbStore: the knowledge base (core/knowledge/kb.h) on one SQLite file shared by every campaign of
// a machine (default ~/.local/share/arbor/kb.db; docs/knowledge-base.md "Storage and sharing").
//
// Promises:
// - Several processes may use the same file at once: two campaigns recording while a third
//   lists. WAL mode, a 10 s busy timeout and short BEGIN IMMEDIATE write transactions (one per
//   Record/Import/Forget call) mean writers queue instead of failing with SQLITE_BUSY, and
//   readers never block writers.
// - Every write call is all-or-nothing: Record() and Import() insert their whole batch, with
//   its conflict detection, in one transaction, or nothing.
// - Entries are identified by `uid`; inserting a known uid is a no-op (Record is idempotent,
//   an import counts it as a duplicate). Ids are assigned here (the entry's `id` is ignored)
//   and never reused, even after Forget, so a campaign's "max id" snapshot stays meaningful.
// - `superseded_by` and `conflict` are owned by the store: incoming values are ignored and
//   recomputed against live entries of the same context (core/knowledge/kb.h Compare).
// - The schema is versioned (kb_meta 'schema_version'); a file written by a newer arbor, or
//   an SQLite file that is not a knowledge base, is refused with a message saying so.
// - kReadOnly never creates or modifies the file ("no knowledge base at PATH" when missing).
// - Thread-safe: calls are serialised by an internal mutex.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/knowledge/kb.h"
#include "core/model/ports.h"
#include "store/sqlite_db.h"
#include "store/sqlite_store.h"  // OpenMode
#include "util/result.h"

namespace arbor {

// Which entries `arbor kb list|forget` mean. Empty fields match everything.
struct KbFilter {
  std::string action;    // action_id
  std::string category;  //
  std::string campaign;  // campaign name or campaign_uid
  std::string outcome;   // kept | reverted | crashed
  int64_t limit = -1;    // List only; negative: no limit
  int64_t offset = 0;    // List only
  bool empty() const {
    return action.empty() && category.empty() && campaign.empty() && outcome.empty();
  }
};

struct KbImportResult {
  int64_t inserted = 0;
  int64_t duplicates = 0;  // uid already present (or repeated within the batch)
};

class KbStore : public KnowledgeBase {
 public:
  // kReadWrite creates the file, its parent directories and the schema when missing.
  static Result<std::unique_ptr<KbStore>> Open(const std::string& path, OpenMode mode);

  // KnowledgeBase.
  Result<int64_t> MaxId() override;
  Result<std::vector<KbEntry>> Load(const KbQuery& query) override;
  Status Record(const std::vector<KbEntry>& entries) override;

  // Entries matching `filter`, ordered by id.
  Result<std::vector<KbEntry>> List(const KbFilter& filter);
  Result<std::optional<KbEntry>> Get(int64_t id);
  // Each returns the number of entries deleted. Entries that a deleted entry superseded
  // become live again, and conflict notes naming a deleted entry are dropped.
  // Forget(filter) refuses an empty filter: forgetting everything is ForgetAll().
  Result<int64_t> Forget(const KbFilter& filter);
  Result<int64_t> ForgetIds(const std::vector<int64_t>& ids);
  Result<int64_t> ForgetAll();
  // Record() with counts, for `arbor kb import`; in the given order (exports are by id).
  Result<KbImportResult> Import(const std::vector<KbEntry>& entries);

  // SQLite's verdict on the file: "ok", or the problems it found, one per line.
  Result<std::string> IntegrityCheck();

  const std::string& path() const { return path_; }

 private:
  KbStore(std::string path, OpenMode mode, sqlite::Db db)
      : path_(std::move(path)), mode_(mode), db_(std::move(db)) {}

  using Bind = std::variant<int64_t, std::string>;
  // SELECT of whole entries; `where` may be empty; `tail` follows it (ORDER BY, LIMIT).
  Result<std::vector<KbEntry>> Select(const std::string& where, const std::vector<Bind>& binds,
                                      const std::string& tail);
  Result<KbImportResult> InsertLocked(const std::vector<KbEntry>& entries);
  Status DetectConflicts(const KbEntry& e);
  Result<int64_t> Delete(const char* what, const std::string& where,
                         const std::vector<Bind>& binds);
  Status RepairAfterDelete();
  Error Fail(const std::string& what, const Error& e) const;

  const std::string path_;
  const OpenMode mode_;
  std::mutex mu_;
  sqlite::Db db_;
};

}  // namespace arbor
