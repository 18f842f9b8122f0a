// Run-time knobs, read once from TS_* environment variables. Every knob has a sensible,
// untuned default (the baseline); an unknown value is an error, not a silent default, so a
// mistyped campaign action fails loudly instead of measuring the baseline twice.
#pragma once

#include <string>

namespace tinyserve {

enum class MatmulKind { kNaive, kBlocked, kSimd };
enum class AttnKind { kNaive, kFlash };
enum class KvLayout { kHeadMajor, kTokenMajor };
enum class SchedPolicy { kFcfs, kShortestFirst };
enum class SamplerKind { kFullSort, kPartial };

struct Knobs {
  // application
  int batch = 1;                                 // TS_BATCH: requests decoded together
  SchedPolicy sched = SchedPolicy::kFcfs;        // TS_SCHED=fcfs|shortest-first
  bool prefix_cache = false;                     // TS_PREFIX_CACHE=1
  SamplerKind sampler = SamplerKind::kFullSort;  // TS_SAMPLER=sort|partial
  bool kv_pool = false;                          // TS_KV_POOL=1: recycle KV-cache buffers
  bool force_greedy = false;                     // TS_FORCE_GREEDY=1: never sample (changes output)
  // framework
  KvLayout kv_layout = KvLayout::kTokenMajor;  // TS_KV_LAYOUT=token-major|head-major
  bool fused_qkv = false;                      // TS_FUSED_QKV=1
  bool fuse_norm = false;                      // TS_FUSE_NORM=1: RMSNorm gain folded into weights
  bool last_logits = false;                    // TS_LAST_LOGITS=1: lm_head only where sampled
  int threads = 1;                             // TS_THREADS=1..8
  // kernel
  MatmulKind matmul = MatmulKind::kNaive;  // TS_MATMUL=naive|blocked|simd
  int tile = 16;                           // TS_TILE: column panel of the blocked kernel
  bool int8 = false;                       // TS_INT8=1
  bool int8_scale_fix = false;             // TS_INT8_SCALE_FIX=1: per-row activation scales
  AttnKind attn = AttnKind::kNaive;        // TS_ATTN=naive|flash
  bool approx_exp = false;                 // TS_APPROX_EXP=1: Schraudolph exp in softmax
  // hardware / runtime
  bool pin = false;        // TS_PIN=1: pin threads to cores
  bool hugepages = false;  // TS_HUGEPAGES=1: madvise(MADV_HUGEPAGE)

  // True when every knob has its default value (required to write the reference).
  bool IsDefault() const;
  std::string Describe() const;
};

// Reads the TS_* variables. On an invalid value prints one line to stderr and exits with 2.
Knobs ReadKnobs();

}  // namespace tinyserve
