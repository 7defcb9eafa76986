"""Golden trajectories: per-step digests of every batched engine (and LineFlow's SimPy engine).

For each registered id with a vector entry point, a batch of :data:`NUM_ENVS` instances is reset
with each seed of :data:`SEEDS` and stepped :data:`STEPS` times with actions drawn from a numpy
generator of that seed (independent of Gymnasium's space sampling, so a Gymnasium upgrade cannot
move them). Each step's observations, rewards, terminations, truncations and info (every key,
nested dicts flattened, values and dtypes) are hashed separately. LineFlow's scalar ids (the exact
SimPy engine) get the same treatment with one instance.

The digests live in ``tests/golden/trajectories.json`` and a test recomputes them: a change names
the first differing id, seed, step and field. They pin the exact bits, which depend on the torch
build and the CPU's vector instruction set (transcendental kernels differ in the last bit between
them), so the file records both and the test compares only on a matching machine.

Matrix products add a third dependency: the BLAS library picks its kernels by CPU generation
(e.g. with or without AMX), so two machines with the same torch build and instruction set can
differ in the last bit of a product. :func:`kernel_fingerprint` hashes a few products of the
shapes the engines use; the file records the fingerprint of the machine that wrote it and, under
``variants``, the cases whose digests differ on other fingerprints. A machine whose fingerprint
the file knows is compared strictly; on an unknown one a difference is reported as a skip that
names the fingerprint (record it there with ``update --variant``).

After an *intended* change of the dynamics (a new env version), regenerate with::

    python -m gymforge.checks.golden update

(which drops the variants: re-record them on those machines) and commit the file with the
change; ``python -m gymforge.checks.golden check`` compares.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces

from gymforge.checks.machine import cpu_model

SCHEMA = "gymforge.golden/1"
NUM_ENVS = 3
STEPS = 48
SEEDS = (0, 12345)
FIELDS = ("obs", "reward", "terminated", "truncated", "info")
#: the committed digests (a source checkout's tests folder)
DEFAULT_FILE = Path(__file__).resolve().parents[2] / "tests" / "golden" / "trajectories.json"


def machine() -> dict[str, str]:
    """What the exact bits depend on: the torch build and the CPU kernels' instruction set."""
    return {
        "torch": torch.__version__,
        "cpu_capability": str(torch.backends.cpu.get_cpu_capability()),
        "numpy": np.__version__,
    }


def kernel_fingerprint() -> str:
    """12 hex digits over float32 and float64 matrix products (one thread) of the shapes the
    engines use: a rank-2 update of 1024-pixel rows and batched products with small square
    matrices. Machines whose BLAS picks different kernels get different fingerprints."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        generator = torch.Generator().manual_seed(0)
        digest = hashlib.blake2b(digest_size=6)
        for dtype in (torch.float32, torch.float64):
            a, b, c = (
                torch.randn(shape, generator=generator, dtype=dtype)
                for shape in ((64, 2), (2, 1024), (64, 1024))
            )
            digest.update(torch.addmm(c, a, b, beta=0.5).numpy().tobytes())
            for d in (2, 3, 5, 10, 20, 40):
                x = torch.randn(8, 33, d, generator=generator, dtype=dtype)
                r = torch.randn(8, d, d, generator=generator, dtype=dtype)
                digest.update(torch.bmm(x, r).numpy().tobytes())
                digest.update((x @ r[0].T).numpy().tobytes())
        return digest.hexdigest()
    finally:
        torch.set_num_threads(threads)


def expected_cases(document: dict[str, Any], fingerprint: str) -> tuple[dict[str, Any], bool]:
    """The recorded cases for a machine of ``fingerprint``: the file's own cases with that
    fingerprint's variants laid over them, and whether the file knows the fingerprint."""
    variant = document.get("variants", {}).get(fingerprint)
    cases = {**document["cases"], **(variant["cases"] if variant else {})}
    return cases, variant is not None or document.get("kernels") == fingerprint


