#include "matmul.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tinyserve {
namespace {

constexpr int kSimdPanel = 16;
constexpr int kNaiveBlock = 16;
// The static activation range the int8 path was calibrated for (see matmul.h).
constexpr float kStaticActivationRange = 1.0f;

// The widest float vector the target has: 8 lanes with AVX (-march=native here), else the
// 4 lanes every x86-64 has. A wider type than the target supports is lowered poorly.
#ifdef __AVX__
constexpr int kLanes = 8;
#else
constexpr int kLanes = 4;
#endif
typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));
constexpr int kPanelVecs = kSimdPanel / kLanes;

inline Vec Load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void Store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }

void Pack(Linear* l, int panel) {
  const int panels = (l->out + panel - 1) / panel;
  l->panel = panel;
  l->packed = Buffer<float>(static_cast<size_t>(panels) * l->in * panel);
  for (int p = 0; p < panels; ++p) {
    float* dst = l->packed.data() + static_cast<size_t>(p) * l->in * panel;
    for (int k = 0; k < l->in; ++k) {
      for (int t = 0; t < panel; ++t) {
        const int j = p * panel + t;
        dst[static_cast<size_t>(k) * panel + t] =
            j < l->out ? l->w[static_cast<size_t>(j) * l->in + k] : 0.0f;
      }
    }
  }
}

// Symmetric int8 quantization of n values (n a multiple of kQuantBlock), one scale per block.
// With a static range every block uses range / 127 and larger values saturate.
void QuantizeBlocks(const float* x, int n, const float* static_range, int8_t* q, float* scales) {
  for (int b = 0; b < n / kQuantBlock; ++b) {
    const float* xb = x + b * kQuantBlock;
    float range = 0;
    if (static_range != nullptr) {
      range = *static_range;
    } else {
      for (int k = 0; k < kQuantBlock; ++k) range = std::max(range, std::fabs(xb[k]));
    }
    const float scale = range > 0 ? range / 127.0f : 1.0f;
    const float inv = 1.0f / scale;
    scales[b] = scale;
    for (int k = 0; k < kQuantBlock; ++k) {
      const float v = std::min(127.0f, std::max(-127.0f, xb[k] * inv));
      q[b * kQuantBlock + k] = static_cast<int8_t>(std::lrintf(v));
    }
  }
}

void Quantize(Linear* l) {
  const int blocks = l->in / kQuantBlock;
  l->q = Buffer<int8_t>(static_cast<size_t>(l->out) * l->in);
  l->q_scale = Buffer<float>(static_cast<size_t>(l->out) * blocks);
  for (int j = 0; j < l->out; ++j) {
    QuantizeBlocks(l->w.data() + static_cast<size_t>(j) * l->in, l->in, nullptr,
                   l->q.data() + static_cast<size_t>(j) * l->in,
                   l->q_scale.data() + static_cast<size_t>(j) * blocks);
  }
}

void NaiveCols(const Linear& l, const float* x, int m, float* y, int j0, int j1) {
  for (int i = 0; i < m; ++i) {
    const float* xi = x + static_cast<size_t>(i) * l.in;
    for (int j = j0; j < j1; ++j) {
      const float* wj = l.w.data() + static_cast<size_t>(j) * l.in;
      float acc = 0;
      for (int k = 0; k < l.in; ++k) acc += xi[k] * wj[k];
      y[static_cast<size_t>(i) * l.out + j] = acc;
    }
  }
}

template <int T>
void BlockedPanel(const Linear& l, const float* x, int m, float* y, int p) {
  const float* panel = l.packed.data() + static_cast<size_t>(p) * l.in * T;
  const int cols = std::min(T, l.out - p * T);
  for (int i = 0; i < m; ++i) {
    const float* xi = x + static_cast<size_t>(i) * l.in;
    float acc[T] = {};
    for (int k = 0; k < l.in; ++k) {
      const float xk = xi[k];
      const float* w = panel + static_cast<size_t>(k) * T;
      for (int t = 0; t < T; ++t) acc[t] += xk * w[t];
    }
    std::memcpy(y + static_cast<size_t>(i) * l.out + p * T, acc, cols * sizeof(float));
  }
}

