// SqliteStore's actions and prompts tables (schema v3): what Domain Specialists proposed and
// what they were given. Both are written inside Apply's transaction (ApplyLocked), so they
// commit or roll back with the nodes and events of the same Mutation.
#include <utility>

#include "store/sqlite_store.h"
#include "store/store_json.h"

namespace arbor {
namespace {

// Every statement is a distinct literal: sqlite::Db caches prepared statements by address.
// A new id takes the next ord; an upsert replaces the spec and keeps the ord, so actions load in
// the order they were first recorded.
constexpr const char* kUpsertAction = R"sql(
INSERT INTO actions(id, ord, spec)
VALUES(?1, (SELECT coalesce(max(ord), 0) + 1 FROM actions), ?2)
ON CONFLICT(id) DO UPDATE SET spec = excluded.spec)sql";

constexpr const char* kUpsertPrompt = R"sql(
INSERT INTO prompts(node_id, kind, text) VALUES(?1, ?2, ?3)
ON CONFLICT(node_id, kind) DO UPDATE SET text = excluded.text)sql";

constexpr const char* kSelectActions = "SELECT id, spec FROM actions ORDER BY ord";

constexpr const char* kSelectPrompts =
    "SELECT kind, text FROM prompts WHERE node_id = ?1 ORDER BY kind";

}  // namespace

Status SqliteStore::WriteAction(const ActionSpec& a) {
  // The id is the row's key; an empty one is a bug upstream, not a row to keep.
  if (a.id.empty()) return MakeError("action with an empty id");
  ARBOR_TRY_ASSIGN(auto s, db_.Use(kUpsertAction));
  s.Bind(1, a.id).Bind(2, store_json::EncodeAction(a));
  Status r = s.Run();
  if (!r.ok()) return MakeError("action '" + a.id + "': " + r.error().message);
  return {};
}

Status SqliteStore::WritePrompt(const Mutation::Prompt& p) {
  const std::string where = "prompt '" + p.kind + "' of node " + std::to_string(p.node);
  if (p.kind.empty()) return MakeError(where + ": empty kind");
  ARBOR_TRY_ASSIGN(auto s, db_.Use(kUpsertPrompt));
  // kNoNode is bound as 0, not NULL: no node 0 exists, so COMMIT fails on the foreign key.
  s.Bind(1, static_cast<int64_t>(p.node)).Bind(2, p.kind).Bind(3, p.text);
  Status r = s.Run();
  if (!r.ok()) return MakeError(where + ": " + r.error().message);
  return {};
}

Result<std::vector<ActionSpec>> SqliteStore::LoadActions() {
  std::lock_guard lock(mu_);
  auto s = db_.Use(kSelectActions);
  if (!s.ok()) return Fail("load actions", s.error());
  std::vector<ActionSpec> actions;
  for (;;) {
    auto row = s->Step();
    if (!row.ok()) return Fail("load actions", row.error());
    if (!*row) break;
    auto action = store_json::DecodeAction(s->Text(1));
    if (!action.ok()) {
      return Fail("load action '" + std::string(s->Text(0)) + "'", action.error());
    }
    actions.push_back(std::move(*action));
  }
  return actions;
}

Result<std::vector<Mutation::Prompt>> SqliteStore::LoadPrompts(NodeId node) {
  std::lock_guard lock(mu_);
  auto s = db_.Use(kSelectPrompts);
  if (!s.ok()) return Fail("load prompts", s.error());
  s->Bind(1, static_cast<int64_t>(node));
  std::vector<Mutation::Prompt> prompts;
  for (;;) {
    auto row = s->Step();
    if (!row.ok()) return Fail("load prompts", row.error());
    if (!*row) break;
    prompts.push_back({node, std::string(s->Text(0)), std::string(s->Text(1))});
  }
  return prompts;
}

}  // namespace arbor
