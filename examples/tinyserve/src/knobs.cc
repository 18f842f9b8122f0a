#include "knobs.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>

namespace tinyserve {
namespace {

[[noreturn]] void BadValue(const char* name, const char* value, const char* expected) {
  std::fprintf(stderr, "tinyserve: invalid %s='%s'; expected %s\n", name, value, expected);
  std::exit(2);
}

// Returns the index of `value` among `names`, or exits.
template <typename E>
E Choice(const char* name, std::initializer_list<std::pair<const char*, E>> names, E fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  std::string expected;
  for (const auto& [n, e] : names) {
    if (std::strcmp(n, value) == 0) return e;
    expected += expected.empty() ? n : std::string("|") + n;
  }
  BadValue(name, value, expected.c_str());
}

bool Flag(const char* name) { return Choice<bool>(name, {{"0", false}, {"1", true}}, false); }

int Integer(const char* name, int lo, int hi, int fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  char* end = nullptr;
  long v = std::strtol(value, &end, 10);
  if (*end != '\0' || v < lo || v > hi) {
    std::string expected = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    BadValue(name, value, expected.c_str());
  }
  return static_cast<int>(v);
}

}  // namespace

Knobs ReadKnobs() {
  Knobs k;
  k.batch = Integer("TS_BATCH", 1, 64, 1);
  k.sched = Choice<SchedPolicy>(
      "TS_SCHED", {{"fcfs", SchedPolicy::kFcfs}, {"shortest-first", SchedPolicy::kShortestFirst}},
      SchedPolicy::kFcfs);
  k.prefix_cache = Flag("TS_PREFIX_CACHE");
  k.sampler = Choice<SamplerKind>(
      "TS_SAMPLER", {{"sort", SamplerKind::kFullSort}, {"partial", SamplerKind::kPartial}},
      SamplerKind::kFullSort);
  k.kv_pool = Flag("TS_KV_POOL");
  k.force_greedy = Flag("TS_FORCE_GREEDY");
  k.kv_layout = Choice<KvLayout>(
      "TS_KV_LAYOUT",
      {{"token-major", KvLayout::kTokenMajor}, {"head-major", KvLayout::kHeadMajor}},
      KvLayout::kTokenMajor);
  k.fused_qkv = Flag("TS_FUSED_QKV");
  k.fuse_norm = Flag("TS_FUSE_NORM");
  k.last_logits = Flag("TS_LAST_LOGITS");
  k.threads = Integer("TS_THREADS", 1, 8, 1);
  k.matmul = Choice<MatmulKind>("TS_MATMUL",
                                {{"naive", MatmulKind::kNaive},
                                 {"blocked", MatmulKind::kBlocked},
                                 {"simd", MatmulKind::kSimd}},
                                MatmulKind::kNaive);
  // Any positive size is accepted here; the blocked kernel checks it against its scratch.
  k.tile = Integer("TS_TILE", 1, 4096, 16);
  k.int8 = Flag("TS_INT8");
  k.int8_scale_fix = Flag("TS_INT8_SCALE_FIX");
  k.attn = Choice<AttnKind>("TS_ATTN", {{"naive", AttnKind::kNaive}, {"flash", AttnKind::kFlash}},
                            AttnKind::kNaive);
  k.approx_exp = Flag("TS_APPROX_EXP");
  k.pin = Flag("TS_PIN");
  k.hugepages = Flag("TS_HUGEPAGES");
  return k;
}

bool Knobs::IsDefault() const {
  Knobs d;
  return batch == d.batch && sched == d.sched && prefix_cache == d.prefix_cache &&
         sampler == d.sampler && kv_pool == d.kv_pool && force_greedy == d.force_greedy &&
         kv_layout == d.kv_layout && fused_qkv == d.fused_qkv && fuse_norm == d.fuse_norm &&
         last_logits == d.last_logits && threads == d.threads && matmul == d.matmul &&
         tile == d.tile && int8 == d.int8 && int8_scale_fix == d.int8_scale_fix && attn == d.attn &&
         approx_exp == d.approx_exp && pin == d.pin && hugepages == d.hugepages;
}

std::string Knobs::Describe() const {
  static const char* kMatmul[] = {"naive", "blocked", "simd"};
  std::string s = "batch=" + std::to_string(batch) +
                  (sched == SchedPolicy::kShortestFirst ? " sched=shortest-first" : "") +
                  (prefix_cache ? " prefix-cache" : "") +
                  (sampler == SamplerKind::kPartial ? " sampler=partial" : "") +
                  (kv_pool ? " kv-pool" : "") + (force_greedy ? " force-greedy" : "") +
                  (kv_layout == KvLayout::kHeadMajor ? " kv=head-major" : "") +
                  (fused_qkv ? " fused-qkv" : "") + (fuse_norm ? " fuse-norm" : "") +
                  (last_logits ? " last-logits" : "") + " threads=" + std::to_string(threads) +
                  " matmul=" + kMatmul[static_cast<int>(matmul)] + " tile=" + std::to_string(tile) +
                  (int8 ? " int8" : "") + (int8_scale_fix ? " int8-scale-fix" : "") +
                  (attn == AttnKind::kFlash ? " attn=flash" : "") +
                  (approx_exp ? " approx-exp" : "") + (pin ? " pin" : "") +
                  (hugepages ? " hugepages" : "");
  return s;
}

}  // namespace tinyserve
