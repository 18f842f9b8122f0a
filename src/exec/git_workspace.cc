#include "exec/git_workspace.h"

#include <sys/statvfs.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>

#include "exec/git_cli.h"
#include "exec/runner.h"
#include "util/escape.h"
#include "util/strings.h"

namespace arbor {
namespace {

namespace fs = std::filesystem;

constexpr const char* kIdentity = "-c user.name=arbor -c user.email=arbor@localhost ";
constexpr double kGitTimeoutS = 600;

std::string FirstLine(const std::string& s) {
  std::string t = Trim(s);
  return t.substr(0, t.find('\n'));
}

bool ValidEnvName(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

// arbor-best.env: sourcing it reproduces the node's environment without Arbor. Values are
// always single-quoted so the file reads the same for every value.
std::string EnvFileText(const EnvOverlay& overlay) {
  std::string text =
      "# Written by Arbor: the environment overlay of the best node of this campaign.\n"
      "# Reproduce the result without Arbor: `. ./arbor-best.env` before building and "
      "running.\n";
  for (const auto& [key, value] : overlay) {
    text += "export " + key + "=" + ShellQuote(value, ShellQuoting::kAlways) + "\n";
  }
  return text;
}

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) return MakeError("cannot write " + tmp);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return MakeError("cannot write " + path + ": " + ec.message());
  return {};
}

std::string Canonical(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? path : p.string();
}

}  // namespace

GitWorkspace::GitWorkspace(const std::string& repo, std::string campaign)
    : repo_(Canonical(repo)),
      campaign_(std::move(campaign)),
      state_dir_(repo_ + "/.arbor/" + campaign_) {}

std::string GitWorkspace::WorktreePath(NodeId node) const {
  return state_dir_ + "/worktrees/n" + std::to_string(node);
}

Result<GitWorkspace::GitOutput> GitWorkspace::RunGit(const std::string& args,
                                                     const std::string& cwd) const {
  ARBOR_TRY_ASSIGN(auto run, RunGitCli(args, cwd, kGitTimeoutS));
  GitOutput g;
  g.out = std::move(run.out);
  g.err = std::move(run.err);
  if (run.result.status == RunResult::Status::kExited) {
    g.exit_code = run.result.exit_code;
  } else {
    g.exit_code = -1;
    g.err = run.result.status == RunResult::Status::kTimedOut ? "timed out" : "killed by a signal";
  }
  return g;
}

Result<std::string> GitWorkspace::Git(const std::string& args, const std::string& cwd) const {
  ARBOR_TRY_ASSIGN(auto g, RunGit(args, cwd));
  if (g.exit_code != 0) {
    std::string why = FirstLine(g.err.empty() ? g.out : g.err);
    return MakeError("git " + args + " failed in " + cwd + (why.empty() ? "" : ": " + why));
  }
  return Trim(g.out);
}

Result<std::string> GitWorkspace::ResolveCommit(const std::string& commit) const {
  ARBOR_TRY_ASSIGN(auto g,
                   RunGit("rev-parse --verify -q " + ShellQuote(commit + "^{commit}"), repo_));
  if (g.exit_code != 0) return MakeError("unknown commit '" + commit + "' in " + repo_);
  return Trim(g.out);
}

