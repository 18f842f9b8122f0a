// ConfigOf and its encoding (core/model/config_diff.h): a CampaignSpec as one entry per setting,
// named and valued as the campaign file shows it.
#include <map>

#include "core/model/config_diff.h"
#include "util/duration.h"
#include "util/strings.h"

namespace arbor {
namespace {

// A string as a TOML basic string would show it: quoted, with escapes, one line.
std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string QuoteList(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  quoted.reserve(items.size());
  for (const std::string& s : items) quoted.push_back(Quote(s));
  return "[" + Join(quoted, ", ") + "]";
}

class Writer {
 public:
  explicit Writer(const std::string& workspace)
      : workspace_(workspace.empty() ? "" : workspace + "/") {}
  void Str(const std::string& key, const std::string& v) { Put(key, Quote(v)); }
  void Path(const std::string& key, const std::string& v) { Str(key, Relative(v)); }
  std::string Relative(const std::string& path) const {
    return !workspace_.empty() && StartsWith(path, workspace_) ? path.substr(workspace_.size())
                                                               : path;
  }
  void List(const std::string& key, const std::vector<std::string>& v) { Put(key, QuoteList(v)); }
  void Num(const std::string& key, double v) { Put(key, FormatDouble(v, 12)); }
  void Num(const std::string& key, const std::optional<double>& v) {
    Put(key, v ? FormatDouble(*v, 12) : "unset");
  }
  void Time(const std::string& key, double v) { Put(key, FormatDuration(v)); }
  void Time(const std::string& key, const std::optional<double>& v) {
    Put(key, v ? FormatDuration(*v) : "unset");
  }
  void Bool(const std::string& key, bool v) { Put(key, v ? "true" : "false"); }
  void Opt(const std::string& key, const std::optional<std::string>& v) {
    Put(key, v ? Quote(*v) : "unset");
  }
  void Put(const std::string& key, std::string value) { entries_[key] = std::move(value); }
  Config Take() {
    Config out;
    for (auto& [k, v] : entries_) out.push_back({k, std::move(v)});
    return out;
  }

