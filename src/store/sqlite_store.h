// SqliteStore: the campaign's durable state in one SQLite file (<state dir>/arbor.db).
//
// Promises (see docs/store-schema.md for the tables):
// - Apply() is atomic: every row of a Mutation is written in one BEGIN IMMEDIATE transaction,
//   or none is, and the Error carries SQLite's message. Once Apply() returns OK the mutation
//   survives the process being killed (SIGKILL) at any later moment: WAL mode with
//   synchronous=NORMAL fsyncs the log at checkpoints, not at each commit, so a power loss or
//   OS crash may lose the last few commits (never consistency), while a process crash loses
//   nothing because committed frames are already in the OS's page cache.
// - Several processes may open the same file: one writer (the campaign) and any number of
//   readers (status, tree, show, a dashboard) that see committed state without blocking it.
// - kReadOnly never creates or modifies the file; Apply() and Checkpoint() then fail.
// - Thread-safe: calls are serialised by an internal mutex.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/model/ports.h"
#include "store/sqlite_db.h"
#include "util/result.h"

namespace arbor {

enum class OpenMode { kReadWrite, kReadOnly };

class SqliteStore : public Store {
 public:
  // kReadWrite creates the file when missing and migrates it to the current schema.
  // kReadOnly requires an existing, up-to-date store ("no campaign state at PATH" otherwise).
  // Both refuse a store written by a newer schema version.
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path, OpenMode mode);

  Status Apply(const Mutation& m) override;
  Result<std::optional<CampaignMeta>> LoadMeta() override;
  Result<std::vector<Node>> LoadNodes() override;
  Result<std::vector<Sample>> LoadSamples(NodeId node) override;
  Result<std::optional<Profile>> LoadProfile(NodeId node) override;
  // A negative `limit` means no limit.
  Result<std::vector<Event>> LoadEvents(NodeId node, int64_t after_id, int limit) override;
  Result<std::vector<ActionSpec>> LoadActions() override;
  Result<std::vector<Mutation::Prompt>> LoadPrompts(NodeId node) override;

  // SQLite's verdict on the file: "ok", or the problems it found, one per line.
  Result<std::string> IntegrityCheck();
  // Copies the WAL into the database file and truncates it when no reader is in the way
  // (a reader holding an old snapshot makes it a partial checkpoint, not an error).
  Status Checkpoint();

  const std::string& path() const { return path_; }
  OpenMode mode() const { return mode_; }

 private:
  SqliteStore(std::string path, OpenMode mode, sqlite::Db db)
      : path_(std::move(path)), mode_(mode), db_(std::move(db)) {}

  Status ApplyLocked(const Mutation& m);
  Status WriteNode(const Node& n);
  Status WriteSample(const Sample& s);
  Status WriteProfile(NodeId node, const Profile& p);
  Status WriteEvent(const Event& e);
  Status WriteMeta(const CampaignMeta& meta);
  Status WriteAction(const ActionSpec& a);
  Status WritePrompt(const Mutation::Prompt& p);
  Error Fail(const std::string& what, const Error& e) const;

  const std::string path_;
  const OpenMode mode_;
  std::mutex mu_;
  sqlite::Db db_;
};

}  // namespace arbor
