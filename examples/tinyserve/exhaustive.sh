#!/bin/bash
# The known optimum of the demo campaign's action space, found WITHOUT Arbor: the reference of
# the "fraction of the known optimum" figure (docs/benchmarks.md, "Demo campaign").
#
# What it searches: exactly the configurations a campaign of arbor.toml can reach. The campaign
# file is read (python3 tomllib), nothing about it is copied here but the choice of which
# actions form the grid's core:
#   - every [[action]] and each of its `values`; a configuration holds each action at most once
#     (one value), its environment is the campaign's [target] env with the actions applied in
#     file order (`env` sets, `append` appends to CXXFLAGS), and `run` actions (compiler.pgo:
#     pgo.sh, then the build uses -fprofile-use) run last, on the configuration's own flags and
#     knobs, as the campaign's apply does when PGO is the last step of a path;
#   - `requires` and `conflicts` are respected; two actions that set the same variable
#     (kernel.matmul-blocked / kernel.matmul-simd / kernel.tile all set TS_MATMUL) are
#     alternatives: a path holding both behaves as the one applied last alone, so a
#     configuration holds at most one of them. (A campaign could keep kernel.tile after
#     kernel.matmul-simd and app.batch, and so batch the blocked kernel; this search, like the
#     `requires` it honours, does not count that loophole.)
#   - a configuration counts only if it passes the campaign's check (its exit code, and its
#     accuracy source within [accuracy] max_drop of the baseline's) and every [[metric.guard]]
#     on the median of its benchmark runs; the metric is [metric] source (tok/s, median).
# How (2^29 x values configurations cannot all be measured):
#   1. Grid, exhaustive over the entangled core: compiler.opt (none, O2, O3, Os) x
#      compiler.native x compiler.fast-math x the kernel (none, kernel.matmul-blocked,
#      kernel.tile 8/32/64/128, kernel.matmul-simd, kernel.int8, kernel.int8-calibrated) x
#      app.batch (none, 4, 8, 16; it requires the simd kernel) x fw.threads (none, 2, 4), with
#      app.sampler-partial, app.prefix-cache and fw.last-logits on (independent of the core:
#      they cut sampling, prefill and the output head). tinyserve ignores TS_MATMUL/TS_TILE when
#      TS_INT8 is on (src/matmul.cc), so the int8 kernels are paired with no matmul action, and
#      with the simd one only where a batch needs it. Each point: GRID_REPS benchmark runs (the
#      campaign's bench command: a median over >= 0.5 s of passes); the best ones are checked
#      until TOP_K pass, and every point used after the grid is checked first.
#   2. Coordinate ascent over EVERY action except the `run` ones, from each configuration given
#      on the command line (e.g. a campaign's arbor-best.env: the optimum is never below a
#      configuration we know) and from the TOP_K best grid points: for each action in file
#      order, every other setting of it (absent, or each value; adding an action drops its
#      alternatives and conflicts, dropping one drops what requires it); a move is kept when
#      its median of REPS runs beats the incumbent's by more than MIN_GAIN; sweeps repeat until
#      one keeps nothing (at most MAX_SWEEPS).
#   3. Final pass on the best: each single removal and each pair swap (one action out, another
#      in), screened with GRID_REPS runs, the promising ones (above the best's median) measured
#      with REPS; an improvement restarts the ascent from it.
#   4. The `run` actions (PGO) added to the PGO_K best distinct configurations measured with
#      REPS runs, trained on each, each judged by an A/B interleaved with the same configuration
#      without it (a profile's ~10% is the size of the drift between runs minutes apart).
#   5. The best re-measured with 5 runs, interleaved with 5 runs of the baseline: the speedup.
# Why the result is a sound estimate: every configuration it reports was built, checked and
# measured exactly as a campaign node with that path would be, and respects the declared
# constraints, so it is reachable by a campaign: it is a LOWER BOUND on the true optimum. It
# may miss a better configuration that differs from every start by two or more coordinates
# outside the grid's core that pay only together; the restarts, the seeds and the pair swaps of
# step 3 narrow that. Medians on a shared machine carry a few % of noise: MIN_GAIN keeps noise
# from being "kept", and the final figure is a fresh measurement, not the search's maximum.
# Run time on the 2-core demo machine: 41 minutes (1,572 configurations, 46 builds; the grid 18
# minutes), with other builds running. MAX_TIME (seconds) stops the search stage in progress and
# goes to steps 4-5, saying so in optimum.env. Load matters beyond noise: fw.threads spins on
# the serving thread's clock, so under load the ascent rejects threads that pay on an idle
# machine; run it on a quiet machine (optimum.env's header says how it was measured).
#
# Usage: ./exhaustive.sh [REPS [MIN_GAIN]] [SEED ...]   (defaults 3 and 0.02)
#   SEED: a file in arbor-best.env's format, or a directory holding one (arbor-best.env or
#   optimum.env; a pgo/ with profile data there marks compiler.pgo), e.g. a campaign branch
#   exported with `git archive arbor/tinyserve | tar -x -C DIR`.
#   Environment: GRID_REPS (1), TOP_K (3), PGO_K (3), MAX_SWEEPS (4), MAX_TIME (none),
#   TMPDIR (builds go to $TMPDIR/tinyserve-exhaustive).
# Prints progress on stderr and the optimum on stdout; writes $ROOT/optimum.env (arbor-best.env's
# format: `export VAR='value'` lines, plus comment lines: the actions, and `# pgo: yes` when the
# configuration includes compiler.pgo, which compare.sh honours) and $ROOT/log.tsv (every point).
set -euo pipefail
cd "$(dirname "$0")"
REPS=3 MIN_GAIN=0.02 numbers=0 seeds=()
for a in "$@"; do
  if [ -e "$a" ]; then seeds+=("$(realpath "$a")")
  elif [ $numbers = 0 ]; then REPS=$a numbers=1
  else MIN_GAIN=$a; fi
