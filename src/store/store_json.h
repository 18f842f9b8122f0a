// JSON encodings of the store's structured columns (overlay, score, sample extras, profiles).
//
// Encodings are stable: they are read by other tools (report, dashboard) straight from the
// database. Objects are keyed by field name, so a column written by an older binary decodes
// with defaults for the fields it lacks and a newer binary's extra fields are ignored.
// JSON has no NaN or infinity; such doubles are written as the strings "nan", "inf" and
// "-inf" and read back as the same value, so nothing is silently turned into null.
// Decoders never throw: malformed text is an Error naming what was being decoded.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/model/model.h"
#include "core/model/spec.h"
#include "util/result.h"

namespace arbor::store_json {

std::string EncodeOverlay(const EnvOverlay& overlay);
Result<EnvOverlay> DecodeOverlay(std::string_view text);

std::string EncodeScore(const ScoreTerms& score);
Result<ScoreTerms> DecodeScore(std::string_view text);

// A sample's `extra` map (guard metrics, work, accuracy).
std::string EncodeNumbers(const std::map<std::string, double>& numbers);
Result<std::map<std::string, double>> DecodeNumbers(std::string_view text);

// The profile format of DESIGN.md: {"total_s": .., "components": [{"name","layer","share"}]}.
std::string EncodeProfile(const Profile& profile);
Result<Profile> DecodeProfile(std::string_view text);

// A node's AgentNote (the `agent` column, schema v3): empty fields are omitted, so an empty
// note is "{}" and "{}" decodes to an empty note. Implemented in store_json_agent.cc.
std::string EncodeAgent(const AgentNote& note);
Result<AgentNote> DecodeAgent(std::string_view text);

// A whole ActionSpec (the `actions` table's `spec`, schema v3): every field, the apply spec as
// {"kind": "env|append|patch|run|agent", ...its non-empty fields}, `requires_` as "requires".
// Decoding needs a non-empty "id"; a member of the wrong type is an Error naming it.
std::string EncodeAction(const ActionSpec& action);
Result<ActionSpec> DecodeAction(std::string_view text);

// True when `text` is empty or one JSON object: the contract of Event::data, checked before
// it is stored so that readers of the events table never meet malformed details.
bool IsEmptyOrJsonObject(std::string_view text);

}  // namespace arbor::store_json
