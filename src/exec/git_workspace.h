// GitWorkspace: the Workspace port on a real git repository, through the git CLI.
//
// Layout (docs/workspace.md): campaign state in <repo>/.arbor/<campaign>/ (ignored through
// .git/info/exclude, never the user's .gitignore); one worktree per node in
// <state>/worktrees/n<node>, detached at the node's commit; kept nodes are commits on the
// branch arbor/<campaign>; <state>/base records the commit the campaign started from.
//
// Promises: the user's checkout is never modified (only .git/info/exclude gains one line, and
// refs/heads/arbor/<campaign> moves); user hooks never run; a worktree found in any state
// other than "clean at the requested commit" (a crash mid-change) is thrown away and
// recreated, so resuming never sees a half-applied change. A snapshot's commit is checked to
// hold the node's whole state (arbor-best.env, every file of its worktree) and the branch is
// read back after every move: a state that would not reach the branch is an Error, never a
// silent loss. Thread-safe.
//
// Why the git CLI rather than libgit2: the result is exactly what users see when they debug
// with git themselves (same config, attributes, filters, LFS), worktrees are fully supported,
// and there is no extra dependency. Hooks are off (core.hooksPath=/dev/null) and git gets a
// minimal environment (PATH, HOME, GIT_CONFIG_NOSYSTEM=1, GIT_TERMINAL_PROMPT=0, LC_ALL=C).
#pragma once

#include <mutex>
#include <string>

#include "core/model/ports.h"

namespace arbor {

class GitWorkspace : public Workspace {
 public:
  // `repo` is the repository's top directory; the state dir is <repo>/.arbor/<campaign>.
  GitWorkspace(const std::string& repo, std::string campaign);

  Result<std::string> Open() override;
  Result<std::string> Prepare(NodeId node, const std::string& commit) override;
  Result<std::string> Snapshot(NodeId node, const std::string& message,
                               const EnvOverlay& overlay) override;
  Status Promote(const std::string& commit) override;
  Status Release(NodeId node) override;
  Status ReleaseAll() override;
  std::optional<double> FreeDiskMb() override;
  // Sets the campaign aside so that one of the same name can start over (`arbor run
  // --restart`): releases its worktrees (disposable: every state worth keeping is a commit),
  // then renames its state dir to <state>.archived-<n> and its branch to
  // arbor/<campaign>.archived-<n>, the first n free for both. Nothing is deleted. Returns the
  // archived state dir, or "" when the campaign has no state yet. The caller holds the
  // campaign's lock.
  Result<std::string> Archive();

  const std::string& repo() const { return repo_; }
  const std::string& state_dir() const { return state_dir_; }
  std::string branch() const { return "arbor/" + campaign_; }
  std::string WorktreePath(NodeId node) const;

  static constexpr const char* kEnvFile = "arbor-best.env";

 private:
  struct GitOutput {
    int exit_code = 0;
    std::string out;
    std::string err;
  };
  // Runs `git <args>` in `cwd`; an Error only when git could not run at all.
  Result<GitOutput> RunGit(const std::string& args, const std::string& cwd) const;
  // Runs `git <args>` in `cwd`; its trimmed stdout, or an Error quoting git's stderr.
  Result<std::string> Git(const std::string& args, const std::string& cwd) const;
  Result<std::string> ResolveCommit(const std::string& commit) const;
  Status EnsureExcluded() const;
  Status RefuseDirty() const;
  Result<std::string> BaseCommit(const std::string& head) const;
  bool IsCleanAt(const std::string& path, const std::string& sha) const;
  Status VerifySnapshot(NodeId node, const std::string& path, const EnvOverlay& overlay) const;
  Status RemoveWorktree(const std::string& path) const;

  std::string repo_;
  std::string campaign_;
  std::string state_dir_;
  std::mutex mu_;  // serializes worktree administration and ref updates
};

}  // namespace arbor
