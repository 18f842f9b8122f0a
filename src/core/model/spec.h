// CampaignSpec: the typed form of a campaign file (arbor.toml), as produced by config/.
//
// Core reads only this struct; it never sees TOML. Every field has the default that the
// campaign file reference (docs/campaign-file.md) documents. Paths are absolute once the
// config loader has resolved them relative to the campaign file.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/model/model.h"

namespace arbor {

// Where a metric is read from in a command's stdout (or $ARBOR_OUT/metrics.json).
struct MetricSource {
  enum class Kind { kJson, kRegex, kPreset };
  Kind kind = Kind::kJson;
  // "throughput.tok_per_s" for kJson; the pattern for kRegex (group 1); for kPreset what
  // follows "preset:" (util/metric_presets.h)
  std::string expr;
  std::string text;  // as written: "json:throughput.tok_per_s"
};

enum class Goal { kMax, kMin };
// The speedup a relative gain (critic/gate.h RelativeGain, > 0 better) stands for: the ratio of
// the two metrics oriented so that > 1 is better; 0 when undefined (a time cut by 100% or more).
inline double SpeedupOfGain(double gain, Goal goal) {
  if (goal == Goal::kMax) return 1 + gain;
  return gain < 1 ? 1 / (1 - gain) : 0;
}

// What a benchmark run holds fixed ([metric] fixed). A fixed-work run (N iterations, one
// request set) takes less wall time when it gets faster, so its command's duration witnesses
// a claimed gain; a fixed-duration run (run for 10 s, count operations) takes the same time
// whatever it does, so its duration says nothing (docs/critic.md, "Plausibility").
enum class BenchFixed { kWork, kDuration };

struct Guard {  // a secondary metric that must hold (SLA / Pareto)
  std::string name;
  MetricSource source;
  std::optional<double> min;
  std::optional<double> max;
};

// A long-lived server the node's check, bench and profile commands talk to ([target.serve];
// docs/campaign-file.md). Started in the node's worktree after its build, with the node's
// environment plus ARBOR_PORT; stopped when the node is done.
struct ServeSpec {
  std::string command;  // empty: no server
  std::string ready;    // polled until it exits 0; empty: until 127.0.0.1:$ARBOR_PORT accepts
  double ready_timeout_s = 60;
  std::string stop;  // optional graceful stop, run before the server's processes are killed
  double stop_timeout_s = 30;
  bool enabled() const { return !command.empty(); }
};

struct TargetSpec {
  std::string build;  // each may be empty: the step is then skipped
  std::string check;
  std::string bench;
  std::string profile;
  double timeout_s = 600;
  double build_timeout_s = 600;
  double check_timeout_s = 600;
  double bench_timeout_s = 600;
  double profile_timeout_s = 600;
  std::optional<double> memory_limit_mb;   // address-space limit per command
  std::optional<double> cpu_limit_s;       // CPU-time limit per command
  std::optional<int> max_processes;        // processes per command at once (pids cgroup)
  double output_limit_mb = 16;             // per stream; beyond it output is truncated
  std::map<std::string, std::string> env;  // baseline environment
  // Variables of Arbor's own environment passed to the commands besides the fixed allowlist:
  // names, or globs ('*', '?') that never match a secret (docs/secrets.md).
  std::vector<std::string> pass_env;
  ServeSpec serve;
};

struct MetricSpec {
  std::string name = "metric";
  Goal goal = Goal::kMax;
  MetricSource source;
  std::optional<double> target;
  int repetitions = 5;
  std::optional<MetricSource> work;
  std::vector<Guard> guards;
  // The range a correct reading can take ([metric] min/max). Outside it, and whatever the
  // range for a non-finite or negative value, a run's reading is bad output, never a sample.
  std::optional<double> min;
  std::optional<double> max;
  BenchFixed fixed = BenchFixed::kWork;
};

struct AccuracySpec {
  std::optional<MetricSource> source;
  double max_drop = 0.01;
};

enum class Formula { kPaper, kSeedLiteral };

struct SearchSpec {
  int max_nodes = 60;
  double max_time_s = 7200;
  Formula formula = Formula::kPaper;
  double explore = 0.6;  // C in h(a)
  int plateau = 6;       // consecutive non-kept nodes before exploration doubles
  // Consecutive non-kept nodes after which the campaign stops ("plateau"); 0 (the default):
  // never, the budget is spent.
  int plateau_stop = 0;
  int parallel = 1;
  // Measurement lanes (docs/lanes.md#measurement-lanes): up to `lanes` A/B measurements hold a
  // lane at once, each pinned to its lane's CPUs on the local executor. 1: one at a time,
  // unpinned, exactly as without lanes. lane_cpus[i]: lane i's CPU list ("0", "2-3"); empty:
  // lane i is CPU i.
  int lanes = 1;
  std::vector<std::string> lane_cpus;
  double min_gain = 0.002;  // candidates whose expected gain g(a) is below this are not tried
  // false (ablations only): the incumbent is profiled once, at the baseline; keeps and plateaus
  // do not re-profile, so scoring keeps the baseline's bottlenecks and nothing is re-queued.
  bool reprofile = true;
  // When every candidate has been tried and budget is left, ideas reverted under an earlier
  // incumbent get one more try on the current one (interactions the profile cannot show).
  bool revisit = true;
  // With revisit: when the single moves are spent too, pairs of candidates (moves.h, Pairs).
  bool pairs = true;
  // Branches (docs/search.md): a pair whose other side ran at the incumbent is opened under
  // that node, and reverted pairs, swaps and branches are followed up in their own subtrees.
  // false (the `arbor-hillclimb` ablation): every node is a child of the incumbent.
  bool branches = true;
};

struct CriticSpec {
  bool enabled = true;  // false only through --no-critic (ablations); recorded on the campaign
  double min_effect = 0.01;
  double alpha = 0.05;
  double max_cv = 0.05;
  int circuit_breaker = 5;
  double min_free_disk_mb = 512;  // below it no new node is dispatched (health)
  // false (ablations only): constraints published by failures never prune a candidate (they
  // are still recorded on the node, so the report shows what would have been pruned).
  bool constraints = true;
  // When a candidate fails the check, re-run the incumbent's own check once: if it fails too,
  // the incumbent was kept on a check that passed by chance (flaky) and is un-kept, and the
  // candidate is not blamed (docs/critic.md).
  bool recheck = true;
  // A confirmed gain beyond the plausibility bound (an anomaly) is kept only with evidence
  // (docs/critic.md, "Plausibility"): true trusts such gains and keeps them after the re-runs.
  bool trust_large_gains = false;
  // The largest speedup the user declares plausible; replaces the computed bound when set.
  std::optional<double> max_plausible_speedup;
};

struct KbSpec {
  std::string path;      // empty: ARBOR_KB, else the default location (docs/knowledge-base.md)
  std::string workload;  // signature tags, "model=7b batch=32"; empty: derived from the campaign
  bool enabled = true;   // false: neither read nor write the knowledge base
};

// One domain's specialist ([specialists.<domain>]; docs/specialists.md).
struct SpecialistSpec {
  std::string domain;
  SpecialistBackend backend = SpecialistBackend::kBuiltin;
  std::string command;  // command: the coding-agent CLI (shell), prompt on stdin
  std::string model;    // llm: OpenAI-compatible chat completions
  std::string base_url;
  std::string api_key_env;
  double timeout_s = 600;  // command: the whole run; llm: one request
  int retries = 3;         // llm: retries on 429/5xx/transport errors, with backoff
  int max_rounds = 3;      // llm implement: apply → build → check rounds before giving up
  double temperature = 0;
  int max_answer_tokens = 0;          // llm: per answer (0: the server's default)
  double cost_per_1k_prompt = 0;      // llm: price of 1,000 prompt tokens, for max_cost
  double cost_per_1k_completion = 0;  // llm: price of 1,000 completion tokens
  bool propose = false;   // asked for new candidate actions after the baseline and each keep
  int max_proposals = 5;  // new actions accepted per proposal round
  std::vector<std::string> allow;  // patch policy: files it may change (globs); empty: any
};

// The campaign's budget for LLM specialists ([llm]); 0 = unlimited. When spent, LLM dispatch
// stops (agent actions of llm domains are no longer scored, proposal rounds end).
struct LlmBudget {
  long long max_tokens = 0;
  double max_cost = 0;
};

// How an action changes the node's state. Exactly one kind is set.
struct ApplySpec {
  enum class Kind { kEnv, kAppend, kPatch, kRun, kAgent };
  Kind kind = Kind::kEnv;
  std::map<std::string, std::string> env;     // kEnv: set variables
  std::map<std::string, std::string> append;  // kAppend: append to variables
  std::string patch;                          // kPatch: absolute path of a unified diff
  std::string run;                            // kRun: shell command run in the worktree
  std::string agent;                          // kAgent: specialist domain
  std::string goal;                           // kAgent: what to achieve
};

struct ActionSpec {
  std::string id;
  std::string layer;
  std::string category;
  std::string describe;
  std::vector<std::string> targets;  // profile component globs; empty = whole program
  double speedup = 1.1;              // prior speedup on its targets
  double cost_s = 60;                // prior wall-clock cost
  double risk_accuracy = 0.0;
  double risk_crash = 0.0;
  std::vector<std::string> requires_;  // action ids kept on the path first
  std::vector<std::string> conflicts;  // action ids that may not be on the path
  // A `run` action whose files derive from the state it ran on (a PGO profile, an autotuner's
  // table): a change kept after it makes them stale, and the search re-runs it on the new state
  // (moves.h, Move::kRefresh).
  bool refresh = false;
  ApplySpec apply;
  std::vector<std::string> values;  // one candidate per value; "{value}" substituted
  int line = 0;                     // where it was declared, for messages
  // "" for the campaign file's actions; else who proposed it ("kernel specialist at node 7").
  std::string proposed_by;
  // Hash of what the action does (its apply spec, the patch file's bytes): the knowledge base
  // tells "the same change" from "a change under the same name". Set by the config loader.
  std::string content_hash;
};

// How the profile command's output is read ([profile] in the campaign file).
enum class ProfileFormat { kAuto, kArbor, kPerf, kChromeTrace, kCallgrind, kCollapsed };

// Which Chrome-trace tracks count toward the shares (see docs/metrics-and-profiles.md).
enum class TraceTracks { kAll, kCpu, kGpu };

// One grouping rule: raw names (symbols, kernels, frames) matching any glob become component
// `name` with `layer`. The first matching rule, in file order, wins.
struct ProfileGroup {
  std::string name;
  std::vector<std::string> match;
  std::string layer;
};

struct ProfileSpec {
  ProfileFormat format = ProfileFormat::kAuto;  // kAuto: detected from the text
  std::string profile_file;  // "": $ARBOR_OUT/profile.json, else stdout; else this file
  int top_n = 20;            // raw names kept on the node (and components when no groups)
  TraceTracks tracks = TraceTracks::kAll;
  std::vector<ProfileGroup> groups;
};

// Where the target's commands run ([executor] in the campaign file; docs/slurm.md). Local: on
// this machine, under exec/'s runner. Slurm: each command is a Slurm job submitted from this
// machine (builds, checks and profiles with sbatch, benchmarks with srun).
struct ExecutorSpec {
  enum class Kind { kLocal, kSlurm };
  Kind kind = Kind::kLocal;
  std::string partition;               // --partition ("": the cluster's default)
  std::string account;                 // --account
  std::optional<double> time_limit_s;  // --time; unset: the step's timeout plus a minute
  // How long a job may wait in Slurm's queue before it starts; the step's timeout then counts
  // from its start. Unset: the queue wait counts against the step's timeout.
  std::optional<double> queue_timeout_s;
  std::string gres;                // --gres, e.g. "gpu:1"
  std::string constraint;          // --constraint, e.g. "a100"
  std::vector<std::string> extra;  // further sbatch/srun/salloc options, passed last
  bool exclusive_bench = true;     // benchmark jobs get --exclusive
  // The folder every compute node sees at the same path; the campaign's workspace (its
  // worktrees and run folders under .arbor/) must lie under it.
  std::string shared_dir;

