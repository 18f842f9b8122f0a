// In-memory fakes of every core port, for tests of core logic without processes, disks or
// networks. Each has an integration test of the real adapter beside it (store/, exec/, app/).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "core/model/ports.h"

namespace arbor::testing {

// Applies mutations atomically to maps. `fail_after` makes the n-th Apply from now fail
// without writing anything, which is what a kill -9 before the commit looks like to resume.
class FakeStore : public Store {
 public:
  Status Apply(const Mutation& m) override;
  Result<std::optional<CampaignMeta>> LoadMeta() override { return meta_; }
  Result<std::vector<Node>> LoadNodes() override;
  Result<std::vector<Sample>> LoadSamples(NodeId node) override;
  Result<std::optional<Profile>> LoadProfile(NodeId node) override;
  Result<std::vector<Event>> LoadEvents(NodeId node, int64_t after_id, int limit) override;
  Result<std::vector<ActionSpec>> LoadActions() override { return actions_; }
  Result<std::vector<Mutation::Prompt>> LoadPrompts(NodeId node) override;

  void FailAfter(int applies) { fail_after_ = applies; }
  int applies() const { return applies_; }
  const std::vector<Event>& events() const { return events_; }
  std::map<NodeId, Node> nodes;

 private:
  std::optional<CampaignMeta> meta_;
  std::map<std::tuple<NodeId, std::string, int>, Sample> samples_;
  std::map<NodeId, Profile> profiles_;
  std::vector<Event> events_;
  std::vector<ActionSpec> actions_;
  std::map<std::pair<NodeId, std::string>, std::string> prompts_;
  int fail_after_ = -1;
  int applies_ = 0;
};

// Commits are "c<n>"; a commit remembers its parent. Worktrees are names only.
class FakeWorkspace : public Workspace {
 public:
  Result<std::string> Open() override { return std::string("c0"); }
  Result<std::string> Prepare(NodeId node, const std::string& commit) override;
  Result<std::string> Snapshot(NodeId node, const std::string& message,
                               const EnvOverlay& overlay) override;
  Status Promote(const std::string& commit) override;
  Status Release(NodeId node) override;
  Status ReleaseAll() override {
    worktrees.clear();
    return {};
  }
  std::optional<double> FreeDiskMb() override { return free_mb; }
  std::optional<double> free_mb;
  // Called on every Prepare (e.g. a delay that lets other threads run first); none by default.
  std::function<void(NodeId)> on_prepare;

  std::string branch = "c0";
  std::map<std::string, std::string> parent_of;  // commit -> parent commit
  std::map<NodeId, std::string> worktrees;       // node -> commit checked out
  int promotes = 0;

 private:
  int next_ = 1;
};

// The benchmark is a function of the node's environment; check and build fail on demand.
class FakeTarget : public Target {
 public:
  // metric(env) → value; nullopt makes the bench crash.
  std::function<std::optional<double>(const EnvOverlay&)> metric;
  std::function<bool(const EnvOverlay&)> check_ok = [](const EnvOverlay&) { return true; };
  std::function<bool(const EnvOverlay&)> build_ok = [](const EnvOverlay&) { return true; };
  std::function<::arbor::Profile(const EnvOverlay&)> profile;
  // When set, replaces `metric` entirely: full control of each measurement (noise, drift,
  // work counts); `call` counts Bench() calls from 0.
  std::function<Measurement(const RunContext& ctx, int call)> bench;
  double step_seconds = 1;  // reported duration of every step
  int builds = 0;
  int benches = 0;
  // BeginMeasurement/EndMeasurement bookkeeping: how many began, how many are open now, and
  // the calls that broke the contract (a benchmark outside a measurement, another command or
  // a nested Begin inside one, an End without a Begin).
  int measurements = 0;
  int open_measurements = 0;
  int contract_violations = 0;
  // Builds and checks may come from several threads at once (build lanes, search.parallel >
  // 1): all of the above is kept under a lock, and so is this. `measurements_need_machine`
  // is what MeasurementsNeedTheMachine() says (true: the local executor).
  bool measurements_need_machine = true;
  int max_concurrent_builds = 0;  // builds and checks running at once, at most
  // Times a build or check and a measurement or profile ran at the same time, on any threads.
  int overlaps = 0;
  // Called outside the lock during each Build (which counts as running meanwhile).
  std::function<void(const RunContext&)> on_build;
  // How many measurements began so far, and a wait (at most `timeout`) until more than
  // `after` did; false if none began.
  int MeasurementsBegun() const;
  bool WaitForMeasurement(int after, std::chrono::milliseconds timeout);
  // The first `build_gather` builds each wait (at most `gather_timeout`) until that many are
  // running at once; build_gathered() then tells whether they were.
  int build_gather = 0;
  std::chrono::milliseconds gather_timeout{20000};
  bool build_gathered() const;
  // (node, env) of every Build, in the order they started.
  std::vector<std::pair<NodeId, EnvOverlay>> built() const;

  StepResult Build(const RunContext& ctx) override;
  Measurement Check(const RunContext& ctx) override;
  Measurement Bench(const RunContext& ctx) override;
  ProfileResult Profile(const RunContext& ctx) override;
  void BeginMeasurement(NodeId) override;
  void EndMeasurement(NodeId) override;
  bool MeasurementsNeedTheMachine() const override { return measurements_need_machine; }

 private:
  // A build or check starts / ends (counts concurrency and overlaps with measurements).
  void Enter();
  void Leave();
  // Another command from the thread that has a measurement open breaks the Target contract
  // (other threads' builds may run meanwhile when measurements do not need the machine).
  bool InsideOwnMeasurement() const;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int active_ = 0;  // builds and checks running now
  int arrived_ = 0;
  bool gathered_ = true;
  std::thread::id measuring_thread_;
  std::vector<std::pair<NodeId, EnvOverlay>> built_;
};

// Applies `env` actions; skips `agent` actions; fails actions whose id is in `fail`.
class FakeSpecialist : public Specialist {
 public:
  std::set<std::string> fail;
  SpecialistResult Implement(const Task& task) override;
};

class FakeClock : public Clock {
 public:
  double now = 1000;
  double tick = 0.001;  // advances on every read, so durations are positive and ordered
  double Now() override { return now += tick; }
};

// An in-memory knowledge base with the adapter's semantics (idempotent by uid, ids in order,
// query filters); conflicts are not tracked. `fail` makes every call fail.
class FakeKnowledgeBase : public KnowledgeBase {
 public:
  std::vector<KbEntry> entries;
  bool fail = false;
  int record_calls = 0;
  Result<int64_t> MaxId() override;
  Result<std::vector<KbEntry>> Load(const KbQuery& query) override;
  Status Record(const std::vector<KbEntry>& batch) override;
};

}  // namespace arbor::testing