done
export REPS MIN_GAIN
export ROOT=${TMPDIR:-/tmp}/tinyserve-exhaustive
mkdir -p "$ROOT"
exec python3 - "$PWD" "${seeds[@]}" <<'PYEOF'
import itertools, json, os, re, shlex, shutil, statistics, subprocess, sys, time, tomllib, hashlib

SRC = sys.argv[1]
SEEDS = sys.argv[2:]
ROOT = os.environ["ROOT"]
REPS = int(os.environ["REPS"])
MIN_GAIN = float(os.environ["MIN_GAIN"])
GRID_REPS = int(os.environ.get("GRID_REPS", "1"))
TOP_K = int(os.environ.get("TOP_K", "3"))
PGO_K = int(os.environ.get("PGO_K", "3"))
MAX_SWEEPS = int(os.environ.get("MAX_SWEEPS", "4"))
MAX_TIME = float(os.environ.get("MAX_TIME", "inf"))
START = time.time()
STOPPED = []  # the stages MAX_TIME cut short

with open(os.path.join(SRC, "arbor.toml"), "rb") as f:
    C = tomllib.load(f)
ACTIONS = C["action"]
BY_ID = {a["id"]: a for a in ACTIONS}
ORDER = {a["id"]: i for i, a in enumerate(ACTIONS)}
BASE_ENV = dict(C["target"].get("env", {}))
GUARDS = C["metric"].get("guard", [])
ACC = C.get("accuracy")

def src_path(source):  # "json:a.b" -> ["a", "b"]
    kind, _, path = source.partition(":")
    assert kind == "json", source
    return path.split(".")

def get(doc, source):
    for k in src_path(source):
        doc = doc[k]
    return float(doc)

def values(a):  # the settings of an action when present: its values, or "" for a plain one
    return [str(v) if not isinstance(v, float) else f"{v:g}" for v in a.get("values", [])] or [""]

def kind(a):
    (k,) = a["apply"].keys() - {"goal"}
    return k

def env_vars(a):
    return set(a["apply"]["env"]) if kind(a) == "env" else set()

RUN_IDS = [a["id"] for a in ACTIONS if kind(a) == "run"]
ALT = {a["id"]: set() for a in ACTIONS}  # alternatives: declared conflicts, or a shared variable
for a, b in itertools.combinations(ACTIONS, 2):
    if (env_vars(a) & env_vars(b) or b["id"] in a.get("conflicts", [])
            or a["id"] in b.get("conflicts", [])):
        ALT[a["id"]].add(b["id"]); ALT[b["id"]].add(a["id"])
REQ = {a["id"]: set(a.get("requires", [])) for a in ACTIONS}

def valid(cfg):
    return all(REQ[a] <= cfg.keys() and not (ALT[a] & cfg.keys()) for a in cfg)

