// WorktreeCursor: which worktrees the Orchestrator holds right now, and which of them this
// process built. It only keeps the record; the Orchestrator prepares, builds and releases
// worktrees through its ports and reports each of those transitions here, by name.
//
// Two worktrees are held at a time at most:
// - the current one, of the node in flight (or of the state being profiled or validated), whose
//   build outputs can be trusted only when this process built them: a fresh process after a
//   resume, or a step that always builds, must build again (builds are idempotent);
// - the A/B base arm's, built for the state a candidate is judged against (measure.cc), kept
//   across candidates as long as that state is their base.
// Both live in one type because they are one resource: the Workspace keys a worktree by node,
// so the two name the same directory when they hold the same node, and releasing one of them
// releases the other (ConfirmFinal then forgets the current one as well).
//
// Invariant: "built" is a property of the current worktree, so preparing any worktree (another
// node's, or the same node's afresh) forgets it, and so does forgetting the current node.
// Not thread-safe: only the Orchestrator's thread reports to it (lanes and specialists work in
// worktrees of their own and never touch it).
#pragma once

#include <string>

#include "core/model/model.h"

namespace arbor {

class WorktreeCursor {
 public:
  // The current worktree.
  // `node`'s worktree, at `path`, is now the current one, not built by this process yet: freshly
  // prepared, or handed over by the specialist or build lane that worked in it.
  void Prepared(NodeId node, std::string path);
  // This process built the current worktree, which is `node`'s (a bug aborts otherwise).
  void Built(NodeId node);
  // The current worktree must be built again before it is trusted (the build step always
  // builds: its result is what the node records).
  void NeedsBuild() { built_ = false; }
  // `node`'s worktree was released or is about to be (its outcome is recorded, it was
  // re-dispatched): when it is the current one nothing is current any more; another node's
  // changes nothing.
  void Forget(NodeId node);
  // Whatever is current was released (the branch moved, a re-profile is done).
  void ForgetCurrent();
  bool IsPrepared(NodeId node) const { return node != kNoNode && current_ == node; }
  bool IsBuilt(NodeId node) const { return IsPrepared(node) && built_; }
  NodeId current() const { return current_; }  // kNoNode when none
  // The current worktree's path. Once the node is forgotten it still names the last one
  // prepared: every caller prepares (or checks IsPrepared) before it runs anything there.
  const std::string& worktree() const { return worktree_; }

  // The A/B base arm.
  // `node`'s worktree, at `path`, is built for the base arm.
  void BaseBuilt(NodeId node, std::string path);
  // The base arm's worktree was released (after Workspace::Release of base()), or is no longer
  // held as a base.
  void BaseReleased() { base_ = kNoNode; }
  bool IsBase(NodeId node) const { return node != kNoNode && base_ == node; }
  NodeId base() const { return base_; }  // kNoNode when none
  // Like worktree(): meaningful while base() is held.
  const std::string& base_worktree() const { return base_worktree_; }

  // Every worktree was released at once (Workspace::ReleaseAll): nothing is held. A fresh
  // cursor (a new process, a resume) starts the same way.
  void Reset();

 private:
  NodeId current_ = kNoNode;
  std::string worktree_;
  bool built_ = false;  // of the current worktree, by this process
  NodeId base_ = kNoNode;
  std::string base_worktree_;
};

}  // namespace arbor
