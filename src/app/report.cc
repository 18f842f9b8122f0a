// ReportCommand and ServeCommand (declared in app/report.h), and the dashboard's source: the
// store opened read-only, plus the same inputs as the report.
#include "app/report.h"

#include <cstdio>
#include <filesystem>
#include <utility>

#include "app/dashboard_source.h"
#include "app/reading.h"
#include "app/report_inputs.h"
#include "app/run_logs.h"
#include "app/secrets.h"
#include "arbor/exit_codes.h"
#include "dashboard/api.h"
#include "dashboard/server.h"
#include "report/html.h"
#include "report/panels.h"

namespace arbor {
namespace {

class StoreSource : public DashboardSource {
 public:
  explicit StoreSource(OpenedCampaign* campaign)
      : c_(campaign), scrubber_(ScrubberFromEnv(campaign->spec.secrets)) {}

  Result<CampaignView> LoadView() override { return LoadCampaignView(c_); }

  Result<std::vector<Event>> LoadEvents(int64_t after, int limit) override {
    return c_->store->LoadEvents(kNoNode, after, limit);
  }

  Result<NodeDetail> LoadDetail(const Node& node) override {
    NodeDetail d{node, {}, {}, {}, {}, {}};
    ARBOR_TRY_ASSIGN(d.samples, c_->store->LoadSamples(node.id));
    ARBOR_TRY_ASSIGN(d.profile, c_->store->LoadProfile(node.id));
    ARBOR_TRY_ASSIGN(d.events, c_->store->LoadEvents(node.id, 0, -1));
    d.logs = ReadLogs(c_->paths.runs, node.id, scrubber_);
    d.failed_run = ReadFailedRun(c_->paths.runs, node.id, node.outcome, scrubber_);
    return d;
  }

  Result<std::string> RenderPage(const CampaignView& view, const nlohmann::json& funnel,
                                 int64_t version) override {
    ReportInput in = GatherReport(*c_, view, funnel);
    in.live = true;
    in.version = version;
    return ReportHtml(in);
  }

  double MinEffect() const override { return c_->spec.critic.min_effect; }

 private:
  OpenedCampaign* c_;
  const Scrubber scrubber_;  // the campaign's [secrets], for the logs it reads
};

}  // namespace

std::unique_ptr<DashboardSource> MakeStoreSource(OpenedCampaign* campaign) {
  return std::make_unique<StoreSource>(campaign);
}

Result<std::string> ReportCommand(const ReportOptions& options) {
  ARBOR_TRY_ASSIGN(auto campaign, OpenForReading(options.file));
  auto events = campaign.store->LoadEvents(kNoNode, 0, -1);
  if (!events.ok()) return MakeError(events.error().message, kExitStore);
  FunnelBuilder funnel;
  for (const Event& e : *events) funnel.Add(e);
  ARBOR_TRY_ASSIGN(auto view, LoadCampaignView(&campaign));
  const size_t count = view.nodes.size();
  nlohmann::json funnel_json = funnel.Json(view.nodes);
  ReportInput in = GatherReport(campaign, std::move(view), funnel_json);
  in.version = funnel.last_event_id();
  std::string html = ReportHtml(in);

  // Its sources were scrubbed when they were written; what they quote from outside them (git
  // diffs) is scrubbed here with the secrets this process can see. Written next to its final
  // name, then renamed: a reader never sees half a report.
  SecretsLayer secrets(campaign.spec.secrets);
  if (Status written = WriteKeptFile(options.out, html); !written.ok()) {
    return MakeError(written.error().message, kExitState);
  }
  std::string line = "arbor: wrote " + options.out + ": " + std::to_string(count) + " nodes";
  if (in.tree_svg.empty()) line += " (no tree layout: " + in.tree_note + ")";
  return line + "\n";
}

Result<int> ServeCommand(const ServeCommandOptions& options) {
  if (!IsLoopback(options.bind) && options.token.empty()) {
    return MakeError("--bind " + options.bind +
                         " is reachable from other machines: it needs --token (every request "
                         "must then carry it)",
                     kExitUsage);
  }
  ARBOR_TRY_ASSIGN(auto campaign, OpenForReading(options.file));
  std::unique_ptr<DashboardSource> source = MakeStoreSource(&campaign);
  DashboardApi api(source.get());
  ServeOptions serve;
  serve.bind = options.bind;
  serve.port = options.port;
  serve.token = options.token;
  ARBOR_TRY(ServeDashboard(serve, &api, stdout));
  return kExitOk;
}

}  // namespace arbor