Result<std::string> GitWorkspace::Open() {
  std::lock_guard<std::mutex> lock(mu_);
  std::error_code ec;
  if (!fs::is_directory(repo_, ec)) {
    return MakeError(repo_ + " is not a git repository (no such directory)");
  }
  ARBOR_TRY_ASSIGN(auto inside, RunGit("rev-parse --is-inside-work-tree", repo_));
  if (inside.exit_code != 0 || Trim(inside.out) != "true") {
    return MakeError(repo_ + " is not a git repository");
  }
  ARBOR_TRY_ASSIGN(auto top, Git("rev-parse --show-toplevel", repo_));
  if (Canonical(top) != repo_) {
    return MakeError(repo_ + " is inside the git repository " + top +
                     "; set the workspace to the repository's top directory");
  }
  ARBOR_TRY_ASSIGN(auto head, RunGit("rev-parse --verify -q HEAD^{commit}", repo_));
  if (head.exit_code != 0) return MakeError(repo_ + " has no commits yet");
  std::string head_sha = Trim(head.out);

  ARBOR_TRY(EnsureExcluded());
  ARBOR_TRY(RefuseDirty());
  ARBOR_TRY_ASSIGN(auto valid, RunGit("check-ref-format --branch " + ShellQuote(branch()), repo_));
  if (valid.exit_code != 0) {
    return MakeError("campaign name '" + campaign_ + "' cannot be a git branch name");
  }
  ARBOR_TRY_ASSIGN(auto exists,
                   RunGit("rev-parse --verify -q " + ShellQuote("refs/heads/" + branch()), repo_));
  if (exists.exit_code != 0) {
    // The empty old value makes git refuse if the branch appeared meanwhile.
    ARBOR_TRY(
        Git("update-ref " + ShellQuote("refs/heads/" + branch()) + " " + head_sha + " ''", repo_));
  }
  return BaseCommit(head_sha);
}

// The commit in <state>/base, or `head` recorded there the first time.
Result<std::string> GitWorkspace::BaseCommit(const std::string& head) const {
  std::string path = state_dir_ + "/base";
  std::error_code ec;
  if (fs::exists(path, ec)) {
    ARBOR_TRY_ASSIGN(auto text, ReadFileBounded(path, 4096));
    std::string recorded = Trim(text);
    auto sha = ResolveCommit(recorded);
    if (!sha) return MakeError(path + " names '" + recorded + "', not a commit of " + repo_);
    return sha;
  }
  fs::create_directories(state_dir_, ec);
  if (ec) return MakeError("cannot create " + state_dir_ + ": " + ec.message());
  ARBOR_TRY(WriteFileAtomically(path, head + "\n"));
  return head;
}

// Adds /.arbor/ to .git/info/exclude (shared by every worktree) unless already there.
Status GitWorkspace::EnsureExcluded() const {
  ARBOR_TRY_ASSIGN(auto rel, Git("rev-parse --git-path info/exclude", repo_));
  fs::path path = fs::path(rel).is_absolute() ? fs::path(rel) : fs::path(repo_) / rel;
  std::string text;
  std::error_code ec;
  if (fs::exists(path, ec)) {
    ARBOR_TRY_ASSIGN(text, ReadFileBounded(path.string()));
  }
  for (const std::string& line : Split(text, '\n')) {
    if (Trim(line) == "/.arbor/") return {};
  }
  if (!text.empty() && text.back() != '\n') text += "\n";
  text += "# Arbor campaign state (see docs/workspace.md)\n/.arbor/\n";
  fs::create_directories(path.parent_path(), ec);
  return WriteFileAtomically(path.string(), text);
}

Status GitWorkspace::RefuseDirty() const {
  // RunGit, not Git: porcelain lines start with a status column that may be a space.
  ARBOR_TRY_ASSIGN(auto status, RunGit("status --porcelain --untracked-files=normal", repo_));
  if (status.exit_code != 0) return MakeError("git status failed in " + repo_);
  std::vector<std::string> dirty;
  for (const std::string& line : Split(status.out, '\n')) {
    if (line.size() < 4) continue;
    std::string path = line.substr(3);
    if (StartsWith(path, ".arbor/") || path == ".arbor") continue;
    dirty.push_back(path);
  }
  if (dirty.empty()) return {};
  std::vector<std::string> shown(dirty.begin(), dirty.begin() + std::min<size_t>(5, dirty.size()));
  std::string list = Join(shown, ", ");
  if (dirty.size() > shown.size()) {
    list += " and " + std::to_string(dirty.size() - shown.size()) + " more";
  }
  return MakeError("the workspace " + repo_ + " is dirty: uncommitted changes (" + list +
                   "); commit or stash them first");
}

bool GitWorkspace::IsCleanAt(const std::string& path, const std::string& sha) const {
  // A worktree whose .git link is broken would make git find the enclosing repository: check
  // that git sees this very directory as the top, at the right commit, with nothing changed.
  auto where = Git("rev-parse --show-toplevel HEAD", path);
  if (!where) return false;
  std::vector<std::string> lines = Split(*where, '\n');
  if (lines.size() != 2 || Canonical(lines[0]) != Canonical(path) || lines[1] != sha) return false;
  auto status = Git("status --porcelain --untracked-files=normal", path);
  return status.ok() && status->empty();
}

