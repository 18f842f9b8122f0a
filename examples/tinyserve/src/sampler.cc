#include "sampler.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "attention.h"
#include "profiler.h"

namespace tinyserve {
namespace {

// Picks index i of `weights` (non-negative, not normalised) with probability weights[i] / sum.
int Draw(const float* weights, int n, Rng* rng) {
  float sum = 0;
  for (int i = 0; i < n; ++i) sum += weights[i];
  const float u = rng->Uniform() * sum;
  float acc = 0;
  for (int i = 0; i < n; ++i) {
    acc += weights[i];
    if (u < acc) return i;
  }
  return n - 1;
}

int SampleSorted(const float* logits, int vocab, const SamplingParams& p, Rng* rng,
                 const Knobs& knobs) {
  float max = logits[0];
  for (int i = 1; i < vocab; ++i) max = std::max(max, logits[i]);
  std::vector<std::pair<float, int>> probs(vocab);
  double sum = 0;
  for (int i = 0; i < vocab; ++i) {
    probs[i] = {ExpNonPositive((logits[i] - max) / p.temperature, knobs.approx_exp), i};
    sum += probs[i].first;
  }
  for (auto& pr : probs) pr.first = static_cast<float>(pr.first / sum);
  std::sort(probs.begin(), probs.end(), [&](const auto& a, const auto& b) {
    if (logits[a.second] != logits[b.second]) return logits[a.second] > logits[b.second];
    return a.second < b.second;
  });
  if (p.top_k <= 1) return probs[0].second;
  std::vector<float> weights(p.top_k);
  for (int i = 0; i < p.top_k; ++i) weights[i] = probs[i].first;
  return probs[Draw(weights.data(), p.top_k, rng)].second;
}

int SamplePartial(const float* logits, int vocab, const SamplingParams& p, Rng* rng,
                  const Knobs& knobs) {
  if (p.top_k <= 1) {
    int best = 0;
    for (int i = 1; i < vocab; ++i) {
      if (logits[i] > logits[best]) best = i;
    }
    return best;
  }
  std::vector<int> idx(vocab);
  for (int i = 0; i < vocab; ++i) idx[i] = i;
  auto before = [&](int a, int b) {
    if (logits[a] != logits[b]) return logits[a] > logits[b];
    return a < b;
  };
  std::partial_sort(idx.begin(), idx.begin() + p.top_k, idx.end(), before);
  const float max = logits[idx[0]];
  std::vector<float> weights(p.top_k);
  for (int i = 0; i < p.top_k; ++i) {
    weights[i] = ExpNonPositive((logits[idx[i]] - max) / p.temperature, knobs.approx_exp);
  }
  return idx[Draw(weights.data(), p.top_k, rng)];
}

}  // namespace

SampleInfo Sample(const float* logits, int vocab, const SamplingParams& params, Rng* rng,
                  const Knobs& knobs, bool with_lse) {
  SampleInfo info;
  {
    ScopedTimer timer(Component::kSampling);
    info.token = knobs.sampler == SamplerKind::kPartial
                     ? SamplePartial(logits, vocab, params, rng, knobs)
                     : SampleSorted(logits, vocab, params, rng, knobs);
  }
  info.logit = logits[info.token];
  if (!with_lse) return info;
  // Always with the exact exp: this is the yardstick, not part of the sampler.
  float max = logits[0];
  for (int i = 1; i < vocab; ++i) max = std::max(max, logits[i]);
  double sum = 0;
  for (int i = 0; i < vocab; ++i) sum += std::exp(static_cast<double>(logits[i] - max));
  info.lse = max + static_cast<float>(std::log(sum));
  return info;
}

}  // namespace tinyserve
