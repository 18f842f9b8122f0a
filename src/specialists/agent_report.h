// AgentReport: the structured part of a specialist's answer (docs/specialists.md "Result").
//
// A command agent may write it as JSON to $ARBOR_RESULT; an LLM appends it as a ```json block.
// The object's keys, all optional:
//   summary (string), confidence (number in [0, 1]), findings (array of strings),
//   questions (array of strings), env (object of strings: overlay variables to set),
//   proposals (array of action objects in the campaign file's [[action]] shape, e.g.
//   {"id": "...", "layer": "...", "category": "...", "targets": [...], "speedup": 1.2,
//    "apply": {"env": {"X": "1"}}}).
// Proposals are validated against the campaign schema (config/proposal_loader.h); only env,
// append and agent kinds are accepted from specialists (a proposed `run` or `patch` would let
// a model choose arbitrary commands or files); ids must be new. An invalid proposal is left
// out with one line in `rejected`, never an error for the whole report.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/model.h"
#include "core/model/spec.h"
#include "util/result.h"

namespace arbor {

struct AgentReport {
  std::string summary;
  double confidence = 0;
  std::vector<std::string> findings;
  std::vector<std::string> questions;
  EnvOverlay env;
  std::vector<ActionSpec> proposals;  // valid, proposed_by set
  std::vector<std::string> rejected;  // "proposal 2 ('x'): <why>"
};

// Parses a report object. Errors name what was wrong ("report: confidence must be a number
// in [0, 1]", "report is not JSON: … at byte 17"). `known_ids` are the campaign's action ids.
Result<AgentReport> ParseAgentReport(std::string_view json, const CampaignSpec& spec,
                                     const std::set<std::string>& known_ids,
                                     const std::string& proposed_by);

// Validates a JSON array of proposed actions (the propose mode's answer, or a report's
// "proposals"): valid ones appended to `accepted` (at most `max`), the others described in
// `rejected`. Errors only when `json` is not a JSON array.
Status ParseProposals(std::string_view json, const CampaignSpec& spec,
                      const std::set<std::string>& known_ids, const std::string& proposed_by,
                      int max, std::vector<ActionSpec>* accepted,
                      std::vector<std::string>* rejected);

}  // namespace arbor