// Any other tile size: the same loop with a run-time width over the fixed scratch.
void BlockedPanelAny(const Linear& l, const float* x, int m, float* y, int p) {
  const int tile = l.panel;
  const float* panel = l.packed.data() + static_cast<size_t>(p) * l.in * tile;
  const int cols = std::min(tile, l.out - p * tile);
  for (int i = 0; i < m; ++i) {
    const float* xi = x + static_cast<size_t>(i) * l.in;
    float acc[kMaxTile] = {};
    for (int k = 0; k < l.in; ++k) {
      const float xk = xi[k];
      const float* w = panel + static_cast<size_t>(k) * tile;
      for (int t = 0; t < tile; ++t) acc[t] += xk * w[t];
    }
    std::memcpy(y + static_cast<size_t>(i) * l.out + p * tile, acc, cols * sizeof(float));
  }
}

void BlockedPanels(const Linear& l, const float* x, int m, float* y, int p0, int p1) {
  for (int p = p0; p < p1; ++p) {
    switch (l.panel) {
      case 8:
        BlockedPanel<8>(l, x, m, y, p);
        break;
      case 16:
        BlockedPanel<16>(l, x, m, y, p);
        break;
      case 32:
        BlockedPanel<32>(l, x, m, y, p);
        break;
      case 64:
        BlockedPanel<64>(l, x, m, y, p);
        break;
      default:
        BlockedPanelAny(l, x, m, y, p);
    }
  }
}

// One panel of kSimdPanel columns for rows [i, i + R): R x kPanelVecs accumulators.
template <int R>
void SimdTile(const Linear& l, const float* x, int i, const float* panel, float* y, int col0,
              int cols) {
  Vec acc[R][kPanelVecs] = {};
  const float* xr[R];
  for (int r = 0; r < R; ++r) xr[r] = x + static_cast<size_t>(i + r) * l.in;
  for (int k = 0; k < l.in; ++k) {
    Vec w[kPanelVecs];
    for (int v = 0; v < kPanelVecs; ++v) {
      w[v] = Load(panel + static_cast<size_t>(k) * kSimdPanel + v * kLanes);
    }
    for (int r = 0; r < R; ++r) {
      const float b = xr[r][k];  // a scalar operand is broadcast to the vector
      for (int v = 0; v < kPanelVecs; ++v) acc[r][v] += w[v] * b;
    }
  }
  for (int r = 0; r < R; ++r) {
    float out[kSimdPanel];
    for (int v = 0; v < kPanelVecs; ++v) Store(out + v * kLanes, acc[r][v]);
    std::memcpy(y + static_cast<size_t>(i + r) * l.out + col0, out, cols * sizeof(float));
  }
}

void SimdPanels(const Linear& l, const float* x, int m, float* y, int p0, int p1) {
  for (int p = p0; p < p1; ++p) {
    const float* panel = l.packed.data() + static_cast<size_t>(p) * l.in * kSimdPanel;
    const int cols = std::min(kSimdPanel, l.out - p * kSimdPanel);
    int i = 0;
    for (; i + 4 <= m; i += 4) SimdTile<4>(l, x, i, panel, y, p * kSimdPanel, cols);
    for (; i < m; ++i) SimdTile<1>(l, x, i, panel, y, p * kSimdPanel, cols);
  }
}

void QuantizeRows(const float* x, int m, int in, bool per_block, MatmulContext* ctx) {
  const int blocks = in / kQuantBlock;
  ctx->xq.resize(static_cast<size_t>(m) * in);
  ctx->xq_scale.resize(static_cast<size_t>(m) * blocks);
  for (int i = 0; i < m; ++i) {
    QuantizeBlocks(x + static_cast<size_t>(i) * in, in,
                   per_block ? nullptr : &kStaticActivationRange,
                   ctx->xq.data() + static_cast<size_t>(i) * in,
                   ctx->xq_scale.data() + static_cast<size_t>(i) * blocks);
  }
}

