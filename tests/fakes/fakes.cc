#include "fakes/fakes.h"

#include <algorithm>

#include "core/search/candidates.h"

namespace arbor::testing {

Status FakeStore::Apply(const Mutation& m) {
  ++applies_;
  if (fail_after_ >= 0 && fail_after_-- == 0) return MakeError("injected store failure");
  for (const Node& n : m.nodes) nodes[n.id] = n;
  for (const Sample& s : m.samples) samples_[{s.node, s.arm, s.rep}] = s;
  for (const auto& [id, p] : m.profiles) profiles_[id] = p;
  for (Event e : m.events) {
    e.id = static_cast<int64_t>(events_.size()) + 1;
    events_.push_back(e);
  }
  if (m.meta) meta_ = *m.meta;
  for (const ActionSpec& a : m.actions) {
    auto it = std::find_if(actions_.begin(), actions_.end(),
                           [&](const ActionSpec& x) { return x.id == a.id; });
    if (it == actions_.end()) {
      actions_.push_back(a);
    } else {
      *it = a;
    }
  }
  for (const Mutation::Prompt& p : m.prompts) prompts_[{p.node, p.kind}] = p.text;
  return {};
}

Result<std::vector<Mutation::Prompt>> FakeStore::LoadPrompts(NodeId node) {
  std::vector<Mutation::Prompt> out;
  for (const auto& [key, text] : prompts_) {
    if (key.first == node) out.push_back({node, key.second, text});
  }
  return out;
}

Result<std::vector<Node>> FakeStore::LoadNodes() {
  std::vector<Node> out;
  for (const auto& [id, n] : nodes) out.push_back(n);
  return out;
}

Result<std::vector<Sample>> FakeStore::LoadSamples(NodeId node) {
  std::vector<Sample> out;
  for (const auto& [key, s] : samples_) {
    if (std::get<0>(key) == node) out.push_back(s);
  }
  return out;
}

Result<std::optional<Profile>> FakeStore::LoadProfile(NodeId node) {
  auto it = profiles_.find(node);
  if (it == profiles_.end()) return std::optional<Profile>();
  return std::optional<Profile>(it->second);
}

Result<std::vector<Event>> FakeStore::LoadEvents(NodeId node, int64_t after_id, int limit) {
  std::vector<Event> out;
  for (const Event& e : events_) {
    if (e.id > after_id && (node == kNoNode || e.node == node)) out.push_back(e);
    if (static_cast<int>(out.size()) >= limit) break;
  }
  return out;
}

Result<std::string> FakeWorkspace::Prepare(NodeId node, const std::string& commit) {
  if (on_prepare) on_prepare(node);
  worktrees[node] = commit;
  return "/fake/n" + std::to_string(node);
}

Result<std::string> FakeWorkspace::Snapshot(NodeId node, const std::string&, const EnvOverlay&) {
  std::string c = "c" + std::to_string(next_++);
  parent_of[c] = worktrees[node];
  worktrees[node] = c;
  return c;
}

Status FakeWorkspace::Promote(const std::string& commit) {
  ++promotes;
  branch = commit;
  return {};
}

Status FakeWorkspace::Release(NodeId node) {
  worktrees.erase(node);
  return {};
}

namespace {
StepResult Ok(double seconds) {
  StepResult r;
  r.duration_s = seconds;
  return r;
}
StepResult Failed(double seconds, int code) {
  StepResult r;
  r.kind = ExitKind::kFailed;
  r.exit_code = code;
  r.duration_s = seconds;
  return r;
}
}  // namespace

bool FakeTarget::InsideOwnMeasurement() const {
  return open_measurements > 0 && measuring_thread_ == std::this_thread::get_id();
}

void FakeTarget::Enter() {
  ++active_;
  max_concurrent_builds = std::max(max_concurrent_builds, active_);
  overlaps += open_measurements > 0 ? 1 : 0;
}

void FakeTarget::Leave() { --active_; }

bool FakeTarget::build_gathered() const {
  std::lock_guard<std::mutex> lock(mu_);
  return gathered_ && arrived_ >= build_gather;
}

std::vector<std::pair<NodeId, EnvOverlay>> FakeTarget::built() const {
  std::lock_guard<std::mutex> lock(mu_);
  return built_;
}

void FakeTarget::BeginMeasurement(NodeId) {
  std::lock_guard<std::mutex> lock(mu_);
  ++measurements;
  contract_violations += open_measurements > 0 ? 1 : 0;
  ++open_measurements;
  measuring_thread_ = std::this_thread::get_id();
  overlaps += active_;
  cv_.notify_all();
}

void FakeTarget::EndMeasurement(NodeId) {
  std::lock_guard<std::mutex> lock(mu_);
  contract_violations += open_measurements == 0 ? 1 : 0;
  --open_measurements;
}

int FakeTarget::MeasurementsBegun() const {
  std::lock_guard<std::mutex> lock(mu_);
  return measurements;
}

bool FakeTarget::WaitForMeasurement(int after, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return measurements > after; });
}

