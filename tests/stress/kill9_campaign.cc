#include "kill9_campaign.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <thread>

#include "../integration/agent_campaign.h"

namespace arbor::stress {
namespace {

namespace fs = std::filesystem;
using integration::ProcResult;
using integration::TempWorkspace;

// The parallel test's actions (tests/integration/parallel_test.cc): three agent actions (two
// wins, one crash), an env win and an env failure; the double-speed agent proposes a fifth.
std::string ParallelActions() {
  using integration::AgentAction;
  using integration::EnvAction;
  return AgentAction("kernel.speed", "double-speed", 2.0) +
         AgentAction("kernel.tune", "double-tune", 1.9) + AgentAction("kernel.noop", "noop", 1.8) +
         EnvAction("sys.boost", "BOOST = \"1.5\"", 1.5) +
         EnvAction("sys.wrong", "WRONG = \"1\"", 1.4);
}

// Replaces the line starting with `key = ` in arbor.toml by `key = value`.
bool SetLine(std::string* toml, const std::string& key, const std::string& value) {
  size_t pos = toml->find("\n" + key + " = ");
  if (pos == std::string::npos) return false;
  size_t end = toml->find('\n', pos + 1);
  toml->replace(pos, end - pos, "\n" + key + " = " + value);
  return true;
}

void Configure(TempWorkspace& ws, uint64_t seed, int max_nodes) {
  std::string toml = integration::ReadFile(ws.repo() + "/arbor.toml");
  std::string before = toml;
  if (!SetLine(&toml, "seed", std::to_string(seed)) ||
      (max_nodes > 0 && !SetLine(&toml, "max_nodes", std::to_string(max_nodes)))) {
    std::fprintf(stderr, "arbor.toml has no seed or max_nodes line\n");
  }
  if (toml == before) return;
  ws.Write("arbor.toml", toml);
  ProcResult add = ws.Git({"add", "-A"});
  ProcResult commit =
      ws.Git({"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "stress settings"});
  if (add.exit_code != 0 || commit.exit_code != 0) {
    std::fprintf(stderr, "cannot commit arbor.toml: %s\n", commit.Describe().c_str());
  }
}

bool IsAncestor(const TempWorkspace& ws, const std::string& a, const std::string& b) {
  return ws.Git({"merge-base", "--is-ancestor", a, b}).exit_code == 0;
}

}  // namespace

const char* KindName(CampaignKind kind) { return kind == CampaignKind::kToy ? "toy" : "parallel"; }

std::string CampaignName(CampaignKind kind) { return kind == CampaignKind::kToy ? "toy" : "par"; }

std::unique_ptr<TempWorkspace> MakeCampaign(CampaignKind kind, uint64_t seed, int max_nodes) {
  std::unique_ptr<TempWorkspace> ws;
  if (kind == CampaignKind::kToy) {
    ws = TempWorkspace::Toy();
  } else {
    ws = std::make_unique<TempWorkspace>();
    integration::WriteAgentCampaign(*ws, CampaignName(kind), 2, /*agent_sleep_s=*/0.3,
                                    ParallelActions());
  }
  Configure(*ws, seed, max_nodes);
  return ws;
}

std::string StorePath(const TempWorkspace& ws, CampaignKind kind) {
  return ws.repo() + "/.arbor/" + CampaignName(kind) + "/arbor.db";
}

void CheckGit(const TempWorkspace& ws, CampaignKind kind, const StoreSnapshot& s,
              std::vector<std::string>* out) {
  const NodeRow* inc = s.Find(s.Incumbent());
  if (inc == nullptr) return;  // no baseline yet: nothing the branch must match
  const std::string branch = "arbor/" + CampaignName(kind);
  ProcResult tip = ws.Git({"rev-parse", "--verify", "-q", branch + "^{commit}"});
  std::string head = tip.exit_code == 0 ? tip.out.substr(0, tip.out.find('\n')) : "";
  // The newest event is the incumbent's keep: the branch may not have moved yet.
  bool lag = s.last_event == "kept" && s.last_event_node == inc->id;
  if (head.empty()) {
    if (inc->id != 1)
      out->push_back(branch + " missing while #" + std::to_string(inc->id) + " is the incumbent");
    return;
  }
  if (head != inc->commit) {
    bool older_keep = false;
    if (lag) {
      for (const NodeRow* n = s.Find(inc->parent); n != nullptr; n = s.Find(n->parent)) {
        older_keep |= n->commit == head;
      }
    }
    if (!older_keep) {
      out->push_back(branch + " is at " + head + ", the incumbent #" + std::to_string(inc->id) +
                     " (" + inc->Key() + ") at " + inc->commit);
    }
  }
  for (const auto& n : s.nodes) {
    if (n.outcome != "kept") continue;
    if (lag && n.id == inc->id) continue;
    if (ws.Git({"cat-file", "-e", n.commit + "^{commit}"}).exit_code != 0) {
      out->push_back("kept #" + std::to_string(n.id) + " (" + n.Key() + "): commit " + n.commit +
                     " missing");
    } else if (!IsAncestor(ws, n.commit, branch)) {
      out->push_back("kept #" + std::to_string(n.id) + " (" + n.Key() + "): commit " + n.commit +
                     " not on " + branch);
    }
  }
}

void CheckNoWorktrees(const TempWorkspace& ws, CampaignKind kind, std::vector<std::string>* out) {
  int count = integration::WorktreeCount(ws);
  if (count != 1) out->push_back(std::to_string(count - 1) + " worktrees left after the finish");
  std::string dir = ws.repo() + "/.arbor/" + CampaignName(kind) + "/worktrees";
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec)) {
    out->push_back(dir + " is not empty after the finish");
  }
  ProcResult status = ws.Git({"status", "--porcelain"});
  if (status.exit_code != 0 || !status.out.empty()) {
    out->push_back("the user's checkout is dirty: " + status.out);
  }
}

namespace {

// The live processes (zombies are dead) of `ws`, but this one: pid -> command line.
std::map<pid_t, std::string> CampaignProcesses(const TempWorkspace& ws) {
  std::map<pid_t, std::string> found;
  const std::string root = fs::weakly_canonical(ws.root()).string();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pid == getpid() || !integration::ProcessAlive(pid)) continue;
    std::error_code cwd_ec;
    const std::string cwd = fs::read_symlink(entry.path() / "cwd", cwd_ec).string();
    bool ours = !cwd_ec && (cwd == root || cwd.rfind(root + "/", 0) == 0);
    if (!ours) {
      const std::string environ = integration::ReadFile(entry.path().string() + "/environ");
      ours = environ.find(root + "/") != std::string::npos;
    }
    if (!ours) continue;
    std::string cmdline = integration::ReadFile(entry.path().string() + "/cmdline");
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    found[pid] = cmdline;
  }
  return found;
}

}  // namespace

std::vector<std::string> Orphans(const TempWorkspace& ws, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  std::map<pid_t, std::string> left = CampaignProcesses(ws);
  while (!left.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    left = CampaignProcesses(ws);
  }
  std::vector<std::string> out;
  for (const auto& [pid, cmdline] : left) {
    kill(pid, SIGKILL);
    out.push_back(std::to_string(pid) + " " + cmdline);
  }
  return out;
}

}  // namespace arbor::stress
