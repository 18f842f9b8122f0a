#include "kill9_store.h"

#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <set>

namespace arbor::stress {
namespace {

std::string Text(sqlite3_stmt* st, int col) {
  const unsigned char* t = sqlite3_column_text(st, col);
  return t != nullptr ? reinterpret_cast<const char*>(t) : "";
}

// Runs `sql`, calling `row` per result row; returns "" or the error.
std::string Query(sqlite3* db, const char* sql, const std::function<void(sqlite3_stmt*)>& row) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) {
    return std::string(sql) + ": " + sqlite3_errmsg(db);
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) row(st);
  std::string err = rc == SQLITE_DONE ? "" : std::string(sql) + ": " + sqlite3_errmsg(db);
  sqlite3_finalize(st);
  return err;
}

std::string Fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

bool IsFinishedOutcome(const std::string& outcome) {
  return outcome != "running" && outcome != "pending" && !outcome.empty();
}

const NodeRow* StoreSnapshot::Find(int64_t id) const {
  for (const auto& n : nodes) {
    if (n.id == id) return &n;
  }
  return nullptr;
}

int64_t StoreSnapshot::Incumbent() const {
  const NodeRow* current = nullptr;
  for (const auto& n : nodes) {
    if (n.parent == 0) current = &n;
  }
  if (current == nullptr) return 0;
  for (size_t hops = 0; hops <= nodes.size(); ++hops) {
    const NodeRow* best = nullptr;
    for (const auto& n : nodes) {
      if (n.parent != current->id || n.outcome != "kept") continue;
      if (best == nullptr || n.seq > best->seq) best = &n;
    }
    if (best == nullptr) break;
    current = best;
  }
  return current->id;
}

size_t StoreSnapshot::Finished() const {
  size_t n = 0;
  for (const auto& node : nodes) n += IsFinishedOutcome(node.outcome) ? 1 : 0;
  return n;
}

StoreSnapshot ReadStore(const std::string& db_path) {
  StoreSnapshot s;
  s.exists = std::filesystem::exists(db_path);
  if (!s.exists) return s;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    s.error = "open " + db_path + ": " + (db != nullptr ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close(db);
    return s;
  }
  sqlite3_busy_timeout(db, 5000);
  std::string err = Query(db, "PRAGMA integrity_check", [&](sqlite3_stmt* st) {
    s.integrity += (s.integrity.empty() ? "" : "; ") + Text(st, 0);
  });
  // A store killed before its schema was written has no tables yet: nothing to read.
  bool has_nodes = false;
  if (err.empty()) {
    err = Query(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'nodes'",
                [&](sqlite3_stmt*) { has_nodes = true; });
  }
  if (err.empty() && has_nodes) {
    err = Query(db,
                "SELECT id, COALESCE(parent, 0), action_id, value, outcome, step, seq, "
                "git_commit, metric FROM nodes ORDER BY id",
                [&](sqlite3_stmt* st) {
                  NodeRow n;
                  n.id = sqlite3_column_int64(st, 0);
                  n.parent = sqlite3_column_int64(st, 1);
                  n.action = Text(st, 2);
                  n.value = Text(st, 3);
                  n.outcome = Text(st, 4);
                  n.step = Text(st, 5);
                  n.seq = sqlite3_column_int64(st, 6);
                  n.commit = Text(st, 7);
                  if (sqlite3_column_type(st, 8) != SQLITE_NULL) {
                    n.metric = sqlite3_column_double(st, 8);
                  }
                  s.nodes.push_back(std::move(n));
                });
  }
  if (err.empty() && has_nodes) {
    err = Query(db, "SELECT node_id, arm, rep, value, extra FROM samples", [&](sqlite3_stmt* st) {
      s.samples[{sqlite3_column_int64(st, 0), Text(st, 1), sqlite3_column_int64(st, 2)}] = {
          sqlite3_column_double(st, 3), Text(st, 4)};
    });
  }
  if (err.empty() && has_nodes) {
    err = Query(db, "SELECT COUNT(*) FROM events",
                [&](sqlite3_stmt* st) { s.events = sqlite3_column_int64(st, 0); });
  }
  if (err.empty() && has_nodes) {
    err = Query(db, "SELECT kind, COALESCE(node_id, 0) FROM events ORDER BY id DESC LIMIT 1",
                [&](sqlite3_stmt* st) {
                  s.last_event = Text(st, 0);
                  s.last_event_node = sqlite3_column_int64(st, 1);
                });
  }
  if (err.empty() && has_nodes) {
    err = Query(db, "SELECT value FROM meta WHERE key = 'campaign.state'",
                [&](sqlite3_stmt* st) { s.state = Text(st, 0); });
  }
  s.error = err;
  sqlite3_close(db);
  return s;
}