  // One kind of job's own hardware ([executor.build], [executor.check], [executor.bench],
  // [executor.profile]): a key it sets replaces [executor]'s ("" drops the option), a key it
  // omits keeps [executor]'s, and its `extra` options follow [executor]'s.
  struct RoleOptions {
    std::optional<std::string> partition, account, gres, constraint;
    std::optional<double> time_limit_s, queue_timeout_s;
    std::vector<std::string> extra;
  };
  std::map<std::string, RoleOptions> roles;  // by role: "build", "check", "bench", "profile"

  // The options of `role`'s jobs: this table with the role's own applied.
  ExecutorSpec For(const std::string& role) const {
    ExecutorSpec e = *this;
    e.roles.clear();
    auto it = roles.find(role);
    if (it == roles.end()) return e;
    const RoleOptions& r = it->second;
    if (r.partition) e.partition = *r.partition;
    if (r.account) e.account = *r.account;
    if (r.gres) e.gres = *r.gres;
    if (r.constraint) e.constraint = *r.constraint;
    if (r.time_limit_s) e.time_limit_s = r.time_limit_s;
    if (r.queue_timeout_s) e.queue_timeout_s = r.queue_timeout_s;
    e.extra.insert(e.extra.end(), r.extra.begin(), r.extra.end());
    return e;
  }
};

struct CampaignSpec {
  std::string file;  // absolute path of the campaign file
  std::string name;
  std::string workspace;  // absolute path of the git repository
  unsigned long long seed = 1;
  TargetSpec target;
  ExecutorSpec executor;
  MetricSpec metric;
  AccuracySpec accuracy;
  SearchSpec search;
  CriticSpec critic;
  KbSpec kb;
  std::map<std::string, SpecialistSpec> specialists;  // by domain
  LlmBudget llm;
  // Environment variables whose values are secrets ([secrets] env, plus every specialist's
  // api_key_env): scrubbed from prompts, logs, the store and the knowledge base.
  std::vector<std::string> secrets;
  // Skills overriding Arbor's shipped skills/<domain>.md ([specialists] is per domain, so this
  // is [campaign] skills_dir; default: a skills/ folder beside the campaign file, if any).
  std::string skills_dir;
  std::vector<ActionSpec> actions;
  ProfileSpec profile;
};

}  // namespace arbor
