// Malformed campaign files and the exact one-line message each must produce. The messages are a
// user-facing contract (docs/campaign-file.md), so they are compared whole.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "config/campaign_loader.h"

namespace arbor {
namespace {

// Six lines; rows append to it, so their first line is line 7 (still inside [metric]).
const std::string kHead =
    "[campaign]\n"
    "name = \"demo\"\n"
    "[target]\n"
    "bench = \"./bench\"\n"
    "[metric]\n"
    "source = \"json:a.b\"\n";

// An action at lines 7.. ([[action]], id, layer), then `rest`.
std::string Action(const std::string& id, const std::string& rest) {
  return "[[action]]\nid = \"" + id + "\"\nlayer = \"compiler\"\n" + rest;
}

const std::string kApply = "apply = { run = \"true\" }\n";

struct Row {
  const char* name;
  std::string text;
  std::string expected;
};

const Row kRows[] = {
    {"syntax_error", kHead + "target = \n",
     "c.toml:7:10: TOML syntax error: Error while parsing key-value pair: expected value, saw "
     "'\\n'"},
    {"duplicate_key_is_syntax", kHead + "source = \"json:x\"\n",
     "c.toml:7:10: TOML syntax error: Error while parsing key-value pair: cannot redefine "
     "existing string 'source'"},
    {"unknown_key_suggestion", kHead + "repetitons = 3\n",
     "c.toml:7:1: unknown key 'repetitons' in [metric]; did you mean 'repetitions'?"},
    {"unknown_key_lists_keys", kHead + "[kb]\nzzz = 1\n",
     "c.toml:8:1: unknown key 'zzz' in [kb]; expected one of: path, workload, enabled"},
    {"unknown_table", kHead + "[serach]\n",
     "c.toml:7:2: unknown key 'serach' at the top level; did you mean 'search'?"},
    {"unknown_key_reported_in_file_order", kHead + "zeta = 1\nalpha = 2\n",
     "c.toml:7:1: unknown key 'zeta' in [metric]; expected one of: name, goal, source, target, "
     "repetitions, work, guard, min, max, fixed"},
    {"metric_max_not_above_min", kHead + "min = 5\nmax = 5\n",
     "c.toml:8:7: invalid metric.max 5: not above min; expected max > min"},
    {"metric_fixed_unknown", kHead + "fixed = \"time\"\n",
     "c.toml:7:9: invalid metric.fixed \"time\"; expected \"work\" or \"duration\""},
    {"critic_max_plausible_not_above_one", kHead + "[critic]\nmax_plausible_speedup = 1\n",
     "c.toml:8:25: invalid critic.max_plausible_speedup 1: not above 1; expected the largest "
     "speedup you believe, e.g. 50"},
    {"lanes_zero", kHead + "[search]\nlanes = 0\n",
     "c.toml:8:9: invalid search.lanes 0; expected an integer >= 1"},
    {"lanes_not_int", kHead + "[search]\nlanes = \"2\"\n",
     "c.toml:8:9: expected an integer for search.lanes, got string"},
    {"lanes_above_parallel", kHead + "[search]\nparallel = 1\nlanes = 2\n",
     "c.toml:9:9: invalid search.lanes 2: above search.parallel (1); a lane measures one node of a "
     "batch, so set parallel >= lanes"},
    {"lanes_above_cpus", kHead + "[search]\nparallel = 4096\nlanes = 4096\n",
     "c.toml:9:9: invalid search.lanes 4096: more lanes than this machine's online CPUs; give each "
     "lane its CPUs with search.lane_cpus"},
    {"lane_cpus_count", kHead + "[search]\nparallel = 2\nlanes = 2\nlane_cpus = [\"0\"]\n",
     "c.toml:10:13: invalid search.lane_cpus (array): 1 CPU list(s) for 2 lane(s); expected one "
     "per lane"},
    {"lane_cpus_bad_list",
     kHead + "[search]\nparallel = 2\nlanes = 2\nlane_cpus = [\"0\", \"3-1\"]\n",
     "c.toml:10:19: invalid search.lane_cpus[1] \"3-1\": bad CPU list \"3-1\": descending range"},
    {"lane_cpus_not_strings", kHead + "[search]\nparallel = 2\nlanes = 2\nlane_cpus = [0, 1]\n",
     "c.toml:10:14: expected a string for search.lane_cpus[0], got integer"},
    {"critic_trust_not_bool", kHead + "[critic]\ntrust_large_gains = \"yes\"\n",
     "c.toml:8:21: expected true or false for critic.trust_large_gains, got string"},
    {"wrong_type_string", "[campaign]\nname = \"d\"\n[target]\nbench = \"b\"\nbuild = 1\n",
     "c.toml:5:9: expected a string for target.build, got integer"},
    {"missing_campaign_table", "[target]\nbench = \"b\"\n",
     "c.toml:1:1: missing required table [campaign]; expected [campaign] with name = \"...\""},
    {"missing_campaign_name", "# x\n[campaign]\nseed = 2\n",
     "c.toml:2:1: missing required key 'name' in [campaign]; expected a name like "
     "\"tinyserve\""},
    {"bad_campaign_name", "[campaign]\nname = \"my run\"\n",
     "c.toml:2:8: invalid campaign.name \"my run\"; expected letters, digits, '.', '_' or '-' "
     "that make a git branch and a folder name"},
    {"campaign_name_dotdot", "[campaign]\nname = \"a..b\"\n",
     "c.toml:2:8: invalid campaign.name \"a..b\"; expected letters, digits, '.', '_' or '-' "
     "that make a git branch and a folder name"},
    {"negative_seed", "[campaign]\nname = \"d\"\nseed = -1\n",
     "c.toml:3:8: invalid campaign.seed -1; expected an integer >= 0"},
    {"float_seed", "[campaign]\nname = \"d\"\nseed = 1.5\n",
     "c.toml:3:8: expected an integer for campaign.seed, got float"},
    {"missing_target", "[campaign]\nname = \"d\"\n",
     "c.toml:1:1: missing required table [target]; expected [target] with bench = \"...\""},
    {"missing_bench", "[campaign]\nname = \"d\"\n[target]\nbuild = \"make\"\n",
     "c.toml:3:1: missing required key 'bench' in [target]; expected the command that prints "
     "the metric"},
    {"bad_duration", "[campaign]\nname = \"d\"\n[target]\nbench = \"b\"\ntimeout = \"10x\"\n",
     "c.toml:5:11: invalid target.timeout \"10x\": unknown unit \"x\"; expected a positive "
     "duration like \"90s\", \"10m\", \"1h30m\" or a number of seconds"},
    {"zero_timeout", "[campaign]\nname = \"d\"\n[target]\nbench = \"b\"\nbench_timeout = 0\n",
     "c.toml:5:17: invalid target.bench_timeout 0; expected a positive duration like \"90s\", "
     "\"10m\", \"1h30m\" or a number of seconds"},
    {"duration_wrong_type", "[campaign]\nname = \"d\"\n[target]\nbench = \"b\"\ncpu_limit = true\n",
     "c.toml:5:13: expected a duration (string or number of seconds) for target.cpu_limit, got "
     "boolean"},
    {"bad_size", "[campaign]\nname = \"d\"\n[target]\nbench = \"b\"\nmemory_limit = \"2X\"\n",
     "c.toml:5:16: invalid target.memory_limit \"2X\": unknown unit 'X'; expected a size like "
     "\"512M\", \"2G\" or megabytes"},
    {"max_processes_zero", "[campaign]\nname = \"d\"\n[target]\nbench = \"b\"\nmax_processes = 0\n",
     "c.toml:5:17: invalid target.max_processes 0; expected an integer from 1 to 4194304"},
    {"env_value_not_string", "[campaign]\nname = \"d\"\n[target]\nbench = \"b\"\nenv = { A = 1 }\n",
     "c.toml:5:13: expected a string for target.env.A, got integer"},
    {"bad_env_name", "[campaign]\nname = \"d\"\n[target]\nbench = \"b\"\nenv = { A-B = \"1\" }\n",
     "c.toml:5:9: invalid environment variable name 'A-B' in target.env; expected letters, "
     "digits and '_', not starting with a digit"},
    {"missing_metric_source", "[campaign]\nname = \"d\"\n[target]\nbench = \"b\"\n[metric]\n",
     "c.toml:5:1: missing required key 'source' in [metric]; expected \"json:PATH\", "
     "\"regex:PATTERN\" or \"preset:TOOL\""},
    {"bad_source_prefix",
     "[campaign]\nname = \"d\"\n[target]\nbench = \"b\"\n[metric]\nsource = \"xml:a\"\n",
     "c.toml:6:10: invalid metric.source \"xml:a\": unknown prefix 'xml'; expected "
     "\"json:PATH\", \"regex:PATTERN\" or \"preset:TOOL\""},
    // Found by tests/fuzz/campaign_fuzz: a TOML string holding a newline made a two-line error.
    {"newline_in_source",
     "[campaign]\nname = \"d\"\n[target]\nbench = \"b\"\n[metric]\nsource = \"json\\n:a.b\"\n",
     "c.toml:6:10: invalid metric.source \"json\\n:a.b\": unknown prefix 'json\\n'; expected "
     "\"json:PATH\", \"regex:PATTERN\" or \"preset:TOOL\""},
    {"regex_without_group",
     "[campaign]\nname = \"d\"\n[target]\nbench = \"b\"\n[metric]\nsource = \"regex:[0-9]+\"\n",
     "c.toml:6:10: invalid metric.source \"regex:[0-9]+\": the pattern has no capture group; "
     "expected the number inside ( ), as in \"regex:tok/s: ([0-9.]+)\""},
    {"json_empty_segment",
     "[campaign]\nname = \"d\"\n[target]\nbench = \"b\"\n[metric]\nsource = \"json:a..b\"\n",
     "c.toml:6:10: invalid metric.source \"json:a..b\": empty JSON path segment; expected "
     "dot-separated keys like \"json:throughput.tok_per_s\""},
    {"bad_goal", kHead + "goal = \"maximum\"\n",
     "c.toml:7:8: invalid metric.goal \"maximum\"; expected \"max\" or \"min\""},
    {"repetitions_zero", kHead + "repetitions = 0\n",
     "c.toml:7:15: invalid metric.repetitions 0; expected an integer from 1 to 1000"},
    {"repetitions_float", kHead + "repetitions = 2.5\n",
     "c.toml:7:15: expected an integer for metric.repetitions, got float"},
    {"guard_without_bounds", kHead + "[[metric.guard]]\nname = \"p99\"\nsource = \"json:p99\"\n",
     "c.toml:7:1: guard 'p99' has neither min nor max; expected min = N, max = N or both"},
    {"guard_min_above_max",
     kHead + "[[metric.guard]]\nname = \"p99\"\nsource = \"json:p99\"\nmin = 5\nmax = 1\n",
     "c.toml:11:7: invalid metric.guard.max 1: below min; expected max >= min"},
    {"number_wrong_type", kHead + "[critic]\nmax_cv = \"low\"\n",
     "c.toml:8:10: expected a number for critic.max_cv, got string"},
    {"alpha_out_of_range", kHead + "[critic]\nalpha = 1.5\n",
     "c.toml:8:9: invalid critic.alpha 1.5; expected a number in (0, 1)"},
    {"bad_formula", kHead + "[search]\nformula = \"ucb\"\n",
     "c.toml:8:11: invalid search.formula \"ucb\"; expected \"paper\" or \"seed-literal\""},
    {"max_nodes_zero", kHead + "[search]\nmax_nodes = 0\n",
     "c.toml:8:13: invalid search.max_nodes 0; expected an integer >= 1"},
    {"llm_without_model", kHead + "[specialists.kernel]\nbackend = \"llm\"\n",
     "c.toml:7:1: missing required key 'model' in [specialists.kernel]; expected a model name "
     "(backend \"llm\" needs it)"},
    {"command_without_command", kHead + "[specialists.kernel]\nbackend = \"command\"\n",
     "c.toml:7:1: missing required key 'command' in [specialists.kernel]; expected the agent "
     "command (backend \"command\" runs it)"},
    {"bad_backend", kHead + "[specialists.kernel]\nbackend = \"gpt\"\n",
     "c.toml:8:11: invalid specialists.kernel.backend \"gpt\"; expected \"builtin\", "
     "\"command\" or \"llm\""},
    {"action_as_table", kHead + "[action]\nid = \"a\"\n",
     "c.toml:7:1: expected an array of tables ([[action]]) for action, got table"},
    {"action_missing_id", kHead + "[[action]]\nlayer = \"x\"\n",
     "c.toml:7:1: missing required key 'id' in [[action]]; expected a unique id like "
     "\"kernel.gemm-tiled\""},
    {"action_bad_id", kHead + Action("a b", kApply),
     "c.toml:8:6: invalid action.id \"a b\"; expected letters, digits, '.', '_' or '-'"},
    {"action_missing_layer", kHead + "[[action]]\nid = \"a\"\n" + kApply,
     "c.toml:7:1: missing required key 'layer' in [[action]]; expected a layer like "
     "\"compiler\" or \"kernel\""},
    {"action_unknown_key", kHead + Action("a", "spedup = 2\n" + kApply),
     "c.toml:10:1: unknown key 'spedup' in [[action]]; did you mean 'speedup'?"},
    {"duplicate_action_id", kHead + Action("a", kApply) + Action("a", kApply),
     "c.toml:12:6: invalid action.id \"a\": already declared on line 7; expected a unique id"},
    {"requires_unknown_id",
     kHead + Action("kernel.gemm", "requires = [\"compiler.o3\"]\n" + kApply) +
         Action("compiler.O3", kApply),
     "c.toml:10:13: action 'kernel.gemm' requires unknown action 'compiler.o3'; did you mean "
     "'compiler.O3'?"},
    {"requires_unknown_id_no_suggestion", kHead + Action("a", "requires = [\"zzzzzz\"]\n" + kApply),
     "c.toml:10:13: action 'a' requires unknown action 'zzzzzz'; expected an id declared by "
     "an [[action]]"},
    {"requires_cycle",
     kHead + Action("a", "requires = [\"b\"]\n" + kApply) +
         Action("b", "requires = [\"c\"]\n" + kApply) +
         Action("c", "requires = [\"a\"]\n" + kApply),
     "c.toml:20:13: requires cycle a -> b -> c -> a; expected requires to form no cycle"},
    {"requires_self", kHead + Action("a", "requires = [\"a\"]\n" + kApply),
     "c.toml:10:13: action 'a' requires itself; expected the ids of other actions"},
    {"conflicts_self", kHead + Action("a", "conflicts = [\"a\"]\n" + kApply),
     "c.toml:10:14: action 'a' conflicts with itself; expected the ids of other actions"},
    {"requires_and_conflicts",
     kHead + Action("a", "requires = [\"b\"]\nconflicts = [\"b\"]\n" + kApply) +
         Action("b", kApply),
     "c.toml:11:14: action 'a' conflicts with 'b', which it also requires; expected it in "
     "only one list"},
    {"refresh_not_run", kHead + Action("a", "refresh = true\napply = { env = { A = \"1\" } }\n"),
     "c.toml:10:11: invalid action.refresh true; expected it only on an action with apply = { "
     "run = ... }, whose command derives files from the state it runs on (a PGO profile)"},
    {"refresh_not_bool", kHead + Action("a", "refresh = \"yes\"\napply = { run = \"x\" }\n"),
     "c.toml:10:11: expected true or false for action.refresh, got string"},
    {"missing_apply", kHead + Action("a", ""),
     "c.toml:7:1: missing required key 'apply' in [[action]]; expected apply = { env = { ... } "
     "} or append, patch, run, agent"},
    {"apply_two_kinds", kHead + Action("a", "apply = { env = { A = \"1\" }, run = \"x\" }\n"),
     "c.toml:10:9: apply has both 'env' and 'run'; expected exactly one of env, append, patch, "
     "run, agent"},
    {"apply_no_kind", kHead + Action("a", "apply = {}\n"),
     "c.toml:10:9: apply names no change; expected exactly one of env, append, patch, run, "
     "agent"},
    {"apply_unknown_key", kHead + Action("a", "apply = { agnet = \"k\", goal = \"g\" }\n"),
     "c.toml:10:11: unknown key 'agnet' in action.apply; did you mean 'agent'?"},
    {"agent_without_goal", kHead + Action("a", "apply = { agent = \"kernel\" }\n"),
     "c.toml:10:9: missing required key 'goal' in action.apply; expected goal = \"what the "
     "agent should achieve\" with agent"},
    {"goal_without_agent", kHead + Action("a", "apply = { run = \"x\", goal = \"g\" }\n"),
     "c.toml:10:22: 'goal' without 'agent' in action.apply; expected goal only with agent"},
    {"empty_env", kHead + Action("a", "apply = { env = {} }\n"),
     "c.toml:10:17: empty action.apply.env; expected at least one variable, like { NAME = "
     "\"x\" }"},
    {"values_without_placeholder",
     kHead + Action("a", "values = [1, 2]\napply = { env = { T = \"4\" } }\n"),
     "c.toml:10:10: action 'a' has values but its apply never uses {value}; expected "
     "\"{value}\" in apply"},
    {"duplicate_values",
     kHead + Action("a", "values = [16, 32, 16.0]\napply = { env = { T = \"{value}\" } }\n"),
     "c.toml:10:19: invalid action.values[2] 16: same as action.values[0]; expected unique "
     "values"},
    {"empty_values", kHead + Action("a", "values = []\napply = { env = { T = \"{value}\" } }\n"),
     "c.toml:10:10: empty action.values; expected at least one value"},
    {"boolean_value",
     kHead + Action("a", "values = [true]\napply = { env = { T = \"{value}\" } }\n"),
     "c.toml:10:11: expected a string or a number for action.values[0], got boolean"},
    {"patch_missing", kHead + Action("a", "apply = { patch = \"patches/x.diff\" }\n"),
     "c.toml:10:19: invalid action.apply.patch \"patches/x.diff\": "
     "/nonexistent-arbor/patches/x.diff does not exist; expected a patch file, relative to the "
     "campaign file"},
    {"risk_out_of_range", kHead + Action("a", "risk = { crash = 1.0 }\n" + kApply),
     "c.toml:10:18: invalid action.risk.crash 1; expected a number in [0, 1)"},
    {"risk_unknown_key", kHead + Action("a", "risk = { acuracy = 0.1 }\n" + kApply),
     "c.toml:10:10: unknown key 'acuracy' in action.risk; did you mean 'accuracy'?"},
    {"speedup_zero", kHead + Action("a", "speedup = 0\n" + kApply),
     "c.toml:10:11: invalid action.speedup 0; expected a number > 0"},
    {"targets_not_strings", kHead + Action("a", "targets = [\"m*\", 3]\n" + kApply),
     "c.toml:10:18: expected a string for action.targets[1], got integer"},
    {"serve_unknown_key", kHead + "[target.serve]\ncommand = \"s\"\nreddy = \"r\"\n",
     "c.toml:9:1: unknown key 'reddy' in [target.serve]; did you mean 'ready'?"},
    {"serve_without_command", kHead + "[target.serve]\nready = \"r\"\n",
     "c.toml:7:1: missing required key 'command' in [target.serve]; expected the command that "
     "starts the server, e.g. \"./server --port $ARBOR_PORT\""},
    {"serve_empty_command", kHead + "[target.serve]\ncommand = \" \"\n",
     "c.toml:8:11: invalid target.serve.command \" \"; expected a non-empty string"},
    {"serve_ready_timeout_zero", kHead + "[target.serve]\ncommand = \"s\"\nready_timeout = 0\n",
     "c.toml:9:17: invalid target.serve.ready_timeout 0; expected a positive duration like "
     "\"90s\", \"10m\", \"1h30m\" or a number of seconds"},
    {"serve_with_slurm", kHead + "[target.serve]\ncommand = \"s\"\n[executor]\nkind = \"slurm\"\n",
     "c.toml:10:1: [target.serve] runs its server on this machine and cannot serve Slurm jobs; "
     "expected kind = \"local\" with [target.serve]"},
    {"pass_env_not_a_name",
     "[campaign]\nname = \"d\"\n[target]\nbench = \"b\"\npass_env = [\"MY_*\", \"A-B\"]\n"
     "[metric]\nsource = \"json:a\"\n",
     "c.toml:5:21: invalid target.pass_env[1] \"A-B\"; expected a variable name or a glob of "
     "letters, digits, '_', '*' and '?'"},
    {"pass_env_not_an_array",
     "[campaign]\nname = \"d\"\n[target]\nbench = \"b\"\npass_env = \"MY_*\"\n"
     "[metric]\nsource = \"json:a\"\n",
     "c.toml:5:12: expected an array of strings for target.pass_env, got string"},
};

// Names the row instead of dumping its bytes when a case fails.
void PrintTo(const Row& row, std::ostream* os) { *os << row.name; }

class MalformedTest : public testing::TestWithParam<Row> {};

TEST_P(MalformedTest, ReportsOneExactLine) {
  const Row& row = GetParam();
  Result<CampaignSpec> spec = ParseCampaign(row.text, "c.toml", "/nonexistent-arbor");
  ASSERT_FALSE(spec.ok()) << row.text;
  EXPECT_EQ(spec.error().message, row.expected) << row.text;
  EXPECT_EQ(spec.error().message.find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(CampaignFile, MalformedTest, testing::ValuesIn(kRows),
                         [](const testing::TestParamInfo<Row>& info) { return info.param.name; });

}  // namespace
}  // namespace arbor
