// The dashboard's DashboardSource over a campaign opened for reading: the store's rows plus
// the report's inputs (Graphviz layout, final diff, log tails). Internal to app/.
#pragma once

#include <memory>

#include "app/reading.h"
#include "dashboard/api.h"

namespace arbor {

// `campaign` must outlive the source.
std::unique_ptr<DashboardSource> MakeStoreSource(OpenedCampaign* campaign);

}  // namespace arbor
