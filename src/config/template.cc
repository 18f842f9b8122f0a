#include "config/template.h"

#include <string_view>

#include "config/values.h"
#include "util/strings.h"

namespace arbor {

namespace {

// Kept in step with docs/campaign-file.md; template_test parses it so it cannot rot silently.
constexpr std::string_view kTemplate =
    R"toml(# Arbor campaign file. Reference of every key: docs/campaign-file.md.
# Durations: "250ms", "90s", "10m", "2h", "1h30m" or a number of seconds.
# Sizes: "512M", "2G" or a number of megabytes. Relative paths are relative to this file.
# Unknown keys are errors, so a typo never silently falls back to a default.
# Once the commands are filled in, run `arbor try`: it builds, checks, benchmarks and profiles
# the workspace once as a campaign would, prints what each command printed and the metric read
# from it, and stores nothing. When it says "ready", `arbor run` starts the campaign.

[campaign]
name = "@NAME@"               # letters, digits, . _ - : branch arbor/<name>, state in .arbor/<name>/
workspace = "."               # the git repository to optimize (must be clean when a run starts)
seed = 1                      # every random choice derives from it, so a campaign can be replayed

[target]
# Each command runs in the node's worktree with the node's environment plus ARBOR_NODE,
# ARBOR_WORKTREE, ARBOR_OUT (an empty folder for metrics.json / profile.json) and
# ARBOR_REPETITION. An empty or absent command skips its step; only bench is required.
build = "make"                # non-zero exit: the candidate does not build
check = "make check"          # non-zero exit: the candidate is not accurate
bench = "./bench"             # prints the metric (see [metric]); runs `repetitions` times per arm
profile = ""                  # prints {"total_s": .., "components": [..]}; "" = no profiling
timeout = "10m"               # per command; the four timeouts below default to it
# build_timeout = "20m"
# check_timeout = "10m"
# bench_timeout = "5m"
# profile_timeout = "5m"
# memory_limit = "4G"         # address-space limit per command (default: none)
# cpu_limit = "30m"           # CPU-time limit per command (default: none)
output_limit = "16M"          # per stream; longer output is truncated
env = {}                      # baseline environment, e.g. { OMP_NUM_THREADS = "1" }
# pass_env = ["CUDA_*"]       # more of Arbor's own environment for the commands (secrets never)

# A long-lived server (inference server, database, web service) per node: started after build,
# kept up for check, every bench run and profile of that node, then stopped with its children.
# [target.serve]
# command = "./server --port $ARBOR_PORT"   # $ARBOR_PORT: a free loopback port per server
# ready = "curl -sf http://127.0.0.1:$ARBOR_PORT/health"   # "" = until the port accepts
# ready_timeout = "60s"
# stop = ""                   # optional graceful stop before SIGTERM/SIGKILL of what is left
# stop_timeout = "30s"

[metric]
name = "metric"               # how reports name it, e.g. "tok_per_s"
goal = "max"                  # "max" (throughput) or "min" (time, latency)
source = "json:metric"        # bench's stdout or $ARBOR_OUT/metrics.json: "json:a.b.0.c",
                              # or "regex:time: ([0-9.]+)" (capture group 1 is the value)
# target = 900.0              # optional value to reach; it drives the gap term of the score
repetitions = 5               # runs per arm, 1..1000; the Critic may ask for more
# work = "json:work.items"    # optional work done per run; less than the baseline = inflation
# min = 0.0                   # optional range of a correct reading (default: above 0);
# max = 1e9                   # a value outside it is bad output, never a sample
fixed = "work"                # "work" (N iterations) or "duration" (runs for a fixed time)

# Secondary metrics that must hold (SLA / Pareto); one block each, with min, max or both.
# [[metric.guard]]
# name = "p99_ms"
# source = "json:latency.p99_ms"
# max = 250.0

[accuracy]
# source = "json:accuracy.match"   # optional numeric accuracy, besides check's exit code
max_drop = 0.01               # largest tolerated drop of that accuracy

[search]
max_nodes = 60                # budget: candidates built and measured
max_time = "2h"               # budget: wall-clock time
formula = "paper"             # scoring h(a): "paper" or "seed-literal"
explore = 0.6                 # exploration constant C, >= 0
plateau = 6                   # consecutive non-kept nodes before re-exploring
# plateau_stop = 12            # stop after this many non-kept nodes in a row (default: never)
parallel = 1                  # specialists in flight at once
min_gain = 0.002              # candidates whose expected gain is below this are not tried

[critic]
min_effect = 0.01             # smallest relative gain worth keeping
alpha = 0.05                  # significance of the keep test, in (0, 1)
max_cv = 0.05                 # above this the benchmark is too noisy to gate: more repetitions
circuit_breaker = 5           # consecutive crashes before rolling back / pausing a category
trust_large_gains = false     # keep gains beyond the plausibility bound without evidence
# max_plausible_speedup = 50  # the largest speedup you believe; replaces the computed bound

[kb]
# path = "~/.local/share/arbor/kb.db"  # default: $ARBOR_KB, else $XDG_DATA_HOME/arbor/kb.db
workload = "@NAME@"           # what is measured; priors transfer between matching workloads

# Specialists carry out `agent` actions, by domain; builtin handles declarative actions.
# [specialists.kernel]
# backend = "llm"             # builtin | command | llm
# model = "gpt-4.1"           # llm: model and base_url are required
# base_url = "http://localhost:8000/v1"
# api_key_env = "OPENAI_API_KEY"
#
# [specialists.refactor]
# backend = "command"         # command: runs it with the prompt on stdin, in the worktree
# command = "my-agent --non-interactive"

# Actions: what the search may try. Each one changes the node's state in exactly one way
# (apply); priors (speedup, cost, risk) rank it until measurements and the knowledge base know
# better.
[[action]]
id = "compiler.O3"            # unique; letters, digits, . _ -
layer = "compiler"            # application | framework | compiler | kernel | hardware | any text
# category = "compiler"       # default: the id's prefix before the first '.'
describe = "Optimize with -O3"
targets = []                  # profile components it speeds up (globs); [] = the whole program
speedup = 1.2                 # prior speedup on its targets, > 0
cost = "1m"                   # prior cost of trying it
risk = { accuracy = 0.0, crash = 0.0 }   # prior probabilities, each in [0, 1)
apply = { append = { CXXFLAGS = " -O3" } }

[[action]]
id = "runtime.threads"
layer = "application"
describe = "Worker threads"
speedup = 1.5
cost = "30s"
risk = { accuracy = 0.0, crash = 0.01 }
requires = ["compiler.O3"]    # actions that must be kept on the path first
# conflicts = ["runtime.single-thread"]   # actions that may not be on the same path
values = [2, 4, 8]            # one candidate per value, substituted for {value} in apply
apply = { env = { OMP_NUM_THREADS = "{value}" } }

# The kinds of apply (exactly one per action):
#   apply = { env = { NAME = "value" } }                 # set environment variables
#   apply = { append = { CXXFLAGS = " -march=native" } } # append to environment variables
#   apply = { patch = "patches/fuse-qkv.diff" }          # a unified diff, relative to this file
#   apply = { run = "sed -i 's/x/y/' src/a.cc" }         # any command; its diff is the change
#   apply = { agent = "kernel", goal = "Fuse RMSNorm into the next matmul" }  # a specialist
)toml";

}  // namespace

std::string SanitizeCampaignName(const std::string& name) {
  std::string out;
  for (char c : name) out += IsNameChar(c) ? c : '-';
  while (out.find("..") != std::string::npos) out = ReplaceAll(out, "..", ".");
  while (!out.empty() && (out.front() == '.' || out.front() == '-')) out.erase(0, 1);
  if (EndsWith(out, ".lock")) out += "-campaign";
  return IsValidCampaignName(out) ? out : "campaign";
}

std::string CampaignTemplate(const std::string& name) {
  return ReplaceAll(std::string(kTemplate), "@NAME@", SanitizeCampaignName(name));
}

}  // namespace arbor
