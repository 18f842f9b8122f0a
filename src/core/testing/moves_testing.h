// Hand-built nodes for the pure rules of moves.h (moves_test.cc, moves_remeasure_test.cc).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/model/model.h"
#include "core/testing/critic_rig_testing.h"
#include "core/tree/tree.h"

namespace arbor::moves_testing {

inline Node MakeNode(NodeId id, NodeId parent, const std::string& action, const std::string& value,
                     Outcome outcome, int64_t seq) {
  Node n;
  n.id = id;
  n.parent = parent;
  n.action_id = action;
  n.value = value;
  n.outcome = outcome;
  n.step = outcome == Outcome::kPending ? Step::kNone : Step::kDone;
  n.seq = seq;
  return n;
}

// A revert under the root, as the Critic records it (seq = id).
inline Node Reverted(NodeId id, const std::string& action, RcaClass rca, double gain) {
  Node n = MakeNode(id, kRootId, action, "", Outcome::kReverted, id);
  n.critic.rca = rca;
  n.gain = gain;
  return n;
}

// A revert for no gain under the baseline, with its measured gain and p-value, put in `tree`.
inline void Reverted(Tree* tree, NodeId id, double gain, double p) {
  Node n = MakeNode(id, 1, "a" + std::to_string(id), "", Outcome::kReverted, id);
  n.critic.rca = RcaClass::kNoGain;
  n.gain = gain;
  n.critic.p_value = p;
  tree->Upsert(n);
}

inline ActionSpec Valued(const std::string& id, std::vector<std::string> values) {
  ActionSpec a = critic_rig::Env(id, "V_" + id, "{value}");
  a.values = std::move(values);
  return a;
}

}  // namespace arbor::moves_testing
