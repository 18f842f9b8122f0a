#include "attention.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace tinyserve {
namespace {

constexpr int kFlashBlock = 16;

float Dot4(const float* a, const float* b, int n) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < n; ++i) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

}  // namespace

float ExpNonPositive(float x, bool approx) {
  if (!approx) return std::exp(x);
  x = std::max(x, -80.0f);
  const auto bits = static_cast<int32_t>(12102203.0f * x + 1064866805.0f);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

void AttendNaive(const float* q, const HeadView& kv, int len, int head_dim, bool approx_exp,
                 float* out) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  std::vector<float> scores(len);
  for (int t = 0; t < len; ++t) {
    const float* k = kv.k + t * kv.stride;
    float s = 0;
    for (int e = 0; e < head_dim; ++e) s += q[e] * k[e];
    scores[t] = s * scale;
  }
  float max = scores[0];
  for (int t = 1; t < len; ++t) max = std::max(max, scores[t]);
  float sum = 0;
  for (int t = 0; t < len; ++t) {
    scores[t] = ExpNonPositive(scores[t] - max, approx_exp);
    sum += scores[t];
  }
  for (int e = 0; e < head_dim; ++e) out[e] = 0;
  for (int t = 0; t < len; ++t) {
    const float p = scores[t] / sum;
    const float* v = kv.v + t * kv.stride;
    for (int e = 0; e < head_dim; ++e) out[e] += p * v[e];
  }
}

void AttendFlash(const float* q, const HeadView& kv, int len, int head_dim, bool approx_exp,
                 float* out) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  float acc[256];
  for (int e = 0; e < head_dim; ++e) acc[e] = 0;
  float max = -1e30f;
  float sum = 0;
  for (int t0 = 0; t0 < len; t0 += kFlashBlock) {
    const int n = std::min(kFlashBlock, len - t0);
    float s[kFlashBlock];
    float block_max = -1e30f;
    for (int b = 0; b < n; ++b) {
      s[b] = Dot4(q, kv.k + (t0 + b) * kv.stride, head_dim) * scale;
      block_max = std::max(block_max, s[b]);
    }
    if (block_max > max) {
      const float correction = ExpNonPositive(max - block_max, approx_exp);
      sum *= correction;
      for (int e = 0; e < head_dim; ++e) acc[e] *= correction;
      max = block_max;
    }
    for (int b = 0; b < n; ++b) {
      const float p = ExpNonPositive(s[b] - max, approx_exp);
      sum += p;
      const float* v = kv.v + (t0 + b) * kv.stride;
      for (int e = 0; e < head_dim; ++e) acc[e] += p * v[e];
    }
  }
  const float inv = 1.0f / sum;
  for (int e = 0; e < head_dim; ++e) out[e] = acc[e] * inv;
}

}  // namespace tinyserve
