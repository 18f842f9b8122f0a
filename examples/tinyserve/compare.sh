#!/bin/bash
# Measures several tinyserve configurations in one session, interleaved, for the "fraction of
# the known optimum" figure (docs/benchmarks.md): each configuration is a file in
# arbor-best.env's format (`export CXXFLAGS=...`, `export TS_...=...`), e.g. the arbor-best.env
# of a campaign's branch and the optimum.env written by exhaustive.sh.
#
# Usage: ./compare.sh REPS CONFIG...   Every configuration is built once, checked, then benched
# REPS times in rounds (one run of each per round, so load changes hit all of them alike).
# Prints, per configuration, the median tok/s with its 95% bootstrap interval, its speedup over
# the FIRST one (pass the baseline first) and its ratio to the LAST one (pass the optimum last).
# A CONFIG is
#   - a file: built from this example's sources with its CXXFLAGS; when it holds the line
#     `# pgo: yes` (optimum.env of a configuration with compiler.pgo), ./pgo.sh first runs in a
#     copy of the sources with its variables, as the campaign's compiler.pgo does;
#   - a directory holding arbor-best.env (a campaign's branch, e.g.
#     `git -C build/demo/tinyserve archive arbor/tinyserve | tar -x -C DIR`): built from that
#     tree, so with the profile data its pgo/ holds, as the campaign measured it.
set -euo pipefail
REPS=$1; shift
files=()
for f in "$@"; do files+=("$(realpath "$f")"); done
set -- "${files[@]}"
cd "$(dirname "$0")"
ROOT=${TMPDIR:-/tmp}/tinyserve-compare
mkdir -p "$ROOT"
bins=() envs=()
for f in "$@"; do
  src=$PWD
  if [ -d "$f" ]; then
    src=$f f=$f/arbor-best.env
  elif grep -q '^# pgo: yes' "$f"; then
    # compiler.pgo: train on this configuration's flags and knobs in a copy of the sources.
    src="$ROOT/pgo-$(md5sum < "$f" | cut -c1-10)"
    if [ ! -d "$src/pgo" ]; then
      rm -rf "$src" && mkdir -p "$src"
      cp -r CMakeLists.txt pgo.sh reference.txt src "$src"/
      (cd "$src" && env -i PATH="$PATH" HOME="$HOME" bash -c ". '$f' && ./pgo.sh" >/dev/null)
    fi
  fi
  vars=$(grep '^export ' "$f" | sed 's/^export //')
  flags=$(bash -c "$(grep '^export CXXFLAGS=' "$f"); echo \"\$CXXFLAGS\"")
  dir="$ROOT/$(echo "$src $flags" | md5sum | cut -c1-10)"
  if [ ! -x "$dir/tinyserve" ]; then
    cmake -S "$src" -B "$dir" -DCMAKE_CXX_FLAGS="$flags" >/dev/null
    cmake --build "$dir" -j2 --target tinyserve >/dev/null
  fi
  knobs=$(echo "$vars" | { grep -v '^CXXFLAGS=' || true; } | tr -d "'" | tr '\n' ' ')
  # shellcheck disable=SC2086
  env $knobs "$dir/tinyserve" --check >/dev/null || { echo "$f: check failed" >&2; exit 1; }
  bins+=("$dir/tinyserve") envs+=("$knobs")
done
out=$ROOT/samples.txt
: > "$out"
for ((r = 0; r < REPS; r++)); do
  for i in "${!bins[@]}"; do
    # shellcheck disable=SC2086
    v=$(env ${envs[$i]} "${bins[$i]}" --bench | python3 -c \
        'import json,sys; print(json.loads(sys.stdin.readline())["throughput"]["tok_per_s"])')
    echo "$i $v" >> "$out"
  done
  echo "round $((r + 1))/$REPS" >&2
done
python3 - "$out" "$@" <<'EOF'
import random, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
files = sys.argv[2:]
vals = {i: [float(v) for k, v in rows if int(k) == i] for i in range(len(files))}
med = {i: statistics.median(v) for i, v in vals.items()}
ref, base = med[len(files) - 1], med[0]
rng = random.Random(1)
for i, f in enumerate(files):
    boot = sorted(statistics.median(rng.choices(vals[i], k=len(vals[i]))) for _ in range(2000))
    gain = f", {(med[i] / base - 1) / (ref / base - 1) * 100:.1f}% of the last's gain" if ref != base else ""
    print(f"{f}: median {med[i]:.0f} tok/s (95% CI {boot[50]:.0f}-{boot[1949]:.0f}, n={len(vals[i])}),"
          f" x{med[i] / base:.2f} over the first, {med[i] / ref * 100:.1f}% of the last{gain}")
EOF
