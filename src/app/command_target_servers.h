// TargetServers: the [target.serve] servers of a CommandTarget (docs/campaign-file.md,
// "[target.serve]").
//
// A server belongs to the state a command runs against: (node, worktree, environment overlay).
// The node's check, bench and profile commands Acquire() it before they run: the first starts
// it (exec/service.h) in the worktree with the commands' environment plus ARBOR_PORT (a free
// loopback port) and ARBOR_SERVE_ID (the marker every process of it carries), and polls
// `ready` until it exits 0 (or, without one, until the port accepts a connection); the next
// ones find it running. Release() after each command: a server found dead then died during it,
// and the step becomes the server's crash, with its log's tail.
//
// At most one server runs that no command is using: starting one stops every idle other, so
// the two arms of an interleaved A/B restart their servers as they alternate, and a
// measurement never shares the machine with another state's server. A build stops the servers
// of its worktree (it may replace their binaries); StopNode() — the node's worktree released,
// which is the end of its evaluation (ServerStoppingWorkspace) — and StopAll() stop the rest.
// Stopping runs `stop` when given, waits for the server's processes to end (within
// stop_timeout), then SIGTERM, two seconds, SIGKILL of everything it started.
//
// Each server's stdout and stderr are runs/n<node>/serve-<label>/stdout and stderr (<label>: the
// run that started it), with `ready` and `stop`'s output in ready/ and stop/ below; all are
// scrubbed of secrets once the server is stopped. Thread-safe (build lanes check concurrently);
// starting and stopping are serialised.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/model/ports.h"
#include "core/model/spec.h"
#include "exec/runner.h"
#include "exec/service.h"
#include "util/secrets.h"

namespace arbor {

class TargetServers {
 public:
  // The environment variable every process of a server carries: the server's log folder.
  static constexpr const char* kMarkerName = "ARBOR_SERVE_ID";

  TargetServers(const CampaignSpec* spec, std::string runs_dir);
  ~TargetServers();  // StopAll()
  TargetServers(const TargetServers&) = delete;
  TargetServers& operator=(const TargetServers&) = delete;

  struct Entry;
  // What a command runs against: the server's port, or why it could not (the command must not
  // run then; `failure` is the step's result).
  struct Lease {
    Entry* entry = nullptr;
    int port = 0;
    std::optional<StepResult> failure;
  };
  // `base` is the command's own run: its environment (the allowlist, the overlay, the node's
  // ARBOR_* variables) and limits are the server's too.
  Lease Acquire(const RunContext& ctx, const RunSpec& base, const std::string& role);
  // After the command of `lease` ran: if the server died meanwhile, `step` becomes its crash.
  void Release(const Lease& lease, const std::string& role, StepResult* step);

  void StopIn(const std::string& worktree);  // before a build in it
  // The node's evaluation is over: its servers, and any in its worktree `worktree` ("": none).
  void StopNode(NodeId node, const std::string& worktree);
  void StopAll();
  int running();  // servers up now (for tests)

 private:
  std::vector<std::unique_ptr<Entry>>::iterator FindLocked(Entry* entry);
  // Starts the server of `ctx`: a new entry, or the step that says why it did not come up.
  Result<Entry*> StartLocked(const RunContext& ctx, const RunSpec& base, StepResult* failure);
  // Stops `entry`'s server (gracefully when `graceful`), scrubs its logs and forgets it.
  void StopLocked(std::vector<std::unique_ptr<Entry>>::iterator it, bool graceful);
  // The server of `entry` is gone: stops what is left and describes it as a step.
  StepResult DiedLocked(Entry* entry, const std::string& when);
  std::string TailOf(const std::string& dir) const;  // a server's log tail, scrubbed
  void ScrubDir(const std::string& dir) const;
  std::string Scrubbed(std::string text) const;

  const CampaignSpec* spec_;
  std::string runs_dir_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Entry>> entries_;
};

// A Workspace whose Release(node) first stops the node's servers: a node's worktree is released
// when its evaluation is over, and its servers run in it. ReleaseAll() stops every server.
// Borrows both; they must outlive it.
class ServerStoppingWorkspace : public Workspace {
 public:
  ServerStoppingWorkspace(Workspace* inner, TargetServers* servers)
      : inner_(inner), servers_(servers) {}

  Result<std::string> Open() override { return inner_->Open(); }
  Result<std::string> Prepare(NodeId node, const std::string& commit) override;
  Result<std::string> Snapshot(NodeId node, const std::string& message,
                               const EnvOverlay& overlay) override {
    return inner_->Snapshot(node, message, overlay);
  }
  Status Promote(const std::string& commit) override { return inner_->Promote(commit); }
  Status Release(NodeId node) override;
  Status ReleaseAll() override;
  std::optional<double> FreeDiskMb() override { return inner_->FreeDiskMb(); }

 private:
  Workspace* inner_;
  TargetServers* servers_;
  std::mutex mu_;  // lanes prepare worktrees from several threads
  std::map<NodeId, std::string> worktrees_;
};

}  // namespace arbor
