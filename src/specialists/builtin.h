// BuiltinSpecialist: implements the campaign file's declarative actions without an agent.
//
// For a task it substitutes the candidate's value into the action's `apply` (SubstituteValue)
// and then, by kind:
//   env     the node's overlay is the parent's with the variables set;
//   append  each variable becomes (parent overlay, else [target] env, else "") + the suffix;
//   patch   `git apply` of the diff in the node's worktree (hooks disabled, PATH/HOME only),
//           after the patch policy (exec/patch_policy.h) accepted it: a rejected patch is
//           kFailed with a diagnosis "patch policy: <rule>: ...", and never reaches git;
//   run     the command in the worktree with the node's environment (its diff is the change),
//           bounded by [target] build_timeout and limits, output under
//           <log_root>/n<node>/apply/{stdout,stderr};
//   agent   skipped with a diagnosis saying which backend to configure (agents are built by
//           the command/llm specialists).
// An env or append action that sets LD_PRELOAD to a path that does not exist fails (locally;
// not under Slurm, whose nodes may have what this machine lacks) with "LD_PRELOAD: PATH: cannot
// open shared object file: ...": the loader would skip it silently, and the Critic classifies
// the message as a missing dependency rather than measuring the program without it.
// Code-changing kinds leave the overlay as the parent's; the caller snapshots the worktree.
// A patch that does not apply or a command that fails is an outcome (kFailed with a one-line
// diagnosis), never an Error. Safe to call from several threads for different worktrees.
#pragma once

#include <string>

#include "core/model/ports.h"
#include "core/model/spec.h"
#include "exec/patch_policy.h"

namespace arbor {

class BuiltinSpecialist : public Specialist {
 public:
  // `spec` must outlive the specialist. `log_root` is the campaign's runs folder. `policy`
  // limits what `patch` actions may touch (default: no allowlist, every other rule applies).
  BuiltinSpecialist(const CampaignSpec* spec, std::string log_root, PatchPolicy policy = {});

  SpecialistResult Implement(const Task& task) override;

 private:
  SpecialistResult ApplyPatch(const Task& task, const ApplySpec& apply) const;
  SpecialistResult RunCommandIn(const Task& task, const ApplySpec& apply) const;
  SpecialistResult Agent(const Task& task, const ApplySpec& apply) const;
  // The patch path as the user wrote it: relative to the campaign file when under its folder.
  std::string ShownPath(const std::string& path) const;

  const CampaignSpec* spec_;
  std::string log_root_;
  PatchPolicy policy_;
};

}  // namespace arbor
