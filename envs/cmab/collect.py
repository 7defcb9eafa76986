"""Collect logged Off-CMAB datasets: ``gymforge dataset collect OffCMAB-<App>-v0 --logging NAME``.

A dataset holds ``n`` plays of **one** instance (the instance that ``env.reset(seed=SEED)``
draws) by a logging policy (:mod:`gymforge.envs.cmab.logging_policies`), in the application's
compact record format:

| application | arrays (one row per record) |
|---|---|
| cascade | ``action`` (n, k) int16 ranked ids; ``click_position`` (n,) int16 (k = no click) |
| llm_cache | ``cached`` (n, m) bool; ``query`` (n,) int32; ``miss`` (n,) bool; ``cost`` (n,) float32 |
| influence | ``seeds`` (n, V) bool; ``activation_round`` (n, V) int16 (−1 = never) |
| kpath | ``path`` (n,) int32; ``outcomes`` (n, k) float32 |

It is written with :func:`gymforge.core.datasets.write_dataset` (atomic, sha256 checksum) with the
metadata: env id and kwargs, application, logging policy and its options, n, seed, the hash of
the instance's parameters and the problem's structure. With ``--minari NAME`` (instead of or
besides ``--out``) the same records are also written as a Minari dataset, one episode of ``n``
steps; :mod:`gymforge.envs.cmab.minari_logged` documents that mapping and reads it back.

The plays of record ``t`` draw from their own counter-based stream keyed by ``(seed, t)``, so a
dataset does not depend on the block size used to collect it.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from gymforge.core.datasets import write_dataset
from gymforge.core.instance_rng import InstanceRNG, hash_uint32, seed_key
from gymforge.core.limits import check_memory
from gymforge.core.outputs import check_writable
from gymforge.envs.cmab.logging_policies import ADAPTIVE, POLICIES, check_policy, propose
from gymforge.envs.cmab.problem import Params, Problem, check_int, instance_params, params_hash

DATASET_KIND = "offcmab-logged-plays"
RECORD_DTYPES: dict[str, dict[str, Any]] = {
    "cascade": {"action": np.int16, "click_position": np.int16},
    "llm_cache": {"cached": np.bool_, "query": np.int32, "miss": np.bool_, "cost": np.float32},
    "influence": {"seeds": np.bool_, "activation_round": np.int16},
    "kpath": {"path": np.int32, "outcomes": np.float32},
}
_CHUNK = 65536


def problem_for(env_id: str, env_kwargs: dict[str, Any] | None = None) -> Problem:
    """The problem structure of ``env_id`` with the id's kwargs updated by ``env_kwargs``."""
    from gymforge.registry import get_spec, load_entry_point

    spec = get_spec(env_id)
    if spec.family != "cmab":
        raise ValueError(f"{env_id!r} is not an OffCMAB id")
    vec_cls = load_entry_point(spec.vector_env)
    kwargs = {**dict(spec.kwargs), **(env_kwargs or {})}
    kwargs.pop("horizon", None)
    kwargs.pop("action_format", None)
    kwargs.pop("report_regret", None)
    return vec_cls.make_problem(**kwargs)


def _record_rng(seed: int, start: int, rows: int) -> InstanceRNG:
    records = torch.arange(start, start + rows, dtype=torch.int64)
    key = hash_uint32(seed_key(torch.tensor([seed], dtype=torch.int64)), records, torch.tensor(7))
    return InstanceRNG(seed=records, counter=torch.zeros_like(records), key=key)


@dataclass(frozen=True)
class LoggedPlays:
    """What a logging run produced: the records, and (on request) what the env showed.

    Attributes:
        records: the record arrays of the application (see the module docstring).
        rewards: ``(n,)`` float32, the realised reward of each play (``None`` unless asked for).
        features: ``(n, feedback_dim)`` float32, the env's observation features of each play's
            feedback (the observation without its step counter; ``None`` unless asked for).
    """

    records: dict[str, np.ndarray]
    rewards: np.ndarray | None = None
    features: np.ndarray | None = None


def collect_records(
    problem: Problem,
    params: Params,
    logging: str,
    n: int,
    seed: int,
    *,
    block: int | None = None,
    q: float = 0.5,
    delta: float = 0.1,
) -> dict[str, np.ndarray]:
    """``n`` logged plays of the instance ``params`` (leading axis 1) under policy ``logging``.

    Args:
        block: records per policy refresh of adaptive policies (default ``max(1, n // 200)``).
        q: seed probability of the ``independent`` policy, in (0, 1).
        delta: confidence level of the adaptive policies' bounds, ``log(4 m n / delta)``.
    """
    return log_plays(problem, params, logging, n, seed, block=block, q=q, delta=delta).records


