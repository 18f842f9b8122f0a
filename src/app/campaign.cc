#include "app/campaign.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/agents.h"
#include "app/command_target.h"
#include "app/crash_points.h"
#include "app/hardware.h"
#include "app/kb_commands.h"
#include "app/paths.h"
#include "app/secrets.h"
#include "app/sinks.h"
#include "app/slurm.h"
#include "app/slurm_jobs.h"
#include "arbor/exit_codes.h"
#include "config/campaign_loader.h"
#include "core/critic/critic_gate.h"
#include "core/critic/gate.h"
#include "core/orchestrator/orchestrator.h"
#include "exec/git_workspace.h"
#include "exec/runner.h"
#include "exec/watchdog.h"
#include "specialists/builtin.h"
#include "store/kb_store.h"
#include "store/sqlite_store.h"
#include "util/hash.h"

namespace arbor {
namespace fs = std::filesystem;

namespace {

std::atomic<Orchestrator*> g_running{nullptr};
std::atomic<int> g_signals{0};

// scancel's argv for the campaign's Slurm jobs, built before any signal can arrive: a second
// SIGINT/SIGTERM leaves at once, and its jobs must not run on (fork and exec only: async-signal
// safe).
std::vector<std::string> g_scancel_args;
std::vector<char*> g_scancel_argv;

void PrepareSignalCancel(const std::string& job_name) {
  const passwd* pw = getpwuid(getuid());
  g_scancel_args = {"scancel", "--name=" + job_name, "-u",
                    pw != nullptr ? pw->pw_name : std::to_string(getuid())};
  g_scancel_argv.clear();
  for (std::string& a : g_scancel_args) g_scancel_argv.push_back(a.data());
  g_scancel_argv.push_back(nullptr);
}

void CancelJobsFromSignal() {
  if (g_scancel_argv.empty()) return;
  pid_t pid = fork();
  if (pid == 0) {
    execvp(g_scancel_argv[0], g_scancel_argv.data());
    _exit(127);
  }
  if (pid > 0) waitpid(pid, nullptr, 0);
}

void OnSignal(int) {
  // First signal: stop after the current step (state stays consistent). Second: leave now,
  // with every command running killed first (a benchmark must not outlive Arbor); resume
  // reconciles whatever was in flight.
  if (g_signals.fetch_add(1) >= 1) {
    KillRunningCommandsFromSignal();
    CancelJobsFromSignal();
    _exit(kExitInterrupted);
  }
  if (Orchestrator* o = g_running.load()) o->RequestStop();
}

class SteadyClock : public Clock {
 public:
  double Now() override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

// Holds an exclusive flock on the campaign's lock file: one arbor process per campaign.
class CampaignLock {
 public:
  ~CampaignLock() {
    if (fd_ >= 0) close(fd_);
  }
  // Taking another lock file (a restart's fresh state dir) gives up the one held only once the
  // new one is held.
  Status Acquire(const std::string& path) {
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return MakeError("cannot open " + path, kExitState);
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      char buf[32] = {0};
      ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
      close(fd);
      std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "?";
      return MakeError("the campaign is already running (pid " + pid + ")", kExitState);
    }
    std::string pid = std::to_string(getpid());
    if (ftruncate(fd, 0) == 0 && pwrite(fd, pid.data(), pid.size(), 0) < 0) {
      // The pid is informational only.
    }
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
    return {};
  }

