// LlmSpecialist's rounds. A round is: ask the model, parse its answer, reset the worktree,
// check the policy, apply, validate. Only the model's coding mistakes (an answer that cannot
// be parsed, does not apply, does not build or fails the check) are fed back for another
// round; a policy violation or a failure of the transport ends the task at once.
#include "specialists/llm_specialist.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <utility>

#include "exec/git_cli.h"
#include "exec/patch_policy.h"
#include "specialists/agent_report.h"
#include "specialists/llm_answer.h"
#include "specialists/prompt.h"
#include "specialists/worktree_ops.h"
#include "util/check.h"
#include "util/strings.h"

namespace arbor {
namespace {

using Verdict = SpecialistResult::Status;

constexpr std::string_view kAnswerFormat = R"(## Answer format
Answer with ONE of:
(a) a unified diff against the ORIGINAL files, in a ```diff fenced block, with paths a/<path>
    and b/<path> relative to the repository root (as `git diff` writes them); or
(b) whole files, each in its own fenced block whose info string is `file:<relative path>`
    (for example ```file:src/kernel.cc), holding the complete new content of that file.
Then, optionally, a ```json block with your report, an object with any of: "summary" (one
line), "confidence" (0..1), "findings" (array of strings), "questions" (array of strings),
"env" (object: environment variables to set for the build and benchmark), "proposals"
(array of follow-up actions in the campaign file's [[action]] shape, with new ids).
A change made only through "env" needs no diff and no file block.
Your change is applied, built and checked. If that fails you get the error and answer again:
every answer must be a complete change against the ORIGINAL files, not against your
previous attempt (the worktree is reset before each round).
Never touch .git, .gitmodules, symlinks or files outside the repository.
)";

constexpr std::string_view kProposeFormat = R"(## Answer format
Answer with only a JSON array of new candidate actions (optionally in a ```json block), each
an object in the campaign file's [[action]] shape (keys: id, layer, category, describe,
targets, speedup, cost, risk, requires, conflicts, apply, values), for example
[{"id": "kernel.tile-64", "layer": "kernel", "category": "tiling", "targets": ["matmul"],
  "speedup": 1.2, "describe": "...", "apply": {"env": {"TILE": "64"}}},
 {"id": "kernel.fuse-norm", "layer": "kernel", "apply": {"agent": "kernel", "goal": "..."}}].
Only "env", "append" and "agent" apply kinds are accepted, and every id must be new.
)";

constexpr size_t kTailLines = 40;
constexpr int kProposeRounds = 2;  // the answer, and one retry when it is not a JSON array

std::string Section(const std::string& heading, std::string_view text) {
  std::string out = heading + "\n" + std::string(text);
  if (out.back() != '\n') out += '\n';
  return out;
}

std::string FirstLine(std::string_view text) {
  std::string t = Trim(text);
  return t.substr(0, t.find('\n'));
}

std::string LastLines(std::string_view text, size_t max) {
  std::vector<std::string> lines = Split(Trim(text), '\n');
  size_t from = lines.size() > max ? lines.size() - max : 0;
  return Join(std::vector<std::string>(lines.begin() + static_cast<long>(from), lines.end()), "\n");
}

// The conversation with the model, and the record of what it was given.
class Conversation {
 public:
  explicit Conversation(const ComposedPrompt& prompt)
      : messages_{{"system", prompt.system}, {"user", prompt.user}},
        transcript_(Section("# system", prompt.system) + Section("# user", prompt.user)) {}

