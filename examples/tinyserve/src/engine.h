// The forward pass. An Engine runs a set of rows through the model: each row is one token of
// one sequence at one position (a prompt token during prefill, the last sampled token during
// decode), so prefill and batched decode are the same call. Keys and values of every row are
// written into its sequence's KV cache before any row attends, which keeps prefill causal.
#pragma once

#include <vector>

#include "buffer.h"
#include "knobs.h"
#include "matmul.h"
#include "model.h"
#include "thread_pool.h"

namespace tinyserve {

struct Sequence {
  Buffer<float> kv;  // [layer][k|v][max_seq * d_model], laid out per Knobs::kv_layout
  int len = 0;       // positions whose keys and values are valid
};

struct Row {
  Sequence* seq = nullptr;
  int pos = 0;
  int token = 0;
  bool wants_logits = false;  // the row's next token is sampled
};

class Engine {
 public:
  Engine(const Model& model, const Knobs& knobs, ThreadPool* pool);

  // Floats of one sequence's KV cache.
  size_t KvFloats() const;
  size_t LayerFloats() const;
  // Prefix reuse: keys and values of positions [0, len) of every layer, in a compact
  // [layer][k|v][position][d_model] snapshot of SnapshotFloats(len) floats, and back.
  size_t SnapshotFloats(int len) const;
  void Export(const Sequence& s, int len, float* dst) const;
  // Imports positions [0, len) of a snapshot of `snapshot_len` positions.
  void Import(const float* src, int snapshot_len, int len, Sequence* s) const;

  // Runs the rows; afterwards Logits(r) is valid for every row with wants_logits (and for all
  // rows unless TS_LAST_LOGITS=1, which computes the output head only where it is needed).
  void Forward(const std::vector<Row>& rows);
  const float* Logits(int r) const { return logits_.data() + logit_row_[r] * model_.cfg.vocab; }

 private:
  void RmsNorm(const float* gain, float* out_scale);
  void Attention(const std::vector<Row>& rows, int layer, float* q, const float* k, const float* v,
                 size_t ld);
  // Offset of the key of (layer, pos, head) in a sequence's buffer; its value is LayerFloats()
  // further.
  size_t KeyOffset(int layer, int pos, int head) const;
  float* KeyAt(Sequence* s, int layer, int pos, int head) const;
  float* ValueAt(Sequence* s, int layer, int pos, int head) const;

  const Model& model_;
  const Knobs& knobs_;
  ThreadPool* pool_;
  MatmulContext mm_;
  // Scratch, grown to the largest row count seen.
  std::vector<float> x_, xn_, inv_rms_, qkv_, attn_, proj_, gate_, up_, logits_, head_in_;
  std::vector<int> logit_row_;
};

}  // namespace tinyserve
