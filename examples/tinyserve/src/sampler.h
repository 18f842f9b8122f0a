// Token sampling: greedy (top_k = 1) or top-k with temperature, driven by a per-request
// seeded RNG so that sampling is reproducible. Both implementations choose the same token:
//   sort     softmax over the whole vocabulary, then a full sort of (probability, token) pairs
//            to find the k most likely: the textbook version.
//   partial  selects the k largest logits (argmax for greedy) and takes the softmax over them.
#pragma once

#include "knobs.h"
#include "rng.h"

namespace tinyserve {

struct SamplingParams {
  int top_k = 1;  // 1 = greedy
  float temperature = 1.0f;
};

struct SampleInfo {
  int token = 0;
  float logit = 0;  // the chosen token's logit
  float lse = 0;    // log-sum-exp of all logits (temperature 1)
};

// `rng` is drawn from exactly once per call when top_k > 1, never for greedy. The log-sum-exp
// costs a pass over the vocabulary and is computed only when asked for (--check).
SampleInfo Sample(const float* logits, int vocab, const SamplingParams& params, Rng* rng,
                  const Knobs& knobs, bool with_lse);

}  // namespace tinyserve
