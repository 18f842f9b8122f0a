#!/usr/bin/python3
"""Ask/tell bridge between the search benchmark (bench/search/optuna_policy.cc) and Optuna's TPE.

Protocol, one JSON object per line:
  in   {"seed": S, "trials": N, "space": [{"id": "kernel.tile", "choices": ["off", "8", "16"]}]}
  out  {"config": {"kernel.tile": "16"}}          (the actions not "off"), then for each trial
  in   {"value": V}  or  {"value": null, "failed": "crash" | "accuracy"}
The bridge stops after N trials or at end of input and exits 0. A malformed line is reported on
stderr with exit status 2. Given the seed and the answers, the configurations are deterministic.

A failed evaluation is told as 0.0, not as TrialState.FAIL: a crashed or inaccurate configuration
delivers no throughput, and TPE ignores FAIL trials, so it would keep sampling the crash region.

Run it with the Debian interpreter (/usr/bin/python3), which has python3-optuna.
"""

import json
import sys

import optuna


class ProtocolError(Exception):
    pass


def read_object(keys):
    """The next line of stdin as a JSON object with exactly `keys` allowed; None at EOF."""
    line = sys.stdin.readline()
    if not line:
        return None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise ProtocolError(f"malformed JSON line ({e}): {line.strip()[:200]}")
    if not isinstance(obj, dict):
        raise ProtocolError(f"expected a JSON object: {line.strip()[:200]}")
    unknown = sorted(set(obj) - set(keys))
    if unknown:
        raise ProtocolError(f"unknown key {unknown[0]!r} in: {line.strip()[:200]}")
    return obj


def parse_header(header):
    seed, trials, space = header.get("seed"), header.get("trials"), header.get("space")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**32:
        raise ProtocolError("header: 'seed' must be an integer in [0, 2^32) (numpy's limit)")
    if not isinstance(trials, int) or isinstance(trials, bool) or trials < 0:
        raise ProtocolError("header: 'trials' must be a non-negative integer")
    if not isinstance(space, list):
        raise ProtocolError("header: 'space' must be a list")
    params = []
    for i, p in enumerate(space):
        if not isinstance(p, dict) or set(p) != {"id", "choices"}:
            raise ProtocolError(f"header: space[{i}] must have exactly 'id' and 'choices'")
        choices = p["choices"]
        if (not isinstance(p["id"], str) or not isinstance(choices, list) or not choices
                or not all(isinstance(c, str) for c in choices)):
            raise ProtocolError(f"header: space[{i}] needs a string id and string choices")
        params.append((p["id"], choices))
    return seed, trials, params


def parse_value(answer):
    value, failed = answer.get("value"), answer.get("failed")
    if failed is not None:
        if failed not in ("crash", "accuracy") or value is not None:
            raise ProtocolError(f"answer: bad failure {answer}")
        return 0.0
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ProtocolError(f"answer: 'value' must be a number: {answer}")
    return float(value)


def main():
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    header = read_object(("seed", "trials", "space"))
    if header is None:
        return 0
    seed, trials, params = parse_header(header)
    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.TPESampler(seed=seed))
    for _ in range(trials):
        trial = study.ask()
        config = {}
        for pid, choices in params:
            choice = trial.suggest_categorical(pid, choices)
            if choice != "off":
                config[pid] = choice
        sys.stdout.write(json.dumps({"config": config}) + "\n")
        sys.stdout.flush()
        answer = read_object(("value", "failed"))
        if answer is None:
            break
        study.tell(trial, parse_value(answer))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ProtocolError as e:
        print(f"optuna_bridge: {e}", file=sys.stderr)
        sys.exit(2)