def log_plays(
    problem: Problem,
    params: Params,
    logging: str,
    n: int,
    seed: int,
    *,
    block: int | None = None,
    q: float = 0.5,
    delta: float = 0.1,
    with_steps: bool = False,
    progress: bool = False,
) -> LoggedPlays:
    """:func:`collect_records`, and with ``with_steps`` each play's reward and observation
    features too (the same records either way: both come from the same plays). ``progress``
    shows a bar of the plays on stderr, advanced after each block."""
    check_policy(problem, logging)
    n = check_int("n", n, 1)
    if not 0.0 < q < 1.0:
        raise ValueError(f"q must be in (0, 1), got {q}")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    adaptive = logging in ADAPTIVE
    block = (max(1, n // 200) if adaptive else _CHUNK) if block is None else block
    block = check_int("block", block, 1)
    log_term = math.log(4 * problem.n_arms * n / delta)
    generator = torch.Generator().manual_seed(seed)
    counts = np.zeros(problem.n_arms)
    sums = np.zeros(problem.n_arms)
    parts: dict[str, list[np.ndarray]] = {key: [] for key in RECORD_DTYPES[problem.name]}
    rewards: list[np.ndarray] = []
    features: list[np.ndarray] = []
    from tqdm import tqdm

    bar = tqdm(total=n, desc="collect", unit="play", disable=not progress)
    for start in range(0, n, block):
        rows = min(block, n - start)
        arm = propose(
            problem, logging, rows, counts, sums, start, generator, q=q, log_term=log_term
        )
        expanded = {name: value.expand(rows, *value.shape[1:]) for name, value in params.items()}
        reward, feedback = problem.play(expanded, arm, _record_rng(seed, start, rows))
        chunk = {
            key: feedback[key].cpu().numpy().astype(dtype)
            for key, dtype in RECORD_DTYPES[problem.name].items()
        }
        for key, value in chunk.items():
            parts[key].append(value)
        if with_steps:
            observation = problem.observation(expanded, feedback)[0]
            rewards.append(reward.cpu().numpy().astype(np.float32))
            features.append(observation[:, : problem.feedback_dim].cpu().numpy())
        if adaptive:
            block_counts, block_sums = problem.arm_statistics(chunk)
            counts += block_counts
            sums += block_sums
        bar.update(rows)
    bar.close()
    records = {key: np.concatenate(values) for key, values in parts.items()}
    if not with_steps:
        return LoggedPlays(records)
    return LoggedPlays(records, np.concatenate(rewards), np.concatenate(features))


def logged_metadata(
    env_id: str,
    env_kwargs: dict[str, Any] | None,
    problem: Problem,
    params: Params,
    logging: str,
    n: int,
    seed: int,
    options: dict[str, Any],
) -> dict[str, Any]:
    """What a dataset records about its origin, in the folder and the Minari format alike."""
    return {
        "kind": DATASET_KIND,
        "env_id": env_id,
        "env_kwargs": env_kwargs or {},
        "application": problem.name,
        "logging": logging,
        "logging_options": options,
        "n": int(n),
        "seed": int(seed),
        "instance_params_hash": params_hash(params),
        "problem": problem.public_config(),
    }


def collect(
    env_id: str,
    logging: str,
    n: int,
    out: str | Path,
    *,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    block: int | None = None,
    q: float = 0.5,
    delta: float = 0.1,
    overwrite: bool = False,
) -> Path:
    """Collect a dataset of ``env_id``'s instance ``seed`` and write it to ``out`` (atomically)."""
    plays, metadata = log_dataset(
        env_id, logging, n, seed=seed, env_kwargs=env_kwargs, block=block, q=q, delta=delta
    )
    return write_dataset(out, plays.records, metadata, overwrite=overwrite)


def log_dataset(
    env_id: str,
    logging: str,
    n: int,
    *,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    block: int | None = None,
    q: float = 0.5,
    delta: float = 0.1,
    with_steps: bool = False,
    progress: bool = False,
) -> tuple[LoggedPlays, dict[str, Any]]:
    """The plays of ``env_id``'s instance ``seed`` and their metadata, in memory (nothing written);
    ``progress`` shows a bar of the plays on stderr."""
    problem = problem_for(env_id, env_kwargs)
    params = instance_params(problem, seed)
    check_int("n", n, 1)
    one = log_plays(problem, params, logging, 1, seed, block=1, q=q, delta=delta, with_steps=True)
    record = sum(
        a.nbytes for a in (*one.records.values(), one.rewards, one.features) if a is not None
    )
    # the blocks and their concatenation are both held, and the dataset is written from a copy
    check_memory("n (--n)", n, 3 * record, "logged play")
    plays = log_plays(
        problem,
        params,
        logging,
        n,
        seed,
        block=block,
        q=q,
        delta=delta,
        with_steps=with_steps,
        progress=progress,
    )
    options = {"block": block, "q": q, "delta": delta}
    metadata = logged_metadata(env_id, env_kwargs, problem, params, logging, n, seed, options)
    return plays, metadata


def _parser(env_id: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"gymforge dataset collect {env_id}",
        description=(
            "Log n plays of one OffCMAB instance (the one reset(seed=SEED) draws) by a logging "
            "policy and write a checked dataset folder (--out: data.npz + metadata.json with "
            "sha256), a Minari dataset (--minari: one episode of n steps), or both."
        ),
    )
    policies = sorted({name for names in POLICIES.values() for name in names})
    parser.add_argument(
        "--agent",
        "--logging",
        dest="logging",
        required=True,
        help=f"logging policy: one of {policies} (--logging is the older name)",
    )
    parser.add_argument(
        "--n", "--plays", dest="n", type=int, required=True, help="number of logged plays"
    )
    parser.add_argument("--out", default=None, help="dataset folder to write")
    parser.add_argument(
        "--minari",
        default=None,
        metavar="NAME",
        help="also (or only) write the Minari dataset NAME, e.g. cascade-uniform-v0",
    )
    parser.add_argument(
        "--minari-root", default=None, help="Minari datasets folder (default: Minari's own)"
    )
    parser.add_argument("--seed", type=int, default=0, help="instance seed (default 0)")
    parser.add_argument(
        "--kwargs", default="{}", help="env kwargs as JSON, e.g. '{\"n_items\": 50}'"
    )
    parser.add_argument("--block", type=int, default=None, help="records per adaptive refresh")
    parser.add_argument("--q", type=float, default=0.5, help="seed probability (independent)")
    parser.add_argument("--delta", type=float, default=0.1, help="confidence of ucb/lcb logging")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing dataset")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def collect_cli(env_id: str, argv: list[str]) -> int:
    """Entry point of ``gymforge dataset collect OffCMAB-...`` (see ``--help``)."""
    args = _parser(env_id).parse_args(argv)
    if args.out is None and args.minari is None:
        raise ValueError(
            "give --out DIR (a dataset folder), --minari NAME (a Minari dataset) or both"
        )
    try:
        env_kwargs = json.loads(args.kwargs)
    except json.JSONDecodeError as error:
        raise ValueError(f"--kwargs must be a JSON object: {error}") from None
    if not isinstance(env_kwargs, dict):
        raise ValueError(f"--kwargs must be a JSON object, got {args.kwargs!r}")
    if args.out is not None and Path(args.out).exists() and not args.overwrite:
        raise ValueError(f"--out {args.out!r} exists; pass --overwrite to replace it")
    if args.out is not None:  # written through a sibling temporary folder, so its parent
        check_writable(Path(args.out).absolute().parent, "--out")
    if args.minari is not None:
        from gymforge.envs.cmab.minari_logged import check_target

        check_target(args.minari, args.minari_root, args.overwrite)
    torch.set_num_threads(1)
    plays, metadata = log_dataset(
        env_id,
        args.logging,
        args.n,
        seed=args.seed,
        env_kwargs=env_kwargs,
        block=args.block,
        q=args.q,
        delta=args.delta,
        with_steps=args.minari is not None,
        progress=not args.quiet,
    )
    what = f"{args.n} {args.logging} plays of {env_id} (seed {args.seed})"
    if args.out is not None:
        path = write_dataset(args.out, plays.records, metadata, overwrite=args.overwrite)
        print(f"wrote {what} to {path}")
    if args.minari is not None:
        from gymforge.envs.cmab.minari_logged import write_minari

        problem = problem_for(env_id, env_kwargs)
        write_minari(
            plays, metadata, problem, args.minari, root=args.minari_root, overwrite=args.overwrite
        )
        print(f"wrote {what} to the Minari dataset {args.minari} (read it as minari:{args.minari})")
    return 0
