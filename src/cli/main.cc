// `arbor`: argument parsing and verbs only; every verb is one call into app/.
// Exceptions from libraries are caught in their adapters; anything left is caught here and
// printed as one line (exit 1).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>

#include "app/campaign.h"
#include "app/init.h"
#include "app/kb_commands.h"
#include "app/report.h"
#include "app/stop.h"
#include "app/try.h"
#include "arbor/exit_codes.h"
#include "util/duration.h"

namespace arbor {
namespace {

int Print(const Result<std::string>& r) {
  if (!r.ok()) {
    std::fprintf(stderr, "arbor: %s\n", r.error().message.c_str());
    return r.error().code ? r.error().code : kExitInternal;
  }
  std::fputs(r->c_str(), stdout);
  return kExitOk;
}

// `arbor kb list|show|export|import|forget` (docs/cli.md): options in, one app/ call out.
class KbCli {
 public:
  void Register(CLI::App& app) {
    kb_ = app.add_subcommand("kb", "the knowledge base shared by all campaigns");
    kb_->require_subcommand(1);
    kb_->add_option("--kb", options_.kb, "knowledge-base file (beats $ARBOR_KB and the default)");
    auto add_kb = [&](CLI::App* cmd) {
      cmd->add_option("--kb", options_.kb, "knowledge-base file (beats $ARBOR_KB and the default)");
    };
    list_ = kb_->add_subcommand("list", "entries, oldest first");
    add_kb(list_);
    list_->add_flag("--json", options_.json, "one JSON object per line (the export format)");
    list_->add_option("--action", options_.filter.action, "only this action id");
    list_->add_option("--category", options_.filter.category, "only this category");
    list_->add_option("--campaign", options_.filter.campaign, "only this campaign (name or uid)");
    list_->add_option("--outcome", options_.filter.outcome, "only kept | reverted | crashed")
        ->check(CLI::IsMember({"kept", "reverted", "crashed"}));
    list_->add_option("--limit", options_.filter.limit, "at most N entries")
        ->check(CLI::NonNegativeNumber);
    show_ = kb_->add_subcommand("show", "every field of one entry, with its lesson");
    add_kb(show_);
    show_->add_option("id", id_, "entry id")->required();
    show_->add_flag("--json", options_.json, "machine-readable");
    export_ = kb_->add_subcommand("export", "all entries as JSON lines (stdout or --out)");
    add_kb(export_);
    export_->add_option("--out", options_.out, "write to FILE instead of stdout");
    import_ = kb_->add_subcommand("import", "add the entries of a JSON-lines file");
    add_kb(import_);
    import_->add_option("file", file_, "JSON lines, as written by `arbor kb export`")->required();
    forget_ = kb_->add_subcommand("forget", "delete entries");
    add_kb(forget_);
    forget_->add_option("ids", options_.ids, "entry ids");
    forget_->add_option("--campaign", options_.filter.campaign, "every entry of this campaign");
    forget_->add_option("--action", options_.filter.action, "every entry of this action");
    forget_->add_flag("--all", options_.all, "every entry");
  }
  bool parsed() const { return kb_->parsed(); }
  int Dispatch() {
    if (list_->parsed()) return Print(KbList(options_));
    if (show_->parsed()) return Print(KbShow(options_, id_));
    if (export_->parsed()) return Print(KbExport(options_));
    if (import_->parsed()) return Print(KbImport(options_, file_));
    if (forget_->parsed()) return Print(KbForget(options_));
    return kExitUsage;
  }

 private:
  KbOptions options_;
  long long id_ = 0;
  std::string file_;
  CLI::App* kb_ = nullptr;
  CLI::App* list_ = nullptr;
  CLI::App* show_ = nullptr;
  CLI::App* export_ = nullptr;
  CLI::App* import_ = nullptr;
  CLI::App* forget_ = nullptr;
};

int Main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "__watchdog") return WatchdogProcess();
  CLI::App app{"Arbor: autonomous performance-optimization campaigns as a scored tree search"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "arbor 0.1.0");

  InitOptions init_opts;
  auto* init = app.add_subcommand(
      "init", "write a commented campaign-file template, or (--detect) one for this repository");
  init->add_option("file", init_opts.file, "campaign file to write (default arbor.toml)");
  init->add_flag("--force", init_opts.force, "overwrite an existing file");
  init->add_flag("--detect", init_opts.detect,
                 "a campaign file that runs as it is: commands, metric and starter actions "
                 "from the repository's build system (docs/cli.md)");
  init->add_option("--bench", init_opts.bench,
                   "with --detect: the benchmark command, instead of the one detection finds");

  RunOptions run_opts;
  std::string max_time;
  int max_nodes = 0;
  auto add_run_options = [&](CLI::App* cmd) {
    cmd->add_option("file", run_opts.file, "campaign file (default arbor.toml)");
    cmd->add_flag("--json", run_opts.json, "JSON lines on stdout");
    cmd->add_option("--events", run_opts.events_file, "append JSON-lines events to FILE");
    cmd->add_option("--max-nodes", max_nodes, "override [search] max_nodes")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--max-time", max_time, "override [search] max_time (e.g. 30m)");
    cmd->add_flag("--quiet", run_opts.quiet, "no status line or log lines");
    cmd->add_flag("--no-critic", run_opts.no_critic,
                  "ablation runs only: keep on a plain median comparison (recorded)");
    cmd->add_flag("--no-kb", run_opts.no_kb,
                  "neither read priors from nor record lessons to the knowledge base");
  };
  TryOptions try_opts;
  auto* try_cmd = app.add_subcommand(
      "try", "build, check, bench and profile the unmodified workspace once; stores nothing");
  try_cmd->add_option("file", try_opts.file, "campaign file (default arbor.toml)");
  try_cmd->add_option("--runs", try_opts.runs, "benchmark runs (default 3)")
      ->check(CLI::PositiveNumber);

