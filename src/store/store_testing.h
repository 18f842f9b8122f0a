// Helpers for the store's tests only (header-only so that no test code lands in arbor_store):
// a scratch directory per test and rows with every field set.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <limits>
#include <string>

#include "core/model/model.h"

namespace arbor::store_testing {

// Runs `sql` on the file with a separate raw connection (to tamper with or inspect it).
inline void RawExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << err;
  sqlite3_free(err);
  sqlite3_close(db);
}

// A fresh directory under testing::TempDir(), removed with everything in it at scope exit.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::path(testing::TempDir()) / "arbor-store-XXXXXX").string();
    const char* dir = mkdtemp(tmpl.data());
    if (dir == nullptr) ADD_FAILURE() << "mkdtemp failed for " << tmpl;
    dir_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string File(const std::string& name) const { return (dir_ / name).string(); }

 private:
  std::filesystem::path dir_;
};

inline Node RootNode() {
  Node n;
  n.id = kRootId;
  n.action_id = "baseline";
  n.outcome = Outcome::kBaseline;
  n.step = Step::kDone;
  n.metric = 100.0;
  return n;
}

// Every field distinct from its default, including awkward text and a non-finite score term.
inline Node FullNode(NodeId id, NodeId parent) {
  Node n;
  n.id = id;
  n.parent = parent;
  n.action_id = "kernel.gemm-tiled";
  n.value = "32";
  n.category = "gemm";
  n.layer = "kernel";
  n.outcome = Outcome::kKept;
  n.step = Step::kDecide;
  n.seq = 7;
  n.commit = "0123456789abcdef0123456789abcdef01234567";
  n.overlay = {{"CXXFLAGS", "-O3 -march=native"}, {"QUOTE", "a \"b\" 'c' \\ \n"}, {"UTF", "é✓"}};
  n.metric = 123.456789012345;
  n.gain = -0.0123;
  n.diagnosis = "gate: p=0.01, effect +3.2%";
  n.score = ScoreTerms{.g = 0.41,
                       .c = 40,
                       .c_norm = 0.5,
                       .r_acc = 0.01,
                       .r_crash = 0.05,
                       .m_gap = 0.25,
                       .bonus = std::numeric_limits<double>::infinity(),
                       .exploit = 0.1 / 3,
                       .h = -1e-300};
  n.created_s = 1.5;
  n.finished_s = 99.25;
  n.cost_s = 97.75;
  n.summary = "tiled the GEMM loop";
  return n;
}

inline void ExpectSameNode(const Node& want, const Node& got) {
  EXPECT_EQ(want.id, got.id);
  EXPECT_EQ(want.parent, got.parent);
  EXPECT_EQ(want.action_id, got.action_id);
  EXPECT_EQ(want.value, got.value);
  EXPECT_EQ(want.category, got.category);
  EXPECT_EQ(want.layer, got.layer);
  EXPECT_EQ(want.outcome, got.outcome);
  EXPECT_EQ(want.step, got.step);
  EXPECT_EQ(want.seq, got.seq);
  EXPECT_EQ(want.commit, got.commit);
  EXPECT_EQ(want.overlay, got.overlay);
  EXPECT_EQ(want.metric, got.metric);
  EXPECT_EQ(want.gain, got.gain);
  EXPECT_EQ(want.diagnosis, got.diagnosis);
  EXPECT_EQ(want.score.g, got.score.g);
  EXPECT_EQ(want.score.c, got.score.c);
  EXPECT_EQ(want.score.c_norm, got.score.c_norm);
  EXPECT_EQ(want.score.r_acc, got.score.r_acc);
  EXPECT_EQ(want.score.r_crash, got.score.r_crash);
  EXPECT_EQ(want.score.m_gap, got.score.m_gap);
  EXPECT_EQ(want.score.bonus, got.score.bonus);
  EXPECT_EQ(want.score.exploit, got.score.exploit);
  EXPECT_EQ(want.score.h, got.score.h);
  EXPECT_EQ(want.created_s, got.created_s);
  EXPECT_EQ(want.finished_s, got.finished_s);
  EXPECT_EQ(want.cost_s, got.cost_s);
  EXPECT_EQ(want.summary, got.summary);
}

}  // namespace arbor::store_testing