void Int8Cols(const Linear& l, int m, const MatmulContext& ctx, float* y, int j0, int j1) {
  const int blocks = l.in / kQuantBlock;
  for (int i = 0; i < m; ++i) {
    const int8_t* xi = ctx.xq.data() + static_cast<size_t>(i) * l.in;
    const float* sx = ctx.xq_scale.data() + static_cast<size_t>(i) * blocks;
    for (int j = j0; j < j1; ++j) {
      const int8_t* wj = l.q.data() + static_cast<size_t>(j) * l.in;
      const float* sw = l.q_scale.data() + static_cast<size_t>(j) * blocks;
      float sum = 0;
      for (int b = 0; b < blocks; ++b) {
        int acc = 0;
        for (int k = b * kQuantBlock; k < (b + 1) * kQuantBlock; ++k) {
          acc += static_cast<int>(xi[k]) * static_cast<int>(wj[k]);
        }
        sum += static_cast<float>(acc) * sx[b] * sw[b];
      }
      y[static_cast<size_t>(i) * l.out + j] = sum;
    }
  }
}

}  // namespace

void PrepareLinear(Linear* l, const Knobs& knobs) {
  if (knobs.int8) {
    Quantize(l);
    return;
  }
  switch (knobs.matmul) {
    case MatmulKind::kNaive:
      return;
    case MatmulKind::kBlocked:
      if (knobs.tile > kMaxTile) {
        // Worded like a failed assert(), which release builds would compile out.
        std::fprintf(stderr,
                     "tinyserve: matmul.cc: PrepareLinear: Assertion `tile <= kMaxTile' failed: "
                     "blocked matmul tile %d exceeds the %d-float accumulator scratch\n",
                     knobs.tile, kMaxTile);
        std::abort();
      }
      Pack(l, knobs.tile);
      return;
    case MatmulKind::kSimd:
      Pack(l, kSimdPanel);
      return;
  }
}

void MatMul(const Linear& l, const float* x, int m, const float* row_scale, float* y,
            MatmulContext* ctx) {
  ScopedTimer timer(l.component);
  const Knobs& k = *ctx->knobs;
  if (k.int8) {
    QuantizeRows(x, m, l.in, k.int8_scale_fix, ctx);
    const int blocks = (l.out + kNaiveBlock - 1) / kNaiveBlock;
    ctx->pool->ParallelFor(blocks, [&](int b0, int b1) {
      Int8Cols(l, m, *ctx, y, b0 * kNaiveBlock, std::min(l.out, b1 * kNaiveBlock));
    });
  } else if (k.matmul == MatmulKind::kNaive) {
    const int blocks = (l.out + kNaiveBlock - 1) / kNaiveBlock;
    ctx->pool->ParallelFor(blocks, [&](int b0, int b1) {
      NaiveCols(l, x, m, y, b0 * kNaiveBlock, std::min(l.out, b1 * kNaiveBlock));
    });
  } else {
    const int panels = (l.out + l.panel - 1) / l.panel;
    const bool simd = k.matmul == MatmulKind::kSimd;
    ctx->pool->ParallelFor(panels, [&](int p0, int p1) {
      if (simd) {
        SimdPanels(l, x, m, y, p0, p1);
      } else {
        BlockedPanels(l, x, m, y, p0, p1);
      }
    });
  }
  if (row_scale != nullptr) {
    for (int i = 0; i < m; ++i) {
      float* yi = y + static_cast<size_t>(i) * l.out;
      for (int j = 0; j < l.out; ++j) yi[j] *= row_scale[i];
    }
  }
}

}  // namespace tinyserve
