#include "store/kb_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "store/kb_json.h"
#include "store/store_testing.h"

namespace arbor {
namespace {

using store_testing::RawExec;

using store_testing::ScratchDir;

KbEntry Entry(const std::string& uid, const std::string& outcome, std::optional<double> gain,
              bool controlled = false) {
  KbEntry e;
  e.uid = uid;
  e.campaign = "toy";
  e.campaign_uid = "toy-1";
  e.action_id = "compiler.O3";
  e.category = "compiler";
  e.layer = "compiler";
  e.content_hash = "c0ffee";
  e.workload = {"bench=3fa2", "campaign=toy"};
  e.hardware.cpu_model = "Test CPU";
  e.hardware.cores = 8;
  e.hardware.isa = {"avx2", "fma"};
  e.hardware.mem_gib = 32;
  e.path_hash = "p1";
  e.outcome = outcome;
  e.gain = gain;
  e.controlled = controlled;
  e.recorded_at = 1700000000;
  return e;
}

// Every field distinct from its default, with awkward text.
KbEntry FullEntry() {
  KbEntry e = Entry("run-7/12", "reverted", -0.031, true);
  e.node = 12;
  e.value = "32";
  e.hardware.gpu = "NVIDIA H100";
  e.accuracy_failure = true;
  e.ci_low = 0.95;
  e.ci_high = 0.99;
  e.prior_speedup = 1.7;
  e.target_share = 0.41;
  e.implied_speedup = 0.93;
  e.cost_s = 37.5;
  e.rca = "accuracy";
  e.lesson = "It's \"faster\"; but\nwrong — ünïcode";
  return e;
}

std::unique_ptr<KbStore> OpenOrDie(const std::string& path, OpenMode mode = OpenMode::kReadWrite) {
  auto kb = KbStore::Open(path, mode);
  EXPECT_TRUE(kb.ok()) << kb.error().message;
  return kb.ok() ? std::move(kb.value()) : nullptr;
}

class KbStoreTest : public testing::Test {
 protected:
  void SetUp() override {
    kb_ = OpenOrDie(path_);
    ASSERT_NE(kb_, nullptr);
  }
  KbEntry GetOrDie(int64_t id) {
    auto e = kb_->Get(id);
    EXPECT_TRUE(e.ok() && e->has_value()) << "entry #" << id;
    return e.ok() && e->has_value() ? **e : KbEntry{};
  }
  std::vector<KbEntry> ListOrDie(const KbFilter& f = {}) {
    auto r = kb_->List(f);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : std::vector<KbEntry>{};
  }
  std::vector<int64_t> LoadIds(const KbQuery& q) {
    auto r = kb_->Load(q);
    EXPECT_TRUE(r.ok()) << r.error().message;
    std::vector<int64_t> ids;
    if (r.ok()) {
      for (const KbEntry& e : *r) ids.push_back(e.id);
    }
    return ids;
  }

  ScratchDir dir_;
  std::string path_ = dir_.File("share/arbor/kb.db");  // parent directories are created
  std::unique_ptr<KbStore> kb_;
};

TEST_F(KbStoreTest, RoundTripsEveryField) {
  KbEntry in = FullEntry();
  in.id = 99;  // assigned by the store
  in.superseded_by = 5;
  in.conflict = "ignored";  // owned by the store
  ASSERT_TRUE(kb_->Record({in}).ok());
  KbEntry out = GetOrDie(1);
  KbEntry expected = in;
  expected.id = 1;
  expected.superseded_by = 0;
  expected.conflict = "";
  EXPECT_EQ(KbEntryToJson(out), KbEntryToJson(expected));
  EXPECT_EQ(*kb_->MaxId(), 1);
  EXPECT_FALSE(kb_->Get(2)->has_value());
}

TEST_F(KbStoreTest, RecordIsIdempotentAndImportCountsDuplicates) {
  ASSERT_TRUE(kb_->Record({Entry("a/1", "kept", 0.3), Entry("a/2", "kept", 0.31)}).ok());
  ASSERT_TRUE(kb_->Record({Entry("a/1", "kept", 0.3)}).ok());
  EXPECT_EQ(ListOrDie().size(), 2u);
  auto r = kb_->Import(
      {Entry("a/2", "kept", 0.3), Entry("a/3", "kept", 0.3), Entry("a/3", "kept", 0.3)});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->inserted, 1);
  EXPECT_EQ(r->duplicates, 2);
  EXPECT_EQ(*kb_->MaxId(), 3);
}

TEST_F(KbStoreTest, BatchIsAllOrNothing) {
  KbEntry bad = Entry("a/2", "kept", std::nan(""));
  auto r = kb_->Import({Entry("a/1", "kept", 0.3), bad});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("gain"), std::string::npos) << r.error().message;
  EXPECT_TRUE(ListOrDie().empty());
  KbEntry no_action = Entry("a/3", "kept", 0.3);
  no_action.action_id = "";
  EXPECT_FALSE(kb_->Record({Entry("a/1", "kept", 0.3), no_action}).ok());
  EXPECT_TRUE(ListOrDie().empty());
}

