// The knowledge base's exchange format: one JSON object per entry, one entry per line (JSON
// lines), so that a team can share what its campaigns learned (`arbor kb export|import`).
//
// Every line carries `"v": kKbJsonVersion`; a line of another version is refused rather than
// guessed at. Hardware is an object ({"cpu_model", "cores", "isa", "mem_gib", "gpu"}), the
// workload an array of tags, absent optionals (gain, ci_low, ci_high) are omitted. `id`,
// `superseded_by` and `conflict` describe the exporting file only: an import reassigns ids
// and recomputes both (store/kb_store.h). Decoding never throws: errors name the field
// ("field 'gain': expected a number") and, for JSON lines, the line ("line 3: ...").
// Unknown fields are ignored, so that a newer arbor may add fields within one version.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/knowledge/kb.h"
#include "util/result.h"

namespace arbor {

inline constexpr int kKbJsonVersion = 1;

nlohmann::json KbEntryToJson(const KbEntry& e);
// Requires "v", "uid", "action_id" and "outcome"; every other field defaults when absent.
Result<KbEntry> KbEntryFromJson(const nlohmann::json& j);

// One line per entry, each ending in '\n' ("" for no entries).
std::string ExportJsonLines(const std::vector<KbEntry>& entries);
// Blank lines are skipped; the first malformed line fails the whole text.
Result<std::vector<KbEntry>> ParseJsonLines(std::string_view text);

}  // namespace arbor
