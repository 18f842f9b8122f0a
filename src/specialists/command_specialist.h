// CommandSpecialist: a specialist backed by any coding-agent CLI ([specialists.<domain>]
// command = "..."). The composed prompt goes on the command's stdin and into a file named by
// $ARBOR_TASK; the command runs in the task's worktree (shell; environment PATH, HOME, the
// variable named by api_key_env if set, ARBOR_TASK, ARBOR_RESULT, ARBOR_WORKTREE, ARBOR_NODE,
// ARBOR_MODE=implement|propose; timeout_s and [target]'s output limit, not its memory/CPU
// limits; process group reaped) and edits files there. Arbor then checks what changed against
// the patch policy (exec/patch_policy.h CheckWorktreeChanges) and reads the optional report
// the agent wrote to $ARBOR_RESULT (specialists/agent_report.h). Output goes to
// <log_root>/n<node>/agent/{task.md,stdout,stderr,result.json}, every file of that folder
// scrubbed of secrets once the agent has ended (exec/scrubbing.h). A non-zero exit, a
// timeout, a policy violation, a malformed report or no change at all is a kFailed result
// with a one-line diagnosis. Propose runs the same command with the propose prompt in a
// scratch folder (its cwd, scrubbed likewise); the proposals are read from the report's
// "proposals".
#pragma once

#include <string>

#include "core/model/ports.h"
#include "core/model/spec.h"

namespace arbor {

class CommandSpecialist {
 public:
  CommandSpecialist(const CampaignSpec* spec, const SpecialistSpec* config, std::string log_root);

  SpecialistResult Implement(const Task& task, std::string_view protocol,
                             std::string_view skill) const;
  Proposal Propose(const ProposeRequest& request, std::string_view protocol, std::string_view skill,
                   const std::string& scratch_dir) const;

 private:
  const CampaignSpec* spec_;
  const SpecialistSpec* config_;
  std::string log_root_;
};

}  // namespace arbor