TEST_F(KbStoreTest, ControlledSupersedesUncontrolled) {
  ASSERT_TRUE(kb_->Record({Entry("u/1", "kept", 0.30)}).ok());
  ASSERT_TRUE(kb_->Record({Entry("c/1", "reverted", -0.02, true)}).ok());
  EXPECT_EQ(GetOrDie(1).superseded_by, 2);
  EXPECT_EQ(GetOrDie(2).superseded_by, 0);
  // The other way round: an uncontrolled result arriving later is superseded on arrival.
  ASSERT_TRUE(kb_->Record({Entry("u/2", "kept", 0.25)}).ok());
  EXPECT_EQ(GetOrDie(3).superseded_by, 2);
  EXPECT_EQ(GetOrDie(2).superseded_by, 0);
  for (const KbEntry& e : ListOrDie()) EXPECT_EQ(e.conflict, "") << e.uid;
}

TEST_F(KbStoreTest, ACorrectionSupersedesTheEntryOfItsNodeWithoutAConflict) {
  // A keep later un-kept (a flaky check): the node's entry, then its correction.
  ASSERT_TRUE(kb_->Record({Entry("c/4", "kept", 0.30, true)}).ok());
  ASSERT_TRUE(
      kb_->Record({Entry("c/4", "reverted", std::nullopt, true),
                   Entry(std::string("c/4") + kKbCorrectionSuffix, "reverted", std::nullopt, true)})
          .ok());
  ASSERT_EQ(ListOrDie().size(), 2u) << "the plain uid is recorded once";
  EXPECT_EQ(GetOrDie(1).superseded_by, 2);
  EXPECT_EQ(GetOrDie(2).superseded_by, 0);
  for (const KbEntry& e : ListOrDie()) EXPECT_EQ(e.conflict, "") << e.uid;
}

TEST_F(KbStoreTest, SameStandingDivergingResultsConflictOnBoth) {
  ASSERT_TRUE(kb_->Record({Entry("u/1", "kept", 0.30), Entry("u/2", "reverted", -0.02)}).ok());
  KbEntry a = GetOrDie(1);
  KbEntry b = GetOrDie(2);
  EXPECT_EQ(a.superseded_by, 0);
  EXPECT_EQ(b.superseded_by, 0);
  EXPECT_EQ(a.conflict, "diverges from #2 (#2 reverted -2.0% vs #1 kept +30%)");
  EXPECT_EQ(b.conflict, "diverges from #1 (#1 kept +30% vs #2 reverted -2.0%)");
  // A third diverging one adds a note to the first; agreeing entries add none.
  ASSERT_TRUE(kb_->Record({Entry("u/3", "reverted", -0.01), Entry("u/4", "kept", 0.31)}).ok());
  EXPECT_NE(GetOrDie(1).conflict.find("; diverges from #3"), std::string::npos);
  EXPECT_EQ(GetOrDie(4).conflict,
            "diverges from #2 (#2 reverted -2.0% vs #4 kept +31%); "
            "diverges from #3 (#3 reverted -1.0% vs #4 kept +31%)");
}

