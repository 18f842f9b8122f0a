#!/usr/bin/env bash
# Measurement lanes, measured (docs/lanes.md#measurement-lanes): one small campaign run twice
# from the same commit, with `lanes = 1` and with `lanes = 2` (lane_cpus "0" and "1"), both
# with `parallel = 2`. Prints each wall time, their ratio and whether both kept the same
# candidates.
#
#   bash bench/lanes.sh [path/to/arbor]                # default: build/arbor; CPU-bound runs
#   MODE=device bash bench/lanes.sh [path/to/arbor]    # runs that wait on a "device"
#
# The target (work.c, written below) burns a fixed amount of CPU per benchmark run (~0.15 s)
# and reports work per CPU-second; HALF=1 halves the work (the one real win, ~2x); the eleven
# knob.* actions change nothing (each is measured and reverted for no gain). Every effect is
# either 2x or none, so the kept set does not depend on how busy the machine is. A lane's
# runs are pinned to its CPU; with two lanes the next node's first A/B look runs on CPU 1 while
# the Orchestrator measures a node on CPU 0. MODE=device stands for a machine with one
# accelerator per lane: each run does a tenth of the CPU work, then waits 0.2 s (a sleep) as if
# for its device.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
arbor="$(realpath "${1:-$here/build/arbor}")"
[ -x "$arbor" ] || { echo "bench/lanes.sh: no arbor binary at $arbor" >&2; exit 2; }
[ "$(nproc)" -ge 2 ] || { echo "bench/lanes.sh: needs 2 CPUs" >&2; exit 2; }
work="$(mktemp -d /tmp/arbor-lanes-bench.XXXXXX)"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT

mkdir -p "$work/src"
cat >"$work/src/work.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double cpu_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "--check") == 0) return 0;
  const long ops = getenv("DEVICE_MS") ? 15000000L : 150000000L;
  const long steps = getenv("HALF") ? ops / 2 : ops;
  if (getenv("DEVICE_MS")) usleep(atoi(getenv("DEVICE_MS")) * 1000);
  volatile unsigned long x = 1;
  double t0 = cpu_s();
  for (long i = 0; i < steps; ++i) x = x * 6364136223846793005UL + 1442695040888963407UL;
  double s = cpu_s() - t0;
  printf("{\"ops_per_s\": %.1f}\n", ops / s);
  return 0;
}
EOF

campaign() {  # $1: lanes
  local lanes_line="lanes = $1" device_env=""
  [ "${MODE:-cpu}" = device ] && device_env='env = { DEVICE_MS = "200" }'
  [ "$1" -gt 1 ] && lanes_line="lanes = $1
lane_cpus = [\"0\", \"1\"]"
  cat <<EOF
[campaign]
name = "lanes-bench"
workspace = "."
seed = 1

[target]
build = "cc -O1 -o work work.c"
check = "./work --check"
bench = "./work"
timeout = "2m"
$device_env

[metric]
name = "ops_per_s"
goal = "max"
source = "json:ops_per_s"
repetitions = 3

[search]
max_nodes = 13
max_time = "20m"
parallel = 2
$lanes_line
revisit = false

[critic]
min_effect = 0.1
max_cv = 0.3
EOF
  local speed=1.50
  for k in a b c d e f g h i j k; do
    cat <<EOF

[[action]]
id = "knob.$k"
layer = "application"
category = "knob$k"
targets = []
speedup = $speed
cost = "1s"
apply = { env = { KNOB_$(echo $k | tr a-z A-Z) = "1" } }
EOF
    speed=$(echo "$speed - 0.03" | bc)
  done
  cat <<EOF

[[action]]
id = "algo.half"
layer = "application"
category = "algorithm"
targets = []
speedup = 1.30
cost = "1s"
apply = { env = { HALF = "1" } }
EOF
}

run() {  # $1: lanes; prints the wall time in seconds, and the kept set to $work/kept-$1
  local dir="$work/lanes-$1"
  cp -r "$work/src" "$dir"
  campaign "$1" >"$dir/arbor.toml"
  (cd "$dir" && git init -q && git add -A &&
    git -c user.name=bench -c user.email=bench@example.com commit -qm init)
  local start end
  start=$(date +%s.%N)
  (cd "$dir" && "$arbor" run arbor.toml --quiet >"$work/run-$1.log" 2>&1) ||
    { cat "$work/run-$1.log" >&2; exit 1; }
  end=$(date +%s.%N)
  (cd "$dir" && "$arbor" tree --format json) |
    python3 -c 'import json,sys
t=json.load(sys.stdin)
nodes=t["nodes"] if isinstance(t,dict) else t
print(" ".join(sorted(n.get("candidate", n.get("action", "")) for n in nodes if n.get("outcome")=="kept")))' \
      >"$work/kept-$1"
  echo "$end - $start" | bc
}

one=$(run 1)
two=$(run 2)
echo "mode: ${MODE:-cpu}"
echo "lanes = 1: ${one} s   kept: $(cat "$work/kept-1")"
echo "lanes = 2: ${two} s   kept: $(cat "$work/kept-2")"
echo "ratio (lanes=1 / lanes=2): $(echo "scale=2; $one / $two" | bc)"
if cmp -s "$work/kept-1" "$work/kept-2"; then echo "same kept set: yes"; else echo "same kept set: no"; fi
