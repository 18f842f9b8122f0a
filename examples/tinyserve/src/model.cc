#include "model.h"

#include <cmath>
#include <numeric>

#include "matmul.h"
#include "rng.h"

namespace tinyserve {
namespace {

void FillNormal(Rng& rng, float* p, size_t n, double stddev) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<float>(rng.Normal() * stddev);
}

Linear MakeLinear(Rng& rng, int in, int out, double stddev, Component c) {
  Linear l;
  l.in = in;
  l.out = out;
  l.component = c;
  l.w = Buffer<float>(static_cast<size_t>(in) * out);
  FillNormal(rng, l.w.data(), l.w.size(), stddev);
  return l;
}

// Rows of `parts`, stacked: the fused QKV projection.
Linear Stack(const Linear& a, const Linear& b, const Linear& c) {
  Linear l;
  l.in = a.in;
  l.out = a.out + b.out + c.out;
  l.component = a.component;
  l.w = Buffer<float>(static_cast<size_t>(l.in) * l.out);
  float* dst = l.w.data();
  for (const Linear* p : {&a, &b, &c}) {
    std::copy(p->w.data(), p->w.data() + p->w.size(), dst);
    dst += p->w.size();
  }
  return l;
}

// Folds an RMSNorm gain into the columns of the next linear layer: W' = W diag(g).
void FoldGain(Linear* l, const float* gain) {
  for (int j = 0; j < l->out; ++j) {
    for (int k = 0; k < l->in; ++k) l->w[static_cast<size_t>(j) * l->in + k] *= gain[k];
  }
}

}  // namespace

std::unique_ptr<Model> BuildModel(const ModelConfig& cfg, const Knobs& knobs) {
  auto m = std::make_unique<Model>();
  m->cfg = cfg;
  Rng rng(cfg.seed);
  const int d = cfg.d_model;
  m->embedding = Buffer<float>(static_cast<size_t>(cfg.vocab) * d);
  FillNormal(rng, m->embedding.data(), m->embedding.size(), 1.0);

  const double in_std = 1.0 / std::sqrt(static_cast<double>(d));
  for (int i = 0; i < cfg.n_layers; ++i) {
    Layer l;
    l.attn_norm = Buffer<float>(d);
    l.mlp_norm = Buffer<float>(d);
    for (int k = 0; k < d; ++k) {
      l.attn_norm[k] = static_cast<float>(1.0 + 0.1 * rng.Normal());
      l.mlp_norm[k] = static_cast<float>(1.0 + 0.1 * rng.Normal());
    }
    l.wq = MakeLinear(rng, d, d, in_std, Component::kMatmulQkv);
    l.wk = MakeLinear(rng, d, d, in_std, Component::kMatmulQkv);
    l.wv = MakeLinear(rng, d, d, in_std, Component::kMatmulQkv);
    l.wo = MakeLinear(rng, d, d, 0.5 * in_std, Component::kMatmulOut);
    l.w_gate = MakeLinear(rng, d, cfg.d_ff, in_std, Component::kMatmulMlp);
    l.w_up = MakeLinear(rng, d, cfg.d_ff, in_std, Component::kMatmulMlp);
    l.w_down = MakeLinear(rng, cfg.d_ff, d, 0.5 / std::sqrt(static_cast<double>(cfg.d_ff)),
                          Component::kMatmulMlp);
    m->layers.push_back(std::move(l));
  }
  m->final_norm = Buffer<float>(d);
  for (int k = 0; k < d; ++k) m->final_norm[k] = static_cast<float>(1.0 + 0.1 * rng.Normal());

  // Output head: row t is the embedding of the token whose successor t is, scaled so the
  // successor's logit stands ~6 above the rest and takes ~90% of the probability.
  std::vector<int> successor(cfg.vocab);
  std::iota(successor.begin(), successor.end(), 0);
  for (int i = cfg.vocab - 1; i > 0; --i) std::swap(successor[i], successor[rng.Range(0, i)]);
  m->lm_head.in = d;
  m->lm_head.out = cfg.vocab;
  m->lm_head.component = Component::kMatmulLmHead;
  m->lm_head.w = Buffer<float>(static_cast<size_t>(cfg.vocab) * d);
  const float head_scale = 0.1f;
  for (int t = 0; t < cfg.vocab; ++t) {
    const float* src = m->embedding.data() + static_cast<size_t>(t) * d;
    float* dst = m->lm_head.w.data() + static_cast<size_t>(successor[t]) * d;
    for (int k = 0; k < d; ++k) dst[k] = src[k] * head_scale;
  }

  const int half = cfg.head_dim() / 2;
  m->rope_cos = Buffer<float>(static_cast<size_t>(cfg.max_seq) * half);
  m->rope_sin = Buffer<float>(static_cast<size_t>(cfg.max_seq) * half);
  for (int p = 0; p < cfg.max_seq; ++p) {
    for (int i = 0; i < half; ++i) {
      double freq = std::pow(10000.0, -2.0 * i / cfg.head_dim());
      m->rope_cos[static_cast<size_t>(p) * half + i] = static_cast<float>(std::cos(p * freq));
      m->rope_sin[static_cast<size_t>(p) * half + i] = static_cast<float>(std::sin(p * freq));
    }
  }

  // Load-time transformations for the configured framework options and kernels.
  for (Layer& l : m->layers) {
    if (knobs.fuse_norm) {
      for (Linear* p : {&l.wq, &l.wk, &l.wv}) FoldGain(p, l.attn_norm.data());
      for (Linear* p : {&l.w_gate, &l.w_up}) FoldGain(p, l.mlp_norm.data());
    }
    if (knobs.fused_qkv) l.wqkv = Stack(l.wq, l.wk, l.wv);
    for (Linear* p : {&l.wq, &l.wk, &l.wv, &l.wqkv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) {
      if (p->out > 0) PrepareLinear(p, knobs);
    }
  }
  if (knobs.fuse_norm) FoldGain(&m->lm_head, m->final_norm.data());
  PrepareLinear(&m->lm_head, knobs);
  return m;
}

long ParameterCount(const Model& m) {
  const ModelConfig& c = m.cfg;
  long per_layer = 4L * c.d_model * c.d_model + 3L * c.d_model * c.d_ff + 2L * c.d_model;
  return 2L * c.vocab * c.d_model + per_layer * c.n_layers + c.d_model;
}

}  // namespace tinyserve
