// Reads the [[action]] array of a campaign file and checks the actions against each other
// (unique ids, requires/conflicts naming declared actions, no requires cycle). Internal to
// config/: the public entry point is campaign_loader.h.
#pragma once

#include <string>
#include <vector>

#include "config/toml_reader.h"
#include "core/model/spec.h"
#include "util/result.h"

namespace arbor::config_internal {

// `root` is the whole document; `base_dir` is absolute (patch paths are resolved against it).
// `external_ids` are actions declared elsewhere (a proposed action's campaign): requires and
// conflicts may name them too, and they take no part in the cycle check (they cannot require
// an action that does not exist yet).
Status ReadActions(const Section& root, const std::string& base_dir,
                   std::vector<ActionSpec>* actions,
                   const std::vector<std::string>& external_ids = {});

}  // namespace arbor::config_internal