def _actions(space: gym.Space, rng: np.random.Generator, batch: int | None) -> Any:
    """Actions of ``space`` drawn from ``rng`` (``batch`` rows, or one action when ``None``)."""
    shape = () if batch is None else (batch,)
    if isinstance(space, spaces.Discrete):
        return rng.integers(space.start, space.start + space.n, size=shape)
    if isinstance(space, spaces.MultiDiscrete):
        return rng.integers(space.start, space.start + space.nvec, size=shape + space.nvec.shape)
    if isinstance(space, spaces.MultiBinary):
        return rng.integers(0, 2, size=shape + tuple(np.atleast_1d(space.n)), dtype=np.int8)
    if isinstance(space, spaces.Box):
        low = np.where(np.isfinite(space.low), space.low, -1.0)
        high = np.where(np.isfinite(space.high), space.high, 1.0)
        return rng.uniform(low, high, size=shape + space.shape).astype(space.dtype)
    raise TypeError(f"golden trajectories: no action rule for {space}")


def _leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key in sorted(value, key=str):
            yield from _leaves(value[key], f"{path}.{key}" if path else str(key))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _leaves(item, f"{path}[{i}]")
    else:
        yield path, value


def _update(digest: Any, value: Any) -> None:
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray | np.generic):
        array = np.ascontiguousarray(value)
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        digest.update(array.tobytes())
    else:
        digest.update(repr(value).encode())


def field_digest(value: Any) -> str:
    """12 hex digits over every leaf of ``value`` (its path, dtype, shape and bytes)."""
    digest = hashlib.blake2b(digest_size=6)
    for path, leaf in _leaves(value, ""):
        digest.update(path.encode())
        _update(digest, leaf)
    return digest.hexdigest()


def trajectory(
    env_id: str, seed: int, vector: bool = True, env_kwargs: dict[str, Any] | None = None
) -> dict[str, list[str]]:
    """Per-field lists of per-step digests (step 0 is the reset: obs and info only).

    ``env_kwargs``: extra keyword arguments of the env (e.g. an engine option that must not
    change the trajectory), none for the committed digests."""
    rng = np.random.default_rng(seed)
    kwargs = env_kwargs or {}
    if vector:
        env = gym.make_vec(
            env_id, num_envs=NUM_ENVS, vectorization_mode="vector_entry_point", **kwargs
        )
        space, batch = env.single_action_space, NUM_ENVS
    else:
        env = gym.make(env_id, **kwargs)
        space, batch = env.action_space, None
    try:
        obs, info = env.reset(seed=seed)
        out = {field: [] for field in FIELDS}
        out["obs"].append(field_digest(obs))
        out["info"].append(field_digest(info))
        for _ in range(STEPS):
            action = _actions(space, rng, batch)
            if vector:
                action = torch.as_tensor(action)
            step = env.step(action)
            for field, value in zip(FIELDS, step, strict=True):
                out[field].append(field_digest(value))
    finally:
        env.close()
    return out


def golden_cases() -> list[tuple[str, str]]:
    """``(env id, "vector" | "simpy")`` for every batched id, and LineFlow's scalar ids."""
    from gymforge.registry import all_specs

    cases = []
    for spec in all_specs():
        if spec.vector_entry_point is not None:
            cases.append((spec.id, "vector"))
        if spec.id.startswith("LineFlow-"):
            cases.append((spec.id, "simpy"))
    return cases


def compute(cases: Sequence[tuple[str, str]] | None = None) -> dict[str, Any]:
    """The golden document for ``cases`` (default: :func:`golden_cases`)."""
    import gymforge  # noqa: F401 - registers the ids

    torch.set_num_threads(1)
    document: dict[str, Any] = {
        "schema": SCHEMA,
        "machine": machine(),
        "kernels": kernel_fingerprint(),
        "num_envs": NUM_ENVS,
        "steps": STEPS,
        "seeds": list(SEEDS),
        "cases": {},
    }
    for env_id, kind in cases or golden_cases():
        document["cases"][f"{env_id}/{kind}"] = {
            str(seed): trajectory(env_id, seed, vector=kind == "vector") for seed in SEEDS
        }
    return document