 private:
  int fd_ = -1;
};

Error WithCode(const Error& e, int code) { return Error{e.message, e.code ? e.code : code}; }

// `arbor run --restart`, under the campaign's lock: its state dir and branch set aside
// (GitWorkspace::Archive: renamed, nothing deleted), a fresh state dir locked in their place
// and a new base recorded (HEAD now), so what follows starts the campaign over.
Status StartOver(const CampaignSpec& spec, const CampaignPaths& paths, const std::string& job_name,
                 bool quiet, GitWorkspace* workspace, CampaignLock* lock) {
  if (!job_name.empty()) CancelSlurmJobs(job_name, SlurmClientEnv());  // none writes there later
  auto archived = workspace->Archive();
  if (!archived.ok()) return WithCode(archived.error(), kExitState);
  if (archived->empty()) return {};
  std::error_code ec;
  fs::create_directories(paths.runs, ec);
  if (ec) return MakeError("cannot create " + paths.runs + ": " + ec.message(), kExitState);
  ARBOR_TRY(lock->Acquire(paths.lock));
  auto base = workspace->Open();
  if (!base.ok()) return WithCode(base.error(), kExitState);
  if (!quiet) {
    std::string dir = fs::relative(*archived, workspace->repo(), ec).string();
    std::string suffix = archived->substr(archived->rfind(".archived-"));
    std::fprintf(stderr,
                 "arbor: campaign '%s' archived to %s (its branch to %s%s); starting it over\n",
                 spec.name.c_str(), (ec ? *archived : dir).c_str(), workspace->branch().c_str(),
                 suffix.c_str());
  }
  return {};
}

// The knowledge base this run reads priors from and records lessons to, or nullptr when it is
// switched off or cannot be opened (then the campaign runs on its declared priors, and says so:
// the knowledge base is advice, never a reason to stop).
std::unique_ptr<KbStore> OpenKnowledgeBase(const CampaignSpec& spec, const RunOptions& options,
                                           const std::string& db, KbContext* context) {
  // A fresh identity for a new campaign (kept in its meta; a resume keeps the old one).
  auto now = std::chrono::system_clock::now().time_since_epoch();
  context->campaign_uid =
      HashHex(db + "\n" + std::to_string(now.count()) + "\n" + std::to_string(getpid()));
  // The hardware signature is also what specialists are told they run on.
  auto hardware = DetectHardware();
  if (hardware.ok()) context->hardware = *hardware;
  if (!spec.kb.enabled || options.no_kb) return nullptr;
  if (!hardware.ok()) {
    std::fprintf(stderr, "arbor: %s; running without the knowledge base\n",
                 hardware.error().message.c_str());
    return nullptr;
  }
  context->hardware = *hardware;
  context->workload = spec.kb.workload.empty()
                          ? WorkloadSignature{"bench=" + HashHex(spec.target.bench).substr(0, 8),
                                              "campaign=" + spec.name}
                          : ParseWorkload(spec.kb.workload);
  context->now = static_cast<double>(std::time(nullptr));
  std::string path = KbPath(spec.kb.path);
  if (path.empty()) {
    std::fprintf(stderr,
                 "arbor: no place for the knowledge base (set [kb] path, ARBOR_KB or HOME); "
                 "running without it\n");
    return nullptr;
  }
  auto kb = KbStore::Open(path, OpenMode::kReadWrite);
  if (!kb.ok()) {
    std::fprintf(stderr, "arbor: knowledge base %s: %s; running without it\n", path.c_str(),
                 kb.error().message.c_str());
    return nullptr;
  }
  return std::move(*kb);
}

}  // namespace

Result<CampaignSpec> LoadSpec(const std::string& file) {
  auto spec = LoadCampaignFile(file);
  if (!spec.ok()) return WithCode(spec.error(), kExitConfig);
  return spec;
}

Status CheckProcessLimit(const CampaignSpec& spec) {
  if (std::string problem = ProcessLimitProblem(); spec.target.max_processes && !problem.empty()) {
    return MakeError(spec.file + ": [target] max_processes cannot be enforced here: " + problem,
                     kExitConfig);
  }
  return {};
}

void HandleStopSignals(void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // What the commands start dies with this process, however it ends (a kill -9 included).
  if (Status w = StartWatchdog(); !w.ok()) {
    std::fprintf(stderr, "arbor: %s: after a kill -9 the next run cleans up instead\n",
                 w.error().message.c_str());
  }
}

Result<int> RunCampaign(const RunOptions& options) {
  ARBOR_TRY_ASSIGN(CampaignSpec spec, LoadSpec(options.file));
  if (options.max_nodes) spec.search.max_nodes = *options.max_nodes;
  if (options.max_time_s) spec.search.max_time_s = *options.max_time_s;
  if (options.no_critic) spec.critic.enabled = false;
  CampaignPaths paths = PathsFor(spec);
  ARBOR_TRY(CheckProcessLimit(spec));

  GitWorkspace workspace(spec.workspace, spec.name);
  auto base = workspace.Open();  // validates the repository before anything is written
  if (!base.ok()) return WithCode(base.error(), kExitState);
  if (options.resume_only && !fs::exists(paths.db)) {
    return MakeError("no campaign '" + spec.name + "' to resume in " + spec.workspace +
                         " (start one with `arbor run`)",
                     kExitState);
  }
  std::error_code ec;
  fs::create_directories(paths.runs, ec);
  if (ec) return MakeError("cannot create " + paths.runs + ": " + ec.message(), kExitState);
  CampaignLock lock;
  ARBOR_TRY(lock.Acquire(paths.lock));
  // From here on the lock names this process, so `arbor stop` may signal it: a signal that
  // arrives before the Orchestrator exists stops it before its first step.
  HandleStopSignals(OnSignal);
  const bool slurm = spec.executor.kind == ExecutorSpec::Kind::kSlurm;
  const std::string job_name = slurm ? SlurmJobName(spec.name, paths.state_dir) : "";
  // Leftovers of a killed run (a coding agent outlives its shell) must not write into the
  // worktrees this run recreates. A Slurm job's processes (this machine may be a compute node)
  // are Slurm's: reconciled below.
  const std::string spare = slurm ? "SLURM_JOB_NAME=" + job_name : "";
  // A server a killed run left may have left its worktree (a daemon's chdir("/")): its marker
  // names this campaign's runs/ folder (app/command_target_servers.h).
  if (int n =
          KillProcessesWithin(paths.state_dir + "/worktrees", spare) +
          KillProcessesWithin(paths.runs + "/propose", spare) +
          KillProcessesWithEnv(std::string(TargetServers::kMarkerName) + "=" + paths.runs + "/");
      n > 0) {
    std::fprintf(stderr, "arbor: killed %d process(es) a previous run left in its worktrees\n", n);
  }
  if (options.restart) {
    ARBOR_TRY(StartOver(spec, paths, job_name, options.quiet, &workspace, &lock));
  }

  auto opened = SqliteStore::Open(paths.db, OpenMode::kReadWrite);
  if (!opened.ok()) return WithCode(opened.error(), kExitStore);
  std::unique_ptr<SqliteStore> sqlite = std::move(*opened);
  Store* store = sqlite.get();
  std::unique_ptr<CrashPointStore> crashing;
  if (const char* at = std::getenv("ARBOR_CRASH_AT")) {
    auto point = ParseCrashPoint(at);
    if (!point.ok()) return WithCode(point.error(), kExitUsage);
    crashing = std::make_unique<CrashPointStore>(store, *point);
    store = crashing.get();
  }

  // Secrets ([secrets] env and every api_key_env) never reach the store, the knowledge base,
  // a file under the state folder, live events or a model (docs/secrets.md).
  SecretsLayer secrets(spec.secrets);
  store = secrets.Wrap(store);
  CommandTarget target(&spec, paths.runs, job_name);
  Reconciliation left;  // the jobs a killed run left (app/slurm_jobs.h), claimed by steps
  if (slurm) {
    PrepareSignalCancel(job_name);  // a second signal while adopting cancels, too
    // Before any step runs (so no worktree changes under a job still running): adopt, read,
    // re-queue or cancel what a killed run left.
    auto reconciled = ReconcileSlurmJobs(
        paths.state_dir + "/jobs", job_name, SlurmClientEnv(), [] { return g_signals.load() > 0; },
        [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
    if (!reconciled.ok()) {
      return MakeError("[executor] kind = \"slurm\": " + reconciled.error().message +
                           "; is Slurm reachable from here (SLURM_CONF, munge)?",
                       kExitState);
    }
    left = std::move(*reconciled);
    if (std::string said = left.Summary(); !said.empty()) {
      std::fprintf(stderr, "arbor: %s\n", said.c_str());
    }
    target.set_slurm_jobs(paths.state_dir + "/jobs", &left);
  }
  // The [llm] budget is a hard cap on each request (specialists/llm_budget.h), counted from
  // what earlier runs of the campaign spent.
  auto meta = store->LoadMeta();
  if (!meta.ok()) return WithCode(meta.error(), kExitStore);
  std::unique_ptr<LlmBudgetGuard> llm_budget;
  if (spec.llm.max_tokens > 0 || spec.llm.max_cost > 0) {
    const CampaignMeta spent = meta->value_or(CampaignMeta{});
    llm_budget = std::make_unique<LlmBudgetGuard>(
        spec.llm, spent.llm_prompt_tokens + spent.llm_completion_tokens, spent.llm_cost);
  }
  std::unique_ptr<SpecialistRouter> specialist =
      MakeSpecialists(&spec, &target, paths.runs, &secrets.scrubber(), llm_budget.get());
  // The Critic's statistical gate; the plain median comparison exists for ablations only and
  // the campaign records which one it was started with (it cannot change mid-campaign).
  CriticGate critic_gate;
  MedianGate median_gate;
  Gate& gate = spec.critic.enabled ? static_cast<Gate&>(critic_gate) : median_gate;
  SteadyClock clock;
  TeeSink tee;
  EventSink& sink_port = *secrets.Wrap(&tee);
  TeeSink& sink = tee;
  std::unique_ptr<TerminalSink> terminal;
  std::unique_ptr<JsonLinesSink> json_out;
  std::unique_ptr<JsonLinesSink> json_file;
  std::FILE* events = nullptr;
  // A failure's line shows what its command printed (app/run_logs.h).
  const FailedRunOf failed_runs = FailedRunsIn(paths.runs, &secrets.scrubber());
  if (!options.quiet) {
    TerminalSink::Options terminal_options;
    terminal_options.tty = isatty(STDERR_FILENO) != 0;
    terminal_options.metric_name = spec.metric.name;
    terminal_options.goal = spec.metric.goal;
    terminal_options.failed_run = failed_runs;
    terminal = std::make_unique<TerminalSink>(stderr, std::move(terminal_options));
    sink.Add(terminal.get());
  }
  if (options.json) {
    json_out = std::make_unique<JsonLinesSink>(stdout, failed_runs);
    sink.Add(json_out.get());
  }
  if (!options.events_file.empty()) {
    events = std::fopen(options.events_file.c_str(), "a");
    if (events == nullptr) {
      return MakeError("cannot open events file " + options.events_file, kExitUsage);
    }
    json_file = std::make_unique<JsonLinesSink>(events, failed_runs);
    sink.Add(json_file.get());
  }

  KbContext kb_context;
  std::unique_ptr<KbStore> kb = OpenKnowledgeBase(spec, options, paths.db, &kb_context);
  KnowledgeBase* kb_port = secrets.Wrap(kb.get());
  Workspace* workspace_port = secrets.Wrap(&workspace);
  // A node's servers stop when its worktree is released: its evaluation is over.
  std::optional<ServerStoppingWorkspace> serving;
  if (target.servers() != nullptr) {
    serving.emplace(workspace_port, target.servers());
    workspace_port = &*serving;
  }
  Orchestrator orchestrator(spec, Ports{store, workspace_port, &target, specialist.get(), &gate,
                                        &clock, &sink_port, kb_port, kb_context});
  g_running.store(&orchestrator);
  if (g_signals.load() > 0) orchestrator.RequestStop();  // a signal came while setting up
  auto summary = orchestrator.Run();
  g_running.store(nullptr);
  if (target.servers() != nullptr) target.servers()->StopAll();  // a stopped run left some up
  if (slurm) {
    CancelSlurmJobs(job_name, SlurmClientEnv());  // nothing of this campaign stays queued
    // Results of a killed run no step claimed (the campaign took another way): not needed.
    for (const auto& [key, job] : left.left) fs::remove_all(job.dir, ec);
  }
  KillOrphans();  // anything a command left behind that no run could claim
  terminal.reset();
  if (events) std::fclose(events);
  if (!summary.ok()) return WithCode(summary.error(), kExitInternal);
  if (options.json) {
    auto status = StatusCommand(ViewOptions{options.file, true});
    if (status.ok()) std::printf("{\"type\":\"summary\",\"status\":%s}\n", status->c_str());
  }
  if (summary->state == CampaignState::kStopped) return kExitInterrupted;
  if (summary->evaluated == 0) {
    // Finished with nothing evaluated: not a success a script should take for one.
    auto hint = NothingEvaluated(options.file);
    std::fprintf(stderr, "arbor: %s\n",
                 hint.ok() && !hint->empty() ? hint->c_str() : "nothing was evaluated");
    return kExitNothingEvaluated;
  }
  return kExitOk;
}

int WatchdogProcess() { return WatchdogMain(3); }

}  // namespace arbor
