// SqliteStore's readers of meta, nodes, samples, profiles and events (the writers are in
// sqlite_store.cc, actions and prompts in sqlite_store_agents.cc).
#include <algorithm>
#include <cstdlib>
#include <utility>

#include "store/critic_json.h"
#include "store/meta_codec.h"
#include "store/sqlite_store.h"
#include "store/store_json.h"

namespace arbor {
namespace {

// Every statement is a distinct literal: sqlite::Db caches prepared statements by address.
constexpr const char* kSelectMeta = "SELECT key, value FROM meta";

constexpr const char* kSelectNodes = R"sql(
SELECT id, parent, action_id, value, category, layer, outcome, step, seq, git_commit,
       overlay, metric, gain, diagnosis, score, created_s, finished_s, cost_s, summary, critic,
       agent
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
  auto agent = store_json::DecodeAgent(s.Text(20));
  if (!agent.ok()) return MakeError("node " + std::to_string(n.id) + ": " + agent.error().message);
  n.agent = std::move(*agent);
  return n;
}

}  // namespace

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

}  // namespace arbor
