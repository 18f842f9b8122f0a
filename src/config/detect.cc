#include "config/detect.h"

#include <algorithm>

#include "config/detect_internal.h"
#include "config/template.h"
#include "util/escape.h"
#include "util/strings.h"

namespace arbor {
namespace {

using detect::Bench;
using detect::Plan;

std::string FirstWord(const std::string& command) {
  std::string t = Trim(command);
  size_t end = t.find_first_of(" \t\n");
  std::string word = t.substr(0, end);
  size_t slash = word.rfind('/');
  return slash == std::string::npos ? word : word.substr(slash + 1);
}

bool Contains(const std::string& s, std::string_view what) {
  return s.find(what) != std::string::npos;
}

// The user's --bench command, read with the preset of the tool it runs when there is one.
Bench FromUser(const std::string& command, const Plan& plan) {
  Bench b{Bench::Kind::kWallTime, command, "--bench"};
  const std::string tool = FirstWord(command);
  if (Contains(command, "--benchmark_format=json") || Contains(command, "--benchmark_out=")) {
    b.kind = Bench::Kind::kGoogleBenchmark;
    return b;
  }
  for (const Bench& found : plan.benches) {
    if (found.kind == Bench::Kind::kGoogleBenchmark && FirstWord(found.command) == tool) {
      b.kind = Bench::Kind::kGoogleBenchmark;
      b.command += " --benchmark_format=json";
      return b;
    }
  }
  if (tool == "hyperfine") {
    b.kind = Bench::Kind::kHyperfine;
    if (!Contains(command, "--export-json"))
      b.command += " --export-json \"$ARBOR_OUT/metrics.json\"";
  } else if (tool == "wrk") {
    b.kind = Bench::Kind::kWrk;
  } else if (tool == "fio") {
    b.kind = Bench::Kind::kFio;
    if (!Contains(command, "--output-format")) b.command += " --output-format=json";
  } else if (Contains(command, "pytest") && Contains(command, "--benchmark")) {
    b.kind = Bench::Kind::kPytestBenchmark;
    if (!Contains(command, "--benchmark-json")) {
      b.command += " --benchmark-json=\"$ARBOR_OUT/metrics.json\"";
    }
  }
  return b;
}

struct Metric {
  std::string name, goal, source, fixed, note;
};

Metric MetricFor(const Bench& b) {
  switch (b.kind) {
    case Bench::Kind::kGoogleBenchmark:
      return {"real_time_ns", "min", "preset:google-benchmark", "duration",
              "Real time per iteration (ns), the geometric mean over every benchmark of the\n"
              "executable; \"preset:google-benchmark:real_time:NAME\" reads one of them. Google\n"
              "Benchmark runs each benchmark for a set time, hence fixed = \"duration\"."};
    case Bench::Kind::kPytestBenchmark:
      return {"mean_s", "min", "preset:pytest-benchmark", "duration",
              "Mean time per round (s), the geometric mean over every benchmark."};
    case Bench::Kind::kHyperfine:
      return {"mean_s", "min", "preset:hyperfine", "duration",
              "Mean wall time (s), the geometric mean over hyperfine's commands."};
    case Bench::Kind::kWrk:
      return {"requests_per_sec", "max", "preset:wrk", "duration",
              "Requests per second of wrk's report; a run with non-2xx/3xx responses gives\n"
              "no reading."};
    case Bench::Kind::kFio:
      return {"iops", "max", "preset:fio", Contains(b.command, "time_based") ? "duration" : "work",
              "I/O operations per second, summed over fio's jobs."};
    case Bench::Kind::kWallTime:
      break;
  }
  return {"wall_s", "min", "json:wall_s", "work",
          "The benchmark command's wall time (s): it prints no metric Arbor knows, so the\n"
          "command is timed. A program that prints its own figure is measured better: read\n"
          "it with a json:, regex: or preset: source (docs/metrics-and-profiles.md)."};
}

std::string Comment(const std::string& text) {
  std::string out;
  for (const std::string& line : Split(text, '\n')) out += "# " + line + "\n";
  return out;
}

std::string TomlArray(const std::vector<std::string>& values) {
  std::vector<std::string> quoted;
  for (const std::string& v : values) quoted.push_back(TomlString(v));
  return "[" + Join(quoted, ", ") + "]";
}

std::vector<std::string> ThreadCounts(int cpus) {
  std::vector<std::string> out;
  for (int n = 1; n < cpus; n *= 2) out.push_back(std::to_string(n));
  out.push_back(std::to_string(std::max(cpus, 1)));
  return out;
}

std::vector<std::string> CpuSets(int cpus) {
  std::vector<std::string> out = {"0"};
  if (cpus >= 4) out.push_back("0-" + std::to_string(cpus / 2 - 1));
  return out;
}

}  // namespace

std::string TomlString(const std::string& text) {
  if (text.find('\n') == std::string::npos) return TomlBasicString(text);
  // A multi-line string: '"' stays readable except the third of a run and the quotes right
  // before the closing delimiter, which are escaped.
  size_t trailing = 0;
  while (trailing < text.size() && text[text.size() - 1 - trailing] == '"') ++trailing;
  std::string body;
  int run = 0;
  for (char c : std::string_view(text).substr(0, text.size() - trailing)) {
    if (c == '"' && run == 2) {
      body += "\\\"";
      run = 0;
      continue;
    }
    run = c == '"' ? run + 1 : 0;
    body += c == '\\' ? std::string("\\\\") : std::string(1, c);
  }
  for (size_t i = 0; i < trailing; ++i) body += "\\\"";
  return "\"\"\"\n" + body + "\"\"\"";
}

std::vector<std::string> DetectFilesToRead(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    if (out.size() >= kMaxFilesRead) break;
    if (detect::IsBuildFile(p)) out.push_back(p);
  }
  for (const std::string& p : paths) {
    if (out.size() >= kMaxFilesRead) break;
    if (detect::IsPythonTestFile(p)) out.push_back(p);
  }
  return out;
}

