#include "profiler.h"

namespace tinyserve {

const char* ComponentName(Component c) {
  static const char* kNames[] = {"embedding",  "rmsnorm",    "matmul.qkv",
                                 "matmul.out", "matmul.mlp", "matmul.lm_head",
                                 "attention",  "sampling",   "scheduling"};
  return kNames[static_cast<int>(c)];
}

const char* ComponentLayer(Component c) {
  switch (c) {
    case Component::kSampling:
    case Component::kScheduling:
      return "application";
    case Component::kEmbedding:
    case Component::kRmsNorm:
      return "framework";
    default:
      return "kernel";
  }
}

Profiler& Profiler::Get() {
  static Profiler profiler;
  return profiler;
}

void Profiler::Reset() {
  for (double& s : seconds_) s = 0;
}

}  // namespace tinyserve