def drop(cfg, ids):  # without ids and everything that (transitively) requires them
    out = {k: v for k, v in cfg.items() if k not in ids}
    while True:
        bad = [k for k in out if not REQ[k] <= out.keys()]
        if not bad: return out
        for k in bad: del out[k]

def compose(cfg):
    env = dict(BASE_ENV)
    for aid in sorted(cfg, key=ORDER.get):
        a, v = BY_ID[aid], cfg[aid]
        if kind(a) == "env":
            for k, x in a["apply"]["env"].items(): env[k] = x.replace("{value}", v)
        elif kind(a) == "append":
            for k, x in a["apply"]["append"].items(): env[k] = env.get(k, "") + x.replace("{value}", v)
    return env

def label(cfg):
    return " ".join(k + (f"={v}" if v else "") for k, v in sorted(cfg.items(), key=lambda kv: ORDER[kv[0]])) or "(baseline)"

def key(cfg):
    env = compose(cfg)
    return json.dumps([sorted(env.items()), sorted(r for r in RUN_IDS if r in cfg)])

def log(*a):
    print(f"[{(time.time() - START) / 60:5.1f}m]", *a, file=sys.stderr, flush=True)

# ---- building and measuring ----------------------------------------------------------------
CLEAN = {k: v for k, v in os.environ.items()
         if not k.startswith("TS_") and k not in ("LD_PRELOAD", "CXXFLAGS")}
def h(s): return hashlib.md5(s.encode()).hexdigest()[:10]

BUILDS = {}
def binary(cfg):
    """Builds the configuration's binary (flags, and PGO trained on its knobs) -> path."""
    env = compose(cfg)
    flags = env.get("CXXFLAGS", "")
    runs = [r for r in RUN_IDS if r in cfg]
    bkey = key(cfg) if runs else flags
    if bkey in BUILDS: return BUILDS[bkey]
    if runs:  # a copy of the example where the run actions execute, then the ordinary build
        tree = os.path.join(ROOT, "p-" + h(bkey))
        if not os.path.exists(os.path.join(tree, "build", "tinyserve")):
            shutil.rmtree(tree, ignore_errors=True)
            shutil.copytree(SRC, tree, ignore=shutil.ignore_patterns("build*", "pgo", ".git"))
            for r in runs:
                log("  run", BY_ID[r]["apply"]["run"], "for", label(cfg))
                subprocess.run(BY_ID[r]["apply"]["run"], shell=True, cwd=tree, check=True,
                               env={**CLEAN, **env}, stdout=subprocess.DEVNULL)
        src, out = tree, os.path.join(tree, "build")
    else:
        src, out = SRC, os.path.join(ROOT, "b-" + h(flags))
    if not os.path.exists(os.path.join(out, "tinyserve")):
        t = time.time()
        subprocess.run(["cmake", "-S", src, "-B", out, "-DCMAKE_CXX_FLAGS=" + flags,
                        "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"], check=True,
                       stdout=subprocess.DEVNULL, env={**CLEAN, "CCACHE_BASEDIR": src})
        subprocess.run(["cmake", "--build", out, "-j2", "--target", "tinyserve"], check=True,
                       stdout=subprocess.DEVNULL, env={**CLEAN, "CCACHE_BASEDIR": src})
        log(f"  built '{flags}'{' + ' + ','.join(runs) if runs else ''} in {time.time() - t:.0f}s")
    BUILDS[bkey] = os.path.join(out, "tinyserve")
    return BUILDS[bkey]

def command(which, exe):  # the campaign's check/bench command with the build's binary
    return [exe if w == "./build/tinyserve" else w for w in shlex.split(C["target"][which])]

def check(cfg, exe):
    env = {**CLEAN, **compose(cfg)}
    p = subprocess.run(command("check", exe), env=env, capture_output=True, text=True, timeout=120)
    if p.returncode != 0: return None
    if not ACC or "source" not in ACC: return 1.0
    try: return get(json.loads(p.stdout.strip().splitlines()[-1]), ACC["source"])
    except Exception: return None

def bench_once(cfg, exe):
    env = {**CLEAN, **compose(cfg)}
    p = subprocess.run(command("bench", exe), env=env, capture_output=True, text=True, timeout=120)
    if p.returncode != 0: return None
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            return get(d, C["metric"]["source"]), {g["name"]: get(d, g["source"]) for g in GUARDS}
    return None

