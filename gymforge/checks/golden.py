"""Golden trajectories of every batched engine (and LineFlow's SimPy engine), compared on every host.

For each registered id with a vector entry point, a batch of :data:`NUM_ENVS` instances is reset
with each seed of :data:`SEEDS` and stepped :data:`STEPS` times with actions drawn from a numpy
generator of that seed (independent of Gymnasium's space sampling, so a Gymnasium upgrade cannot
move them). LineFlow's scalar ids (the exact SimPy engine) get the same treatment with one
instance. Each step's observations, rewards, terminations, truncations and info (every key,
nested dicts flattened) are recorded as two parts, by :func:`split`:

- **exact**: a digest of what does not depend on floating-point kernels: every leaf's path,
  dtype and shape, the bytes of every integer and boolean leaf (flags, counts, ids, labels,
  discrete state) and which float entries are NaN, +inf or -inf. It must match bit for bit on
  every host.
- **values**: the float leaves, stored as numbers and compared with the family's
  :class:`Tolerance`. A leaf of at most one dimension, or a row of at most :data:`RAW_ROW`
  values, is stored whole; a longer row of a batched leaf (an observation vector, a rendered
  image) as four statistics of its absolute values (mean, index-weighted mean, mean of the
  positive part, maximum). An element-wise bound ``|a - r| <= atol + rtol |r|`` bounds each
  statistic the same way, so one tolerance serves both.

Why the split: float bits depend on the CPU's BLAS kernels (the confounder renderer's ``addmm``,
the BBOB rotations and landscape features' matrix products), which differ by CPU generation, so
exact float digests only held on the machine that recorded them. The integer and boolean parts
never went through such a kernel's rounding and are compared exactly everywhere.

Tolerances (:data:`TOLERANCES`, else :data:`DEFAULT_TOLERANCE`), chosen from the differences
measured between three kernel sets of one host (MKL with AVX-512 and AMX, MKL restricted to AVX2
with ``MKL_ENABLE_INSTRUCTIONS=AVX2``, MKL restricted to SSE4.2 with ATen's scalar kernels),
about ten times the largest difference seen:

- ConfounderStream: rtol 2e-4, atol 1e-6 (rendered pixels in [0, 6.5] differ by up to 3e-8
  absolute and 1.8e-5 relative);
- MetaBBO: rtol 1e-3, atol 1e-4 (float32 landscape features differ by up to 1.1e-5 absolute
  and 5.1e-5 relative, the float64 errors by 1e-12 relative);
- LineFlow, OffCMAB, MinMaxTuning, Probe: rtol 1e-6, atol 1e-9 (no difference measured: a few
  float32 units in the last place, for a transcendental kernel that rounds differently).

Recorded variants: MetaBBO only. Its optimizers compare fitness values strictly (an improvement
flag, a stagnation counter, selection); when two candidates tie to the last bits, another BLAS
can flip the comparison, and the episode then follows another path (seen: MetaBBO-Alg1-v1 seed
12345 with MKL's AVX2 kernels, step 12; MetaBBO-Alg2-v1 seed 12345 with SSE4.2, step 6). For
such a host, ``document["variants"][kernel fingerprint]`` (:func:`kernel_fingerprint`) holds the
float values of the cases that differ beyond tolerance; the exact part is never a variant (a
variant is refused if it differs, or if it touches another family). A host without a variant is
still compared, with the recorded values.

After an *intended* change of the dynamics (a new env version), regenerate the file with::

    python -m gymforge.checks.golden update

(which drops the variants: re-record them with ``update --variant`` on those hosts, after
checking that the difference is such a tie) and commit it with the change;
``python -m gymforge.checks.golden check`` compares.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces

from gymforge.checks.machine import cpu_model

SCHEMA = "gymforge.golden/2"
NUM_ENVS = 3
STEPS = 48
SEEDS = (0, 12345)
FIELDS = ("obs", "reward", "terminated", "truncated", "info")
#: rows of a batched float leaf up to this length are stored whole, longer ones as statistics
RAW_ROW = 4
#: significant digits of the stored values (float32 round-trips in 9)
DIGITS = 9
#: the committed golden file (a source checkout's tests folder)
DEFAULT_FILE = Path(__file__).resolve().parents[2] / "tests" / "golden" / "trajectories.json"


@dataclass(frozen=True)
class Tolerance:
    """How far a float may move between hosts: ``|actual - recorded| <= atol + rtol |recorded|``."""

    rtol: float
    atol: float

    def allows(self, recorded: float, actual: float) -> bool:
        """Whether ``actual`` is within the tolerance of ``recorded``."""
        return abs(actual - recorded) <= self.atol + self.rtol * abs(recorded)


#: families without a measured cross-host difference
DEFAULT_TOLERANCE = Tolerance(rtol=1e-6, atol=1e-9)
#: families whose float values go through BLAS kernels (see the module docstring)
TOLERANCES = {
    "ConfounderStream": Tolerance(rtol=2e-4, atol=1e-6),
    "MetaBBO": Tolerance(rtol=1e-3, atol=1e-4),
}
#: families whose float values may follow another path on another BLAS, and why
VARIANT_FAMILIES = {
    "MetaBBO": "a strict comparison of fitness values that tie to the last bits flips",
}


def family(case: str) -> str:
    """The family of a case or env id (``"MetaBBO-Alg1-v1/vector"`` -> ``"MetaBBO"``)."""
    return case.split("-", 1)[0]


def tolerance(case: str) -> Tolerance:
    """The tolerance of a case's float values."""
    return TOLERANCES.get(family(case), DEFAULT_TOLERANCE)


