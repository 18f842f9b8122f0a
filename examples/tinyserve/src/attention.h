// Causal attention of one query row over a sequence's KV cache, for one head.
//
// The KV cache stores keys and values per layer, either token-major ([token][head][dim]: one
// contiguous write per new token, strided reads per head) or head-major ([head][token][dim]:
// contiguous reads per head). Kernels see a base pointer and the stride between positions.
//   naive  scores into a heap vector, softmax, weighted sum: three passes, one allocation
//          per (row, head), one serial accumulator per dot product.
//   flash  one fused pass with an online softmax (running max and sum), no allocation, four
//          independent accumulators per dot product.
#pragma once

#include <cstddef>

namespace tinyserve {

struct HeadView {
  const float* k = nullptr;  // key of position 0 for this head
  const float* v = nullptr;
  size_t stride = 0;  // floats between consecutive positions
};

// out[head_dim] = softmax(q K^T * scale) V over positions [0, len).
void AttendNaive(const float* q, const HeadView& kv, int len, int head_dim, bool approx_exp,
                 float* out);
void AttendFlash(const float* q, const HeadView& kv, int len, int head_dim, bool approx_exp,
                 float* out);

// exp for x <= 0: std::exp, or Schraudolph's bit trick (a few % error) with approx.
float ExpNonPositive(float x, bool approx);

}  // namespace tinyserve
