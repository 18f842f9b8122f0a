#include "core/orchestrator/worktree_cursor.h"

#include <utility>

#include "util/check.h"

namespace arbor {

void WorktreeCursor::Prepared(NodeId node, std::string path) {
  current_ = node;
  worktree_ = std::move(path);
  built_ = false;  // a new worktree, or the same node's afresh: its outputs are not trusted yet
}

void WorktreeCursor::Built(NodeId node) {
  ARBOR_CHECK(IsPrepared(node), "a node was built in a worktree that is not the current one");
  built_ = true;
}

void WorktreeCursor::Forget(NodeId node) {
  if (IsPrepared(node)) ForgetCurrent();
}

void WorktreeCursor::ForgetCurrent() {
  current_ = kNoNode;
  built_ = false;
}

void WorktreeCursor::BaseBuilt(NodeId node, std::string path) {
  base_ = node;
  base_worktree_ = std::move(path);
}

void WorktreeCursor::Reset() {
  // The paths stay: worktree() and base_worktree() are read only while their node is held.
  ForgetCurrent();
  BaseReleased();
}

}  // namespace arbor
