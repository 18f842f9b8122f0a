#!/usr/bin/env python3
"""The end of scripts/demo: what a campaign found, from Arbor's JSON output only.

Usage: demo_summary.py ARBOR CAMPAIGN_FILE

Reads `arbor status --json`, `arbor tree --format json` and `arbor show BEST --json` (the
final confirmation's interleaved arms `final-base` / `final-cand`), and prints the counts, the
kept path with each step's gain, the nodes that crashed with their root cause, and the
baseline and best medians with 95% intervals next to the confirmed speedup.
"""
import json
import random
import statistics
import subprocess
import sys


def arbor(binary, *args):
    out = subprocess.run([binary, *args], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def median_ci(values, resamples=2000, seed=1):
    """Median and its 95% percentile-bootstrap interval."""
    rng = random.Random(seed)
    meds = sorted(statistics.median(rng.choices(values, k=len(values)))
                  for _ in range(resamples))
    return statistics.median(values), meds[int(0.025 * resamples)], meds[int(0.975 * resamples) - 1]


def fmt(x):
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def label(n):
    """The change a node made: a pair's, a stack's or a swap's companions first, then its own
    (taken out, "-", for a drop or a swap); a refresh (the command run again) says so."""
    flags = (n.get("critic") or {}).get("flags", [])
    own = n["action"] + (f"[{n['values']}]" if n.get("values") is not None else "")
    if any(f.startswith("without:") for f in flags):
        own = "-" + own
    text = " + ".join([f[len("with:"):] for f in flags if f.startswith("with:")] + [own])
    return text + (" (refresh)" if "move:refresh" in flags else "")


def main():
    binary, campaign = sys.argv[1], sys.argv[2]
    status = arbor(binary, "status", "--json", campaign)
    nodes = {n["id"]: n for n in arbor(binary, "tree", "--format", "json", campaign)["nodes"]}
    counts, best = status["nodes"], status["best"]
    metric = status["baseline"]["metric"]
    evaluated = counts["kept"] + counts["reverted"] + counts["crashed"]
    elapsed = status.get("elapsed_s") or 0
    print(f"== result ({status['campaign']}: {status['state']}, stop reason "
          f"{status['stop_reason']}, {elapsed / 60:.1f} min)")
    print(f"nodes: {counts['total']} in the tree, {evaluated} evaluated: {counts['kept']} kept, "
          f"{counts['reverted']} reverted, {counts['crashed']} crashed, "
          f"{counts['pruned']} pruned by constraints")

    path = []
    node_id = best["node"]
    while node_id is not None:
        path.append(nodes[node_id])
        node_id = nodes[node_id]["parent"]
    path.reverse()
    print("kept path (gain over the incumbent it was gated against):")
    if len(path) <= 1:
        print("  (nothing kept)")
    for n in path[1:]:
        print(f"  #{n['id']:<3} {label(n):<28} {n['layer']:<12} {n['gain'] * 100:+7.1f}%  "
              f"{metric} {fmt(n['metric'])}")

    crashed = [n for n in nodes.values() if n["outcome"] == "crashed"]
    if crashed:
        print("crashed (root cause from the Critic):")
        for n in crashed:
            print(f"  #{n['id']:<3} {label(n):<28} {n['diagnosis'][:110]}")

    base = status["baseline"]["value"]
    if best["node"] is None or best["node"] == 1:
        print(f"baseline {metric} {fmt(base)}; no change was kept")
        return
    show = arbor(binary, "show", str(best["node"]), "--json", campaign)
    arms = {"final-base": [], "final-cand": []}
    for s in show["samples"]:
        if s["arm"] in arms:
            arms[s["arm"]].append(s["value"])
    if arms["final-base"] and arms["final-cand"] and best.get("ci_low") is not None:
        b = median_ci(arms["final-base"])
        c = median_ci(arms["final-cand"])
        print(f"final confirmation, baseline and best (#{best['node']}) measured interleaved, "
              f"{len(arms['final-base'])}+{len(arms['final-cand'])} runs:")
        print(f"  baseline  {metric} median {fmt(b[0])}  (95% CI {fmt(b[1])} – {fmt(b[2])})")
        print(f"  best      {metric} median {fmt(c[0])}  (95% CI {fmt(c[1])} – {fmt(c[2])})")
        print(f"confirmed speedup ×{best['confirmed_speedup']:.2f} "
              f"(95% CI ×{best['ci_low']:.2f} – ×{best['ci_high']:.2f})")
    else:
        print(f"baseline {fmt(base)} → best {fmt(best['value'])} at #{best['node']} "
              f"(×{best['speedup']:.2f}); no final confirmation (the campaign did not finish)")


if __name__ == "__main__":
    main()