  auto* run = app.add_subcommand("run", "start a campaign or continue it where it stopped");
  add_run_options(run);
  run->add_flag("--restart", run_opts.restart,
                "archive the campaign's state under .arbor/ and start it over under the same name");
  auto* resume = app.add_subcommand("resume", "continue an existing campaign");
  add_run_options(resume);

  StopOptions stop_opts;
  std::string stop_timeout = "60s";
  auto* stop = app.add_subcommand("stop", "stop a running campaign after its current step");
  stop->add_option("file", stop_opts.file, "campaign file");
  stop->add_option("--timeout", stop_timeout,
                   "how long the current step may take before the run leaves at once (default "
                   "60s)");

  ViewOptions view;
  std::string format = "ascii";
  auto* status = app.add_subcommand("status", "summary of a campaign");
  status->add_option("file", view.file, "campaign file");
  status->add_flag("--json", view.json, "machine-readable (docs/cli.md)");
  auto* tree = app.add_subcommand("tree", "the campaign's tree");
  tree->add_option("file", view.file, "campaign file");
  tree->add_option("--format", format, "ascii | json | dot")
      ->check(CLI::IsMember({"ascii", "json", "dot"}));
  long long node_id = 0;
  auto* show = app.add_subcommand("show", "everything about one node");
  show->add_option("node", node_id, "node id")->required();
  show->add_option("file", view.file, "campaign file");
  show->add_flag("--json", view.json, "machine-readable");
  show->add_flag("--prompt", view.prompt, "print exactly what the node's specialist was given");

  KbCli kb;
  kb.Register(app);
  ReportOptions report_opts;
  auto* report = app.add_subcommand("report", "self-contained HTML report of a campaign");
  report->add_option("file", report_opts.file, "campaign file");
  report->add_option("--out", report_opts.out, "where to write it (default report.html)");
  ServeCommandOptions serve_opts;
  auto* serve = app.add_subcommand("serve", "live dashboard and read-only JSON API");
  serve->add_option("file", serve_opts.file, "campaign file");
  serve->add_option("--port", serve_opts.port, "port (default 8080; 0 picks a free one)")
      ->check(CLI::Range(0, 65535));
  serve->add_option("--bind", serve_opts.bind,
                    "address (default 127.0.0.1; any other needs --token)");
  // The environment variable keeps the token out of `ps` and /proc/PID/cmdline.
  serve
      ->add_option("--token", serve_opts.token,
                   "require `Authorization: Bearer TOKEN` or ?token=TOKEN on every request "
                   "(beyond loopback: at least 16 characters)")
      ->envname("ARBOR_SERVE_TOKEN");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }

  if (*init) return Print(InitCommand(init_opts));
  if (*try_cmd) {
    auto r = TryCommand(try_opts, stdout);
    if (!r.ok()) return Print(r.error());
    return *r;
  }
  if (*run || *resume) {
    run_opts.resume_only = resume->parsed();
    if (max_nodes > 0) run_opts.max_nodes = max_nodes;
    if (!max_time.empty()) {
      auto t = ParseDuration(max_time);
      if (!t.ok()) {
        std::fprintf(stderr, "arbor: --max-time: %s\n", t.error().message.c_str());
        return kExitUsage;
      }
      run_opts.max_time_s = *t;
    }
    auto r = RunCampaign(run_opts);
    if (!r.ok()) {
      std::fprintf(stderr, "arbor: %s\n", r.error().message.c_str());
      return r.error().code ? r.error().code : kExitInternal;
    }
    if (!run_opts.quiet && !run_opts.json) {
      ViewOptions v;
      v.file = run_opts.file;
      auto s = StatusCommand(v);
      if (s.ok()) std::fputs(s->c_str(), stdout);
    }
    return *r;
  }
  if (*stop) {
    auto t = ParseDuration(stop_timeout);
    if (!t.ok()) {
      std::fprintf(stderr, "arbor: --timeout: %s\n", t.error().message.c_str());
      return kExitUsage;
    }
    stop_opts.timeout_s = *t;
    return Print(StopCommand(stop_opts));
  }
  if (*status) return Print(StatusCommand(view));
  if (*tree) {
    view.format = format == "json"  ? TreeFormat::kJson
                  : format == "dot" ? TreeFormat::kDot
                                    : TreeFormat::kAscii;
    view.color = isatty(STDOUT_FILENO) != 0;
    return Print(TreeCommand(view));
  }
  if (*show) return Print(ShowCommand(view, node_id));
  if (kb.parsed()) return kb.Dispatch();
  if (*report) return Print(ReportCommand(report_opts));
  if (*serve) {
    auto r = ServeCommand(serve_opts);
    if (!r.ok()) return Print(r.error());
    return *r;
  }
  return kExitUsage;
}

}  // namespace
}  // namespace arbor

int main(int argc, char** argv) {
  try {
    return arbor::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "arbor: internal error: %s\n", e.what());
    return arbor::kExitInternal;
  }
}
