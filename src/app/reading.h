// Opening a campaign for reading: the campaign file, then its store in read-only mode (safe
// while `arbor run` writes: SQLite's WAL lets readers and the writer proceed together).
// Shared by the views (status, tree, show), the report and the dashboard. Internal to app/.
#pragma once

#include <memory>
#include <string>

#include "app/paths.h"
#include "core/model/spec.h"
#include "report/views.h"
#include "store/sqlite_store.h"
#include "util/result.h"

namespace arbor {

struct OpenedCampaign {
  CampaignSpec spec;
  CampaignPaths paths;
  std::unique_ptr<SqliteStore> store;
};

// kExitConfig for a bad campaign file, kExitState when the campaign never ran.
Result<OpenedCampaign> OpenForReading(const std::string& file);
// Meta and nodes from the store, with the spec's facts; kExitStore when unreadable.
Result<CampaignView> LoadCampaignView(OpenedCampaign* campaign);

}  // namespace arbor