def machine() -> dict[str, str]:
    """The build and instruction set that recorded a file (a note for people, not compared)."""
    return {
        "torch": torch.__version__,
        "cpu_capability": str(torch.backends.cpu.get_cpu_capability()),
        "numpy": np.__version__,
    }


def kernel_fingerprint() -> str:
    """12 hex digits over float32 and float64 matrix products (one thread) of the shapes the
    engines use: a rank-2 update of 1024-pixel rows and batched products with small square
    matrices. Machines whose BLAS picks different kernels get different fingerprints; it keys
    the recorded variants."""
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


def host_label() -> str:
    """The CPU model, with the kernel-restricting environment variables that are set."""
    notes = [
        f"{name}={os.environ[name]}"
        for name in ("MKL_ENABLE_INSTRUCTIONS", "MKL_CBWR", "ATEN_CPU_CAPABILITY")
        if name in os.environ
    ]
    return " ".join([cpu_model(), *notes])


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


def _float_values(array: np.ndarray, path: str) -> tuple[list[float], list[str]]:
    """The stored numbers of a finite float64 ``array`` (see the module docstring) and a label
    for each."""
    if array.ndim <= 1:
        flat = array.reshape(-1)
        return flat.tolist(), [f"{path}[{i}]" for i in range(flat.size)]
    values: list[float] = []
    labels: list[str] = []
    for r, row in enumerate(array.reshape(array.shape[0], -1)):
        if row.size <= RAW_ROW:
            values += row.tolist()
            labels += [f"{path}[{r}][{i}]" for i in range(row.size)]
            continue
        size = np.abs(row)
        weights = np.arange(1, row.size + 1) / row.size
        values += [
            float(size.mean()),
            float((weights * size).mean()),
            float(np.maximum(row, 0.0).mean()),
            float(size.max()),
        ]
        labels += [f"{path}[{r}] {s}" for s in ("mean|x|", "weighted mean|x|", "mean x+", "max|x|")]
    return values, labels


