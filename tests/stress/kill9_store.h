// What a killed campaign left in its SQLite store, read read-only while no Arbor process runs,
// and the store-level checks of the kill -9 stress driver (tests/stress/kill9_main.cc).
//
// Everything is read straight from the file (SQLITE_OPEN_READONLY), not through `arbor`, so a
// check sees exactly what the next process will load and costs milliseconds per kill.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace arbor::stress {

struct NodeRow {
  int64_t id = 0;
  int64_t parent = 0;  // 0 for the root (NULL in the store)
  std::string action;
  std::string value;
  std::string outcome;
  std::string step;
  int64_t seq = 0;
  std::string commit;
  std::optional<double> metric;
  // "action" or "action[value]".
  std::string Key() const { return value.empty() ? action : action + "[" + value + "]"; }
};

// (node, arm, rep) -> (value, extra).
using SampleKey = std::tuple<int64_t, std::string, int64_t>;
using SampleMap = std::map<SampleKey, std::pair<double, std::string>>;

struct StoreSnapshot {
  bool exists = false;
  std::string error;      // could not open or read (a violation when exists)
  std::string integrity;  // PRAGMA integrity_check's rows, "ok" when sound
  std::vector<NodeRow> nodes;
  SampleMap samples;
  int64_t events = 0;
  std::string last_event;  // kind of the newest event, "" when none
  int64_t last_event_node = 0;
  std::string state;  // meta "state": running, finished, stopped...

  const NodeRow* Find(int64_t id) const;
  // The store's incumbent, as Tree::Incumbent computes it: from the root, repeatedly the kept
  // child with the highest seq. 0 without a root.
  int64_t Incumbent() const;
  size_t Finished() const;
};

StoreSnapshot ReadStore(const std::string& db_path);

bool IsFinishedOutcome(const std::string& outcome);

// Store checks after a kill; every problem is appended to `out` as one line.
//  - integrity_check is "ok";
//  - no half-written node: a known outcome, a finished node at step "done" (or the baseline or
//    a kept node at "profile", whose profile is pending), a node in flight not at "done", a kept
//    node with a commit and a metric, exactly one root (the baseline), every parent present;
//  - no duplicated node: no two nodes with the same parent, action and value;
//  - no sample of a missing node.
void CheckStore(const StoreSnapshot& s, std::vector<std::string>* out);

// Every sample of `before` is in `after` with the same value, and every node finished in
// `before` is finished in `after` with the same outcome, action, value, parent and metric.
void CheckPreserved(const StoreSnapshot& before, const StoreSnapshot& after,
                    std::vector<std::string>* out);

// (parent, action, value, outcome) per node id, one line each: what must equal the reference.
std::string TreeSignature(const StoreSnapshot& s);

}  // namespace arbor::stress
