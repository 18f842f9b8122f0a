// Prompt composition: what a specialist is given, assembled per task (ARBOR.md "The agents").
//
// A prompt is the coordination protocol every specialist follows (skills/protocol.md, the
// "soft skills"), the domain's expertise (skills/<domain>.md, the "hard skills"), the task
// (action, value, goal) and its context (hardware, profile and targeted components, the kept
// path, knowledge-base lessons and pitfalls, failures not to repeat, the Critic's active
// constraints), and the backend's answer format. Skills are looked up in the campaign's
// skills folder first, then ARBOR_SKILLS_DIR, then the skills/ shipped with Arbor.
// Composition is pure and deterministic: the same task gives the same bytes, so
// `arbor show NODE --prompt` prints exactly what was sent.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/model/ports.h"
#include "core/model/spec.h"
#include "util/result.h"

namespace arbor {

struct ComposedPrompt {
  std::string system;  // protocol + domain skills
  std::string user;    // task, context, answer format
  // Both parts as one document ("# system\n…\n# user\n…"), as stored and shown.
  std::string Text() const;
};

// Skill folders to search, in order: the campaign's (spec.skills_dir), $ARBOR_SKILLS_DIR, the
// skills/ shipped with Arbor (compile-time path). Missing folders are left out.
std::vector<std::string> SkillDirs(const CampaignSpec& spec);

// The text of <dir>/<name>.md from the first folder that has it; an Error when none does
// (naming the folders searched).
Result<std::string> LoadSkill(const std::vector<std::string>& dirs, const std::string& name);

// The implement prompt for `task`. `answer_format` is the backend's own instructions.
ComposedPrompt ComposeImplement(const Task& task, std::string_view protocol, std::string_view skill,
                                std::string_view answer_format);

// The propose prompt: new candidate actions for `request.domain` as JSON.
ComposedPrompt ComposePropose(const ProposeRequest& request, std::string_view protocol,
                              std::string_view skill, std::string_view answer_format);

}  // namespace arbor
