// arbor_stress_kill9: kill -9 Arbor at random moments of real campaigns, resume, check.
//
//   arbor_stress_kill9 --kills N [--seed S] [--parallel] [--per-campaign K] [--max-nodes M]
//                      [--verbose]
//
// First one uninterrupted reference run per campaign kind (kill9_campaign.h) with the seed.
// Then campaigns run, each killed with SIGKILL K times (then left to finish): either after a
// seeded-random delay (an external `kill -9 PID` of the engine only, its children live on), or
// at a store write (ARBOR_CRASH_AT, cycled over event kinds: dispatch, build, check,
// measurement, keep, re-profile, verdicts). Each kill is followed by a resume (`arbor run` or
// `arbor resume`, alternately). After every kill the store and the branch are checked
// (kill9_store.h, kill9_campaign.h), and the campaign's processes are counted: none may outlive
// the killed engine by more than a few seconds (an orphan is a violation); at each campaign's
// end also the worktrees, the processes and the final tree, which must equal the reference
// run's. With --parallel every second campaign runs
// `[search] parallel = 2`. Prints a summary; exits 1 if anything was violated. SIGINT/SIGTERM
// stops the kills: the campaign at work finishes and is checked, then the summary is printed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kill9_campaign.h"
#include "kill9_store.h"