StepResult FakeTarget::Build(const RunContext& ctx) {
  std::unique_lock<std::mutex> lock(mu_);
  ++builds;
  contract_violations += InsideOwnMeasurement() ? 1 : 0;
  built_.emplace_back(ctx.node, ctx.env);
  Enter();
  if (on_build) {
    lock.unlock();
    on_build(ctx);
    lock.lock();
  }
  if (arrived_++ < build_gather) {
    cv_.notify_all();
    if (!cv_.wait_for(lock, gather_timeout, [&] { return arrived_ >= build_gather; })) {
      gathered_ = false;
    }
  }
  StepResult r = build_ok(ctx.env) ? Ok(step_seconds) : Failed(step_seconds, 2);
  Leave();
  return r;
}

Measurement FakeTarget::Check(const RunContext& ctx) {
  std::lock_guard<std::mutex> lock(mu_);
  contract_violations += InsideOwnMeasurement() ? 1 : 0;
  Enter();
  Measurement m;
  m.step = check_ok(ctx.env) ? Ok(step_seconds) : Failed(step_seconds, 1);
  Leave();
  return m;
}

Measurement FakeTarget::Bench(const RunContext& ctx) {
  std::lock_guard<std::mutex> lock(mu_);
  contract_violations += open_measurements > 0 ? 0 : 1;
  overlaps += active_;
  if (bench) return bench(ctx, benches++);
  ++benches;
  Measurement m;
  auto v = metric(ctx.env);
  if (!v) {
    m.step.kind = ExitKind::kSignaled;
    m.step.signal = 11;
    m.step.duration_s = step_seconds;
    return m;
  }
  m.step = Ok(step_seconds);
  m.value = *v;
  return m;
}

ProfileResult FakeTarget::Profile(const RunContext& ctx) {
  std::lock_guard<std::mutex> lock(mu_);
  contract_violations += InsideOwnMeasurement() ? 1 : 0;
  overlaps += active_;
  ProfileResult r;
  r.step = Ok(step_seconds);
  if (profile) r.profile = profile(ctx.env);
  return r;
}

SpecialistResult FakeSpecialist::Implement(const Task& task) {
  SpecialistResult r;
  r.duration_s = 0.5;
  r.overlay = task.parent_overlay;
  if (fail.count(task.action->id)) {
    r.status = SpecialistResult::Status::kFailed;
    r.diagnosis = "injected failure";
    return r;
  }
  ApplySpec apply = SubstituteValue(task.action->apply, task.value);
  if (apply.kind == ApplySpec::Kind::kAgent) {
    r.status = SpecialistResult::Status::kSkipped;
    r.diagnosis = "no specialist backend configured";
    return r;
  }
  for (const auto& [k, v] : apply.env) r.overlay[k] = v;
  for (const auto& [k, v] : apply.append) r.overlay[k] += v;
  r.summary = "applied " + task.action->id;
  return r;
}

Result<int64_t> FakeKnowledgeBase::MaxId() {
  if (fail) return MakeError("fake knowledge base failure");
  return entries.empty() ? 0 : entries.back().id;
}

Result<std::vector<KbEntry>> FakeKnowledgeBase::Load(const KbQuery& query) {
  if (fail) return MakeError("fake knowledge base failure");
  auto contains = [](const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  std::vector<KbEntry> out;
  for (const KbEntry& e : entries) {
    if (query.max_id > 0 && e.id > query.max_id) continue;
    if (!query.exclude_campaign_uid.empty() && e.campaign_uid == query.exclude_campaign_uid) {
      continue;
    }
    bool any_filter = !query.action_ids.empty() || !query.categories.empty();
    if (any_filter && !contains(query.action_ids, e.action_id) &&
        !contains(query.categories, e.category)) {
      continue;
    }
    out.push_back(e);
  }
  return out;
}

Status FakeKnowledgeBase::Record(const std::vector<KbEntry>& batch) {
  ++record_calls;
  if (fail) return MakeError("fake knowledge base failure");
  for (KbEntry e : batch) {
    bool seen = std::any_of(entries.begin(), entries.end(),
                            [&](const KbEntry& x) { return x.uid == e.uid; });
    if (seen) continue;
    e.id = entries.empty() ? 1 : entries.back().id + 1;
    entries.push_back(std::move(e));
  }
  return {};
}

}  // namespace arbor::testing
