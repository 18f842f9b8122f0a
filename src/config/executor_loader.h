// Reads [executor]: where the target's commands run (local, or Slurm jobs; docs/slurm.md).
// Internal to config/.
#pragma once

#include <string>

#include "config/toml_reader.h"
#include "core/model/spec.h"
#include "util/result.h"

namespace arbor::config_internal {

// Fills spec->executor. Needs spec->workspace (read from [campaign] first): with kind = "slurm",
// the workspace must lie under shared_dir.
Status ReadExecutor(const Section& root, const std::string& base_dir, CampaignSpec* spec);

}  // namespace arbor::config_internal