Status GitWorkspace::RemoveWorktree(const std::string& path) const {
  std::error_code ec;
  if (fs::exists(path, ec)) {
    (void)RunGit("worktree remove --force --force " + ShellQuote(path), repo_);
    fs::remove_all(path, ec);  // when git did not know it, or gave up half-way
    if (ec) return MakeError("cannot remove " + path + ": " + ec.message());
  }
  ARBOR_TRY(Git("worktree prune", repo_));
  return {};
}

Result<std::string> GitWorkspace::Prepare(NodeId node, const std::string& commit) {
  std::lock_guard<std::mutex> lock(mu_);
  ARBOR_TRY_ASSIGN(auto sha, ResolveCommit(commit));
  std::string path = WorktreePath(node);
  std::error_code ec;
  if (fs::exists(path, ec)) {
    if (IsCleanAt(path, sha)) return path;
  }
  ARBOR_TRY(RemoveWorktree(path));  // also forgets a registration whose folder is gone
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) return MakeError("cannot create " + fs::path(path).parent_path().string());
  ARBOR_TRY(Git("worktree add --detach " + ShellQuote(path) + " " + sha, repo_));
  return path;
}

Result<std::string> GitWorkspace::Snapshot(NodeId node, const std::string& message,
                                           const EnvOverlay& overlay) {
  std::string path = WorktreePath(node);
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    return MakeError("node " + std::to_string(node) + " has no worktree at " + path);
  }
  for (const auto& [key, value] : overlay) {
    if (!ValidEnvName(key)) return MakeError("invalid environment variable name '" + key + "'");
  }
  ARBOR_TRY(WriteFileAtomically(path + "/" + kEnvFile, EnvFileText(overlay)));
  ARBOR_TRY(Git("add -A", path));
  // Arbor's own file is committed even when the repository ignores it (a `*.env` rule is
  // common): without it an environment-only keep would not move the branch, and the result
  // would live only under .arbor/.
  ARBOR_TRY(Git(std::string("add -f -- ") + kEnvFile, path));
  ARBOR_TRY_ASSIGN(auto diff, RunGit("diff --cached --quiet", path));
  if (diff.exit_code != 0 && diff.exit_code != 1) {
    return MakeError("git diff --cached failed in " + path + ": " + FirstLine(diff.err));
  }
  if (diff.exit_code == 1) {
    std::string msg = message.empty() ? "arbor: node " + std::to_string(node) : message;
    ARBOR_TRY(Git(std::string(kIdentity) + "commit -q --no-verify -m " + ShellQuote(msg), path));
  }
  ARBOR_TRY(VerifySnapshot(node, path, overlay));
  return Git("rev-parse HEAD", path);
}

// The commit must hold the node's whole state: its environment in arbor-best.env (a clean
// filter or an attribute could rewrite it) and every file of the worktree (nothing left
// unstaged). Otherwise the state measured is not the state that reaches the branch.
Status GitWorkspace::VerifySnapshot(NodeId node, const std::string& path,
                                    const EnvOverlay& overlay) const {
  const std::string what = "node " + std::to_string(node) + ": its commit does not hold ";
  ARBOR_TRY_ASSIGN(auto held, RunGit(std::string("show HEAD:") + kEnvFile, path));
  if (held.exit_code != 0 || Trim(held.out) != Trim(EnvFileText(overlay))) {
    return MakeError(what + "its environment (" + kEnvFile + " differs from the overlay" +
                     (held.exit_code != 0 ? ": " + FirstLine(held.err) : std::string()) +
                     "); refusing to keep a state the branch would not have");
  }
  ARBOR_TRY_ASSIGN(auto status, RunGit("status --porcelain --untracked-files=all", path));
  if (status.exit_code != 0 || !Trim(status.out).empty()) {
    return MakeError(what + "every file of its worktree (git status: " +
                     FirstLine(status.exit_code != 0 ? status.err : status.out) +
                     "); refusing to keep a state the branch would not have");
  }
  return {};
}

