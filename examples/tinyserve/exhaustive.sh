#!/bin/bash
# Estimates the best configuration of tinyserve's action space WITHOUT Arbor, for the
# "fraction of the known optimum" figure (docs/benchmarks.md).
#
# Method (about 10 minutes on 2 cores):
#   1. Exhaustive grid over the knobs with the largest and most entangled effects:
#        flags   {-O1, -O3, -O3 -march=native, -O3 -march=native -ffast-math}
#        kernel  {naive, blocked/32, blocked/64, simd, int8-calibrated}
#        batch   {1, 4, 8}      threads {1, 2}
#      = 120 configurations, each measured REPS times (median), with the knobs that never hurt in
#      our measurements switched on (partial sampler, prefix cache, last-row logits).
#   2. Greedy coordinate ascent from the best grid point over every remaining knob of the
#      campaign (runtime knobs, then -flto and -funroll-loops), in campaign-file order, keeping a
#      change when its median beats the incumbent by more than MIN_GAIN; repeated until a full
#      sweep keeps nothing.
#   3. The optimum must pass --check and the p99 guard (<= 250 ms) of arbor.toml; every
#      candidate that fails either is skipped.
# PGO is left out (it would need a training run per point). The result is an estimate of the
# optimum, a lower bound on the true one.
#
# Usage: ./exhaustive.sh [REPS] [MIN_GAIN]   (defaults 3 and 0.02). Prints progress on stderr,
# and the best configuration and its median tok/s (REPS=5 re-measurement) on stdout; the
# configuration is also written to $ROOT/optimum.env for compare.sh.
set -euo pipefail
cd "$(dirname "$0")"
REPS=${1:-3}
MIN_GAIN=${2:-0.02}
ROOT=${TMPDIR:-/tmp}/tinyserve-exhaustive
GUARD_P99=250
mkdir -p "$ROOT"

build() {  # build FLAGS -> prints the binary path
  local dir="$ROOT/$(echo "$1" | md5sum | cut -c1-10)"
  if [ ! -x "$dir/tinyserve" ]; then
    cmake -S . -B "$dir" -DCMAKE_CXX_FLAGS="$1" >/dev/null
    cmake --build "$dir" -j2 >/dev/null
  fi
  echo "$dir/tinyserve"
}

# measure FLAGS ENV... -> prints "median_tok_per_s median_p99" or "fail"
measure() {
  local flags=$1; shift
  local bin; bin=$(build "$flags")
  if ! env "$@" "$bin" --check >/dev/null 2>&1; then echo fail; return; fi
  local i out=()
  for ((i = 0; i < REPS; i++)); do
    out+=("$(env "$@" "$bin" --bench 2>/dev/null || true)")
  done
  printf '%s\n' "${out[@]}" | python3 -c '
import json, statistics, sys
rows = [json.loads(l) for l in sys.stdin if l.strip().startswith("{")]
if not rows: print("fail"); sys.exit()
print(statistics.median(r["throughput"]["tok_per_s"] for r in rows),
      statistics.median(r["latency"]["p99_ms"] for r in rows))'
}

BEST_FLAGS="" BEST_ENV=() BEST=0
consider() {  # consider FLAGS ENV...: keeps it when better by MIN_GAIN and within the guard
  local flags=$1; shift
  local r; r=$(measure "$flags" "$@")
  echo "  $r | $flags | $*" >&2
  [ "$r" = fail ] && return 1
  local tps=${r% *} p99=${r#* }
  if python3 -c "import sys; sys.exit(0 if $p99 <= $GUARD_P99 and $tps > $BEST * (1 + $MIN_GAIN) else 1)"; then
    BEST=$tps BEST_FLAGS=$flags BEST_ENV=("$@")
    return 0
  fi
  return 1
}

COMMON=(TS_SAMPLER=partial TS_PREFIX_CACHE=1 TS_LAST_LOGITS=1)
echo "stage 1: grid" >&2
for flags in "-O1" "-O1 -O3" "-O1 -O3 -march=native" "-O1 -O3 -march=native -ffast-math"; do
  for kernel in "TS_MATMUL=naive" "TS_MATMUL=blocked TS_TILE=32" "TS_MATMUL=blocked TS_TILE=64" \
                "TS_MATMUL=simd" "TS_INT8=1 TS_INT8_SCALE_FIX=1"; do
    for batch in 1 4 8; do
      for threads in 1 2; do
        # shellcheck disable=SC2086
        consider "$flags" "${COMMON[@]}" $kernel TS_BATCH=$batch TS_THREADS=$threads || true
      done
    done
  done
done

echo "stage 2: greedy over the other knobs from $BEST tok/s" >&2
RUNTIME=(TS_SCHED=shortest-first TS_KV_POOL=1 TS_FUSED_QKV=1 TS_FUSE_NORM=1
         TS_KV_LAYOUT=head-major TS_ATTN=flash TS_APPROX_EXP=1 TS_PIN=1 TS_HUGEPAGES=1
         LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2)
FLAGS=(" -flto=auto" " -funroll-loops" " -fno-math-errno")
changed=1
while [ $changed = 1 ]; do
  changed=0
  for knob in "${RUNTIME[@]}"; do
    [[ " ${BEST_ENV[*]} " == *" $knob "* ]] && continue
    if consider "$BEST_FLAGS" "${BEST_ENV[@]}" "$knob"; then changed=1; fi
  done
  for f in "${FLAGS[@]}"; do
    [[ "$BEST_FLAGS" == *"$f"* ]] && continue
    if consider "$BEST_FLAGS$f" "${BEST_ENV[@]}"; then changed=1; fi
  done
done

GRID_REPS=$REPS REPS=5
final=$(measure "$BEST_FLAGS" "${BEST_ENV[@]}")
{
  echo "# The optimum found by exhaustive.sh (REPS=$GRID_REPS, MIN_GAIN=$MIN_GAIN), in arbor-best.env's format."
  echo "export CXXFLAGS='$BEST_FLAGS'"
  for kv in "${BEST_ENV[@]}"; do echo "export ${kv%%=*}='${kv#*=}'"; done
} > "$ROOT/optimum.env"
echo "optimum: CXXFLAGS=\"$BEST_FLAGS\" ${BEST_ENV[*]}  (also in $ROOT/optimum.env)"
echo "optimum tok_per_s (median of 5): ${final% *}  p99_ms: ${final#* }"