def split(value: Any) -> tuple[str, list[float], list[str]]:
    """``(exact digest, float values, their labels)`` of ``value`` (a tensor, array, scalar or a
    nested dict/list of them): the digest covers every leaf's path, dtype and shape, the bytes of
    integer and boolean leaves and the non-finite pattern of float leaves."""
    digest = hashlib.blake2b(digest_size=6)
    values: list[float] = []
    labels: list[str] = []
    for path, leaf in _leaves(value, ""):
        digest.update(path.encode())
        if isinstance(leaf, torch.Tensor):
            leaf = leaf.detach().cpu().numpy()
        if isinstance(leaf, float):
            digest.update(b"float")
            leaf = np.asarray(leaf, dtype=np.float64)
        if not isinstance(leaf, np.ndarray | np.generic):
            digest.update(repr(leaf).encode())
            continue
        array = np.ascontiguousarray(leaf)
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        if array.dtype.kind != "f":
            digest.update(array.tobytes())
            continue
        wide = array.astype(np.float64)
        finite = np.isfinite(wide)
        for pattern in (np.isnan(wide), wide == np.inf, wide == -np.inf):
            digest.update(np.packbits(pattern).tobytes())
        leaf_values, leaf_labels = _float_values(np.where(finite, wide, 0.0), path)
        values += leaf_values
        labels += leaf_labels
    return digest.hexdigest(), values, labels


def format_values(values: Sequence[float], digits: int = DIGITS) -> str:
    """``values`` as one string of numbers (``digits`` significant digits)."""
    return " ".join(f"{v:.{digits}g}" for v in values)


def parse_values(text: str) -> list[float]:
    """The numbers of :func:`format_values`."""
    return [float(v) for v in text.split()]


def compare_record(
    recorded: tuple[str, str], actual: tuple[str, str], tol: Tolerance, labels: Sequence[str] = ()
) -> str | None:
    """``None`` when ``actual`` ``(exact digest, values)`` matches ``recorded``, else which part
    differs first, in words (naming the value by ``labels`` where given)."""
    if recorded[0] != actual[0]:
        return "the exact part (integers, booleans, shapes or non-finite entries)"
    want, got = parse_values(recorded[1]), parse_values(actual[1])
    if len(want) != len(got):
        return f"the number of float values ({len(want)} recorded, {len(got)} now)"
    for i, (w, g) in enumerate(zip(want, got, strict=True)):
        if not tol.allows(w, g):
            name = labels[i] if i < len(labels) else f"value {i}"
            return f"{name}: recorded {w:.{DIGITS}g}, now {g:.{DIGITS}g} (rtol {tol.rtol:g}, atol {tol.atol:g})"
    return None