BASE_ACC = None
MEMO = {}  # key -> {"cfg", "runs": [(metric, guards)], "fail": reason}
LOG = open(os.path.join(ROOT, "log.tsv"), "a")

def measure(cfg, reps, need_check=True):
    """Median metric of at least `reps` runs, or None when the point fails (check, guard, crash).
    The grid defers the check (need_check=False) to the points it hands on: they are checked
    before anything else uses them."""
    k = key(cfg)
    m = MEMO.setdefault(k, {"cfg": cfg, "runs": [], "fail": None, "checked": False})
    if m["fail"]: return None
    try: exe = binary(cfg)
    except subprocess.CalledProcessError: m["fail"] = "build"; return None
    if need_check and not m["checked"]:
        acc = check(cfg, exe)
        m["checked"] = True
        if acc is None or (BASE_ACC is not None and acc < BASE_ACC - ACC.get("max_drop", 0.01)):
            m["fail"] = "check"; LOG.write(f"fail\tcheck\t{label(cfg)}\n"); LOG.flush(); return None
    while len(m["runs"]) < reps:
        r = bench_once(cfg, exe)
        if r is None: m["fail"] = "crash"; return None
        m["runs"].append(r)
    med = statistics.median(r[0] for r in m["runs"])
    for g in GUARDS:
        gv = statistics.median(r[1][g["name"]] for r in m["runs"])
        if ("max" in g and gv > g["max"]) or ("min" in g and gv < g["min"]):
            LOG.write(f"fail\tguard {g['name']}={gv:.1f}\t{label(cfg)}\n"); LOG.flush()
            return None
    LOG.write(f"{med:.1f}\tn={len(m['runs'])}\t{label(cfg)}\n"); LOG.flush()
    return med

def out_of_time(stage):
    if time.time() - START > MAX_TIME:
        if stage not in STOPPED: STOPPED.append(stage); log(f"MAX_TIME reached in {stage}")
        return True
    return False

# ---- seeds: configuration files mapped back onto the campaign's actions --------------------
def parse_env_file(path):
    env, pgo = {}, False
    for line in open(path):
        if re.match(r"#\s*pgo:\s*yes", line): pgo = True
        m = re.match(r"export (\w+)=(.*)$", line.strip())
        if m: env[m.group(1)] = shlex.split(m.group(2))[0] if m.group(2) else ""
    return env, pgo

def seed_config(path):
    if os.path.isdir(path):
        f = next((os.path.join(path, n) for n in ("arbor-best.env", "optimum.env")
                  if os.path.exists(os.path.join(path, n))), None)
        if f is None: sys.exit(f"exhaustive: {path} holds no arbor-best.env or optimum.env")
        env, pgo = parse_env_file(f)
        pgo = pgo or any(n.endswith(".gcda") for n in os.listdir(os.path.join(path, "pgo"))
                         ) if os.path.isdir(os.path.join(path, "pgo")) else pgo
    else:
        env, pgo = parse_env_file(path)
    flags = env.get("CXXFLAGS", "").split()
    cfg, claimed = {}, {}
    # Actions setting more variables first (kernel.tile before kernel.matmul-blocked, the int8
    # fix before plain int8), each taken when all its assignments hold and none is claimed.
    for a in sorted(ACTIONS, key=lambda a: (-len(env_vars(a)), ORDER[a["id"]])):
        for v in values(a):
            if kind(a) == "env":
                want = {k: x.replace("{value}", v) for k, x in a["apply"]["env"].items()}
                if all(env.get(k) == x and claimed.get(k, x) == x for k, x in want.items()) \
                        and not any(k in claimed for k in want):
                    cfg[a["id"]] = v; claimed.update(want); break
            elif kind(a) == "append":
                toks = [x.replace("{value}", v).split() for x in a["apply"]["append"].values()]
                if all(t and all(w in flags for w in t) for t in toks):
                    cfg[a["id"]] = v; break
            elif kind(a) == "run" and pgo:
                cfg[a["id"]] = v; break
    got = compose(cfg)
    if sorted(got.get("CXXFLAGS", "").split()) != sorted(flags) or \
            {k: v for k, v in got.items() if k != "CXXFLAGS"} != \
            {k: v for k, v in env.items() if k != "CXXFLAGS"}:
        log(f"seed {path}: maps onto {label(cfg)}, whose environment differs from the file's: {got}")
    if not valid(cfg): sys.exit(f"exhaustive: seed {path} ({label(cfg)}) breaks requires/conflicts")
    return cfg

