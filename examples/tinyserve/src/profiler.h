// Component timers for --profile. A ScopedTimer adds the wall time of its scope to one
// component; nested timers are not subtracted, so scopes must not nest. The profile reports
// each component's share of the end-to-end time (Arbor's profile format, DESIGN.md).
#pragma once

#include <chrono>

namespace tinyserve {

enum class Component {
  kEmbedding,
  kRmsNorm,
  kMatmulQkv,
  kMatmulOut,
  kMatmulMlp,
  kMatmulLmHead,
  kAttention,
  kSampling,
  kScheduling,
  kCount
};

const char* ComponentName(Component c);
const char* ComponentLayer(Component c);

class Profiler {
 public:
  static Profiler& Get();
  void Add(Component c, double seconds) { seconds_[static_cast<int>(c)] += seconds; }
  double Seconds(Component c) const { return seconds_[static_cast<int>(c)]; }
  void Reset();

 private:
  double seconds_[static_cast<int>(Component::kCount)] = {};
};

class ScopedTimer {
 public:
  explicit ScopedTimer(Component c) : c_(c), start_(std::chrono::steady_clock::now()) {}
  ~ScopedTimer() {
    Profiler::Get().Add(
        c_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  Component c_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace tinyserve
