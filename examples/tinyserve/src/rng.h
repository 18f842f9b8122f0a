// Small deterministic random number generators. Everything random in tinyserve (weights,
// workload, sampling) derives from a seed through these, so every run is reproducible.
#pragma once

#include <cmath>
#include <cstdint>

namespace tinyserve {

// SplitMix64: a fast 64-bit generator with good statistical quality for our purposes.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 24 bits, exactly representable as float.
  float Uniform() { return static_cast<float>(Next() >> 40) * (1.0f / 16777216.0f); }
  // Uniform integer in [lo, hi].
  int Range(int lo, int hi) {
    return lo + static_cast<int>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  // Standard normal (Box-Muller), in double so the weights do not depend on float math flags.
  double Normal() {
    double u1 = (static_cast<double>(Next() >> 11) + 1.0) * (1.0 / 9007199254740993.0);
    double u2 = static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0);
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  uint64_t state_;
};

}  // namespace tinyserve
