"""Golden digests of MetaBBO: evaluation and trajectories must keep their exact bits.

Recomputes blake2b digests of (1) ``bbob.evaluate`` on every function, alone and in mixed
batches, at several dimensions, with points inside and outside the box and non-finite rows, and
(2) ``MetaBBO-v0`` vector-env trajectories (observations, rewards, terminations, truncations and
the best errors) over several seeds, presets and splits, with batches that mix many functions
and episodes short enough to auto-reset. They are compared with ``golden_digests.json`` beside
this file; a mismatch names the first differing case, step and field.

The bits depend on the torch build and the CPU's vector instruction set, so the file records
both and the comparison is skipped (with the reason) on another machine. They also depend on the
BLAS kernels of the CPU generation (the rotations are matrix products): the file keeps, under
``variants``, the digests that differ on other kernel fingerprints
(:func:`gymforge.core.golden.kernel_fingerprint`), and a difference on a fingerprint it does not
know is a skip that names it (record it there with ``--update --variant``). After an *intended*
change of the numerics (a new env version), regenerate the file with::

    python tests/envs/metabbo/test_golden_digests.py --update

and commit it with the change (the variants are dropped: re-record them on those machines). Without ``--update`` the script compares and prints the result.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

GOLDEN_FILE = Path(__file__).with_name("golden_digests.json")
SCHEMA = "gymforge.metabbo-golden/1"

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


def machine() -> dict[str, str]:
    """What the exact bits depend on: the torch build and the CPU kernels' instruction set."""
    return {
        "torch": torch.__version__,
        "cpu_capability": str(torch.backends.cpu.get_cpu_capability()),
    }


def digest(*values: Any) -> str:
    """16 hex digits over the dtype, shape and bytes of each tensor or array."""
    h = hashlib.blake2b(digest_size=8)
    for value in values:
        array = np.ascontiguousarray(
            value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else value
        )
        h.update(f"{array.dtype.str}{array.shape}".encode())
        h.update(array.tobytes())
    return h.hexdigest()