def trajectory(
    env_id: str, seed: int, vector: bool = True, env_kwargs: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Per-field lists of per-step records: ``{"exact": {field: [digest, ...]}, "values":
    {field: [numbers, ...]}, "labels": {field: [[label, ...], ...]}}`` (step 0 is the reset: obs
    and info only; the labels name the values for messages and are not written).

    ``env_kwargs``: extra keyword arguments of the env (e.g. an engine option that must not
    change the trajectory), none for the committed file."""
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
    out: dict[str, Any] = {part: {f: [] for f in FIELDS} for part in ("exact", "values", "labels")}

    def record(field: str, value: Any) -> None:
        exact, values, labels = split(value)
        out["exact"][field].append(exact)
        out["values"][field].append(format_values(values))
        out["labels"][field].append(
            [f"{field}{name}" if name.startswith("[") else f"{field}.{name}" for name in labels]
        )

    try:
        obs, info = env.reset(seed=seed)
        record("obs", obs)
        record("info", info)
        for _ in range(STEPS):
            action = _actions(space, rng, batch)
            if vector:
                action = torch.as_tensor(action)
            for field, value in zip(FIELDS, env.step(action), strict=True):
                record(field, value)
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
    """The golden document for ``cases`` (default: :func:`golden_cases`), with labels."""
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


def expected_cases(document: dict[str, Any], fingerprint: str) -> dict[str, Any]:
    """The recorded cases for a host of kernels ``fingerprint``: the file's cases with that
    fingerprint's variant values (if any) laid over their values."""
    variant = document.get("variants", {}).get(fingerprint, {}).get("values", {})
    cases = dict(document["cases"])
    for case, seeds in variant.items():
        cases[case] = {
            seed: {**record, "values": seeds.get(seed, record["values"])}
            for seed, record in cases[case].items()
        }
    return cases


def first_difference(expected: dict[str, Any], actual: dict[str, Any]) -> str | None:
    """``None`` when every case of ``actual`` matches ``expected`` (exact parts equal, values
    within the case's tolerance), else the first differing case, seed, step and field, in words."""
    for case in expected["cases"]:
        if case not in actual["cases"]:
            return f"{case}: not computed"
        for seed, want in expected["cases"][case].items():
            got = actual["cases"][case][seed]
            for step in range(len(want["exact"]["obs"])):
                for field in FIELDS:
                    index = step if field in ("obs", "info") else step - 1
                    if index < 0:
                        continue
                    labels = got.get("labels", {}).get(field, [])
                    problem = compare_record(
                        (want["exact"][field][index], want["values"][field][index]),
                        (got["exact"][field][index], got["values"][field][index]),
                        tolerance(case),
                        labels[index] if index < len(labels) else (),
                    )
                    if problem:
                        return (
                            f"{case} seed {seed}: step {step} differs first, in {field}: {problem}"
                        )
    extra = sorted(set(actual["cases"]) - set(expected["cases"]))
    return f"not in the golden file: {extra}" if extra else None


def _without_labels(document: dict[str, Any]) -> dict[str, Any]:
    cases = {
        case: {
            seed: {k: v for k, v in record.items() if k != "labels"}
            for seed, record in seeds.items()
        }
        for case, seeds in document["cases"].items()
    }
    return {**document, "cases": cases}


def write(document: dict[str, Any], path: Path) -> None:
    """Write ``document`` (without labels) atomically (a temporary file renamed over ``path``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(_without_labels(document), indent=1, sort_keys=True) + "\n")
    os.replace(temporary, path)


def add_missing(recorded: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    """``recorded`` with the cases of ``document`` that it lacks (ids registered since) added;
    every recorded case, and every variant, is kept as it was."""
    missing = {k: v for k, v in document["cases"].items() if k not in recorded["cases"]}
    return {**recorded, "cases": {**recorded["cases"], **missing}}


def add_variant(recorded: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    """``recorded`` with the float values of ``document``'s cases that differ beyond tolerance
    kept as the variant of ``document``'s kernel fingerprint. Refused on the recording host's
    own fingerprint, when an exact part differs (that is no kernel difference) and for a family
    outside :data:`VARIANT_FAMILIES` (its difference is not understood)."""
    fingerprint = document["kernels"]
    if recorded.get("kernels") == fingerprint:
        raise ValueError(f"kernels: {fingerprint} is the recording host's own; use update")
    differing: dict[str, Any] = {}
    for case, seeds in document["cases"].items():
        for seed, got in seeds.items():
            want = recorded["cases"][case][seed]
            if want["exact"] != got["exact"]:
                raise ValueError(f"exact: {case} seed {seed} differs in its exact part")
            one = {"cases": {case: {seed: want}}}
            if first_difference(one, {"cases": {case: {seed: got}}}) is None:
                continue
            if family(case) not in VARIANT_FAMILIES:
                raise ValueError(
                    f"family: {case} seed {seed} differs beyond tolerance, and "
                    f"{family(case)} has no understood per-host difference"
                )
            differing.setdefault(case, {})[seed] = got["values"]
    variants = {k: v for k, v in recorded.get("variants", {}).items() if k != fingerprint}
    if differing:
        variants[fingerprint] = {"cpu": host_label(), "values": differing}
    return {**recorded, "variants": variants}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="golden trajectories of every engine")
    parser.add_argument("command", choices=("update", "check"), help="write, or compare with, FILE")
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE, help="the golden file")
    parser.add_argument(
        "--variant",
        action="store_true",
        help="with update: keep FILE and record this host's MetaBBO values that differ",
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
    cases = expected_cases(expected, document["kernels"])
    if document["kernels"] not in expected.get("variants", {}):
        print(f"note: no variant for kernels {document['kernels']}: the recorded values apply")
    problem = first_difference({**expected, "cases": cases}, document)
    print(problem or f"all {len(cases)} cases match")
    return 1 if problem else 0


if __name__ == "__main__":
    sys.exit(main())
