// Reads the [profile] table of a campaign file: the format of the profile command's output,
// where it is written, and the [[profile.group]] rules that name components. Internal to
// config/: the public entry point is campaign_loader.h; docs/campaign-file.md documents it.
#pragma once

#include "config/toml_reader.h"
#include "core/model/spec.h"
#include "util/result.h"

namespace arbor::config_internal {

// `root` is the whole document; an absent [profile] leaves `profile` at its defaults.
Status ReadProfile(const Section& root, ProfileSpec* profile);

}  // namespace arbor::config_internal