def _points(d: int, n: int, p: int, seed: int) -> torch.Tensor:
    """``[n, p, d]`` float64 points: mostly in the box, some outside, a few special values."""
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(n, p, d, dtype=torch.float64, generator=g) * 10.0 - 5.0
    x[:, : p // 4] *= 1.6  # outside the box too (penalties)
    x[:, p // 4 : p // 4 + 2] = 0.0  # T_osz(0), sign(0)
    x[:, -1] = x[:, -2].round()  # integers: rounding ties in f7 and f23
    return x


def evaluation_digests() -> dict[str, str]:
    """Digests of ``evaluate`` per dimension: each function alone, all 24 mixed, the easy train
    split mixed, and a batch with non-finite rows."""
    from gymforge.envs.metabbo.bbob import FUNCTION_IDS, evaluate, random_instances

    out: dict[str, str] = {}
    for d in EVAL_DIMENSIONS:
        fids = [f for f in FUNCTION_IDS for _ in range(2)]
        seeds = [1000 * d + i for i in range(len(fids))]
        x = _points(d, len(fids), 33, seed=d)
        for fid in FUNCTION_IDS:
            rows = [i for i, f in enumerate(fids) if f == fid]
            inst = random_instances([fids[i] for i in rows], d, [seeds[i] for i in rows])
            out[f"d{d}/f{fid}"] = digest(evaluate(inst, x[rows]))
        perm = torch.randperm(len(fids), generator=torch.Generator().manual_seed(d))
        mixed = random_instances([fids[i] for i in perm], d, [seeds[i] for i in perm])
        out[f"d{d}/mixed"] = digest(evaluate(mixed, x[perm]))
        train = [f for f in fids if f not in (1, 2, 3, 5, 15, 16, 17, 21)]
        inst = random_instances(train, d, list(range(len(train))))
        out[f"d{d}/easy-train"] = digest(evaluate(inst, x[: len(train)].flip(0)))
        bad = x.clone()
        bad[::3, 0, 0], bad[1::3, 1, -1], bad[2::3, 2, 0] = math.nan, math.inf, -math.inf
        bad[::5, 3] = 1e200  # overflows
        out[f"d{d}/non-finite"] = digest(evaluate(random_instances(fids, d, seeds), bad))
    return out


def trajectory_digests(kwargs: dict[str, Any], num_envs: int, steps: int, seed: int) -> list[str]:
    """One digest per reset/step of a vector env: observation, reward, flags and best errors."""
    from gymforge.envs.metabbo import dynamics
    from gymforge.envs.metabbo.gym_env import MetaBBOVecEnv

    env = MetaBBOVecEnv(num_envs=num_envs, **kwargs)
    rng = np.random.default_rng(seed)
    k = int(env.single_action_space.shape[0])
    obs, _ = env.reset(seed=seed)
    info = dynamics.info(env.state)
    out = [digest(obs, info["best_error"], info["function_id"], info["instance_id"])]
    for _ in range(steps):
        action = torch.as_tensor(rng.integers(0, 16, size=(num_envs, k)))
        obs, reward, terminated, truncated, info = env.step(action)
        out.append(digest(obs, reward, terminated, truncated, info["best_error"]))
    env.close()
    return out


def compute(guards: bool = True) -> dict[str, Any]:
    """The golden document of this checkout (one torch thread); ``guards=False`` computes it
    without the host reads that pick cheaper paths (the GPU setting), which must not change it."""
    from gymforge.core.host_guards import host_guards

    torch.set_num_threads(1)
    envs = {
        f"{name}/seed{seed}": trajectory_digests({**kwargs, "guards": guards}, n, steps, seed)
        for name, kwargs, n, steps in ENV_CASES
        for seed in ENV_SEEDS
    }
    with host_guards(guards):
        evaluations = evaluation_digests()
    from gymforge.checks.golden import kernel_fingerprint

    return {
        "schema": SCHEMA,
        "machine": machine(),
        "kernels": kernel_fingerprint(),
        "evaluate": evaluations,
        "envs": envs,
    }


def first_difference(expected: dict[str, Any], actual: dict[str, Any]) -> str | None:
    """``None`` when the digests agree, else the first differing case (and step), in words."""
    for key, want in expected["evaluate"].items():
        if actual["evaluate"].get(key) != want:
            return f"evaluate {key} differs"
    for case, want in expected["envs"].items():
        got = actual["envs"].get(case)
        if got is None:
            return f"env case {case} not computed"
        for step, (a, b) in enumerate(zip(want, got, strict=True)):
            if a != b:
                return f"env case {case}: step {step} differs first ({'reset' if not step else 'step'})"
    extra = sorted(set(actual["envs"]) - set(expected["envs"]))
    return f"not in the golden file: {extra}" if extra else None


def expected_for(document: dict[str, Any], fingerprint: str) -> tuple[dict[str, Any], bool]:
    """The recorded digests for kernels ``fingerprint`` (the variant laid over the file's own) and
    whether the file knows the fingerprint."""
    variant = document.get("variants", {}).get(fingerprint, {})
    expected = {
        **document,
        "evaluate": {**document["evaluate"], **variant.get("evaluate", {})},
        "envs": {**document["envs"], **variant.get("envs", {})},
    }
    return expected, bool(variant) or document.get("kernels") == fingerprint


def with_variant(recorded: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    """``recorded`` plus the digests of ``document`` that differ from it, as the variant of
    ``document``'s kernel fingerprint."""
    from gymforge.checks.machine import cpu_model

    fingerprint = document["kernels"]
    if recorded["machine"] != document["machine"] or recorded.get("kernels") == fingerprint:
        raise ValueError("a variant needs the recorded build and another kernel fingerprint")
    variant = {
        section: {k: v for k, v in document[section].items() if recorded[section].get(k) != v}
        for section in ("evaluate", "envs")
    }
    variants = {k: v for k, v in recorded.get("variants", {}).items() if k != fingerprint}
    variants[fingerprint] = {"cpu": cpu_model(), **variant}
    return {**recorded, "variants": variants}


def _load() -> dict[str, Any]:
    return json.loads(GOLDEN_FILE.read_text())


def test_golden_file_covers_the_cases() -> None:
    document = _load()
    assert document["schema"] == SCHEMA
    assert set(document["envs"]) == {f"{c[0]}/seed{s}" for c in ENV_CASES for s in ENV_SEEDS}


@pytest.mark.parametrize("guards", [True, False], ids=["guards", "no-guards"])
def test_metabbo_digests_are_unchanged(guards: bool) -> None:
    """Also with the guards off (the GPU setting: no host reads to pick paths): same bits."""
    recorded = _load()
    if recorded["machine"] != machine():
        pytest.skip(f"digests recorded on {recorded['machine']}, this machine is {machine()}")
    actual = compute(guards=guards)
    expected, known = expected_for(recorded, actual["kernels"])
    problem = first_difference(expected, actual)
    if problem and not known:
        pytest.skip(f"{problem}, on kernels {actual['kernels']} that the file does not know")
    assert problem is None, problem


def test_a_variant_lays_over_the_recorded_digests() -> None:
    recorded = {
        "machine": {"torch": "t"},
        "kernels": "aaa",
        "evaluate": {"a": "1", "b": "2"},
        "envs": {"c": ["1"]},
    }
    here = {**recorded, "kernels": "bbb", "evaluate": {"a": "1", "b": "3"}}
    merged = with_variant(recorded, here)
    assert merged["variants"]["bbb"]["evaluate"] == {"b": "3"}
    assert merged["variants"]["bbb"]["envs"] == {}
    assert expected_for(merged, "bbb") == ({**merged, "evaluate": here["evaluate"]}, True)
    assert expected_for(merged, "ccc")[1] is False
    assert expected_for(merged, "ccc")[0]["evaluate"] == recorded["evaluate"]


def test_a_changed_bit_is_detected() -> None:
    """The comparison is not vacuous: one flipped last bit of one value changes its digest."""
    x = torch.linspace(-5, 5, 11, dtype=torch.float64)
    y = x.clone()
    y.view(torch.int64)[3] ^= 1
    assert digest(x) != digest(y)
    expected = {"evaluate": {"a": digest(x)}, "envs": {"c": ["1", "2"]}}
    assert first_difference(expected, {"evaluate": {"a": digest(y)}, "envs": {"c": ["1", "2"]}})
    assert "step 1" in str(
        first_difference(
            {"evaluate": {}, "envs": {"c": ["1", "2"]}}, {"evaluate": {}, "envs": {"c": ["1", "3"]}}
        )
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="MetaBBO golden digests: compare or update")
    parser.add_argument("--update", action="store_true", help="rewrite the golden file")
    parser.add_argument(
        "--variant", action="store_true", help="with --update: add this machine's differences"
    )
    args = parser.parse_args(argv)
    document = compute()
    if args.update:
        if args.variant:
            document = with_variant(_load(), document)
        temporary = GOLDEN_FILE.with_suffix(".tmp")
        temporary.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
        os.replace(temporary, GOLDEN_FILE)
        print(f"wrote {GOLDEN_FILE}")
        return 0
    expected = _load()
    if expected["machine"] != document["machine"]:
        print(f"note: recorded on {expected['machine']}, this machine is {document['machine']}")
    expected, known = expected_for(expected, document["kernels"])
    if not known:
        print(f"note: the file has no recording for kernels {document['kernels']}")
    problem = first_difference(expected, document)
    print(problem or "all MetaBBO digests match")
    return 1 if problem else 0


if __name__ == "__main__":
    sys.exit(main())
