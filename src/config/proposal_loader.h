// Validation of actions proposed by specialists against the campaign file's own rules.
//
// A specialist (a coding-agent CLI, an LLM) may propose follow-up candidate actions. They are
// read by the very reader that reads the campaign file's [[action]] tables (ids, layers,
// numbers in range, apply with exactly one kind, values used by apply, requires/conflicts
// naming known actions), so a proposal can never hold what the campaign file could not.
// On top of that a proposal may not be a `run` or a `patch` action (a model must not pick an
// arbitrary shell command or a file on disk to apply), may not reuse a known id, and an `agent`
// proposal must name a domain configured in [specialists]. Config does not see JSON: the
// caller turns a JSON proposal into TOML text first (specialists/agent_report.cc).
// Thread-safe: no state beyond the arguments.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "core/model/spec.h"
#include "util/result.h"

namespace arbor {

// Parses `toml_text`, which must hold exactly one [[action]] table and nothing else.
// Requires and conflicts may name actions of `spec` or `known_ids` (the campaign's proposed
// actions); the id must be new to both. Errors are one line, "<source_name>: what was wrong;
// what was expected", without a position (the text is generated, positions mean nothing to
// the proposer). The returned action has line = 0 and proposed_by empty.
Result<ActionSpec> ParseProposedAction(std::string_view toml_text, const std::string& source_name,
                                       const CampaignSpec& spec,
                                       const std::set<std::string>& known_ids = {});

}  // namespace arbor