namespace arbor::stress {
namespace {

using Clock = std::chrono::steady_clock;
using integration::ProcResult;
using integration::TempWorkspace;

struct Options {
  int kills = 20;
  uint64_t seed = 1;
  bool parallel = false;
  bool verbose = false;
  double max_delay_s = 2.0;  // external kills: uniform in [0.02, max_delay_s], grown if stuck
  int max_nodes = 0;         // > 0: the campaigns' [search] max_nodes (shorter campaigns)
  int per_campaign = 0;      // kills per campaign before it may finish; 0: max(10, kills / 25)
};

struct Stats {
  int kills = 0;
  int external = 0;
  int at_store_write = 0;
  int points_tried = 0;  // ARBOR_CRASH_AT runs, fired or not: the index into kPoints
  int resumes = 0;
  int orphan_checks = 0;  // kills and finishes after which the campaign's processes were counted
  int orphans = 0;        // processes of a campaign alive 10 s after its arbor was gone
  int campaigns = 0;
  int finished = 0;
  std::map<std::string, int> by_phase;
  std::map<std::string, int> by_point;
  std::map<std::string, int> by_kind;
  std::vector<std::string> violations;
};

// How long a killed engine's processes may take to die: the watchdog kills for up to 2 s.
constexpr double kOrphanWaitS = 10;

// Store writes to die at, cycled; n (the n-th such event of the process) is 1 or 2.
const std::vector<std::string> kPoints = {
    "before:dispatched", "after:built",      "before:measured", "after:kept",
    "after:checked",     "before:kept",      "after:measured",  "before:reprofiled",
    "after:dispatched",  "before:reverted",  "before:built",    "after:reverted",
    "before:checked",    "after:reprofiled", "before:crashed",  "before:vetoed",
    "after:crashed",     "before:requeued",  "after:skipped",   "before:constraint",
    "before:proposed",   "after:rca",        "after:vetoed",    "after:proposed"};

// Set by SIGINT/SIGTERM: no more kills; the campaign at work runs to its end, then the summary.
volatile sig_atomic_t g_wind_down = 0;
void WindDown(int) { g_wind_down = 1; }

// Seconds since the driver started.
double Seconds() {
  static const Clock::time_point start = Clock::now();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// What the campaign was doing, from the newest event in its store.
std::string Phase(const StoreSnapshot& s, CampaignKind kind) {
  if (!s.exists || s.nodes.empty()) return "startup (store, baseline dispatch)";
  const std::string& e = s.last_event;
  if (e == "dispatched") {
    return kind == CampaignKind::kParallel ? "parallel specialists, build" : "apply, build";
  }
  if (e == "built") return "check";
  if (e == "checked") return "benchmark";
  if (e == "measured") return "confirmation benchmark, decide";
  if (e == "kept") return "commit (branch), re-profile";
  if (e == "stopped" || s.state == "finished") return "final confirmation, finish";
  return "scoring, dispatch (after " + e + ")";
}

void Violation(Stats* stats, const std::string& where, const std::vector<std::string>& found) {
  for (const auto& v : found) {
    std::string line = where + ": " + v;
    std::printf("VIOLATION %s\n", line.c_str());
    std::fflush(stdout);
    stats->violations.push_back(line);
  }
}

// Checks after a kill or a finish: store, preservation since `prev`, branch.
std::vector<std::string> CheckAll(const TempWorkspace& ws, CampaignKind kind,
                                  const StoreSnapshot& prev, const StoreSnapshot& now) {
  std::vector<std::string> found;
  CheckStore(now, &found);
  CheckPreserved(prev, now, &found);
  CheckGit(ws, kind, now, &found);
  return found;
}

// The orphan check must see what it exists for: a process left working in a campaign's folder
// (a stand-in for a command a killed engine left) is found, reported and killed.
void CheckTheOrphanCheck(Stats* stats) {
  TempWorkspace ws;
  auto left = std::make_unique<integration::Process>(
      std::vector<std::string>{"/bin/sleep", "3607.5"}, ws.root(), integration::EnvMap{});
  const std::string cmdline = "/proc/" + std::to_string(left->pid()) + "/cmdline";
  for (int i = 0; i < 200 && integration::ReadFile(cmdline).find("3607.5") == std::string::npos;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // until it has exec'ed
  }
  std::vector<std::string> found = Orphans(ws, 0.2);
  if (found.size() != 1 || found[0].find("3607.5") == std::string::npos) {
    Violation(stats, "self-check", {"the orphan check missed a process left in the folder"});
  }
  left->Wait(10);
}

// The uninterrupted run: its tree is what every killed campaign must end with.
std::string Reference(CampaignKind kind, const Options& opt, Stats* stats) {
  auto ws = MakeCampaign(kind, opt.seed, opt.max_nodes);
  auto start = Clock::now();
  ProcResult r = ws->Arbor({"run", "arbor.toml", "--quiet"}, {}, 900);
  double secs = std::chrono::duration<double>(Clock::now() - start).count();
  std::string where = std::string("reference ") + KindName(kind);
  if (r.exit_code != 0) Violation(stats, where, {"run failed: " + r.Describe()});
  StoreSnapshot s = ReadStore(StorePath(*ws, kind));
  std::vector<std::string> found = CheckAll(*ws, kind, StoreSnapshot{}, s);
  CheckNoWorktrees(*ws, kind, &found);
  if (s.state != "finished") found.push_back("state " + s.state + " after the run");
  Violation(stats, where, found);
  std::printf("reference %s: %zu nodes, %.1f s\n%s", KindName(kind), s.nodes.size(), secs,
              opt.verbose ? TreeSignature(s).c_str() : "");
  std::fflush(stdout);
  return TreeSignature(s);
}

// One campaign, killed until it finishes (or until the kill budget is spent, then run out).
void Campaign(CampaignKind kind, const std::string& reference, const Options& opt,
              std::mt19937_64* rng, Stats* stats) {
  const int index = ++stats->campaigns;
  const int budget = std::min(opt.kills, stats->kills + opt.per_campaign);
  auto ws = MakeCampaign(kind, opt.seed, opt.max_nodes);
  const std::string db = StorePath(*ws, kind);
  StoreSnapshot prev;
  double cap = opt.max_delay_s;
  bool use_resume = false;
  for (int run = 0;; ++run) {
    const bool kill = stats->kills < budget && g_wind_down == 0;
    // Half at a store write: each of those kills also lands after some progress.
    const bool at_write = kill && (*rng)() % 2 == 0;
    integration::EnvMap env;
    std::string how = "ran to the end";
    if (at_write) {
      std::string point = kPoints[static_cast<size_t>(stats->points_tried++) % kPoints.size()];
      std::string n = std::to_string(1 + (*rng)() % 2);
      env["ARBOR_CRASH_AT"] = point + ":" + n;
      how = "at " + point + ":" + n;
    }
    const bool resume = use_resume && !prev.nodes.empty();
    auto proc = ws->StartArbor({resume ? "resume" : "run", "arbor.toml", "--quiet"}, env);
    bool at_write_fired = at_write;
    if (kill) {
      // A store write that does not come soon (a rare event kind late in the campaign) is
      // replaced by an external kill, so the campaign does not run out undisturbed.
      std::uniform_real_distribution<double> delay(at_write ? 10 : 0.02, at_write ? 20 : cap);
      double d = delay(*rng);
      auto until = Clock::now() + std::chrono::microseconds(static_cast<int64_t>(d * 1e6));
      while (Clock::now() < until && integration::ProcessAlive(proc->pid())) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      if (integration::ProcessAlive(proc->pid())) {
        proc->Signal(SIGKILL);  // the engine only: what `kill -9 PID` does
        char buf[64];
        std::snprintf(buf, sizeof buf, "after %.2f s", d);
        how = at_write ? how + " (not reached; killed " + buf + ")" : buf;
        at_write_fired = false;
      }
    }
    ProcResult r = proc->Wait(900);
    if (run > 0) ++stats->resumes;
    std::string where = "campaign " + std::to_string(index) + " (" + KindName(kind) + ") run " +
                        std::to_string(run) + " " + how;
    if (r.signal == SIGKILL && kill) {
      ++stats->kills;
      ++(at_write_fired ? stats->at_store_write : stats->external);
      if (at_write_fired) ++stats->by_point[how.substr(3, how.rfind(':') - 3)];
      ++stats->by_kind[KindName(kind)];
      // Nothing the killed engine started may outlive it (the watchdog's promise), and no
      // agent may still write into a worktree the resume recreates.
      std::vector<std::string> orphans = Orphans(*ws, kOrphanWaitS);
      ++stats->orphan_checks;
      stats->orphans += static_cast<int>(orphans.size());
      for (std::string& o : orphans) o = "orphan process after the kill: " + o;
      Violation(stats, where, orphans);
      StoreSnapshot now = ReadStore(db);
      std::string phase = Phase(now, kind);
      ++stats->by_phase[phase];
      Violation(stats, where, CheckAll(*ws, kind, prev, now));
      bool progress = now.events > prev.events || now.samples.size() > prev.samples.size();
      cap = progress ? opt.max_delay_s : std::min(cap * 1.5, 60.0);
      if (opt.verbose) {
        std::printf(
            "kill %d [%.0f s]: %s; %s; %zu nodes (%zu finished), %zu samples, %lld "
            "events\n",
            stats->kills, Seconds(), where.c_str(), phase.c_str(), now.nodes.size(), now.Finished(),
            now.samples.size(), static_cast<long long>(now.events));
        std::fflush(stdout);
      }
      if (now.error.empty()) prev = std::move(now);
      use_resume = !use_resume;
      continue;
    }
    if (r.exit_code != 0) {
      Violation(stats, where, {"arbor failed: " + r.Describe()});
      return;
    }
    StoreSnapshot now = ReadStore(db);
    std::vector<std::string> found = CheckAll(*ws, kind, prev, now);
    CheckNoWorktrees(*ws, kind, &found);
    ++stats->orphan_checks;
    for (const std::string& o : Orphans(*ws, kOrphanWaitS)) {
      ++stats->orphans;
      found.push_back("orphan process after the finish: " + o);
    }
    if (now.state != "finished") found.push_back("state " + now.state + " after the run");
    for (const auto& n : now.nodes) {
      // A re-queued move waiting when the budget ran out was never dispatched (seq 0): the
      // uninterrupted run leaves it too, which the tree signature below compares.
      const bool waiting = n.outcome == "pending" && n.seq == 0;
      if (!IsFinishedOutcome(n.outcome) && !waiting)
        found.push_back("node #" + std::to_string(n.id) + " still " + n.outcome);
    }
    std::string tree = TreeSignature(now);
    if (tree != reference) {
      found.push_back("final tree differs from the reference run\nreference:\n" + reference +
                      "this run:\n" + tree);
    }
    Violation(stats, where, found);
    ++stats->finished;
    std::printf(
        "campaign %d (%s) finished after %d runs [%.0f s]; %d kills so far, %zu "
        "violations\n",
        index, KindName(kind), run + 1, Seconds(), stats->kills, stats->violations.size());
    std::fflush(stdout);
    return;
  }
}

void PrintSummary(const Stats& s, double secs) {
  std::printf("\n== kill -9 stress: summary ==\n");
  std::printf("kills: %d (external SIGKILL after a random delay: %d, at a store write: %d)\n",
              s.kills, s.external, s.at_store_write);
  for (const auto& [kind, n] : s.by_kind)
    std::printf("  %-9s campaigns' kills: %d\n", kind.c_str(), n);
  std::printf("resumes: %d; campaigns: %d started, %d finished\n", s.resumes, s.campaigns,
              s.finished);
  std::printf("kills by phase (from the newest event in the store):\n");
  for (const auto& [phase, n] : s.by_phase) std::printf("  %5d  %s\n", n, phase.c_str());
  std::printf("kills at a store write, by point:\n");
  for (const auto& [point, n] : s.by_point) std::printf("  %5d  %s\n", n, point.c_str());
  std::printf("orphans: %d processes left, counted after %d kills and finishes\n", s.orphans,
              s.orphan_checks);
  std::printf("violations: %zu\n", s.violations.size());
  for (const auto& v : s.violations) std::printf("  %s\n", v.c_str());
  std::printf("wall time: %.0f s\n", secs);
}

int Usage(const char* why) {
  std::fprintf(stderr,
               "arbor_stress_kill9: %s\nusage: arbor_stress_kill9 --kills N [--seed S] "
               "[--parallel] [--per-campaign N] [--max-nodes N] [--max-delay SECONDS] "
               "[--verbose]\n",
               why);
  return 2;
}

}  // namespace
}  // namespace arbor::stress

int main(int argc, char** argv) {
  using namespace arbor::stress;
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool has_value = i + 1 < argc;
    char* end = nullptr;
    if (a == "--kills" && has_value) {
      opt.kills = static_cast<int>(std::strtol(argv[++i], &end, 10));
      if (*end != '\0' || opt.kills < 1) return Usage("--kills needs a positive integer");
    } else if (a == "--seed" && has_value) {
      opt.seed = std::strtoull(argv[++i], &end, 10);
      if (*end != '\0' || opt.seed == 0) return Usage("--seed needs a positive integer");
    } else if (a == "--max-delay" && has_value) {
      opt.max_delay_s = std::strtod(argv[++i], &end);
      if (*end != '\0' || !(opt.max_delay_s > 0.05)) return Usage("--max-delay needs > 0.05");
    } else if (a == "--per-campaign" && has_value) {
      opt.per_campaign = static_cast<int>(std::strtol(argv[++i], &end, 10));
      if (*end != '\0' || opt.per_campaign < 1) {
        return Usage("--per-campaign needs a positive integer");
      }
    } else if (a == "--max-nodes" && has_value) {
      opt.max_nodes = static_cast<int>(std::strtol(argv[++i], &end, 10));
      if (*end != '\0' || opt.max_nodes < 2) return Usage("--max-nodes needs an integer >= 2");
    } else if (a == "--parallel") {
      opt.parallel = true;
    } else if (a == "--verbose") {
      opt.verbose = true;
    } else {
      return Usage(("unknown or incomplete argument '" + a + "'").c_str());
    }
  }
  if (opt.per_campaign == 0) opt.per_campaign = std::max(10, opt.kills / 25);
  Seconds();
  Stats stats;
  CheckTheOrphanCheck(&stats);
  std::mt19937_64 rng(opt.seed);
  std::map<CampaignKind, std::string> reference;
  reference[CampaignKind::kToy] = Reference(CampaignKind::kToy, opt, &stats);
  if (opt.parallel) {
    reference[CampaignKind::kParallel] = Reference(CampaignKind::kParallel, opt, &stats);
  }
  signal(SIGINT, WindDown);
  signal(SIGTERM, WindDown);
  for (int c = 0; stats.kills < opt.kills && g_wind_down == 0; ++c) {
    CampaignKind kind = opt.parallel && c % 2 == 1 ? CampaignKind::kParallel : CampaignKind::kToy;
    int kills_before = stats.kills;
    size_t violations_before = stats.violations.size();
    Campaign(kind, reference[kind], opt, &rng, &stats);
    // A campaign that failed without being killed would fail again: stop rather than loop.
    if (stats.kills == kills_before && stats.violations.size() > violations_before) break;
  }
  // The harness reports its own failures (a pipe, a commit) through gtest.
  const testing::TestResult& harness = testing::UnitTest::GetInstance()->ad_hoc_test_result();
  for (int i = 0; i < harness.total_part_count(); ++i) {
    if (harness.GetTestPartResult(i).failed()) {
      stats.violations.push_back(std::string("harness: ") + harness.GetTestPartResult(i).message());
    }
  }
  PrintSummary(stats, Seconds());
  return stats.violations.empty() ? 0 : 1;
}