std::vector<std::string> DetectLibraries() { return StarterNeededLibraries(); }
std::vector<std::string> DetectCommands() { return StarterNeededCommands(); }

Result<Detection> Detect(const RepoFiles& repo, const HostFacts& host,
                         const DetectOptions& options) {
  std::optional<Plan> plan = detect::FindPlan(repo);
  if (!plan) {
    return MakeError(
        "no build system at the top of the repository (CMakeLists.txt, meson.build, "
        "Cargo.toml, Makefile, pyproject.toml or setup.py): write the campaign file from the "
        "template with `arbor init` (without --detect)");
  }
  std::optional<Bench> bench;
  if (!options.bench.empty()) {
    bench = FromUser(options.bench, *plan);
  } else if (!plan->benches.empty()) {
    bench = plan->benches.front();
  }
  if (!bench) {
    return MakeError("found " + plan->found +
                     " but no benchmark (a Google Benchmark executable, a bench target or "
                     "pytest-benchmark tests): name the command to measure with --bench "
                     "\"COMMAND\"");
  }
  std::string bench_command = "$RUN_PREFIX " + bench->command;
  if (bench->kind == Bench::Kind::kWallTime) {
    bench_command = detect::WallTimeCommand(bench_command);
  }
  const Metric metric = MetricFor(*bench);

  Detection d;
  d.system = plan->system;
  d.found.push_back("build: " + plan->found);
  d.found.push_back("check: " + (plan->check.empty() ? std::string("none found (the check "
                                                                   "always passes)")
                                                     : plan->check));
  d.found.push_back("benchmark: " + bench->what + ", metric " + metric.name + " (" + metric.source +
                    ")");
  for (size_t i = 1; i < plan->benches.size() && options.bench.empty(); ++i) {
    d.found.push_back("also a benchmark: " + plan->benches[i].what + " (not used)");
  }

  StarterContext ctx;
  ctx.system = plan->system;
  ctx.libraries = host.libraries;
  ctx.commands = host.commands;
  if (plan->openmp) ctx.features.insert("openmp");
  if (host.thp == "always" || host.thp == "madvise") ctx.features.insert("thp");
  ctx.placeholders = {{"OPT_LEVELS", plan->opt_levels},
                      {"THREADS", TomlArray(ThreadCounts(host.cpus))},
                      {"CPUSETS", TomlArray(CpuSets(host.cpus))},
                      {"TRAIN", bench_command}};
  std::vector<std::string> files = StarterFilesFor(plan->system, plan->c_extensions);
  if (!plan->compiler_actions) {
    files.erase(std::remove(files.begin(), files.end(), "c-cxx.toml"), files.end());
    if (!plan->compiler_note.empty()) d.skipped.push_back(plan->compiler_note);
  }
  ARBOR_TRY_ASSIGN(StarterActions actions, RenderStarterActions(files, ctx));
  d.actions = actions.ids;
  for (const std::string& s : actions.skipped) d.skipped.push_back(s);

  const std::string name = SanitizeCampaignName(options.name);
  std::string t;
  t += "# Arbor campaign file, written by `arbor init --detect` for " + plan->found + ".\n";
  t += "# Every key: docs/campaign-file.md. `arbor try` runs each command once as a campaign\n";
  t += "# would and shows what it printed; `arbor run` starts the campaign.\n#\n";
  t += "# Found:\n";
  for (const std::string& f : d.found) t += "#   " + f + "\n";
  if (!d.skipped.empty()) {
    t += "# Left out:\n";
    for (const std::string& s : d.skipped) t += "#   " + s + "\n";
  }
  t += "\n[campaign]\nname = " + TomlString(name) + "\nworkspace = \".\"\nseed = 1\n";
  t += "\n[target]\n";
  if (!plan->build_note.empty()) t += Comment(plan->build_note);
  t += "build = " + TomlString(plan->build) + "\n";
  if (plan->check.empty()) {
    t += Comment(
        "No tests were found, so the check always passes: a change that breaks the program\n"
        "is caught only if the benchmark fails. Put your correctness test here.");
    t += "check = \"true\"\n";
  } else {
    if (!plan->check_note.empty()) t += Comment(plan->check_note);
    t += "check = " + TomlString(plan->check) + "\n";
  }
  t += Comment(bench->what +
               ".\n$RUN_PREFIX is empty in the baseline; an action may put a launcher there "
               "(taskset).");
  t += "bench = " + TomlString(bench_command) + "\n";
  t += "profile = \"\"\ntimeout = \"20m\"\n";
  std::vector<std::string> env;
  for (const auto& [k, v] : plan->env) env.push_back(k + " = " + TomlString(v));
  t += "env = { " + Join(env, ", ") + (env.empty() ? "}" : " }") + "\n";
  t += "\n[metric]\n" + Comment(metric.note);
  t += "name = " + TomlString(metric.name) + "\ngoal = " + TomlString(metric.goal) +
       "\nsource = " + TomlString(metric.source) +
       "\nrepetitions = 5\nfixed = " + TomlString(metric.fixed) + "\n";
  t += "\n[search]\nmax_nodes = 60\nmax_time = \"2h\"\n";
  t += "\n[kb]\nworkload = " + TomlString(name) + "\n";
  t += "\n# Starter actions (actions/*.toml in Arbor's source): what fits this project and this\n"
       "# machine. Priors and their sources are in the comments; edit, add or remove freely.\n";
  t += actions.text;
  d.campaign_text = std::move(t);
  return d;
}

}  // namespace arbor
