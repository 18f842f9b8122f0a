// JSON encoding of a node's CriticNote (the `critic` column, schema v2): verdict figures,
// root-cause diagnosis, introspection link, flags and the constraints the node published.
// Absent fields decode to defaults, unknown fields are ignored; decoding never throws.
#pragma once

#include <string>
#include <string_view>

#include "core/model/model.h"
#include "util/result.h"

namespace arbor::store_json {

std::string EncodeCritic(const CriticNote& note);  // "{}" when the note is empty
Result<CriticNote> DecodeCritic(std::string_view text);

}  // namespace arbor::store_json
