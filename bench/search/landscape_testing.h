// A small hand-computed landscape shared by the landscape tests (not shipped).
//
// Components a 0.6 (kernel), b 0.3 (framework), c 0.1 (application). Actions:
//   fast_a    a ×3                      fuse     a ×2, only with fast_a
//   fast_b    b ×2                      unsafe   c ×2, crashes with fast_b
//   fast_all  "*" ×1.25                 approx   a ×1.5, accuracy fails unless fix is on
//   fix       c ×0.8 (a little slower)  flaky    b ×1.1, crashes 20% of runs
//   tile      values 8 (a ×1.2), 16 (a ×1.5), 32 (a ×0.8), 64 (a ×2, always crashes)
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "bench/search/landscape.h"

namespace arbor::search::testing {

inline const std::string kExample = R"json({
  "name": "example",
  "description": "hand-computed fixture",
  "base_value": 100,
  "repetitions": 3,
  "noise": {"cv": 0.1},
  "components": [
    {"name": "a", "layer": "kernel", "share": 0.6},
    {"name": "b", "layer": "framework", "share": 0.3},
    {"name": "c", "layer": "application", "share": 0.1}
  ],
  "actions": [
    {"id": "fast_a", "layer": "kernel", "effects": {"a": 3}},
    {"id": "fast_b", "layer": "framework", "effects": {"b": 2}},
    {"id": "fast_all", "layer": "compiler", "effects": {"*": 1.25}},
    {"id": "fuse", "layer": "kernel",
     "when": [{"with": ["fast_a"], "effects": {"a": 2}}],
     "prior": {"requires": ["fast_a"]}},
    {"id": "unsafe", "layer": "application", "effects": {"c": 2}, "crash_with": ["fast_b"],
     "prior": {"conflicts": ["fast_b"], "risk_crash": 0.5}},
    {"id": "approx", "layer": "kernel", "effects": {"a": 1.5}, "accuracy_fail": 1,
     "accuracy_fixed_by": ["fix"]},
    {"id": "fix", "layer": "application", "effects": {"c": 0.8}},
    {"id": "flaky", "layer": "framework", "effects": {"b": 1.1}, "crash_rate": 0.2},
    {"id": "kernel.tile", "layer": "kernel", "category": "tiling",
     "values": [{"value": "8", "effects": {"a": 1.2}},
                {"value": "16", "effects": {"a": 1.5}},
                {"value": "32", "effects": {"a": 0.8}},
                {"value": "64", "effects": {"a": 2}, "crash_rate": 1}],
     "prior": {"speedup": 1.4, "cost_s": 12, "targets": ["a"]}}
  ]
})json";

// kExample parsed; a failure to parse fails the calling test.
inline Landscape Example() {
  Result<Landscape> l = Landscape::Parse(kExample, "example.json");
  EXPECT_TRUE(l.ok()) << (l.ok() ? "" : l.error().message);
  return l.ok() ? *l : Landscape{};
}

}  // namespace arbor::search::testing
