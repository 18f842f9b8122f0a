// The campaign file (arbor.toml) -> CampaignSpec.
//
// The loader is the only place that sees TOML. It either returns a spec that is valid as a
// whole (required keys present, values in range, action ids unique, requires/conflicts naming
// declared actions, no requires cycle, patch files present), or the first problem as one line:
// "FILE:LINE:COL: what was wrong; what was expected". Unknown keys are errors, never ignored,
// so a typo cannot silently fall back to a default. Relative paths (workspace, patches, kb path)
// are made absolute against the campaign file's folder; "~/" in [kb] path is expanded from
// $HOME. The schema and every default are documented in docs/campaign-file.md.
//
// Thread-safe: no state beyond the arguments (and the file system for patch files).
#pragma once

#include <string>
#include <string_view>

#include "core/model/spec.h"
#include "util/result.h"

namespace arbor {

// Reads and parses `path`; messages name `path` as given, CampaignSpec::file is absolute.
Result<CampaignSpec> LoadCampaignFile(const std::string& path);

// Parses campaign text. `path_for_messages` prefixes every error and becomes
// CampaignSpec::file; `base_dir` is the folder relative paths are resolved against (made
// absolute against the current directory if it is relative).
Result<CampaignSpec> ParseCampaign(std::string_view text, const std::string& path_for_messages,
                                   const std::string& base_dir);

}  // namespace arbor
