// Matrix multiplication kernels: Y[m][out] = diag(row_scale) X[m][in] W^T.
//
//   naive    one dot product per output, the textbook triple loop. Its reduction is a serial
//            floating-point dependency chain: compilers vectorize it only with -ffast-math.
//   blocked  column panels of TS_TILE outputs accumulated together over k, written so that the
//            compiler can vectorize across the panel (at -O3; -march=native widens the vectors).
//            The accumulators live in a fixed scratch of kMaxTile floats: a larger tile aborts.
//   simd     a register-blocked micro-kernel (4 rows x 16 columns) written with vector types, so
//            it is vectorized at any -O level. It needs several rows (batching) to fill its
//            accumulators; one row runs at a quarter of its peak.
//   int8     TS_INT8=1: int8 weights and activations in blocks of 32 with one scale each (like
//            llama.cpp's Q8_0), int32 accumulation per block. Activations use a static scale
//            calibrated for |x| <= 1 unless TS_INT8_SCALE_FIX=1 computes one per block: the
//            static scale clips every larger activation and breaks accuracy.
#pragma once

#include <vector>

#include "knobs.h"
#include "model.h"
#include "thread_pool.h"

namespace tinyserve {

inline constexpr int kMaxTile = 64;
inline constexpr int kQuantBlock = 32;

struct MatmulContext {
  const Knobs* knobs = nullptr;
  ThreadPool* pool = nullptr;
  std::vector<int8_t> xq;       // int8 scratch: quantized activations
  std::vector<float> xq_scale;  // their per-row scales
};

// Prepares the layouts the configured kernel needs (packing, quantization). Aborts when the
// blocked kernel's tile does not fit its scratch.
void PrepareLinear(Linear* l, const Knobs& knobs);

// row_scale may be null (no scaling).
void MatMul(const Linear& l, const float* x, int m, const float* row_scale, float* y,
            MatmulContext* ctx);

}  // namespace tinyserve