# ---- the search ----------------------------------------------------------------------------
def neighbours(cfg, aid):
    a = BY_ID[aid]
    out = []
    if aid in cfg: out.append(drop(cfg, {aid}))
    for v in values(a):
        if cfg.get(aid) == v: continue
        n = drop(cfg, ALT[aid] | ({aid} if aid in cfg else set()))
        n[aid] = v
        if aid in cfg:  # keep what required the old value's action
            n.update({k: x for k, x in cfg.items() if k not in ALT[aid] and k not in n})
        if valid(n): out.append(n)
    return out

def ascent(cfg, best):
    """First-improvement coordinate ascent over every non-run action; returns (cfg, median)."""
    for sweep in range(MAX_SWEEPS):
        kept = False
        for a in ACTIONS:
            if a["id"] in RUN_IDS: continue
            for n in neighbours(cfg, a["id"]):
                if out_of_time("ascent"): return cfg, best
                r = measure(n, REPS)
                if r is not None and r > best * (1 + MIN_GAIN):
                    log(f"  {r:8.0f} (+{(r / best - 1) * 100:.1f}%) {label(n)}")
                    cfg, best, kept = n, r, True
                    break
        if not kept: break
    return cfg, best

def grid():
    A = lambda aid, v="": {aid: v}
    opt = [{}] + [A("compiler.opt", v) for v in values(BY_ID["compiler.opt"])]
    flags = [{**o, **n, **f} for o in opt for n in ({}, A("compiler.native"))
             for f in ({}, A("compiler.fast-math"))]
    plain = [{}, A("kernel.matmul-blocked"), A("kernel.matmul-simd")] + \
            [A("kernel.tile", v) for v in values(BY_ID["kernel.tile"])]
    int8s = [A("kernel.int8"), A("kernel.int8-calibrated")]
    kernels = [(k, None) for k in plain + int8s]
    batches = [A("app.batch", v) for v in values(BY_ID["app.batch"])]
    kernels += [({**k, "kernel.matmul-simd": ""}, b) for k in [{}] + int8s for b in batches]
    threads = [{}] + [A("fw.threads", v) for v in values(BY_ID["fw.threads"])]
    base = {"app.sampler-partial": "", "app.prefix-cache": "", "fw.last-logits": ""}
    pts = [{**base, **f, **k, **(b or {}), **t} for f in flags for k, b in kernels for t in threads]
    assert all(valid(p) for p in pts)
    return pts

