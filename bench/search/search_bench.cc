// arbor_search_bench: how good is the engine's search, against baselines and its own ablations,
// on the landscapes of bench/search/landscapes (docs/search-bench.md).
//
// For every landscape, policy, seed and budget it runs one campaign in process, scores the
// shipped state on the landscape's noise-free truth, prints one table per landscape and writes
// every run (--csv) and every summary line (--summary) as CSV. With --generate N it runs on N
// generated landscapes (landscape_gen.h) and prints one aggregate table per budget instead.
// Exits non-zero only on errors (a landscape that does not load, a policy that fails); a policy
// that loses is data.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "bench/search/aggregate.h"
#include "bench/search/arbor_policy.h"
#include "bench/search/baselines.h"
#include "bench/search/landscape_gen.h"
#include "bench/search/metrics.h"
#include "bench/search/optuna_policy.h"
#include "util/strings.h"

namespace arbor::search {
namespace {

namespace fs = std::filesystem;

struct Options {
  std::vector<std::string> landscapes = {ARBOR_LANDSCAPES_DIR};
  int seeds = 20;
  std::vector<int> budgets = {30, 100};
  std::string policies = "all";
  std::string csv;
  std::string summary;
  int jobs = 2;
  std::string python = "/usr/bin/python3";
  uint64_t first_seed = 1;
  bool trace = false;
  int generate = 0;  // generated landscapes (seeds gen_seed, gen_seed + 1, ...)
  uint64_t gen_seed = 1;
  std::string gen_out;  // write them here as JSON files
  GenOptions gen;       // --gen-rivals
};

// FindOptimum of every landscape, on `jobs` threads (a large landscape's hill climbs take a
// moment, and --generate brings hundreds).
std::vector<Truth> Truths(const std::vector<Landscape>& landscapes, int jobs) {
  std::vector<Truth> truths(landscapes.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < landscapes.size();) {
      Optimum opt = FindOptimum(landscapes[i]);
      truths[i] = Truth{landscapes[i].TrueValue({}), opt.value, opt.exact};
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  return truths;
}

// The generated part of a run: one table per budget over every generated landscape, the median
// gain by feature, and the acceptance lines for `arbor`.
void PrintGenerated(const Options& o, const std::vector<Truth>& truths, size_t first,
                    const std::vector<RunMetrics>& rows,
                    const std::map<std::string, std::vector<std::string>>& features) {
  int exact = 0;
  for (size_t i = first; i < truths.size(); ++i) exact += truths[i].exact;
  std::printf(
      "\n# Generated landscapes: %d (gen-%llu .. gen-%llu), %d seed(s) each; optimum exact on %d "
      "(else the best of seeded hill climbs, a lower bound)\n",
      o.generate, static_cast<unsigned long long>(o.gen_seed),
      static_cast<unsigned long long>(o.gen_seed + o.generate - 1), o.seeds, exact);
  std::printf(
      "# gain: fraction of the optimum's gain (0 = baseline, 1 = optimum); >=greedy: share of "
      "runs whose true value is at least greedy's (within %.1f%% of the optimum's gain)\n",
      100 * kGreedyTolerance);
  std::vector<Aggregate> aggregates = AggregateRuns(rows);
  for (int b : o.budgets) {
    std::printf("\n## Budget %d\n%s", b, AggregateTable(aggregates, b).c_str());
  }
  for (int b : o.budgets) {
    std::printf("\n## Median gain by feature, budget %d\n%s", b,
                FeatureTable(rows, features, FeatureNames(), b).c_str());
  }
  for (int b : o.budgets) {
    std::string stops = StopReasons(rows, b);
    if (!stops.empty()) std::printf("\n## Stop reasons, budget %d\n%s", b, stops.c_str());
  }
  std::string criteria = Criteria(aggregates, "arbor");
  if (!criteria.empty()) std::printf("\n## Acceptance\n%s", criteria.c_str());
}

std::vector<std::string> LandscapeFiles(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    if (fs::is_directory(p)) {
      std::vector<std::string> dir;
      for (const auto& e : fs::directory_iterator(p)) {
        if (e.path().extension() == ".json") dir.push_back(e.path().string());
      }
      std::sort(dir.begin(), dir.end());
      out.insert(out.end(), dir.begin(), dir.end());
    } else {
      out.push_back(p);
    }
  }
  return out;
}

std::vector<std::unique_ptr<Policy>> MakePolicies(const Options& o, std::string* error) {
  std::vector<std::unique_ptr<Policy>> all;
  all.push_back(std::make_unique<RandomPolicy>());
  for (ArborVariant v : ArborVariants()) {
    v.trace = o.trace;
    all.push_back(std::make_unique<ArborPolicy>(v));
  }
  all.push_back(std::make_unique<GreedyPolicy>());
  all.push_back(std::make_unique<BanditPolicy>());
  if (o.policies != "all" || OptunaPolicy::Available(o.python)) {
    all.push_back(std::make_unique<OptunaPolicy>(o.python));
  } else {
    std::fprintf(stderr,
                 "arbor_search_bench: optuna-tpe left out: %s cannot import optuna (Debian: "
                 "apt-get install python3-optuna; scripts/deps installs it)\n",
                 o.python.c_str());
  }
  if (o.policies == "all") return all;
  std::vector<std::unique_ptr<Policy>> chosen;
  for (const std::string& name : Split(o.policies, ',')) {
    auto it =
        std::find_if(all.begin(), all.end(), [&](const auto& p) { return p && p->name() == name; });
    if (it == all.end()) {
      *error = "unknown policy '" + name + "'";
      return {};
    }
    chosen.push_back(std::move(*it));
  }
  return chosen;
}

std::string Fixed(double v, int digits) {
  if (std::isnan(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

void PrintTable(const Landscape& l, const Truth& t, const std::vector<Summary>& rows) {
  std::printf("\n## %s — baseline %.1f, optimum %.1f (x%.2f, %s)\n", l.name.c_str(), t.baseline,
              t.optimum, t.optimum / t.baseline, t.exact ? "exact" : "best known");
  std::printf("%-22s %6s %-20s %-20s %-12s %7s %7s %6s %8s %7s %5s\n", "policy", "budget",
              "score med [p25,p75]", "gain med [p25,p75]", "evals->90%", "f.keeps", "crashes",
              "broken", "inflated", "runs", "used");
  for (const Summary& s : rows) {
    if (s.landscape != l.name) continue;
    std::string score =
        Fixed(s.score_median, 2) + " [" + Fixed(s.score_p25, 2) + "," + Fixed(s.score_p75, 2) + "]";
    std::string gain =
        Fixed(s.gain_median, 2) + " [" + Fixed(s.gain_p25, 2) + "," + Fixed(s.gain_p75, 2) + "]";
    std::string to90 = s.reached_90 == 0
                           ? "-"
                           : Fixed(s.evals_to_90_median, 0) + " (" + std::to_string(s.reached_90) +
                                 "/" + std::to_string(s.seeds) + ")";
    std::printf("%-22s %6d %-20s %-20s %-12s %7.2f %7.2f %3d/%-2d %5d/%-2d %7.0f %5.0f%s\n",
                s.policy.c_str(), s.budget, score.c_str(), gain.c_str(), to90.c_str(),
                s.false_keeps_mean, s.crashes_mean, s.broken_finals, s.seeds, s.inflated_finals,
                s.seeds, s.runs_median, s.evals_used_median,
                s.errors ? (" ERRORS: " + std::to_string(s.errors)).c_str() : "");
  }
}

bool WriteRuns(const std::string& path, const std::vector<RunMetrics>& rows) {
  std::ofstream f(path);
  f << "landscape,policy,seed,budget,score,gain,true_value,final_broken,evals_used,evals_to_90,"
       "keeps,"
       "false_keeps,crashes,accuracy_failures,runs,error,final_inflated,stop\n";
  for (const RunMetrics& m : rows) {
    f << m.landscape << ',' << m.policy << ',' << m.seed << ',' << m.budget << ','
      << Fixed(m.score, 4) << ',' << Fixed(m.gain, 4) << ',' << Fixed(m.true_value, 4) << ','
      << m.final_broken << ',' << m.evals_used << ',' << m.evals_to_90 << ',' << m.keeps << ','
      << m.false_keeps << ',' << m.crashes << ',' << m.accuracy_failures << ',' << m.runs << ",\""
      << ReplaceAll(m.error, "\"", "'") << "\"," << m.final_inflated << ',' << m.stop << "\n";
  }
  return static_cast<bool>(f);
}

bool WriteSummary(const std::string& path, const std::vector<Summary>& rows,
                  const std::vector<std::string>& names, const std::vector<Truth>& truths) {
  std::ofstream f(path);
  f << "landscape,policy,budget,seeds,score_median,score_p25,score_p75,gain_median,gain_p25,"
       "gain_p75,evals_to_90_median,"
       "reached_90,false_keeps_mean,crashes_mean,broken_finals,runs_median,evals_used_median,"
       "errors,baseline,optimum,optimum_exact,inflated_finals\n";
  for (const Summary& s : rows) {
    size_t i = std::find(names.begin(), names.end(), s.landscape) - names.begin();
    f << s.landscape << ',' << s.policy << ',' << s.budget << ',' << s.seeds << ','
      << Fixed(s.score_median, 4) << ',' << Fixed(s.score_p25, 4) << ',' << Fixed(s.score_p75, 4)
      << ',' << Fixed(s.gain_median, 4) << ',' << Fixed(s.gain_p25, 4) << ','
      << Fixed(s.gain_p75, 4) << ',' << Fixed(s.evals_to_90_median, 1) << ',' << s.reached_90 << ','
      << Fixed(s.false_keeps_mean, 3) << ',' << Fixed(s.crashes_mean, 3) << ',' << s.broken_finals
      << ',' << Fixed(s.runs_median, 1) << ',' << Fixed(s.evals_used_median, 1) << ',' << s.errors
      << ',' << Fixed(truths[i].baseline, 4) << ',' << Fixed(truths[i].optimum, 4) << ','
      << truths[i].exact << ',' << s.inflated_finals << '\n';
  }
  return static_cast<bool>(f);
}

int Main(int argc, char** argv) {
  Options o;
  CLI::App app{"arbor_search_bench: the engine's search against baselines and ablations"};
  app.add_option("--landscape", o.landscapes, "landscape files or folders")->capture_default_str();
  app.add_option("--seeds", o.seeds, "seeds per landscape and policy")
      ->check(CLI::Range(1, 100000));
  app.add_option("--first-seed", o.first_seed, "the first seed");
  app.add_option("--budgets", o.budgets, "budgets in evaluations")->delimiter(',');
  app.add_option("--policies", o.policies, "comma-separated policy names, or all");
  app.add_option("--csv", o.csv, "write every run here");
  app.add_option("--summary", o.summary, "write the summary table here");
  app.add_option("--jobs", o.jobs, "runs at once")->check(CLI::Range(1, 64));
  app.add_option("--python", o.python, "interpreter with optuna, for optuna-tpe");
  app.add_flag("--trace", o.trace, "print every node of the engine's campaigns (investigation)");
  app.add_option("--generate", o.generate,
                 "run on N generated landscapes (files only with an explicit --landscape)")
      ->check(CLI::Range(0, 100000));
  app.add_option("--gen-seed", o.gen_seed, "the first generated landscape's seed");
  app.add_option("--gen-out", o.gen_out, "write the generated landscapes to this folder");
  app.add_option("--gen-rivals", o.gen.rivals,
                 "add N 'rivals' troubles to every generated landscape (another family of "
                 "landscapes: two declared alternatives, the weaker with a complement)")
      ->check(CLI::Range(0, 8));
  CLI11_PARSE(app, argc, argv);
  // Generated landscapes vary the problem; one seed each is the default there.
  if (o.generate > 0 && app.count("--seeds") == 0) o.seeds = 1;
  const bool files = o.generate == 0 || app.count("--landscape") > 0;
  const auto start = std::chrono::steady_clock::now();

  std::string error;
  auto policies = MakePolicies(o, &error);
  if (!error.empty()) {
    std::fprintf(stderr, "arbor_search_bench: %s\n", error.c_str());
    return 2;
  }
  std::vector<Landscape> landscapes;
  for (const std::string& file :
       files ? LandscapeFiles(o.landscapes) : std::vector<std::string>{}) {
    auto l = Landscape::Load(file);
    if (!l.ok()) {
      std::fprintf(stderr, "arbor_search_bench: %s\n", l.error().message.c_str());
      return 3;
    }
    landscapes.push_back(std::move(*l));
  }
  const size_t first_generated = landscapes.size();
  std::map<std::string, std::vector<std::string>> features;  // feature → generated landscapes
  if (!o.gen_out.empty()) fs::create_directories(o.gen_out);
  for (int i = 0; i < o.generate; ++i) {
    Landscape l = Generate(o.gen_seed + i, o.gen);
    for (const std::string& f : Features(l)) features[f].push_back(l.name);
    if (!o.gen_out.empty() && !(std::ofstream(o.gen_out + "/" + l.name + ".json") << l.ToJson())) {
      std::fprintf(stderr, "arbor_search_bench: cannot write %s\n", o.gen_out.c_str());
      return 1;
    }
    landscapes.push_back(std::move(l));
  }
  std::vector<std::string> names;
  for (const Landscape& l : landscapes) names.push_back(l.name);
  const std::vector<Truth> truths = Truths(landscapes, o.jobs);
  struct Job {
    size_t landscape;
    size_t policy;
    uint64_t seed;
    int budget;
  };
  std::vector<Job> jobs;
  for (size_t li = 0; li < landscapes.size(); ++li) {
    for (size_t pi = 0; pi < policies.size(); ++pi) {
      for (int b : o.budgets) {
        for (int s = 0; s < o.seeds; ++s) jobs.push_back({li, pi, o.first_seed + s, b});
      }
    }
  }
  std::vector<RunMetrics> rows(jobs.size());
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  std::mutex print;
  auto worker = [&] {
    for (size_t i; (i = next++) < jobs.size();) {
      const Job& j = jobs[i];
      const Landscape& l = landscapes[j.landscape];
      RunResult r = policies[j.policy]->Run(l, j.seed, j.budget);
      RunMetrics m = Measure(l, truths[j.landscape], r, j.budget);
      m.landscape = l.name;
      m.policy = policies[j.policy]->name();
      m.seed = j.seed;
      rows[i] = std::move(m);
      size_t n = ++done;
      if (n % 100 == 0 || n == jobs.size()) {
        std::lock_guard<std::mutex> lock(print);
        std::fprintf(stderr, "\r%zu/%zu runs", n, jobs.size());
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < o.jobs; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  std::fprintf(stderr, "\n");
  Normalize(truths, names, &rows);
  std::vector<Summary> summary = Summarize(rows);
  std::printf("# Search benchmark: %zu landscapes, %d seeds, budgets", landscapes.size(), o.seeds);
  for (int b : o.budgets) std::printf(" %d", b);
  std::printf(
      " (score: 0 = random search's median, 1 = the optimum; gain: 0 = the baseline, 1 = the "
      "optimum)\n");
  for (size_t li = 0; li < first_generated; ++li) PrintTable(landscapes[li], truths[li], summary);
  if (o.generate > 0) {
    std::vector<RunMetrics> generated;
    for (const RunMetrics& m : rows) {
      size_t i = std::find(names.begin(), names.end(), m.landscape) - names.begin();
      if (i >= first_generated) generated.push_back(m);
    }
    PrintGenerated(o, truths, first_generated, generated, features);
  }
  std::fprintf(stderr, "arbor_search_bench: %.0f s\n",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (!o.csv.empty() && !WriteRuns(o.csv, rows)) {
    std::fprintf(stderr, "arbor_search_bench: cannot write %s\n", o.csv.c_str());
    return 1;
  }
  if (!o.summary.empty() && !WriteSummary(o.summary, summary, names, truths)) {
    std::fprintf(stderr, "arbor_search_bench: cannot write %s\n", o.summary.c_str());
    return 1;
  }
  int errors = 0;
  for (const RunMetrics& m : rows) {
    if (!m.error.empty() && errors++ < 5) {
      std::fprintf(stderr, "error: %s %s seed %llu: %s\n", m.landscape.c_str(), m.policy.c_str(),
                   static_cast<unsigned long long>(m.seed), m.error.c_str());
    }
  }
  return errors ? 1 : 0;
}

}  // namespace
}  // namespace arbor::search

int main(int argc, char** argv) { return arbor::search::Main(argc, argv); }
