// status / tree / show: read-only views over the campaign store, safe while a campaign runs
// (the store is opened read-only; SQLite's WAL lets readers and the writer proceed together).
#include "report/views.h"

#include <memory>
#include <optional>

#include "app/campaign.h"
#include "app/paths.h"
#include "app/reading.h"
#include "app/run_logs.h"
#include "app/secrets.h"
#include "app/slurm.h"
#include "arbor/exit_codes.h"
#include "store/sqlite_store.h"

namespace arbor {

Result<OpenedCampaign> OpenForReading(const std::string& file) {
  ARBOR_TRY_ASSIGN(auto spec, LoadSpec(file));
  CampaignPaths paths = PathsFor(spec);
  auto store = SqliteStore::Open(paths.db, OpenMode::kReadOnly);
  if (!store.ok()) {
    return MakeError("no campaign '" + spec.name + "' has run in " + spec.workspace + " yet (" +
                         store.error().message + ")",
                     kExitState);
  }
  return OpenedCampaign{std::move(spec), std::move(paths), std::move(*store)};
}

Result<CampaignView> LoadCampaignView(OpenedCampaign* o) {
  CampaignView view;
  auto meta = o->store->LoadMeta();
  if (!meta.ok()) return MakeError(meta.error().message, kExitStore);
  if (meta->has_value()) view.meta = **meta;
  auto nodes = o->store->LoadNodes();
  if (!nodes.ok()) return MakeError(nodes.error().message, kExitStore);
  view.nodes = std::move(*nodes);
  view.metric_name = o->spec.metric.name;
  view.goal = o->spec.metric.goal;
  view.target = o->spec.metric.target;
  // The budget the campaign last ran with (command-line overrides included), else the file's.
  view.max_nodes = view.meta.budget_nodes > 0 ? static_cast<int>(view.meta.budget_nodes)
                                              : o->spec.search.max_nodes;
  view.max_time_s =
      view.meta.budget_time_s > 0 ? view.meta.budget_time_s : o->spec.search.max_time_s;
  return view;
}

Result<std::string> StatusCommand(const ViewOptions& options) {
  ARBOR_TRY_ASSIGN(auto opened, OpenForReading(options.file));
  ARBOR_TRY_ASSIGN(auto view, LoadCampaignView(&opened));
  if (opened.spec.executor.kind == ExecutorSpec::Kind::kSlurm) {
    // The campaign's jobs as Slurm sees them; a Slurm that cannot be asked costs one line.
    auto jobs =
        ListSlurmJobs(SlurmJobName(opened.spec.name, opened.paths.state_dir), SlurmClientEnv());
    view.jobs = jobs.ok() ? std::move(*jobs) : std::vector<ExecutorJob>{};
    if (!jobs.ok()) view.jobs_error = jobs.error().message;
  }
  if (options.json) return StatusJson(view).dump() + "\n";
  return StatusText(view);
}

Result<std::string> NothingEvaluated(const std::string& file) {
  ARBOR_TRY_ASSIGN(auto opened, OpenForReading(file));
  ARBOR_TRY_ASSIGN(auto view, LoadCampaignView(&opened));
  return NothingEvaluatedHint(view);
}

Result<std::string> TreeCommand(const ViewOptions& options) {
  ARBOR_TRY_ASSIGN(auto opened, OpenForReading(options.file));
  auto nodes = opened.store->LoadNodes();
  if (!nodes.ok()) return MakeError(nodes.error().message, kExitStore);
  switch (options.format) {
    case TreeFormat::kJson:
      return TreeJson(*nodes).dump() + "\n";
    case TreeFormat::kDot:
      return TreeDot(*nodes);
    case TreeFormat::kAscii:
      break;
  }
  AsciiOptions ascii;
  ascii.color = options.color;
  return TreeAscii(*nodes, ascii);
}

Result<std::string> ShowCommand(const ViewOptions& options, long long id) {
  ARBOR_TRY_ASSIGN(auto opened, OpenForReading(options.file));
  auto nodes = opened.store->LoadNodes();
  if (!nodes.ok()) return MakeError(nodes.error().message, kExitStore);
  const Node* node = nullptr;
  for (const Node& n : *nodes) {
    if (n.id == id) node = &n;
  }
  if (node == nullptr) {
    return MakeError("no node #" + std::to_string(id) + " in campaign '" + opened.spec.name +
                         "' (it has " + std::to_string(nodes->size()) + " nodes)",
                     kExitState);
  }
  if (options.prompt) {
    // Exactly what the node's specialist was given (and, on an incumbent, what its proposal
    // rounds were given), as recorded: nothing is recomposed.
    auto prompts = opened.store->LoadPrompts(id);
    if (!prompts.ok()) return MakeError(prompts.error().message, kExitStore);
    if (prompts->empty()) {
      return MakeError("node #" + std::to_string(id) + " has no recorded prompt (" +
                           (node->agent.backend == SpecialistBackend::kBuiltin
                                ? "its action is declarative: the builtin specialist needs none"
                                : "its specialist never ran") +
                           ")",
                       kExitState);
    }
    std::string out;
    for (const Mutation::Prompt& p : *prompts) {
      if (prompts->size() > 1) out += "=== " + p.kind + " ===\n";
      out += p.text;
      if (!out.empty() && out.back() != '\n') out += '\n';
    }
    return out;
  }
  auto samples = opened.store->LoadSamples(id);
  auto profile = opened.store->LoadProfile(id);
  auto events = opened.store->LoadEvents(id, 0, 100000);
  if (!samples.ok() || !profile.ok() || !events.ok()) {
    return MakeError("cannot read node #" + std::to_string(id) + " from the store", kExitStore);
  }
  // What the node's failed run printed, scrubbed with the campaign's [secrets] once more.
  std::optional<FailedRun> failed = ReadFailedRun(opened.paths.runs, node->id, node->outcome,
                                                  ScrubberFromEnv(opened.spec.secrets));
  const FailedRun* failed_run = failed ? &*failed : nullptr;
  if (options.json) return ShowJson(*node, *samples, *profile, *events, failed_run).dump() + "\n";
  return ShowText(*node, *samples, *profile, *events, failed_run);
}

}  // namespace arbor