def first_difference(expected: dict[str, Any], actual: dict[str, Any]) -> str | None:
    """``None`` when ``actual`` matches ``expected``, else the first differing case, seed, step
    and field, in words."""
    for case in expected["cases"]:
        if case not in actual["cases"]:
            return f"{case}: not computed"
        for seed, fields in expected["cases"][case].items():
            got = actual["cases"][case][seed]
            for step in range(STEPS + 1):
                for field in FIELDS:
                    want_steps, got_steps = fields[field], got[field]
                    index = step if field in ("obs", "info") else step - 1
                    if index < 0:
                        continue
                    if want_steps[index] != got_steps[index]:
                        return f"{case} seed {seed}: step {step} differs first, in {field}"
    extra = sorted(set(actual["cases"]) - set(expected["cases"]))
    return f"not in the golden file: {extra}" if extra else None


def write(document: dict[str, Any], path: Path) -> None:
    """Write ``document`` atomically (a temporary file renamed over ``path``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    os.replace(temporary, path)


def add_missing(recorded: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    """``recorded`` with the cases of ``document`` that it lacks (ids registered since) added to
    its recorded cases; every recorded case, and every variant, is kept as it was. Refused on a
    build other than the recording one (the new cases must come from the same torch)."""
    if recorded["machine"] != document["machine"]:
        raise ValueError(
            f"machine: new cases need the recorded build {recorded['machine']}, "
            f"this machine is {document['machine']}"
        )
    missing = {k: v for k, v in document["cases"].items() if k not in recorded["cases"]}
    return {**recorded, "cases": {**recorded["cases"], **missing}}


def add_variant(recorded: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    """``recorded`` with the cases of ``document`` that differ from it kept as the variant of
    ``document``'s kernel fingerprint (refused on the recording machine's own fingerprint)."""
    if recorded["machine"] != document["machine"]:
        raise ValueError(
            f"machine: variants need the recorded build {recorded['machine']}, "
            f"this machine is {document['machine']}"
        )
    fingerprint = document["kernels"]
    if recorded.get("kernels") == fingerprint:
        raise ValueError(f"kernels: {fingerprint} is the recording machine's own; use update")
    differing = {
        case: digests
        for case, digests in document["cases"].items()
        if recorded["cases"].get(case) != digests
    }
    variants = {k: v for k, v in recorded.get("variants", {}).items() if k != fingerprint}
    if differing:
        variants[fingerprint] = {"cpu": cpu_model(), "cases": differing}
    return {**recorded, "variants": variants}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="golden trajectory digests of every engine")
    parser.add_argument("command", choices=("update", "check"), help="write, or compare with, FILE")
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE, help="the golden file")
    parser.add_argument(
        "--variant",
        action="store_true",
        help="with update: keep FILE and record only this machine's differing cases",
    )
    parser.add_argument(
        "--missing",
        action="store_true",
        help="with update: keep FILE and add only the cases it lacks (newly registered ids)",
    )
    args = parser.parse_args(argv)
    if args.variant and args.missing:
        parser.error("--variant and --missing record different things; give one")
    document = compute()
    if args.command == "update":
        if args.missing:
            recorded = json.loads(args.file.read_text())
            before = len(recorded["cases"])
            document = add_missing(recorded, document)
            print(f"added {len(document['cases']) - before} new cases")
        elif args.variant:
            document = add_variant(json.loads(args.file.read_text()), document)
        write(document, args.file)
        print(f"wrote {len(document['cases'])} cases to {args.file}")
        return 0
    expected = json.loads(args.file.read_text())
    if expected["machine"] != document["machine"]:
        print(f"note: recorded on {expected['machine']}, this machine is {document['machine']}")
    cases, known = expected_cases(expected, document["kernels"])
    if not known:
        print(f"note: the file has no recording for kernels {document['kernels']}")
    problem = first_difference({**expected, "cases": cases}, document)
    print(problem or f"all {len(cases)} cases match")
    return 1 if problem else 0


if __name__ == "__main__":
    sys.exit(main())
