// CampaignMeta <-> rows of the meta table (key TEXT, value TEXT).
//
// Each field is one row under a "campaign." key, so fields can be added without a schema
// migration: a missing key decodes to the field's default, an unknown key is ignored.
// Numbers are written in their shortest round-trip form (std::to_chars), so doubles and the
// 64-bit seed read back bit for bit.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/model/model.h"
#include "util/result.h"

namespace arbor::meta_codec {

using Rows = std::vector<std::pair<std::string, std::string>>;

// The key prefix of campaign rows; other meta rows (schema_version) belong to the schema.
inline constexpr std::string_view kPrefix = "campaign.";

Rows Encode(const CampaignMeta& meta);
// nullopt when no campaign row exists (a new store). `rows` may include non-campaign keys.
Result<std::optional<CampaignMeta>> Decode(const Rows& rows);

}  // namespace arbor::meta_codec
