// Reads what drives the Domain Specialists: [specialists.<domain>] (backend, its settings,
// the patch-policy allowlist), [llm] (the campaign's token and cost budget) and [secrets]
// (variables whose values are scrubbed everywhere). Internal to config/.
#pragma once

#include <string>

#include "config/toml_reader.h"
#include "core/model/spec.h"
#include "util/result.h"

namespace arbor::config_internal {

// Fills spec->specialists, spec->llm and spec->secrets (every specialist's api_key_env is a
// secret too).
Status ReadAgents(const Section& root, const std::string& base_dir, CampaignSpec* spec);

}  // namespace arbor::config_internal