 private:
  std::string workspace_;
  std::map<std::string, std::string> entries_;
};

std::string SourceText(const std::optional<MetricSource>& s) {
  return s ? Quote(s->text) : "unset";
}

std::string ApplyText(const Writer& w, const ActionSpec& a) {
  const ApplySpec& apply = a.apply;
  std::vector<std::string> parts;
  switch (apply.kind) {
    case ApplySpec::Kind::kEnv:
      for (const auto& [k, v] : apply.env) parts.push_back(k + "=" + Quote(v));
      return "env " + Join(parts, " ");
    case ApplySpec::Kind::kAppend:
      for (const auto& [k, v] : apply.append) parts.push_back(k + "+=" + Quote(v));
      return "append " + Join(parts, " ");
    case ApplySpec::Kind::kPatch:
      // The patch file's bytes count, not only its name (content_hash, set by the loader). With
      // values the hash covers the values too, which may be added: the name alone then.
      return "patch " + Quote(w.Relative(apply.patch)) +
             (a.values.empty() && !a.content_hash.empty() ? " content " + a.content_hash : "");
    case ApplySpec::Kind::kRun:
      return "run " + Quote(apply.run);
    case ApplySpec::Kind::kAgent:
      return "agent " + Quote(apply.agent) + " goal " + Quote(apply.goal);
  }
  return "";
}

void AddTarget(Writer& w, const TargetSpec& t) {
  w.Str("target.build", t.build);
  w.Str("target.check", t.check);
  w.Str("target.bench", t.bench);
  w.Str("target.profile", t.profile);
  w.Time("target.timeout", t.timeout_s);
  w.Time("target.build_timeout", t.build_timeout_s);
  w.Time("target.check_timeout", t.check_timeout_s);
  w.Time("target.bench_timeout", t.bench_timeout_s);
  w.Time("target.profile_timeout", t.profile_timeout_s);
  w.Num("target.memory_limit", t.memory_limit_mb);
  w.Time("target.cpu_limit", t.cpu_limit_s);
  w.Num("target.max_processes",
        t.max_processes ? std::optional<double>(*t.max_processes) : std::nullopt);
  w.Num("target.output_limit", t.output_limit_mb);
  for (const auto& [k, v] : t.env) w.Str("target.env." + k, v);
  // Written only when set, so a campaign recorded before these keys existed compares equal.
  if (!t.pass_env.empty()) w.List("target.pass_env", t.pass_env);
  if (t.serve.enabled()) {
    w.Str("target.serve.command", t.serve.command);
    w.Str("target.serve.ready", t.serve.ready);
    w.Time("target.serve.ready_timeout", t.serve.ready_timeout_s);
    w.Str("target.serve.stop", t.serve.stop);
    w.Time("target.serve.stop_timeout", t.serve.stop_timeout_s);
  }
}

void AddExecutor(Writer& w, const ExecutorSpec& e) {
  w.Put("executor.kind", e.kind == ExecutorSpec::Kind::kSlurm ? "\"slurm\"" : "\"local\"");
  if (e.kind == ExecutorSpec::Kind::kLocal) return;  // nothing else may be set
  w.Str("executor.partition", e.partition);
  w.Str("executor.account", e.account);
  w.Time("executor.time_limit", e.time_limit_s);
  w.Time("executor.queue_timeout", e.queue_timeout_s);
  w.Str("executor.gres", e.gres);
  w.Str("executor.constraint", e.constraint);
  w.List("executor.extra", e.extra);
  w.Bool("executor.exclusive_bench", e.exclusive_bench);
  w.Path("executor.shared_dir", e.shared_dir);
  for (const auto& [role, r] : e.roles) {
    const std::string p = "executor." + role + ".";
    w.Opt(p + "partition", r.partition);
    w.Opt(p + "account", r.account);
    w.Opt(p + "gres", r.gres);
    w.Opt(p + "constraint", r.constraint);
    w.Time(p + "time_limit", r.time_limit_s);
    w.Time(p + "queue_timeout", r.queue_timeout_s);
    w.List(p + "extra", r.extra);
  }
}

void AddMetric(Writer& w, const MetricSpec& m, const AccuracySpec& accuracy) {
  w.Str("metric.name", m.name);
  w.Put("metric.goal", m.goal == Goal::kMax ? "\"max\"" : "\"min\"");
  w.Put("metric.source", Quote(m.source.text));
  w.Num("metric.target", m.target);
  w.Num("metric.repetitions", m.repetitions);
  w.Put("metric.work", SourceText(m.work));
  w.Num("metric.min", m.min);
  w.Num("metric.max", m.max);
  w.Put("metric.fixed", m.fixed == BenchFixed::kWork ? "\"work\"" : "\"duration\"");
  for (const Guard& g : m.guards) {
    w.Put("metric.guard." + g.name, "source " + Quote(g.source.text) + " min " +
                                        (g.min ? FormatDouble(*g.min, 12) : "unset") + " max " +
                                        (g.max ? FormatDouble(*g.max, 12) : "unset"));
  }
  w.Put("accuracy.source", SourceText(accuracy.source));
  w.Num("accuracy.max_drop", accuracy.max_drop);
}

void AddSearchAndCritic(Writer& w, const SearchSpec& s, const CriticSpec& c) {
  w.Num("search.max_nodes", s.max_nodes);
  w.Time("search.max_time", s.max_time_s);
  w.Put("search.formula", s.formula == Formula::kPaper ? "\"paper\"" : "\"seed-literal\"");
  w.Num("search.explore", s.explore);
  w.Num("search.plateau", s.plateau);
  w.Num("search.plateau_stop", s.plateau_stop);
  w.Num("search.parallel", s.parallel);
  w.Num("search.min_gain", s.min_gain);
  w.Bool("search.reprofile", s.reprofile);
  w.Bool("search.revisit", s.revisit);
  w.Bool("search.pairs", s.pairs);
  w.Bool("search.branches", s.branches);
  w.Num("critic.min_effect", c.min_effect);
  w.Num("critic.alpha", c.alpha);
  w.Num("critic.max_cv", c.max_cv);
  w.Num("critic.circuit_breaker", c.circuit_breaker);
  w.Num("critic.min_free_disk_mb", c.min_free_disk_mb);
  w.Bool("critic.constraints", c.constraints);
  w.Bool("critic.recheck", c.recheck);
  w.Bool("critic.trust_large_gains", c.trust_large_gains);
  w.Num("critic.max_plausible_speedup", c.max_plausible_speedup);
}

void AddAgents(Writer& w, const CampaignSpec& spec) {
  w.Path("kb.path", spec.kb.path);
  w.Str("kb.workload", spec.kb.workload);
  w.Bool("kb.enabled", spec.kb.enabled);
  w.Num("llm.max_tokens", static_cast<double>(spec.llm.max_tokens));
  w.Num("llm.max_cost", spec.llm.max_cost);
  w.List("secrets.env", spec.secrets);
  w.Path("campaign.skills_dir", spec.skills_dir);
  for (const auto& [domain, s] : spec.specialists) {
    const std::string p = "specialists." + domain + ".";
    w.Str(p + "backend", std::string(SpecialistBackendName(s.backend)));
    w.Str(p + "command", s.command);
    w.Str(p + "model", s.model);
    w.Str(p + "base_url", s.base_url);
    w.Str(p + "api_key_env", s.api_key_env);
    w.Time(p + "timeout", s.timeout_s);
    w.Num(p + "retries", s.retries);
    w.Num(p + "max_rounds", s.max_rounds);
    w.Num(p + "temperature", s.temperature);
    w.Num(p + "max_answer_tokens", s.max_answer_tokens);
    w.Num(p + "cost_per_1k_prompt", s.cost_per_1k_prompt);
    w.Num(p + "cost_per_1k_completion", s.cost_per_1k_completion);
    w.Bool(p + "propose", s.propose);
    w.Num(p + "max_proposals", s.max_proposals);
    w.List(p + "allow", s.allow);
  }
}

void AddProfile(Writer& w, const ProfileSpec& p) {
  static const char* kFormats[] = {"auto",         "arbor",     "perf",
                                   "chrome-trace", "callgrind", "collapsed"};
  static const char* kTracks[] = {"all", "cpu", "gpu"};
  w.Str("profile.format", kFormats[static_cast<int>(p.format)]);
  w.Path("profile.profile_file", p.profile_file);
  w.Num("profile.top_n", p.top_n);
  w.Str("profile.tracks", kTracks[static_cast<int>(p.tracks)]);
  std::vector<std::string> groups;
  for (const ProfileGroup& g : p.groups) {
    groups.push_back(g.name + " (" + g.layer + ") " + QuoteList(g.match));
  }
  w.List("profile.group", groups);  // in file order: the first matching rule wins
}

void AddActions(Writer& w, const std::vector<ActionSpec>& actions) {
  for (const ActionSpec& a : actions) {
    const std::string p = "action." + a.id + ".";
    w.Put(p + "apply", ApplyText(w, a));
    for (const std::string& v : a.values) w.Put(p + "value." + v, "");
    w.Str(p + "layer", a.layer);
    w.Str(p + "category", a.category);
    w.Str(p + "describe", a.describe);
    w.List(p + "targets", a.targets);
    w.Num(p + "speedup", a.speedup);
    w.Time(p + "cost", a.cost_s);
    w.Num(p + "risk.accuracy", a.risk_accuracy);
    w.Num(p + "risk.crash", a.risk_crash);
    w.List(p + "requires", a.requires_);
    w.List(p + "conflicts", a.conflicts);
    if (a.refresh) w.Put(p + "refresh", "true");  // absent when false: older campaigns' keys stay
  }
}

// Escapes for one line per entry: "key\tvalue", with \\, \t and \n written as escapes.
std::string EscapeField(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::optional<std::string> UnescapeField(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    if (++i == s.size()) return std::nullopt;
    switch (s[i]) {
      case '\\':
        out += '\\';
        break;
      case 't':
        out += '\t';
        break;
      case 'n':
        out += '\n';
        break;
      default:
        return std::nullopt;
    }
  }
  return out;
}

}  // namespace

Config ConfigOf(const CampaignSpec& spec) {
  Writer w(spec.workspace);
  w.Put("campaign.seed", std::to_string(spec.seed));
  AddTarget(w, spec.target);
  AddExecutor(w, spec.executor);
  AddMetric(w, spec.metric, spec.accuracy);
  AddSearchAndCritic(w, spec.search, spec.critic);
  AddAgents(w, spec);
  AddProfile(w, spec.profile);
  AddActions(w, spec.actions);
  return w.Take();
}

std::string EncodeConfig(const Config& config) {
  std::string out;
  for (const ConfigEntry& e : config)
    out += EscapeField(e.key) + "\t" + EscapeField(e.value) + "\n";
  return out;
}

std::optional<Config> DecodeConfig(std::string_view text) {
  Config out;
  for (const std::string& line : Split(text, '\n')) {
    if (line.empty()) continue;
    size_t tab = line.find('\t');
    if (tab == std::string::npos) return std::nullopt;
    auto key = UnescapeField(std::string_view(line).substr(0, tab));
    auto value = UnescapeField(std::string_view(line).substr(tab + 1));
    if (!key || !value) return std::nullopt;
    if (!out.empty() && out.back().key >= *key) return std::nullopt;  // sorted, unique
    out.push_back({std::move(*key), std::move(*value)});
  }
  return out;
}

}  // namespace arbor
