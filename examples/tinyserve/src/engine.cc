#include "engine.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "attention.h"
#include "profiler.h"

namespace tinyserve {
namespace {

constexpr float kNormEps = 1e-5f;

void Grow(std::vector<float>* v, size_t n) {
  if (v->size() < n) v->resize(n);
}

void ApplyRope(float* x, int head_dim, const float* cos, const float* sin) {
  const int half = head_dim / 2;
  for (int i = 0; i < half; ++i) {
    const float a = x[i];
    const float b = x[i + half];
    x[i] = a * cos[i] - b * sin[i];
    x[i + half] = a * sin[i] + b * cos[i];
  }
}

}  // namespace

Engine::Engine(const Model& model, const Knobs& knobs, ThreadPool* pool)
    : model_(model), knobs_(knobs), pool_(pool) {
  mm_.knobs = &knobs_;
  mm_.pool = pool_;
}

size_t Engine::LayerFloats() const {
  return static_cast<size_t>(model_.cfg.max_seq) * model_.cfg.d_model;
}

size_t Engine::KvFloats() const { return 2 * LayerFloats() * model_.cfg.n_layers; }

size_t Engine::KeyOffset(int layer, int pos, int head) const {
  const ModelConfig& c = model_.cfg;
  const size_t base = 2 * layer * LayerFloats();
  if (knobs_.kv_layout == KvLayout::kTokenMajor) {
    return base + (static_cast<size_t>(pos) * c.n_heads + head) * c.head_dim();
  }
  return base + (static_cast<size_t>(head) * c.max_seq + pos) * c.head_dim();
}

float* Engine::KeyAt(Sequence* s, int layer, int pos, int head) const {
  return s->kv.data() + KeyOffset(layer, pos, head);
}

float* Engine::ValueAt(Sequence* s, int layer, int pos, int head) const {
  return KeyAt(s, layer, pos, head) + LayerFloats();
}

size_t Engine::SnapshotFloats(int len) const {
  return 2 * static_cast<size_t>(model_.cfg.n_layers) * len * model_.cfg.d_model;
}

void Engine::Export(const Sequence& s, int len, float* dst) const {
  const ModelConfig& c = model_.cfg;
  const int hd = c.head_dim();
  for (int l = 0; l < c.n_layers; ++l) {
    for (int p = 0; p < len; ++p) {
      for (int h = 0; h < c.n_heads; ++h) {
        float* k = dst + ((2 * static_cast<size_t>(l)) * len + p) * c.d_model + h * hd;
        float* v = dst + ((2 * static_cast<size_t>(l) + 1) * len + p) * c.d_model + h * hd;
        const float* src = s.kv.data() + KeyOffset(l, p, h);
        std::memcpy(k, src, hd * sizeof(float));
        std::memcpy(v, src + LayerFloats(), hd * sizeof(float));
      }
    }
  }
}

void Engine::Import(const float* src, int snapshot_len, int len, Sequence* s) const {
  const ModelConfig& c = model_.cfg;
  const int hd = c.head_dim();
  for (int l = 0; l < c.n_layers; ++l) {
    for (int p = 0; p < len; ++p) {
      for (int h = 0; h < c.n_heads; ++h) {
        const size_t n = snapshot_len;
        const float* k = src + ((2 * static_cast<size_t>(l)) * n + p) * c.d_model + h * hd;
        const float* v = src + ((2 * static_cast<size_t>(l) + 1) * n + p) * c.d_model + h * hd;
        std::memcpy(KeyAt(s, l, p, h), k, hd * sizeof(float));
        std::memcpy(ValueAt(s, l, p, h), v, hd * sizeof(float));
      }
    }
  }
  s->len = std::max(s->len, len);
}

// xn_ = RMSNorm(x_) * gain, or with fused norms only the per-row 1/rms into out_scale.
void Engine::RmsNorm(const float* gain, float* out_scale) {
  ScopedTimer timer(Component::kRmsNorm);
  const int d = model_.cfg.d_model;
  const int m = static_cast<int>(inv_rms_.size());
  for (int r = 0; r < m; ++r) {
    const float* x = x_.data() + static_cast<size_t>(r) * d;
    double ss = 0;
    for (int k = 0; k < d; ++k) ss += static_cast<double>(x[k]) * x[k];
    const float inv = static_cast<float>(1.0 / std::sqrt(ss / d + kNormEps));
    if (out_scale != nullptr) {
      out_scale[r] = inv;
      continue;
    }
    float* y = xn_.data() + static_cast<size_t>(r) * d;
    for (int k = 0; k < d; ++k) y[k] = x[k] * inv * gain[k];
  }
}

void Engine::Attention(const std::vector<Row>& rows, int layer, float* q, const float* k,
                       const float* v, size_t ld) {
  ScopedTimer timer(Component::kAttention);
  const ModelConfig& c = model_.cfg;
  const int hd = c.head_dim();
  const int half = hd / 2;
  const int m = static_cast<int>(rows.size());
  // Rotate and store every row's key and value first: rows of one prompt attend to each other.
  for (int r = 0; r < m; ++r) {
    const Row& row = rows[r];
    const float* cos = model_.rope_cos.data() + static_cast<size_t>(row.pos) * half;
    const float* sin = model_.rope_sin.data() + static_cast<size_t>(row.pos) * half;
    for (int h = 0; h < c.n_heads; ++h) {
      float* qh = q + r * ld + h * hd;
      ApplyRope(qh, hd, cos, sin);
      float* kd = KeyAt(row.seq, layer, row.pos, h);
      std::memcpy(kd, k + r * ld + h * hd, hd * sizeof(float));
      ApplyRope(kd, hd, cos, sin);
      std::memcpy(ValueAt(row.seq, layer, row.pos, h), v + r * ld + h * hd, hd * sizeof(float));
    }
  }
  const size_t stride =
      knobs_.kv_layout == KvLayout::kTokenMajor ? static_cast<size_t>(c.d_model) : hd;
  pool_->ParallelFor(m * c.n_heads, [&](int i0, int i1) {
    for (int i = i0; i < i1; ++i) {
      const int r = i / c.n_heads;
      const int h = i % c.n_heads;
      const Row& row = rows[r];
      HeadView view{KeyAt(row.seq, layer, 0, h), ValueAt(row.seq, layer, 0, h), stride};
      float* out = attn_.data() + static_cast<size_t>(r) * c.d_model + h * hd;
      const float* qh = q + r * ld + h * hd;
      if (knobs_.attn == AttnKind::kFlash) {
        AttendFlash(qh, view, row.pos + 1, hd, knobs_.approx_exp, out);
      } else {
        AttendNaive(qh, view, row.pos + 1, hd, knobs_.approx_exp, out);
      }
    }
  });
}

void Engine::Forward(const std::vector<Row>& rows) {
  const ModelConfig& c = model_.cfg;
  const int d = c.d_model;
  const int m = static_cast<int>(rows.size());
  Grow(&x_, static_cast<size_t>(m) * d);
  Grow(&xn_, static_cast<size_t>(m) * d);
  inv_rms_.assign(m, 0.0f);
  Grow(&qkv_, static_cast<size_t>(m) * 3 * d);
  Grow(&attn_, static_cast<size_t>(m) * d);
  Grow(&proj_, static_cast<size_t>(m) * d);
  Grow(&gate_, static_cast<size_t>(m) * c.d_ff);
  Grow(&up_, static_cast<size_t>(m) * c.d_ff);
  {
    ScopedTimer timer(Component::kEmbedding);
    for (int r = 0; r < m; ++r) {
      std::memcpy(x_.data() + static_cast<size_t>(r) * d,
                  model_.embedding.data() + static_cast<size_t>(rows[r].token) * d,
                  d * sizeof(float));
    }
  }
  const bool fused_norm = knobs_.fuse_norm;
  // With fused norms the matmul reads x_ and scales each output row by 1/rms.
  const float* norm_in = fused_norm ? x_.data() : xn_.data();
  const float* norm_scale = fused_norm ? inv_rms_.data() : nullptr;
  for (int li = 0; li < c.n_layers; ++li) {
    const Layer& layer = model_.layers[li];
    RmsNorm(layer.attn_norm.data(), fused_norm ? inv_rms_.data() : nullptr);
    float* q = qkv_.data();
    size_t ld = d;
    if (knobs_.fused_qkv) {
      MatMul(layer.wqkv, norm_in, m, norm_scale, q, &mm_);
      ld = 3 * static_cast<size_t>(d);
    } else {
      MatMul(layer.wq, norm_in, m, norm_scale, q, &mm_);
      MatMul(layer.wk, norm_in, m, norm_scale, q + static_cast<size_t>(m) * d, &mm_);
      MatMul(layer.wv, norm_in, m, norm_scale, q + 2 * static_cast<size_t>(m) * d, &mm_);
    }
    const float* k = knobs_.fused_qkv ? q + d : q + static_cast<size_t>(m) * d;
    const float* v = knobs_.fused_qkv ? q + 2 * d : q + 2 * static_cast<size_t>(m) * d;
    Attention(rows, li, q, k, v, ld);
    MatMul(layer.wo, attn_.data(), m, nullptr, proj_.data(), &mm_);
    for (size_t i = 0; i < static_cast<size_t>(m) * d; ++i) x_[i] += proj_[i];

    RmsNorm(layer.mlp_norm.data(), fused_norm ? inv_rms_.data() : nullptr);
    MatMul(layer.w_gate, norm_in, m, norm_scale, gate_.data(), &mm_);
    MatMul(layer.w_up, norm_in, m, norm_scale, up_.data(), &mm_);
    for (size_t i = 0; i < static_cast<size_t>(m) * c.d_ff; ++i) {
      const float g = gate_[i];
      gate_[i] = g / (1.0f + std::exp(-g)) * up_[i];
    }
    MatMul(layer.w_down, gate_.data(), m, nullptr, proj_.data(), &mm_);
    for (size_t i = 0; i < static_cast<size_t>(m) * d; ++i) x_[i] += proj_[i];
  }
  for (const Row& row : rows) row.seq->len = std::max(row.seq->len, row.pos + 1);

  // Output head: every row, or only the rows whose next token is sampled.
  RmsNorm(model_.final_norm.data(), fused_norm ? inv_rms_.data() : nullptr);
  logit_row_.assign(m, 0);
  int n = 0;
  std::vector<float> scale;
  const float* head_in = norm_in;
  if (knobs_.last_logits) {
    Grow(&head_in_, static_cast<size_t>(m) * d);
    for (int r = 0; r < m; ++r) {
      if (!rows[r].wants_logits) continue;
      std::memcpy(head_in_.data() + static_cast<size_t>(n) * d,
                  norm_in + static_cast<size_t>(r) * d, d * sizeof(float));
      if (fused_norm) scale.push_back(inv_rms_[r]);
      logit_row_[r] = n++;
    }
    head_in = head_in_.data();
  } else {
    for (int r = 0; r < m; ++r) logit_row_[r] = r;
    n = m;
    if (fused_norm) scale = inv_rms_;
  }
  Grow(&logits_, static_cast<size_t>(n) * c.vocab);
  if (n > 0) {
    MatMul(model_.lm_head, head_in, n, fused_norm ? scale.data() : nullptr, logits_.data(), &mm_);
  }
}

}  // namespace tinyserve