def main():
    global BASE_ACC
    base = {}
    exe = binary(base)
    BASE_ACC = check(base, exe)
    if BASE_ACC is None: sys.exit("exhaustive: the baseline fails its check")
    seeds = [seed_config(p) for p in SEEDS]
    for p, s in zip(SEEDS, seeds): log(f"seed {p}: {label(s)}")

    pts = grid()
    log(f"stage 1: grid of {len(pts)} points, {GRID_REPS} run(s) each")
    res = []
    for i, p in enumerate(pts):
        if out_of_time("grid"): break
        r = measure(p, GRID_REPS, need_check=False)
        if r is not None: res.append((r, p))
        if i % 50 == 49: log(f"  {i + 1}/{len(pts)}; best {max(res, key=lambda x: x[0])[0]:.0f}" if res else "")
    res.sort(key=lambda x: -x[0])
    top = []  # the TOP_K best grid points that pass the check
    for r, p in res:
        if len(top) == TOP_K: break
        if measure(p, GRID_REPS) is not None: top.append(p)
        log(f"  grid {r:8.0f} {label(p)}{'' if top and top[-1] is p else '  (fails the check)'}")

    starts = top[:1] + seeds + top[1:]
    best_cfg, best = {}, 0.0
    tops = []
    for s in starts:
        run_part = {k: v for k, v in s.items() if k in RUN_IDS}
        s = {k: v for k, v in s.items() if k not in RUN_IDS}
        r = measure(s, REPS)
        log(f"stage 2: ascent from {r if r is None else round(r)} {label(s)}")
        if r is None: continue
        c, m = ascent(s, r)
        tops.append((m, c))
        log(f"  ascent ends at {m:.0f}: {label(c)}")
        if m > best: best_cfg, best = c, m

    log(f"stage 3: removals and pair swaps of {best:.0f} {label(best_cfg)}")
    improved = True
    while improved and not out_of_time("final pass"):
        improved = False
        cands = [drop(best_cfg, {a}) for a in best_cfg]
        for out_id in list(best_cfg):
            for a in ACTIONS:
                if a["id"] in best_cfg or a["id"] in RUN_IDS: continue
                for n in neighbours(drop(best_cfg, {out_id}), a["id"]):
                    if a["id"] in n: cands.append(n)
        seen = set()
        for n in cands:
            k = key(n)
            if k in seen: continue
            seen.add(k)
            if out_of_time("final pass"): break
            r = measure(n, GRID_REPS)
            if r is not None and r > best:
                r = measure(n, REPS)
                if r is not None and r > best * (1 + MIN_GAIN):
                    log(f"  {r:8.0f} (+{(r / best - 1) * 100:.1f}%) {label(n)}")
                    best_cfg, best = ascent(n, r)
                    tops.append((best, best_cfg))
                    improved = True
                    break

    # Step 4: the run actions, on the best distinct configurations measured with REPS runs.
    full = sorted(((statistics.median(x[0] for x in m["runs"]), m["cfg"]) for m in MEMO.values()
                   if len(m["runs"]) >= REPS and not m["fail"]
                   and measure(m["cfg"], REPS) is not None), key=lambda x: -x[0])
    # The run actions change the build, and a profile's gain (~10%) is the size of the drift
    # between measurements minutes apart: each is judged by an A/B interleaved with the same
    # configuration without it (2 x REPS runs each), its ratio applied to that one's median.
    log(f"stage 4: {', '.join(RUN_IDS)} on the {PGO_K} best, A/B interleaved")
    for r, c in full[:PGO_K]:
        n = {**c, **{rid: "" for rid in RUN_IDS}}
        if not valid(n) or measure(n, 1) is None: continue
        ea, eb, ra, rb = binary(c), binary(n), [], []
        for _ in range(2 * REPS):
            x, y = bench_once(c, ea), bench_once(n, eb)
            if x is None or y is None: break
            ra.append(x[0]); rb.append(y[0])
        if len(rb) < 2 * REPS: continue
        ratio = statistics.median(rb) / statistics.median(ra)
        log(f"  x{ratio:.3f} with it ({statistics.median(rb):.0f} vs {statistics.median(ra):.0f}) {label(n)}")
        if ratio > 1 + MIN_GAIN and r * ratio > best: best_cfg, best = n, r * ratio

    # Step 5: the best against the baseline, interleaved, 5 runs each.
    exe_b, exe_o = binary({}), binary(best_cfg)
    rb, ro = [], []
    for _ in range(5):
        b, o = bench_once({}, exe_b), bench_once(best_cfg, exe_o)
        if b is None or o is None: sys.exit("exhaustive: the final measurement crashed")
        rb.append(b[0]); ro.append(o[0])
    mb, mo = statistics.median(rb), statistics.median(ro)
    env = compose(best_cfg)
    minutes = (time.time() - START) / 60
    with open(os.path.join(ROOT, "optimum.env"), "w") as f:
        f.write(f"# The optimum found by exhaustive.sh (REPS={REPS}, MIN_GAIN={MIN_GAIN}, GRID_REPS={GRID_REPS}, "
                f"TOP_K={TOP_K}, PGO_K={PGO_K}; {len(MEMO)} configurations in {minutes:.0f} min"
                f"{'; MAX_TIME cut short: ' + ', '.join(STOPPED) if STOPPED else ''}), in arbor-best.env's format.\n")
        f.write(f"# actions: {label(best_cfg)}\n")
        f.write(f"# measured: {mo:.0f} tok/s against the baseline's {mb:.0f} (medians of 5 interleaved runs): x{mo / mb:.2f}\n")
        if any(r in best_cfg for r in RUN_IDS):
            f.write("# pgo: yes (compiler.pgo: run ./pgo.sh with these variables, then build; compare.sh does)\n")
        for k in sorted(env): f.write(f"export {k}='{env[k]}'\n")
    print(f"optimum: {label(best_cfg)}  (in {ROOT}/optimum.env)")
    print(f"optimum tok_per_s (median of 5): {mo:.0f}  baseline: {mb:.0f}  speedup: x{mo / mb:.2f}")
    print(f"{len(MEMO)} configurations, {minutes:.0f} min" + (f"; MAX_TIME cut short: {', '.join(STOPPED)}" if STOPPED else ""))

main()
PYEOF
