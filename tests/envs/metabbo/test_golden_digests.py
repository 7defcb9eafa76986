"""Golden records of MetaBBO: evaluation and trajectories, compared on every host.

Recomputes (1) ``bbob.evaluate`` on every function, alone and in mixed batches, at several
dimensions, with points inside and outside the box and non-finite rows, and (2) ``MetaBBO-v0``
vector-env trajectories (observations, rewards, terminations, truncations and the best errors)
over several seeds, presets and splits, with batches that mix many functions and episodes short
enough to auto-reset. Each is recorded as :func:`gymforge.checks.golden.split` does: an exact
digest of the integer and boolean parts (flags, function and instance ids, shapes, which values
are non-finite), compared bit for bit, and float values (whole, or four statistics per row of a
wide batch), compared with a tolerance. They are compared with ``golden_digests.json`` beside
this file; a mismatch names the first differing case, step and part.

Tolerances: ``evaluate`` rtol 1e-9, atol 1e-9 (float64 values of the rotated functions differ by
up to 2e-13 relative between MKL's AVX-512, AVX2 and SSE4.2 kernels); trajectories: the MetaBBO
tolerance of :mod:`gymforge.checks.golden` (rtol 1e-3, atol 1e-4). No host is skipped and no
per-host variant is kept: these cases showed no near-tie flip on any of the three kernel sets.
After an *intended* change of the numerics (a new env version), regenerate the file with::

    python tests/envs/metabbo/test_golden_digests.py --update

and commit it with the change. Without ``--update`` the script compares and prints the result.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from gymforge.checks import golden

GOLDEN_FILE = Path(__file__).with_name("golden_digests.json")
SCHEMA = "gymforge.metabbo-golden/2"
EVALUATE_TOLERANCE = golden.Tolerance(rtol=1e-9, atol=1e-9)
ENV_TOLERANCE = golden.TOLERANCES["MetaBBO"]
#: significant digits stored: enough for rtol 1e-9 (evaluations) and rtol 1e-3 (trajectories)
EVALUATE_DIGITS = 15
ENV_DIGITS = 7

#: (case name, vector-env keyword arguments, number of instances, steps)
ENV_CASES: tuple[tuple[str, dict[str, Any], int, int], ...] = (
    ("alg0-easy-train", {}, 32, 40),
    ("alg0-easy-test", {"subset": "test"}, 24, 40),
    ("alg0-all-short", {"split": "all", "max_generations": 9}, 40, 30),
    ("alg0-mix-d5", {"split": [1, 2, 10, 11], "dimension": 5}, 8, 30),
    ("alg0-coco", {"instance_mode": "coco", "split": "all", "dimension": 3}, 24, 20),
    ("alg1-difficult", {"preset": "alg1", "split": "difficult"}, 16, 25),
    ("alg2-easy", {"preset": "alg2", "max_generations": 12}, 16, 25),
    ("pso-all", {"preset": "pso", "split": "all", "population_size": 30}, 24, 25),
)
ENV_SEEDS = (0, 7)
EVAL_DIMENSIONS = (2, 3, 10, 20)


def _record(value: Any, digits: int = ENV_DIGITS) -> list[str]:
    """``[exact digest, values]`` of ``value`` (see :func:`gymforge.checks.golden.split`)."""
    exact, values, _ = golden.split(value)
    return [exact, golden.format_values(values, digits)]


def _points(d: int, n: int, p: int, seed: int) -> torch.Tensor:
    """``[n, p, d]`` float64 points: mostly in the box, some outside, a few special values."""
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(n, p, d, dtype=torch.float64, generator=g) * 10.0 - 5.0
    x[:, : p // 4] *= 1.6  # outside the box too (penalties)
    x[:, p // 4 : p // 4 + 2] = 0.0  # T_osz(0), sign(0)
    x[:, -1] = x[:, -2].round()  # integers: rounding ties in f7 and f23
    return x


def _evaluation(values: torch.Tensor) -> list[str]:
    """The record of evaluated values (float64: more digits, for their tighter tolerance)."""
    return _record(values, EVALUATE_DIGITS)


def evaluation_records() -> dict[str, list[str]]:
    """``[exact digest, values]`` of ``evaluate`` per dimension: each function alone, all 24
    mixed, the easy train split mixed, and a batch with non-finite rows."""
    from gymforge.envs.metabbo.bbob import FUNCTION_IDS, evaluate, random_instances

    out: dict[str, list[str]] = {}
    for d in EVAL_DIMENSIONS:
        fids = [f for f in FUNCTION_IDS for _ in range(2)]
        seeds = [1000 * d + i for i in range(len(fids))]
        x = _points(d, len(fids), 33, seed=d)
        for fid in FUNCTION_IDS:
            rows = [i for i, f in enumerate(fids) if f == fid]
            inst = random_instances([fids[i] for i in rows], d, [seeds[i] for i in rows])
            out[f"d{d}/f{fid}"] = _evaluation(evaluate(inst, x[rows]))
        perm = torch.randperm(len(fids), generator=torch.Generator().manual_seed(d))
        mixed = random_instances([fids[i] for i in perm], d, [seeds[i] for i in perm])
        out[f"d{d}/mixed"] = _evaluation(evaluate(mixed, x[perm]))
        train = [f for f in fids if f not in (1, 2, 3, 5, 15, 16, 17, 21)]
        inst = random_instances(train, d, list(range(len(train))))
        out[f"d{d}/easy-train"] = _evaluation(evaluate(inst, x[: len(train)].flip(0)))
        bad = x.clone()
        bad[::3, 0, 0], bad[1::3, 1, -1], bad[2::3, 2, 0] = math.nan, math.inf, -math.inf
        bad[::5, 3] = 1e200  # overflows
        out[f"d{d}/non-finite"] = _evaluation(evaluate(random_instances(fids, d, seeds), bad))
    return out


def trajectory_records(
    kwargs: dict[str, Any], num_envs: int, steps: int, seed: int
) -> list[list[str]]:
    """``[exact digest, values]`` per reset/step of a vector env: observation, reward, flags and
    best errors (and the function and instance ids at the reset)."""
    from gymforge.envs.metabbo import dynamics
    from gymforge.envs.metabbo.gym_env import MetaBBOVecEnv

    env = MetaBBOVecEnv(num_envs=num_envs, **kwargs)
    rng = np.random.default_rng(seed)
    k = int(env.single_action_space.shape[0])
    obs, _ = env.reset(seed=seed)
    info = dynamics.info(env.state)
    out = [_record((obs, info["best_error"], info["function_id"], info["instance_id"]))]
    for _ in range(steps):
        action = torch.as_tensor(rng.integers(0, 16, size=(num_envs, k)))
        obs, reward, terminated, truncated, info = env.step(action)
        out.append(_record((obs, reward, terminated, truncated, info["best_error"])))
    env.close()
    return out


def compute(guards: bool = True) -> dict[str, Any]:
    """The golden document of this checkout (one torch thread); ``guards=False`` computes it
    without the host reads that pick cheaper paths (the GPU setting), which must not change it."""
    from gymforge.core.host_guards import host_guards

    torch.set_num_threads(1)
    envs = {
        f"{name}/seed{seed}": trajectory_records({**kwargs, "guards": guards}, n, steps, seed)
        for name, kwargs, n, steps in ENV_CASES
        for seed in ENV_SEEDS
    }
    with host_guards(guards):
        evaluations = evaluation_records()
    return {
        "schema": SCHEMA,
        "machine": golden.machine(),
        "kernels": golden.kernel_fingerprint(),
        "evaluate": evaluations,
        "envs": envs,
    }


def first_difference(expected: dict[str, Any], actual: dict[str, Any]) -> str | None:
    """``None`` when every record agrees (exact parts equal, values within tolerance), else the
    first differing case (and step), in words."""
    for key, want in expected["evaluate"].items():
        got = actual["evaluate"].get(key)
        if got is None:
            return f"evaluate {key} not computed"
        problem = golden.compare_record(tuple(want), tuple(got), EVALUATE_TOLERANCE)
        if problem:
            return f"evaluate {key} differs: {problem}"
    for case, want in expected["envs"].items():
        got = actual["envs"].get(case)
        if got is None:
            return f"env case {case} not computed"
        for step, (a, b) in enumerate(zip(want, got, strict=True)):
            problem = golden.compare_record(tuple(a), tuple(b), ENV_TOLERANCE)
            if problem:
                kind = "reset" if not step else "step"
                return f"env case {case}: step {step} differs first ({kind}): {problem}"
    extra = sorted(set(actual["envs"]) - set(expected["envs"]))
    return f"not in the golden file: {extra}" if extra else None


def _load() -> dict[str, Any]:
    return json.loads(GOLDEN_FILE.read_text())


def test_golden_file_covers_the_cases() -> None:
    document = _load()
    assert document["schema"] == SCHEMA
    assert set(document["envs"]) == {f"{c[0]}/seed{s}" for c in ENV_CASES for s in ENV_SEEDS}


@pytest.mark.guard
@pytest.mark.parametrize("guards", [True, False], ids=["guards", "no-guards"])
def test_metabbo_records_are_unchanged(guards: bool) -> None:
    """Also with the guards off (the GPU setting: no host reads to pick paths): same records."""
    problem = first_difference(_load(), compute(guards=guards))
    assert problem is None, problem


def test_a_changed_value_is_detected() -> None:
    """The comparison is not vacuous: a value moved beyond tolerance, or a changed flag, is
    reported with its step."""
    x = torch.linspace(-5, 5, 11, dtype=torch.float64)
    y = x.clone()
    y[3] *= 1 + 1e-6
    assert first_difference(
        {"evaluate": {"a": _evaluation(x)}, "envs": {}},
        {"evaluate": {"a": _evaluation(y)}, "envs": {}},
    )
    flags = torch.tensor([True, False])
    steps = [_record((x, flags)), _record((x, flags))]
    flipped = [steps[0], _record((x, ~flags))]
    message = first_difference(
        {"evaluate": {}, "envs": {"c": steps}}, {"evaluate": {}, "envs": {"c": flipped}}
    )
    assert message is not None and "step 1" in message and "exact" in message


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="MetaBBO golden records: compare or update")
    parser.add_argument("--update", action="store_true", help="rewrite the golden file")
    args = parser.parse_args(argv)
    document = compute()
    if args.update:
        temporary = GOLDEN_FILE.with_suffix(".tmp")
        temporary.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
        os.replace(temporary, GOLDEN_FILE)
        print(f"wrote {GOLDEN_FILE}")
        return 0
    problem = first_difference(_load(), document)
    print(problem or "all MetaBBO records match")
    return 1 if problem else 0


if __name__ == "__main__":
    sys.exit(main())
