// LayoutTree, ReadFinalChange, GatherReport (declared in app/report_inputs.h).
#include "app/report_inputs.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <unordered_set>

#include "app/run_logs.h"
#include "app/secrets.h"
#include "exec/runner.h"
#include "report/panels.h"
#include "util/escape.h"
#include "util/strings.h"

namespace arbor {
namespace {

constexpr double kDotTimeoutS = 60;
constexpr double kGitTimeoutS = 30;
constexpr size_t kMaxDiffBytes = 512 << 10;

std::map<std::string, std::string> ToolEnv() {
  std::map<std::string, std::string> env{{"LC_ALL", "C"}, {"GIT_CONFIG_NOSYSTEM", "1"}};
  for (const char* name : {"PATH", "HOME"}) {
    if (const char* v = std::getenv(name)) env[name] = v;
  }
  if (env.find("PATH") == env.end()) env["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  return env;
}

// A scratch file in $TMPDIR (or /tmp), removed at scope exit.
class TempFile {
 public:
  explicit TempFile(const std::string& content) {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/arbor-dot-XXXXXX";
    int fd = mkstemp(path_.data());
    if (fd < 0) {
      path_.clear();
      return;
    }
    ::close(fd);
    std::ofstream(path_, std::ios::binary) << content;
  }
  ~TempFile() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

const Node* Incumbent(const std::vector<Node>& nodes, const nlohmann::json& kept) {
  NodeId id = kRootId;
  if (!kept["nodes"].empty()) id = kept["nodes"].back().value("node", kRootId);
  for (const Node& n : nodes) {
    if (n.id == id) return &n;
  }
  return nullptr;
}

}  // namespace

std::string LayoutTree(const std::vector<Node>& nodes, std::string* note) {
  if (nodes.size() > kMaxLayoutNodes) {
    *note = "the tree has " + std::to_string(nodes.size()) + " nodes, more than the " +
            std::to_string(kMaxLayoutNodes) + " laid out.";
    return "";
  }
  DotOptions options;
  options.for_report = true;
  TempFile dot_file(TreeDot(nodes, options));
  if (dot_file.path().empty()) {
    *note = "cannot write a temporary file for Graphviz.";
    return "";
  }
  auto run = RunCaptured("dot -Tsvg " + ShellQuote(dot_file.path()), "", ToolEnv(), kDotTimeoutS);
  if (!run.ok()) {
    *note = "cannot run Graphviz `dot`: " + run.error().message;
    return "";
  }
  if (run->result.status == RunResult::Status::kTimedOut) {
    *note = "Graphviz `dot` took longer than " + FormatDouble(kDotTimeoutS) + " s.";
    return "";
  }
  if (!run->result.ok()) {
    *note = run->result.exit_code == 127
                ? "Graphviz `dot` is not installed (Debian: apt-get install graphviz)."
                : "Graphviz `dot` failed: " + Trim(run->err);
    return "";
  }
  size_t start = run->out.find("<svg");
  if (start == std::string::npos) {
    *note = "Graphviz `dot` printed no SVG.";
    return "";
  }
  return run->out.substr(start);
}

FinalChange ReadFinalChange(const std::string& repo, const std::vector<Node>& nodes) {
  FinalChange change;
  const Node* root = nullptr;
  for (const Node& n : nodes) {
    if (n.id == kRootId) root = &n;
  }
  const Node* best = Incumbent(nodes, KeptPathJson(nodes));
  if (root == nullptr || best == nullptr || root->commit.empty() || best->commit.empty()) {
    return change;
  }
  const auto env = ToolEnv();
  auto diff =
      RunCaptured("git -c core.hooksPath=/dev/null diff --no-color " + ShellQuote(root->commit) +
                      " " + ShellQuote(best->commit) + " -- . ':(exclude)arbor-best.env'",
                  repo, env, kGitTimeoutS);
  if (diff.ok() && diff->result.ok()) {
    change.diff = std::move(diff->out);
    if (change.diff.size() > kMaxDiffBytes) {
      change.diff.resize(kMaxDiffBytes);
      change.diff += "\n… (cut at 512 KiB: git diff " + root->commit + " " + best->commit + ")\n";
    }
  }
  auto env_file = RunCaptured("git show " + ShellQuote(best->commit + ":arbor-best.env"), repo, env,
                              kGitTimeoutS);
  if (env_file.ok() && env_file->result.ok()) change.best_env = std::move(env_file->out);
  return change;
}

ReportInput GatherReport(const OpenedCampaign& campaign, CampaignView view,
                         const nlohmann::json& funnel) {
  ReportInput in;
  in.min_effect = campaign.spec.critic.min_effect;
  in.funnel = funnel;
  in.tree_svg = LayoutTree(view.nodes, &in.tree_note);
  FinalChange change = ReadFinalChange(campaign.spec.workspace, view.nodes);
  in.diff = std::move(change.diff);
  in.best_env = std::move(change.best_env);
  // Logs of the nodes the report lists: all of them, or the kept path and the newest.
  std::unordered_set<NodeId> listed;
  // A named value: a range-for over a member of a temporary reads freed memory (ASan found it).
  const nlohmann::json kept_path = KeptPathJson(view.nodes);
  for (const auto& k : kept_path["nodes"]) listed.insert(k.value("node", 0));
  NodeId max_id = 0;
  for (const Node& n : view.nodes) max_id = std::max(max_id, n.id);
  const Scrubber scrubber = ScrubberFromEnv(campaign.spec.secrets);
  for (const Node& n : view.nodes) {
    bool newest = max_id - n.id < static_cast<NodeId>(in.max_node_rows);
    if (!newest && !listed.contains(n.id)) continue;
    std::vector<LogExcerpt> logs = ReadLogs(campaign.paths.runs, n.id, scrubber);
    if (!logs.empty()) in.logs[n.id] = std::move(logs);
    if (auto failed = ReadFailedRun(campaign.paths.runs, n.id, n.outcome, scrubber)) {
      in.failed_runs[n.id] = std::move(*failed);
    }
    if (campaign.spec.executor.kind != ExecutorSpec::Kind::kLocal) {
      // Where each run went (local runs record no job events).
      auto events = campaign.store->LoadEvents(n.id, 0, -1);
      if (events.ok()) {
        std::vector<JobPlace> places = JobPlaces(*events);
        if (!places.empty()) in.places[n.id] = std::move(places);
      }
    }
  }
  in.view = std::move(view);
  char stamp[32] = "";
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  if (gmtime_r(&now, &utc) != nullptr)
    std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M UTC", &utc);
  in.generated = std::string("Generated by arbor 0.1.0 from ") + campaign.paths.db + " at " + stamp;
  return in;
}

}  // namespace arbor
