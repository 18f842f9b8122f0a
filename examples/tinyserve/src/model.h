// The model: a decoder-only transformer (pre-norm, RMSNorm, rotary multi-head attention,
// SwiGLU MLP) whose weights are generated from a seed. The output head is aligned with a random
// permutation of the embedding table, so the untrained model still has structure: it mostly
// predicts a fixed successor of the current token, perturbed by what attention and the MLP add
// from the context. That keeps greedy decoding stable under small numeric changes (fp32
// reordering, int8 with proper scales) while broken numerics still show.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "buffer.h"
#include "knobs.h"
#include "profiler.h"

namespace tinyserve {

struct ModelConfig {
  int vocab = 2048;
  int d_model = 128;
  int n_layers = 4;
  int n_heads = 4;
  int d_ff = 512;
  int max_seq = 256;
  uint64_t seed = 20240607;
  int head_dim() const { return d_model / n_heads; }
};

// A linear layer y = W x with W stored [out][in], plus the layouts the kernels want (packed
// column panels, int8 rows), prepared once at load time for the configured kernel.
struct Linear {
  int in = 0;
  int out = 0;
  Component component = Component::kMatmulMlp;
  Buffer<float> w;       // [out][in]
  Buffer<float> packed;  // blocked/simd: panels of `panel` columns, [panel][in][panel]
  int panel = 0;
  Buffer<int8_t> q;       // int8 weights [out][in]
  Buffer<float> q_scale;  // one per block of kQuantBlock weights of a row
};

struct Layer {
  Buffer<float> attn_norm;  // [d]
  Buffer<float> mlp_norm;   // [d]
  Linear wq, wk, wv, wqkv, wo;
  Linear w_gate, w_up, w_down;
};

struct Model {
  ModelConfig cfg;
  Buffer<float> embedding;  // [vocab][d]
  std::vector<Layer> layers;
  Buffer<float> final_norm;          // [d]
  Linear lm_head;                    // [vocab][d]
  Buffer<float> rope_cos, rope_sin;  // [max_seq][head_dim / 2]
};

// Generates the weights from cfg.seed and prepares them for the knobs' kernels.
std::unique_ptr<Model> BuildModel(const ModelConfig& cfg, const Knobs& knobs);
// Number of parameters (embedding, layers, head).
long ParameterCount(const Model& m);

}  // namespace tinyserve
