// A small hand-built campaign tree shared by the report tests (test-only, header-only).
//
//   #1 baseline (1000)
//   ├── #2 compiler.O2        kept     1500  seq 1
//   │   ├── #4 kernel.tiled[32] kept   1800  seq 3
//   │   └── #6 kernel.fuse     running       seq 5
//   ├── #5 kernel.unroll      reverted  990  seq 2
//   ├── #3 kernel.simd        crashed        seq 4
//   └── #7 app.batch          pending        seq 0
#pragma once

#include <string>
#include <vector>

#include "core/model/model.h"

namespace arbor::report_testing {

inline Node MakeNode(NodeId id, NodeId parent, std::string action, Outcome outcome, int64_t seq) {
  Node n;
  n.id = id;
  n.parent = parent;
  n.action_id = std::move(action);
  n.outcome = outcome;
  n.seq = seq;
  n.step = outcome == Outcome::kPending ? Step::kNone : Step::kDone;
  return n;
}

inline std::vector<Node> SampleTree() {
  std::vector<Node> nodes;
  Node root = MakeNode(1, kNoNode, "baseline", Outcome::kBaseline, 0);
  root.metric = 1000;
  root.commit = "c1";
  nodes.push_back(root);

  Node o2 = MakeNode(2, 1, "compiler.O2", Outcome::kKept, 1);
  o2.layer = "compiler";
  o2.category = "flags";
  o2.metric = 1500;
  o2.gain = 0.5;
  o2.commit = "c2";
  o2.overlay = {{"CXXFLAGS", "-O2"}};
  o2.score = {0.25, 30, 0.5, 0, 0.01, 1, 0.125, 0.5, 0.75};
  o2.cost_s = 30;
  o2.summary = "set -O2";
  nodes.push_back(o2);

  Node simd = MakeNode(3, 1, "kernel.simd", Outcome::kCrashed, 4);
  simd.layer = "kernel";
  simd.category = "vector";
  simd.step = Step::kBuild;
  simd.diagnosis = "build failed: error: \"v4sf\" undeclared in C:\\src\\simd.h\nsee log";
  nodes.push_back(simd);

  Node tiled = MakeNode(4, 2, "kernel.tiled", Outcome::kKept, 3);
  tiled.value = "32";
  tiled.layer = "kernel";
  tiled.category = "gemm";
  tiled.metric = 1800;
  tiled.gain = 0.2;
  tiled.commit = "c4";
  nodes.push_back(tiled);

  Node unroll = MakeNode(5, 1, "kernel.unroll", Outcome::kReverted, 2);
  unroll.layer = "kernel";
  unroll.category = "loops";
  unroll.metric = 990;
  unroll.gain = -0.01;
  unroll.diagnosis =
      "regressed by 1.0% (p=0.03): the unrolled loop spills registers in the inner kernel";
  nodes.push_back(unroll);

  Node fuse = MakeNode(6, 2, "kernel.fuse", Outcome::kRunning, 5);
  fuse.layer = "kernel";
  fuse.category = "gemm";
  fuse.step = Step::kBench;
  nodes.push_back(fuse);

  Node batch = MakeNode(7, 1, "app.batch", Outcome::kPending, 0);
  batch.layer = "application";
  batch.category = "batching";
  nodes.push_back(batch);
  return nodes;
}

}  // namespace arbor::report_testing
