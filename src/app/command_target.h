// CommandTarget: the Target port over the user's shell commands, run by exec/'s Runner.
//
// Each run gets its own folder runs/n<node>/<label>/ holding stdout, stderr and $ARBOR_OUT,
// a minimal environment (an allowlist of the caller's variables, then the campaign's env and
// the node's overlay, then ARBOR_NODE / ARBOR_WORKTREE / ARBOR_OUT / ARBOR_REPETITION), and
// the step's timeout and limits. Metrics and profiles are parsed by formats/; anything
// unreadable becomes ExitKind::kBadOutput with the parser's one-line reason.
#pragma once

#include <map>
#include <string>

#include "core/ports.h"
#include "core/spec.h"
#include "exec/runner.h"
#include "util/secrets.h"

namespace arbor {

class CommandTarget : public Target {
 public:
  CommandTarget(const CampaignSpec* spec, std::string runs_dir);
  StepResult Build(const RunContext& ctx) override;
  Measurement Check(const RunContext& ctx) override;
  Measurement Bench(const RunContext& ctx) override;
  ProfileResult Profile(const RunContext& ctx) override;

  // When set (nullptr: off), each command's stdout/stderr logs and its StepResult's detail and
  // tail are scrubbed of secrets as soon as it ends (app/secrets.h). Borrowed.
  void set_scrubber(const Scrubber* scrubber) { scrubber_ = scrubber; }

  // The variables of Arbor's own environment a target command may see.
  static std::map<std::string, std::string> InheritedEnv();

 private:
  struct Run {
    StepResult step;
    std::string out_dir;
    std::string stdout_path;
  };
  Run Execute(const RunContext& ctx, const std::string& command, double timeout_s);
  // `text` without secrets (unchanged when no scrubber is set).
  std::string Scrubbed(std::string text) const;

  const CampaignSpec* spec_;
  std::string runs_dir_;
  const Scrubber* scrubber_ = nullptr;
};

}  // namespace arbor