  // One request, when the budget (if any) has room for its worst case; else none is sent and
  // `usage` says so.
  llm::ChatReply Ask(const ChatFn& chat, LlmBudgetGuard* budget, const SpecialistSpec& config,
                     int round, AgentUsage* usage) {
    std::string marker = "# assistant (round " + std::to_string(round) + "): ";
    LlmBudgetGuard::Grant grant;
    grant.max_answer_tokens = config.max_answer_tokens;
    if (budget != nullptr) grant = budget->Reserve(messages_, config);
    if (!grant.sent) {
      usage->over_budget = true;
      llm::ChatReply refused;
      refused.error = {llm::ChatError::Kind::kConfig, 0, grant.refusal};
      transcript_ += marker + "not asked (" + grant.refusal + ")\n";
      return refused;
    }
    llm::ChatReply reply = chat(messages_, grant.max_answer_tokens);
    if (budget != nullptr) budget->Settle(grant, reply.usage, config);
    usage->prompt_tokens += reply.usage.prompt_tokens;
    usage->completion_tokens += reply.usage.completion_tokens;
    usage->rounds = round;
    if (reply.ok) {
      transcript_ += marker + std::to_string(reply.content.size()) + " characters\n";
      messages_.push_back({"assistant", reply.content});
    } else {
      transcript_ += marker + "no answer (" + reply.error.message + ")\n";
    }
    return reply;
  }

  void Feedback(int round, const std::string& text) {
    messages_.push_back({"user", text});
    transcript_ += Section("# user (round " + std::to_string(round) + ")", text);
  }

  const std::string& transcript() const { return transcript_; }

 private:
  std::vector<llm::ChatMessage> messages_;
  std::string transcript_;
};

// Empty or malformed answers are the model's to fix; transport, HTTP, timeout and
// configuration errors (after the client's own retries) are not.
bool Retryable(const llm::ChatReply& reply) {
  return reply.error.kind == llm::ChatError::Kind::kEmpty ||
         reply.error.kind == llm::ChatError::Kind::kMalformed;
}

std::string ReplyProblem(const llm::ChatReply& reply) {
  bool empty = reply.error.kind == llm::ChatError::Kind::kEmpty;
  return std::string("your answer was ") + (empty ? "empty" : "malformed") + ": " +
         reply.error.message;
}

void Price(const SpecialistSpec& config, AgentUsage* usage) {
  usage->cost =
      static_cast<double>(usage->prompt_tokens) / 1000 * config.cost_per_1k_prompt +
      static_cast<double>(usage->completion_tokens) / 1000 * config.cost_per_1k_completion;
}

std::string StepProblem(std::string_view step, const StepResult& r) {
  std::string detail = r.detail.empty() ? std::string(ExitKindName(r.kind)) : r.detail;
  std::string out = "the " + std::string(step) + " failed: " + detail;
  std::string tail = LastLines(r.tail, kTailLines);
  return tail.empty() ? out : out + "\n" + tail;
}

// What one answer came to.
struct RoundOutcome {
  enum class Kind { kDone, kRetry, kFatal };
  Kind kind = Kind::kDone;
  std::string message;               // kRetry: the problem to feed back; kFatal: the diagnosis
  AgentReport report;                // kDone
  std::vector<std::string> ignored;  // kDone: files the repository ignores, staged anyway
};

RoundOutcome Retry(std::string message) {
  return {RoundOutcome::Kind::kRetry, std::move(message), {}};
}
RoundOutcome Fatal(std::string message) {
  return {RoundOutcome::Kind::kFatal, std::move(message), {}};
}

std::string DomainOf(const SpecialistSpec& config, const std::string& fallback) {
  return config.domain.empty() ? fallback : config.domain;
}