void CheckStore(const StoreSnapshot& s, std::vector<std::string>* out) {
  if (!s.exists) return;  // killed before the store was created
  if (!s.error.empty()) out->push_back("store unreadable: " + s.error);
  if (s.integrity != "ok") out->push_back("PRAGMA integrity_check: " + s.integrity);
  static const std::set<std::string> kOutcomes = {"baseline", "kept",    "reverted", "crashed",
                                                  "pruned",   "skipped", "running",  "pending"};
  std::set<int64_t> ids;
  for (const auto& n : s.nodes) ids.insert(n.id);
  std::set<std::tuple<int64_t, std::string, std::string>> siblings;
  int roots = 0;
  for (const auto& n : s.nodes) {
    std::string who = "node #" + std::to_string(n.id) + " (" + n.Key() + ", " + n.outcome +
                      " at step " + n.step + ")";
    if (kOutcomes.count(n.outcome) == 0) out->push_back(who + ": unknown outcome");
    bool finished = IsFinishedOutcome(n.outcome);
    // The baseline and a kept node are decided before they are (re-)profiled: they stay at
    // "profile" until the profile is stored (Orchestrator::StepDecide).
    bool profiled_later = (n.outcome == "kept" || n.outcome == "baseline") && n.step == "profile";
    bool step_ok = finished ? n.step == "done" || profiled_later : n.step != "done";
    if (!step_ok) out->push_back(who + ": half-written (outcome and step disagree)");
    if (n.outcome == "kept" && (n.commit.empty() || !n.metric)) {
      out->push_back(who + ": kept without a commit or a metric");
    }
    if (n.parent == 0) {
      ++roots;
      if (n.id != 1 || n.action != "baseline") out->push_back(who + ": a second root");
      continue;
    }
    if (ids.count(n.parent) == 0) out->push_back(who + ": parent missing");
    if (!siblings.insert({n.parent, n.action, n.value}).second) {
      out->push_back(who + ": duplicated (same parent, action and value as another node)");
    }
  }
  if (!s.nodes.empty() && roots != 1) {
    out->push_back(std::to_string(roots) + " root nodes");
  }
  for (const auto& [key, v] : s.samples) {
    if (ids.count(std::get<0>(key)) == 0) {
      out->push_back("sample of missing node #" + std::to_string(std::get<0>(key)));
    }
  }
}

void CheckPreserved(const StoreSnapshot& before, const StoreSnapshot& after,
                    std::vector<std::string>* out) {
  int lost = 0;
  for (const auto& [key, v] : before.samples) {
    auto it = after.samples.find(key);
    std::string where = "sample node #" + std::to_string(std::get<0>(key)) + " arm " +
                        std::get<1>(key) + " rep " + std::to_string(std::get<2>(key));
    if (it == after.samples.end()) {
      if (++lost <= 5) out->push_back(where + " (" + Fmt(v.first) + ") was lost");
    } else if (it->second != v) {
      out->push_back(where + " changed from " + Fmt(v.first) + " to " + Fmt(it->second.first));
    }
  }
  if (lost > 5) out->push_back(std::to_string(lost - 5) + " more samples lost");
  for (const auto& n : before.nodes) {
    if (!IsFinishedOutcome(n.outcome)) continue;
    const NodeRow* now = after.Find(n.id);
    std::string who =
        "finished node #" + std::to_string(n.id) + " (" + n.Key() + ", " + n.outcome + ")";
    if (now == nullptr) {
      out->push_back(who + " disappeared");
      continue;
    }
    if (now->outcome != n.outcome || now->Key() != n.Key() || now->parent != n.parent) {
      out->push_back(who + " became #" + std::to_string(now->parent) + " " + now->Key() + " " +
                     now->outcome);
    }
    if (now->metric != n.metric) {
      out->push_back(who + ": metric changed from " + (n.metric ? Fmt(*n.metric) : "null") +
                     " to " + (now->metric ? Fmt(*now->metric) : "null"));
    }
  }
}

std::string TreeSignature(const StoreSnapshot& s) {
  std::string out;
  for (const auto& n : s.nodes) {
    out += "#" + std::to_string(n.id) + " <- #" + std::to_string(n.parent) + " " + n.Key() + ": " +
           n.outcome + "\n";
  }
  return out;
}

}  // namespace arbor::stress
