#include "config/campaign_loader.h"

#include <toml++/toml.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "config/action_loader.h"
#include "config/agents_loader.h"
#include "config/executor_loader.h"
#include "config/profile_loader.h"
#include "config/toml_reader.h"
#include "config/values.h"
#include "util/cpu_list.h"
#include "util/escape.h"
#include "util/strings.h"

namespace arbor {

namespace {

using config_internal::ErrorAt;
using config_internal::NumberRule;
using config_internal::Section;
using Zero = config_internal::Section::Zero;

constexpr int kMaxInt = std::numeric_limits<int>::max();

// A table that must be present; its absence is reported at the top of the file.
Status RequireTable(const Section& root, std::string_view key, std::string_view expected,
                    const toml::table** out) {
  ARBOR_TRY(root.GetTable(key, out));
  if (*out != nullptr) return {};
  return root.AtHeader("missing required table [" + std::string(key) + "]; expected " +
                       std::string(expected));
}

Status ReadCampaign(const Section& root, const std::string& base_dir, CampaignSpec* spec) {
  const toml::table* table = nullptr;
  ARBOR_TRY(RequireTable(root, "campaign", "[campaign] with name = \"...\"", &table));
  Section s(root.file(), *table, "campaign", "in [campaign]");
  ARBOR_TRY(s.CheckKeys({"name", "workspace", "seed", "skills_dir"}));
  std::string skills;
  ARBOR_TRY(s.ReadNonEmptyString("skills_dir", &skills));
  if (!skills.empty()) {
    spec->skills_dir = ResolvePath(base_dir, skills);
  } else if (std::error_code ec; std::filesystem::is_directory(base_dir + "/skills", ec)) {
    spec->skills_dir = base_dir + "/skills";
  }
  ARBOR_TRY(s.Require("name", "a name like \"tinyserve\""));
  ARBOR_TRY(s.ReadString("name", &spec->name));
  if (!IsValidCampaignName(spec->name)) {
    return s.Invalid(*s.Get("name"), "campaign.name",
                     "; expected letters, digits, '.', '_' or '-' that make a git branch and a "
                     "folder name");
  }
  std::string workspace = ".";
  ARBOR_TRY(s.ReadNonEmptyString("workspace", &workspace));
  spec->workspace = ResolvePath(base_dir, workspace);
  if (const toml::node* seed = s.Get("seed")) {
    if (!seed->is_integer()) return s.WrongType(*seed, "campaign.seed", "an integer");
    if (seed->as_integer()->get() < 0) {
      return s.Invalid(*seed, "campaign.seed", "; expected an integer >= 0");
    }
    spec->seed = static_cast<unsigned long long>(seed->as_integer()->get());
  }
  return {};
}

// [target.serve]: the long-lived server of each node (docs/campaign-file.md).
Status ReadServe(const Section& target, ServeSpec* serve) {
  const toml::table* table = nullptr;
  ARBOR_TRY(target.GetTable("serve", &table));
  if (table == nullptr) return {};
  Section s(target.file(), *table, "target.serve", "in [target.serve]");
  ARBOR_TRY(s.CheckKeys({"command", "ready", "ready_timeout", "stop", "stop_timeout"}));
  ARBOR_TRY(s.Require("command",
                      "the command that starts the server, e.g. "
                      "\"./server --port $ARBOR_PORT\""));
  ARBOR_TRY(s.ReadNonEmptyString("command", &serve->command));
  ARBOR_TRY(s.ReadString("ready", &serve->ready));
  ARBOR_TRY(s.ReadDuration("ready_timeout", Zero::kRejected, &serve->ready_timeout_s));
  ARBOR_TRY(s.ReadString("stop", &serve->stop));
  return s.ReadDuration("stop_timeout", Zero::kRejected, &serve->stop_timeout_s);
}

// pass_env: names or globs of Arbor's own variables the commands may see.
Status ReadPassEnv(const Section& target, std::vector<std::string>* out) {
  ARBOR_TRY(target.ReadStringArray("pass_env", out));
  for (size_t i = 0; i < out->size(); ++i) {
    const std::string& pattern = (*out)[i];
    if (pattern.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                  "0123456789_*?") == std::string::npos) {
      continue;
    }
    return target.Invalid(*target.Get("pass_env")->as_array()->get(i),
                          "target.pass_env[" + std::to_string(i) + "]",
                          "; expected a variable name or a glob of letters, digits, '_', '*' "
                          "and '?'");
  }
  return {};
}

Status ReadTarget(const Section& root, TargetSpec* target) {
  const toml::table* table = nullptr;
  ARBOR_TRY(RequireTable(root, "target", "[target] with bench = \"...\"", &table));
  Section s(root.file(), *table, "target", "in [target]");
  ARBOR_TRY(
      s.CheckKeys({"build", "check", "bench", "profile", "timeout", "build_timeout",
                   "check_timeout", "bench_timeout", "profile_timeout", "memory_limit", "cpu_limit",
                   "output_limit", "max_processes", "env", "pass_env", "serve"}));
  ARBOR_TRY(s.Require("bench", "the command that prints the metric"));
  ARBOR_TRY(s.ReadString("build", &target->build));
  ARBOR_TRY(s.ReadString("check", &target->check));
  ARBOR_TRY(s.ReadNonEmptyString("bench", &target->bench));
  ARBOR_TRY(s.ReadString("profile", &target->profile));
  ARBOR_TRY(s.ReadDuration("timeout", Zero::kRejected, &target->timeout_s));
  // The per-step timeouts inherit `timeout`, so one key covers the common case.
  target->build_timeout_s = target->check_timeout_s = target->bench_timeout_s =
      target->profile_timeout_s = target->timeout_s;
  ARBOR_TRY(s.ReadDuration("build_timeout", Zero::kRejected, &target->build_timeout_s));
  ARBOR_TRY(s.ReadDuration("check_timeout", Zero::kRejected, &target->check_timeout_s));
  ARBOR_TRY(s.ReadDuration("bench_timeout", Zero::kRejected, &target->bench_timeout_s));
  ARBOR_TRY(s.ReadDuration("profile_timeout", Zero::kRejected, &target->profile_timeout_s));
  ARBOR_TRY(s.ReadSizeMb("memory_limit", &target->memory_limit_mb));
  ARBOR_TRY(s.ReadDuration("cpu_limit", Zero::kRejected, &target->cpu_limit_s));
  if (s.Get("max_processes") != nullptr) {
    int max_processes = 0;
    ARBOR_TRY(s.ReadInt("max_processes", 1, 1 << 22, &max_processes));
    target->max_processes = max_processes;
  }
  std::optional<double> output_limit;
  ARBOR_TRY(s.ReadSizeMb("output_limit", &output_limit));
  if (output_limit) target->output_limit_mb = *output_limit;
  ARBOR_TRY(ReadPassEnv(s, &target->pass_env));
  ARBOR_TRY(ReadServe(s, &target->serve));
  return s.ReadEnv("env", &target->env);
}

Status ReadGuards(const Section& metric, std::vector<Guard>* guards) {
  std::vector<const toml::table*> tables;
  ARBOR_TRY(metric.GetTableArray("guard", &tables));
  for (const toml::table* table : tables) {
    Section s(metric.file(), *table, "metric.guard", "in [[metric.guard]]");
    ARBOR_TRY(s.CheckKeys({"name", "source", "min", "max"}));
    ARBOR_TRY(s.Require("name", "a name like \"p99_ms\""));
    ARBOR_TRY(s.Require("source", "\"json:PATH\", \"regex:PATTERN\" or \"preset:TOOL\""));
    Guard guard;
    ARBOR_TRY(s.ReadNonEmptyString("name", &guard.name));
    for (const Guard& other : *guards) {
      if (other.name == guard.name) {
        return s.Invalid(*s.Get("name"), "metric.guard.name",
                         ": declared twice; expected a unique name per guard");
      }
    }
    std::optional<MetricSource> source;
    ARBOR_TRY(s.ReadSource("source", &source));
    guard.source = *source;
    ARBOR_TRY(s.ReadNumber("min", NumberRule::kAny, &guard.min));
    ARBOR_TRY(s.ReadNumber("max", NumberRule::kAny, &guard.max));
    if (!guard.min && !guard.max) {
      return s.AtHeader("guard '" + guard.name +
                        "' has neither min nor max; expected min = N, max = N or both");
    }
    if (guard.min && guard.max && *guard.min > *guard.max) {
      return s.Invalid(*s.Get("max"), "metric.guard.max", ": below min; expected max >= min");
    }
    guards->push_back(std::move(guard));
  }
  return {};
}

Status ReadMetric(const Section& root, MetricSpec* metric) {
  const toml::table* table = nullptr;
  ARBOR_TRY(RequireTable(root, "metric", "[metric] with source = \"json:...\"", &table));
  Section s(root.file(), *table, "metric", "in [metric]");
  ARBOR_TRY(s.CheckKeys(
      {"name", "goal", "source", "target", "repetitions", "work", "guard", "min", "max", "fixed"}));
  ARBOR_TRY(s.Require("source", "\"json:PATH\", \"regex:PATTERN\" or \"preset:TOOL\""));
  ARBOR_TRY(s.ReadNonEmptyString("name", &metric->name));
  std::string goal = "max";
  ARBOR_TRY(s.ReadString("goal", &goal));
  if (goal != "max" && goal != "min") {
    return s.Invalid(*s.Get("goal"), "metric.goal", "; expected \"max\" or \"min\"");
  }
  metric->goal = goal == "max" ? Goal::kMax : Goal::kMin;
  std::optional<MetricSource> source;
  ARBOR_TRY(s.ReadSource("source", &source));
  metric->source = *source;
  ARBOR_TRY(s.ReadNumber("target", NumberRule::kAny, &metric->target));
  ARBOR_TRY(s.ReadInt("repetitions", 1, 1000, &metric->repetitions));
  ARBOR_TRY(s.ReadSource("work", &metric->work));
  // The range of a correct reading: anything outside is bad output (docs/critic.md).
  ARBOR_TRY(s.ReadNumber("min", NumberRule::kAny, &metric->min));
  ARBOR_TRY(s.ReadNumber("max", NumberRule::kAny, &metric->max));
  if (metric->min && metric->max && *metric->min >= *metric->max) {
    return s.Invalid(*s.Get("max"), "metric.max", ": not above min; expected max > min");
  }
  if (const toml::node* node = s.Get("fixed")) {
    std::string fixed;
    ARBOR_TRY(s.ReadString("fixed", &fixed));
    if (fixed != "work" && fixed != "duration") {
      return s.Invalid(*node, "metric.fixed", "; expected \"work\" or \"duration\"");
    }
    metric->fixed = fixed == "work" ? BenchFixed::kWork : BenchFixed::kDuration;
  }
  return ReadGuards(s, &metric->guards);
}

Status ReadAccuracy(const Section& root, AccuracySpec* accuracy) {
  const toml::table* table = nullptr;
  ARBOR_TRY(root.GetTable("accuracy", &table));
  if (table == nullptr) return {};
  Section s(root.file(), *table, "accuracy", "in [accuracy]");
  ARBOR_TRY(s.CheckKeys({"source", "max_drop"}));
  ARBOR_TRY(s.ReadSource("source", &accuracy->source));
  return s.ReadNumber("max_drop", NumberRule::kNonNegative, &accuracy->max_drop);
}

// [search] lanes and lane_cpus (docs/lanes.md#measurement-lanes). Whether the machine has the
// default lanes' CPUs (lane i on CPU i) is checked for the local executor only.
Status ReadLanes(const Section& s, bool local, SearchSpec* search) {
  ARBOR_TRY(s.ReadInt("lanes", 1, kMaxInt, &search->lanes));
  if (search->lanes > 1 && search->parallel < search->lanes) {
    return s.Invalid(*s.Get("lanes"), "search.lanes",
                     ": above search.parallel (" + std::to_string(search->parallel) +
                         "); a lane measures one node of a batch, so set parallel >= lanes");
  }
  ARBOR_TRY(s.ReadStringArray("lane_cpus", &search->lane_cpus));
  const toml::node* cpus = s.Get("lane_cpus");
  if (cpus == nullptr) {
    // Lane i on CPU i: the machine must have them (a cluster's lanes are its allocations).
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (local && search->lanes > 1 && online > 0 && search->lanes > online) {
      return s.Invalid(*s.Get("lanes"), "search.lanes",
                       ": more lanes than this machine's online CPUs; give each lane its CPUs with "
                       "search.lane_cpus");
    }
    return {};
  }
  if (static_cast<int>(search->lane_cpus.size()) != search->lanes) {
    return s.Invalid(*cpus, "search.lane_cpus",
                     ": " + std::to_string(search->lane_cpus.size()) + " CPU list(s) for " +
                         std::to_string(search->lanes) + " lane(s); expected one per lane");
  }
  const toml::array& array = *cpus->as_array();
  for (size_t i = 0; i < search->lane_cpus.size(); ++i) {
    Result<std::vector<int>> parsed = ParseCpuList(search->lane_cpus[i]);
    if (!parsed.ok()) {
      return s.Invalid(*array.get(i), "search.lane_cpus[" + std::to_string(i) + "]",
                       ": " + parsed.error().message);
    }
  }
  return {};
}

Status ReadSearch(const Section& root, bool local, SearchSpec* search) {
  const toml::table* table = nullptr;
  ARBOR_TRY(root.GetTable("search", &table));
  if (table == nullptr) return {};
  Section s(root.file(), *table, "search", "in [search]");
  ARBOR_TRY(s.CheckKeys({"max_nodes", "max_time", "formula", "explore", "plateau", "parallel",
                         "min_gain", "reprofile", "revisit", "pairs", "branches", "plateau_stop",
                         "lanes", "lane_cpus"}));
  ARBOR_TRY(s.ReadInt("max_nodes", 1, kMaxInt, &search->max_nodes));
  ARBOR_TRY(s.ReadDuration("max_time", Zero::kRejected, &search->max_time_s));
  if (const toml::node* node = s.Get("formula")) {
    std::string formula;
    ARBOR_TRY(s.ReadString("formula", &formula));
    if (formula != "paper" && formula != "seed-literal") {
      return s.Invalid(*node, "search.formula", "; expected \"paper\" or \"seed-literal\"");
    }
    search->formula = formula == "paper" ? Formula::kPaper : Formula::kSeedLiteral;
  }
  ARBOR_TRY(s.ReadNumber("explore", NumberRule::kNonNegative, &search->explore));
  ARBOR_TRY(s.ReadInt("plateau", 1, kMaxInt, &search->plateau));
  ARBOR_TRY(s.ReadInt("plateau_stop", 0, kMaxInt, &search->plateau_stop));
  ARBOR_TRY(s.ReadInt("parallel", 1, kMaxInt, &search->parallel));
  ARBOR_TRY(ReadLanes(s, local, search));
  ARBOR_TRY(s.ReadBool("reprofile", &search->reprofile));
  ARBOR_TRY(s.ReadBool("revisit", &search->revisit));
  ARBOR_TRY(s.ReadBool("pairs", &search->pairs));
  ARBOR_TRY(s.ReadBool("branches", &search->branches));
  return s.ReadNumber("min_gain", NumberRule::kNonNegative, &search->min_gain);
}

Status ReadCritic(const Section& root, CriticSpec* critic) {
  const toml::table* table = nullptr;
  ARBOR_TRY(root.GetTable("critic", &table));
  if (table == nullptr) return {};
  Section s(root.file(), *table, "critic", "in [critic]");
  ARBOR_TRY(s.CheckKeys({"min_effect", "alpha", "max_cv", "circuit_breaker", "min_free_disk_mb",
                         "constraints", "recheck", "trust_large_gains", "max_plausible_speedup"}));
  ARBOR_TRY(s.ReadBool("constraints", &critic->constraints));
  ARBOR_TRY(s.ReadBool("trust_large_gains", &critic->trust_large_gains));
  ARBOR_TRY(
      s.ReadNumber("max_plausible_speedup", NumberRule::kPositive, &critic->max_plausible_speedup));
  if (critic->max_plausible_speedup && *critic->max_plausible_speedup <= 1) {
    return s.Invalid(*s.Get("max_plausible_speedup"), "critic.max_plausible_speedup",
                     ": not above 1; expected the largest speedup you believe, e.g. 50");
  }
  ARBOR_TRY(s.ReadBool("recheck", &critic->recheck));
  ARBOR_TRY(s.ReadNumber("min_effect", NumberRule::kNonNegative, &critic->min_effect));
  ARBOR_TRY(s.ReadNumber("min_free_disk_mb", NumberRule::kNonNegative, &critic->min_free_disk_mb));
  ARBOR_TRY(s.ReadNumber("alpha", NumberRule::kUnitOpen, &critic->alpha));
  ARBOR_TRY(s.ReadNumber("max_cv", NumberRule::kPositive, &critic->max_cv));
  return s.ReadInt("circuit_breaker", 1, kMaxInt, &critic->circuit_breaker);
}

Status ReadKb(const Section& root, const std::string& base_dir, KbSpec* kb) {
  const toml::table* table = nullptr;
  ARBOR_TRY(root.GetTable("kb", &table));
  if (table == nullptr) return {};
  Section s(root.file(), *table, "kb", "in [kb]");
  ARBOR_TRY(s.CheckKeys({"path", "workload", "enabled"}));
  ARBOR_TRY(s.ReadBool("enabled", &kb->enabled));
  ARBOR_TRY(s.ReadNonEmptyString("path", &kb->path));
  ARBOR_TRY(s.ReadNonEmptyString("workload", &kb->workload));
  if (kb->path.empty()) return {};
  const char* home = std::getenv("HOME");
  if ((kb->path == "~" || StartsWith(kb->path, "~/")) && home != nullptr && *home != '\0') {
    kb->path = ResolvePath(home, kb->path.size() > 2 ? kb->path.substr(2) : ".");
  } else if (kb->path.front() != '~') {
    kb->path = ResolvePath(base_dir, kb->path);
  }
  return {};
}

Error SyntaxError(const std::string& file, const toml::parse_error& e) {
  std::string description(e.description());
  for (char& c : description) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return ErrorAt(file, e.source(), "TOML syntax error: " + description);
}

// ParseCampaign before the control characters of quoted input are escaped in its error.
Result<CampaignSpec> ParseCampaignText(std::string_view text, const std::string& path_for_messages,
                                       const std::string& base_dir) {
  toml::table document;
#if TOML_EXCEPTIONS
  try {
    document = toml::parse(text, std::string_view(path_for_messages));
  } catch (const toml::parse_error& e) {
    return SyntaxError(path_for_messages, e);
  }
#else
  toml::parse_result parsed = toml::parse(text, std::string_view(path_for_messages));
  if (!parsed) return SyntaxError(path_for_messages, parsed.error());
  document = std::move(parsed).table();
#endif
  std::error_code ec;
  std::filesystem::path base = std::filesystem::absolute(base_dir.empty() ? "." : base_dir, ec);
  if (ec) return MakeError(path_for_messages + ": cannot resolve folder '" + base_dir + "'");
  std::string base_abs = ResolvePath("/", base.string());

  CampaignSpec spec;
  spec.file = path_for_messages;
  Section root(path_for_messages, document, "", "at the top level");
  ARBOR_TRY(root.CheckKeys({"campaign", "target", "executor", "metric", "accuracy", "search",
                            "critic", "kb", "specialists", "llm", "secrets", "action", "profile"}));
  ARBOR_TRY(ReadCampaign(root, base_abs, &spec));
  ARBOR_TRY(ReadTarget(root, &spec.target));
  ARBOR_TRY(config_internal::ReadExecutor(root, base_abs, &spec));
  ARBOR_TRY(ReadMetric(root, &spec.metric));
  ARBOR_TRY(ReadAccuracy(root, &spec.accuracy));
  ARBOR_TRY(ReadSearch(root, spec.executor.kind == ExecutorSpec::Kind::kLocal, &spec.search));
  ARBOR_TRY(ReadCritic(root, &spec.critic));
  ARBOR_TRY(ReadKb(root, base_abs, &spec.kb));
  ARBOR_TRY(config_internal::ReadAgents(root, base_abs, &spec));
  ARBOR_TRY(config_internal::ReadActions(root, base_abs, &spec.actions));
  ARBOR_TRY(config_internal::ReadProfile(root, &spec.profile));
  return spec;
}

}  // namespace

Result<CampaignSpec> ParseCampaign(std::string_view text, const std::string& path_for_messages,
                                   const std::string& base_dir) {
  // Messages quote keys and values, and TOML strings may hold newlines ("a\nb"): escaped here,
  // once, so every error stays one line whichever reader produced it.
  Result<CampaignSpec> spec = ParseCampaignText(text, path_for_messages, base_dir);
  if (!spec.ok()) return MakeError(EscapeControlChars(spec.error().message), spec.error().code);
  return spec;
}

Result<CampaignSpec> LoadCampaignFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return MakeError(path + ": cannot read the campaign file (" + std::strerror(errno) +
                     "); expected a readable arbor.toml (arbor init writes one)");
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  if (ec) return MakeError(path + ": cannot resolve the campaign file's folder");
  absolute = absolute.lexically_normal();
  Result<CampaignSpec> spec = ParseCampaign(text.str(), path, absolute.parent_path().string());
  if (spec.ok()) spec->file = absolute.string();
  return spec;
}

}  // namespace arbor