// Parses one answer, resets the worktree, checks the policy, applies and validates.
RoundOutcome Attempt(const CampaignSpec& spec, const SpecialistSpec& config, Target* target,
                     const Task& task, int round, std::string_view content) {
  Result<LlmAnswer> answer = ParseLlmAnswer(content);
  if (!answer) return Retry("your answer could not be used: " + answer.error().message);
  RoundOutcome done;
  if (!answer->report_json.empty()) {
    std::set<std::string> known(task.known_actions.begin(), task.known_actions.end());
    for (const ActionSpec& a : spec.actions) known.insert(a.id);
    std::string by =
        DomainOf(config, task.context.domain) + " specialist at node " + std::to_string(task.node);
    Result<AgentReport> report = ParseAgentReport(answer->report_json, spec, known, by);
    if (!report) return Retry("your report could not be used: " + report.error().message);
    done.report = std::move(*report);
  }
  if (answer->diff.empty() && answer->files.empty() && done.report.env.empty()) {
    return Retry(std::string(kNoChangeMessage));
  }

  // Reset before the policy looks at the worktree: what it checks (symlinks on disk) is then
  // exactly what the change is applied to.
  const double timeout_s = spec.target.build_timeout_s;
  if (Status reset = ResetWorktree(task.worktree, task.base_commit, timeout_s); !reset) {
    return Fatal("llm: cannot reset the worktree: " + reset.error().message);
  }
  PatchPolicy policy{config.allow};
  if (!answer->diff.empty()) {
    if (Status ok = CheckPatch(answer->diff, task.worktree, policy); !ok) {
      return Fatal(ok.error().message);
    }
  }
  if (!answer->files.empty()) {
    std::vector<std::string> paths;
    for (const FileBlock& f : answer->files) paths.push_back(f.path);
    if (Status ok = CheckPaths(paths, task.worktree, policy); !ok) return Fatal(ok.error().message);
  }
  if (!answer->diff.empty()) {
    if (Status ok = ApplyDiff(task.worktree, answer->diff, timeout_s); !ok) {
      return Retry("the diff did not apply: " + ok.error().message);
    }
  }
  if (Status ok = WriteFiles(task.worktree, answer->files); !ok) {
    return Retry("the files could not be written: " + ok.error().message);
  }
  std::vector<std::string> written = PatchTargets(answer->diff);
  for (const FileBlock& f : answer->files) written.push_back(f.path);
  Result<std::vector<std::string>> ignored = StageIgnoredPaths(task.worktree, written);
  if (!ignored) return Fatal("llm: " + ignored.error().message);
  done.ignored = std::move(*ignored);
  if (target == nullptr) return done;

  RunContext ctx;
  ctx.node = task.node;
  ctx.worktree = task.worktree;
  ctx.env = task.base_env;
  for (const auto& [name, value] : task.parent_overlay) ctx.env[name] = value;
  for (const auto& [name, value] : done.report.env) ctx.env[name] = value;
  const std::string label = "validate-" + std::to_string(round);
  ctx.label = label + "-build";
  if (StepResult build = target->Build(ctx); !build.ok()) return Retry(StepProblem("build", build));
  if (!spec.target.check.empty()) {
    ctx.label = label + "-check";
    if (Measurement check = target->Check(ctx); !check.step.ok()) {
      return Retry(StepProblem("check", check.step));
    }
  }
  return done;
}

}  // namespace

LlmSpecialist::LlmSpecialist(const CampaignSpec* spec, const SpecialistSpec* config, Target* target,
                             ChatFn chat, LlmBudgetGuard* budget)
    : spec_(spec), config_(config), target_(target), chat_(std::move(chat)), budget_(budget) {
  ARBOR_CHECK(spec_ != nullptr && config_ != nullptr, "LlmSpecialist needs its specs");
  ARBOR_CHECK(chat_ != nullptr, "LlmSpecialist needs a chat function");
}