Status GitWorkspace::Promote(const std::string& commit) {
  std::lock_guard<std::mutex> lock(mu_);
  ARBOR_TRY_ASSIGN(auto sha, ResolveCommit(commit));
  ARBOR_TRY(Git("update-ref " + ShellQuote("refs/heads/" + branch()) + " " + sha, repo_));
  // Read back: the branch is the user's result, and a keep that did not reach it must stop the
  // campaign rather than go on as if it had.
  auto tip =
      Git("rev-parse --verify -q " + ShellQuote("refs/heads/" + branch() + "^{commit}"), repo_);
  if (!tip || *tip != sha) {
    return MakeError(branch() + " is at " + (tip ? *tip : "nothing") + " after moving it to " +
                     sha + ": the kept state did not reach the branch");
  }
  // Every commit Arbor made holds the overlay; only the base (the user's own commit, the
  // baseline's state) may lack it.
  auto base = ReadFileBounded(state_dir_ + "/base", 4096);
  auto base_sha = base ? ResolveCommit(Trim(*base)) : Result<std::string>(base.error());
  if (!base_sha || *base_sha != sha) {
    ARBOR_TRY_ASSIGN(auto env, RunGit("cat-file -e " + ShellQuote(sha + ":" + kEnvFile), repo_));
    if (env.exit_code != 0) {
      return MakeError("the kept commit " + sha + " on " + branch() + " does not hold " + kEnvFile +
                       ": the kept environment did not reach the branch");
    }
  }
  return {};
}

Status GitWorkspace::Release(NodeId node) {
  std::lock_guard<std::mutex> lock(mu_);
  return RemoveWorktree(WorktreePath(node));
}

std::optional<double> GitWorkspace::FreeDiskMb() {
  struct statvfs fs {};
  std::string where = std::filesystem::exists(state_dir_) ? state_dir_ : repo_;
  if (statvfs(where.c_str(), &fs) != 0) return std::nullopt;
  return static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize) / (1024.0 * 1024.0);
}

Status GitWorkspace::ReleaseAll() {
  std::lock_guard<std::mutex> lock(mu_);
  std::error_code ec;
  std::filesystem::directory_iterator it(state_dir_ + "/worktrees", ec);
  if (ec) return {};  // no worktrees folder: nothing to release
  std::vector<std::string> paths;
  for (const auto& entry : it) {
    if (entry.is_directory(ec)) paths.push_back(entry.path().string());
  }
  for (const std::string& p : paths) ARBOR_TRY(RemoveWorktree(p));
  return {};
}

Result<std::string> GitWorkspace::Archive() {
  std::error_code ec;
  if (!fs::exists(state_dir_, ec)) return std::string();
  ARBOR_TRY(ReleaseAll());
  std::lock_guard<std::mutex> lock(mu_);
  for (int n = 1;; ++n) {
    const std::string suffix = ".archived-" + std::to_string(n);
    const std::string to_dir = state_dir_ + suffix;
    const std::string to_ref = "refs/heads/" + branch() + suffix;
    ARBOR_TRY_ASSIGN(auto taken, RunGit("rev-parse --verify -q " + ShellQuote(to_ref), repo_));
    if (fs::exists(to_dir, ec) || taken.exit_code == 0) continue;
    const std::string from_ref = "refs/heads/" + branch();
    ARBOR_TRY_ASSIGN(auto sha, RunGit("rev-parse --verify -q " + ShellQuote(from_ref), repo_));
    if (sha.exit_code == 0) {
      // Create-then-delete, each refusing if the ref moved meanwhile: the kept commits stay
      // reachable from one name or the other at every moment.
      const std::string commit = Trim(sha.out);
      ARBOR_TRY(Git("update-ref " + ShellQuote(to_ref) + " " + commit + " ''", repo_));
      ARBOR_TRY(Git("update-ref -d " + ShellQuote(from_ref) + " " + commit, repo_));
    }
    fs::rename(state_dir_, to_dir, ec);
    if (ec) return MakeError("cannot rename " + state_dir_ + " to " + to_dir + ": " + ec.message());
    return to_dir;
  }
}

}  // namespace arbor
