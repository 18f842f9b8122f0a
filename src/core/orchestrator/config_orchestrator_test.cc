// A campaign run again after its settings changed (core/model/config_diff.h): what a continuing
// campaign can take is applied and recorded, what would change what was measured is refused
// before anything is written.
#include <gtest/gtest.h>

#include "arbor/exit_codes.h"
#include "core/orchestrator/orchestrator.h"
#include "core/testing/toy_rig_testing.h"
#include "fakes/fakes.h"

namespace arbor {
namespace {

using toy::Rig;

std::vector<Event> EventsOfKind(const testing::FakeStore& store, const std::string& kind) {
  std::vector<Event> out;
  for (const Event& e : store.events()) {
    if (e.kind == kind) out.push_back(e);
  }
  return out;
}

TEST(ConfigOrchestratorTest, ARaisedBudgetOnAFinishedCampaignIsRecordedAndSpent) {
  Rig rig;
  rig.spec.search.max_nodes = 2;
  auto first = rig.Run();
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->state, CampaignState::kFinished);
  EXPECT_TRUE(EventsOfKind(rig.store, "config_changed").empty());
  auto meta = rig.store.LoadMeta();
  ASSERT_TRUE(meta.ok() && meta->has_value());
  EXPECT_FALSE((*meta)->config.empty());
  EXPECT_FALSE((*meta)->spec_hash.empty());

  // The same settings again: nothing to record.
  ASSERT_TRUE(rig.Run().ok());
  EXPECT_TRUE(EventsOfKind(rig.store, "config_changed").empty());

  rig.spec.search.max_nodes = 4;
  rig.spec.critic.max_cv = 0.5;
  auto second = rig.Run();
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second->evaluated, 4);
  auto changed = EventsOfKind(rig.store, "config_changed");
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_NE(changed[0].message.find("search.max_nodes 2 → 4"), std::string::npos)
      << changed[0].message;
  EXPECT_NE(changed[0].message.find("critic.max_cv"), std::string::npos) << changed[0].message;
}

TEST(ConfigOrchestratorTest, AChangedBenchmarkIsRefusedBeforeAnythingIsWritten) {
  Rig rig;
  rig.spec.target.bench = "./bench";
  rig.spec.search.max_nodes = 2;
  ASSERT_TRUE(rig.Run().ok());
  const int applies = rig.store.applies();
  const size_t nodes = rig.store.nodes.size();
  rig.spec.target.bench = "./bench --other-input";
  rig.spec.search.max_nodes = 4;
  auto r = rig.Run();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, kExitConfigChanged);
  EXPECT_NE(r.error().message.find("target.bench \"./bench\" → \"./bench --other-input\""),
            std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("--restart"), std::string::npos);
  EXPECT_EQ(rig.store.applies(), applies);
  EXPECT_EQ(rig.store.nodes.size(), nodes);
  auto meta = rig.store.LoadMeta();
  EXPECT_EQ((*meta)->state, CampaignState::kFinished)
      << "the refused run leaves the campaign as it was";
  // Undoing the change continues the campaign.
  rig.spec.target.bench = "./bench";
  auto undone = rig.Run();
  ASSERT_TRUE(undone.ok()) << undone.error().message;
  EXPECT_EQ(undone->evaluated, 4);
}

TEST(ConfigOrchestratorTest, AStoreFromBeforeSettingsWereKeptIsNotCompared) {
  Rig rig;
  rig.spec.search.max_nodes = 2;
  ASSERT_TRUE(rig.Run().ok());
  auto meta = rig.store.LoadMeta();
  Mutation m;
  m.meta = **meta;
  m.meta->config.clear();
  m.meta->spec_hash.clear();
  ASSERT_TRUE(rig.store.Apply(m).ok());
  rig.spec.target.bench = "./changed";
  auto r = rig.Run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(EventsOfKind(rig.store, "config_changed").empty());
  // From now on the settings are recorded, and compared.
  EXPECT_FALSE((*rig.store.LoadMeta())->config.empty());
  rig.spec.target.bench = "./changed again";
  auto again = rig.Run();
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, kExitConfigChanged);
}

}  // namespace
}  // namespace arbor