SpecialistResult LlmSpecialist::Implement(const Task& task, std::string_view protocol,
                                          std::string_view skill) const {
  ARBOR_CHECK(task.action != nullptr, "Task without an action");
  auto start = std::chrono::steady_clock::now();
  Conversation talk(ComposeImplement(task, protocol, skill, kAnswerFormat));
  SpecialistResult result;
  result.backend = SpecialistBackend::kLlm;
  result.overlay = task.parent_overlay;
  std::string goal = task.context.goal.empty() ? task.action->apply.goal : task.context.goal;
  result.summary = "llm " + config_->model + ": " + FirstLine(goal);
  auto finish = [&](Verdict verdict, std::string diagnosis) {
    result.status = verdict;
    result.diagnosis = std::move(diagnosis);
    result.prompt = talk.transcript();
    Price(*config_, &result.usage);
    result.duration_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  };

  const int max_rounds = std::max(1, config_->max_rounds);
  std::string last_problem;
  for (int round = 1; round <= max_rounds; ++round) {
    llm::ChatReply reply = talk.Ask(chat_, budget_, *config_, round, &result.usage);
    if (result.usage.over_budget) {  // not the idea's failure: nothing more may be asked
      return finish(Verdict::kSkipped, "llm: " + reply.error.message);
    }
    if (!reply.ok && !Retryable(reply)) {
      return finish(Verdict::kFailed, "llm: " + reply.error.message);
    }
    RoundOutcome outcome = reply.ok ? Attempt(*spec_, *config_, target_, task, round, reply.content)
                                    : Retry(ReplyProblem(reply));
    if (outcome.kind == RoundOutcome::Kind::kFatal)
      return finish(Verdict::kFailed, outcome.message);
    if (outcome.kind == RoundOutcome::Kind::kDone) {
      AgentReport& report = outcome.report;
      for (const auto& [name, value] : report.env) result.overlay[name] = value;
      if (!report.summary.empty()) result.summary = report.summary;
      if (!outcome.ignored.empty()) result.summary += "; " + IgnoredPathsWarning(outcome.ignored);
      result.confidence = report.confidence;
      result.findings = std::move(report.findings);
      result.questions = std::move(report.questions);
      result.proposals = std::move(report.proposals);
      return finish(Verdict::kApplied, "");
    }
    last_problem = FirstLine(outcome.message);
    if (round < max_rounds) {
      talk.Feedback(round + 1, "Round " + std::to_string(round) + ": " + outcome.message +
                                   "\n\nAnswer again with the complete change against the "
                                   "ORIGINAL files (the worktree is reset before each round).");
    }
  }
  return finish(Verdict::kFailed, "llm: no valid change after " + std::to_string(max_rounds) +
                                      " rounds: " + last_problem);
}

Proposal LlmSpecialist::Propose(const ProposeRequest& request, std::string_view protocol,
                                std::string_view skill) const {
  Conversation talk(ComposePropose(request, protocol, skill, kProposeFormat));
  Proposal proposal;
  auto finish = [&](std::string diagnosis) {
    proposal.diagnosis = std::move(diagnosis);
    proposal.prompt = talk.transcript();
    Price(*config_, &proposal.usage);
    return proposal;
  };
  const std::set<std::string> known(request.known.begin(), request.known.end());
  const std::string by = DomainOf(*config_, request.domain) + " specialist (llm)";
  std::string problem;
  for (int round = 1; round <= kProposeRounds; ++round) {
    llm::ChatReply reply = talk.Ask(chat_, budget_, *config_, round, &proposal.usage);
    if (!reply.ok && !Retryable(reply)) return finish("llm: " + reply.error.message);
    if (!reply.ok) {
      problem = ReplyProblem(reply);
    } else {
      std::vector<ActionSpec> actions;
      std::vector<std::string> rejected;
      Status parsed = ParseProposals(ExtractJsonArray(reply.content), *spec_, known, by,
                                     request.max_actions, &actions, &rejected);
      if (parsed) {
        proposal.actions = std::move(actions);
        proposal.rejected = std::move(rejected);
        return finish("");
      }
      problem = "the answer is not a JSON array of actions: " + parsed.error().message;
    }
    if (round < kProposeRounds) {
      talk.Feedback(round + 1, "Round " + std::to_string(round) + ": " + problem +
                                   "\n\nAnswer with only the JSON array of actions.");
    }
  }
  return finish("llm: " + problem);
}

}  // namespace arbor