TEST_F(KbStoreTest, DifferentContextsBothStayLive) {
  KbEntry other_point = Entry("u/2", "reverted", -0.02, true);
  other_point.path_hash = "p2";  // another operating point
  KbEntry other_hw = Entry("u/3", "reverted", -0.02, true);
  other_hw.hardware.cores = 64;
  KbEntry other_value = Entry("u/4", "reverted", -0.02, true);
  other_value.value = "fast";
  ASSERT_TRUE(kb_->Record({Entry("u/1", "kept", 0.30), other_point, other_hw, other_value}).ok());
  for (const KbEntry& e : ListOrDie()) {
    EXPECT_EQ(e.superseded_by, 0) << e.uid;
    EXPECT_EQ(e.conflict, "") << e.uid;
  }
}

TEST_F(KbStoreTest, LoadFiltersByActionCategoryMaxIdAndCampaign) {
  KbEntry other_action = Entry("b/1", "kept", 0.1);
  other_action.action_id = "kernel.tiled";
  other_action.category = "gemm";
  KbEntry other_campaign = Entry("c/1", "kept", 0.3);
  other_campaign.campaign_uid = "other-1";
  KbEntry third = Entry("d/1", "kept", 0.3);
  third.action_id = "runtime.threads";
  third.category = "runtime";
  ASSERT_TRUE(kb_->Record({Entry("a/1", "kept", 0.3), other_action, other_campaign, third}).ok());
  EXPECT_EQ(LoadIds({}), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(LoadIds({.action_ids = {"compiler.O3"}}), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(LoadIds({.categories = {"gemm"}}), (std::vector<int64_t>{2}));
  EXPECT_EQ(LoadIds({.action_ids = {"runtime.threads"}, .categories = {"gemm"}}),
            (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(LoadIds({.max_id = 2}), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(LoadIds({.exclude_campaign_uid = "toy-1"}), (std::vector<int64_t>{3}));
  EXPECT_EQ(LoadIds({.action_ids = {"compiler.O3"}, .max_id = 2, .exclude_campaign_uid = "x"}),
            (std::vector<int64_t>{1}));
}

TEST_F(KbStoreTest, ListFiltersAndPages) {
  KbEntry other = Entry("b/1", "crashed", std::nullopt);
  other.campaign = "serve";
  other.campaign_uid = "serve-1";
  ASSERT_TRUE(kb_->Record({Entry("a/1", "kept", 0.3), other, Entry("a/2", "kept", 0.3)}).ok());
  EXPECT_EQ(ListOrDie({.campaign = "serve"}).size(), 1u);
  EXPECT_EQ(ListOrDie({.campaign = "toy-1"}).size(), 2u);
  EXPECT_EQ(ListOrDie({.outcome = "crashed"}).front().uid, "b/1");
  EXPECT_EQ(ListOrDie({.action = "nope"}).size(), 0u);
  auto page = ListOrDie({.limit = 1, .offset = 1});
  ASSERT_EQ(page.size(), 1u);
  EXPECT_EQ(page.front().id, 2);
}

TEST_F(KbStoreTest, ForgetRevivesSupersededAndDropsConflictNotes) {
  ASSERT_TRUE(kb_->Record({Entry("u/1", "kept", 0.30), Entry("u/2", "reverted", -0.02),
                           Entry("u/3", "kept", 0.28)})
                  .ok());
  KbEntry controlled = Entry("c/1", "reverted", -0.05, true);
  controlled.campaign = "other";
  ASSERT_TRUE(kb_->Record({controlled}).ok());
  EXPECT_EQ(GetOrDie(1).superseded_by, 4);
  EXPECT_EQ(GetOrDie(3).superseded_by, 4);
  auto n = kb_->Forget({.campaign = "other"});
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(*n, 1);
  EXPECT_EQ(GetOrDie(1).superseded_by, 0);
  EXPECT_EQ(GetOrDie(3).superseded_by, 0);
  n = kb_->ForgetIds({2, 42});
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1);
  EXPECT_EQ(GetOrDie(1).conflict, "");  // its only note named #2
  EXPECT_EQ(GetOrDie(3).conflict, "");
  EXPECT_FALSE(kb_->Forget(KbFilter{}).ok());  // everything is ForgetAll, never by accident
  n = kb_->ForgetAll();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 2);
  // Ids are never reused: a campaign's max-id snapshot keeps meaning what it meant.
  ASSERT_TRUE(kb_->Record({Entry("z/1", "kept", 0.1)}).ok());
  EXPECT_EQ(ListOrDie().front().id, 5);
}

TEST_F(KbStoreTest, RefusesANewerSchemaAndOtherFiles) {
  kb_.reset();
  RawExec(path_, "UPDATE kb_meta SET value = '2' WHERE key = 'schema_version'");
  for (OpenMode mode : {OpenMode::kReadWrite, OpenMode::kReadOnly}) {
    auto kb = KbStore::Open(path_, mode);
    ASSERT_FALSE(kb.ok());
    EXPECT_NE(kb.error().message.find("schema version 2, newer than this arbor"), std::string::npos)
        << kb.error().message;
  }
  const std::string campaign = dir_.File("arbor.db");
  ASSERT_TRUE(SqliteStore::Open(campaign, OpenMode::kReadWrite).ok());
  auto kb = KbStore::Open(campaign, OpenMode::kReadWrite);
  ASSERT_FALSE(kb.ok());
  EXPECT_NE(kb.error().message.find("is not an arbor knowledge base"), std::string::npos)
      << kb.error().message;
}

TEST_F(KbStoreTest, ReadOnlyNeedsAFileAndNeverWrites) {
  auto missing = KbStore::Open(dir_.File("nowhere/kb.db"), OpenMode::kReadOnly);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "no knowledge base at " + dir_.File("nowhere/kb.db"));
  EXPECT_FALSE(std::filesystem::exists(dir_.File("nowhere")));
  ASSERT_TRUE(kb_->Record({Entry("a/1", "kept", 0.3)}).ok());
  auto ro = OpenOrDie(path_, OpenMode::kReadOnly);
  ASSERT_NE(ro, nullptr);
  EXPECT_EQ(ro->List({})->size(), 1u);
  EXPECT_FALSE(ro->Record({Entry("a/2", "kept", 0.3)}).ok());
  EXPECT_FALSE(ro->ForgetAll().ok());
  EXPECT_EQ(kb_->List({})->size(), 1u);
}

// Two campaigns recording into one knowledge base while a third process reads: every entry
// lands, the file stays sound, and nobody sees SQLITE_BUSY.
TEST_F(KbStoreTest, TwoProcessesWriteAtOnce) {
  kb_.reset();  // no connection crosses fork()
  constexpr int kPerChild = 300;
  std::vector<pid_t> children;
  for (int child = 0; child < 2; ++child) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto kb = KbStore::Open(path_, OpenMode::kReadWrite);
      if (!kb.ok()) {
        std::fprintf(stderr, "child %d: %s\n", child, kb.error().message.c_str());
        _exit(2);
      }
      for (int i = 0; i < kPerChild; ++i) {
        // Shared contexts, so that conflict detection reads and updates the other's rows.
        KbEntry e = Entry("c" + std::to_string(child) + "/" + std::to_string(i),
                          i % 3 == 0 ? "reverted" : "kept", 0.01 * (i % 7), i % 11 == 0);
        e.value = std::to_string(i % 5);
        if (Status s = (*kb)->Record({e}); !s.ok()) {
          std::fprintf(stderr, "child %d: %s\n", child, s.error().message.c_str());
          _exit(1);
        }
      }
      _exit(0);
    }
    children.push_back(pid);
  }
  auto reader = OpenOrDie(path_, OpenMode::kReadOnly);
  ASSERT_NE(reader, nullptr);
  size_t last = 0;
  int reads = 0;
  int running = 2;
  std::vector<int> statuses;
  while (running > 0) {
    auto all = reader->List({});
    ASSERT_TRUE(all.ok()) << all.error().message;
    EXPECT_GE(all->size(), last);
    last = all->size();
    auto loaded = reader->Load({.action_ids = {"compiler.O3"}});
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    ++reads;
    for (pid_t& pid : children) {
      int status = 0;
      if (pid > 0 && waitpid(pid, &status, WNOHANG) == pid) {
        statuses.push_back(status);
        pid = -1;
        --running;
      }
    }
  }
  for (int status : statuses) {
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  }
  EXPECT_GT(reads, 1);
  auto all = reader->List({});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 2u * kPerChild);
  auto kb = OpenOrDie(path_);
  ASSERT_NE(kb, nullptr);
  EXPECT_EQ(*kb->IntegrityCheck(), "ok");
  EXPECT_EQ(*kb->MaxId(), 2 * kPerChild);
}

}  // namespace
}  // namespace arbor
