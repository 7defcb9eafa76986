"""The offline-dataset track: the logged dataset a protocol hands to agents with ``fit(dataset)``.

A protocol with an ``offline_dataset`` block gives every evaluation episode its own logged
dataset, built deterministically by the family's collector and checked against the sha256 the
protocol records::

    "offline_dataset": {
      "kind": "offcmab-logged-plays",      # the collector (see KINDS)
      "logging": "uniform",                # logging policy of the collector
      "n": 100,                            # logged plays per dataset
      "options": {"q": 0.5, "delta": 0.1}, # the collector's options (block, q, delta)
      "sha256": ["...", ...],              # content hash of the dataset of each evaluation seed
      "agents": {"clcb": "gymforge.agents.cmab.agent:clcb_agent", ...},
                                           # the family's offline learners (the board's rows)
      "description": "..."
    }

The dataset of evaluation seed ``s`` holds ``n`` plays of the instance that ``env.reset(seed=s)``
draws (Off-CMAB envs draw their instance from the reset seed), logged with record seed ``s``:
exactly what ``gymforge dataset collect ENV_ID --logging L --n N --seed s --kwargs K`` writes,
where ``K`` is the protocol's env kwargs without the episode-only ones (``horizon``,
``action_format``, ``report_regret``). So the agent is evaluated on the instance its data came
from. Datasets are small and rebuilt in memory (a few milliseconds each), not stored under
``leaderboards/``; :func:`dataset_sha256` hashes the record arrays and the dataset's identity
(env id, logging policy, n, seed, instance-parameter hash), not the ``.npz`` file (whose zip
headers hold timestamps), so :func:`folder_sha256` of a collected folder equals the protocol's
hash.

The agent receives a :class:`~gymforge.envs.cmab.datasets.LoggedDataset` whose ``params`` (the
instance's true parameters) are removed: only the records, the metadata and the problem's
public structure.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from gymforge.leaderboards.files import canonical_json

#: collectors the evaluator can build datasets with.
KINDS = ("offcmab-logged-plays",)
KEYS = {"kind", "logging", "n", "options", "sha256", "agents", "description"}
OPTION_KEYS = {"block", "q", "delta"}
_IDENTITY = ("env_id", "logging", "n", "seed", "instance_params_hash")
_CACHE: dict[bytes, Any] = {}


def check_offline_block(block: Any, path: Path, n_seeds: int) -> None:
    """Check a protocol's ``offline_dataset`` block; raises ``ProtocolError`` naming the field."""
    from gymforge.leaderboards.protocol import ProtocolError

    def fail(field: str, message: str) -> ProtocolError:
        return ProtocolError(f"protocol {path}: field 'offline_dataset.{field}' {message}")

    if not isinstance(block, dict):
        raise ProtocolError(f"protocol {path}: field 'offline_dataset' must be an object")
    unknown = sorted(set(block) - KEYS)
    if unknown:
        raise fail(unknown[0], f"is not an offline_dataset field; allowed: {sorted(KEYS)}")
    missing = sorted(KEYS - set(block))
    if missing:
        raise fail(missing[0], "is missing")
    if block["kind"] not in KINDS:
        raise fail("kind", f"must be one of {KINDS}, got {block['kind']!r}")
    if not isinstance(block["logging"], str):
        raise fail("logging", f"must be a string, got {block['logging']!r}")
    n = block["n"]
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise fail("n", f"must be an integer >= 1, got {n!r}")
    options = block["options"]
    if not isinstance(options, dict) or set(options) - OPTION_KEYS:
        raise fail("options", f"must be an object with keys among {sorted(OPTION_KEYS)}")
    agents = block["agents"]
    if not isinstance(agents, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and ":" in v for k, v in agents.items()
    ):
        raise fail("agents", "must map names to entry points 'module:factory'")
    if not isinstance(block["description"], str):
        raise fail("description", "must be a string")
    hashes = block["sha256"]
    if hashes is None:
        return
    if not isinstance(hashes, list) or len(hashes) != n_seeds:
        raise fail("sha256", f"must be null (not calibrated) or a list of {n_seeds} digests")
    for digest in hashes:
        if not isinstance(digest, str) or len(digest) != 64:
            raise fail("sha256", f"entries must be 64-character hex digests, got {digest!r}")


def dataset_sha256(arrays: dict[str, Any], metadata: dict[str, Any]) -> str:
    """Content hash of a logged dataset: its identity, then each array's dtype, shape and bytes."""
    import numpy as np

    digest = hashlib.sha256()
    identity = {key: metadata.get(key) for key in _IDENTITY}
    layout = {name: [str(a.dtype), list(a.shape)] for name, a in sorted(arrays.items())}
    digest.update(canonical_json({"identity": identity, "arrays": layout}))
    for _, array in sorted(arrays.items()):
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def folder_sha256(path: str | Path) -> str:
    """:func:`dataset_sha256` of a dataset written by ``gymforge dataset collect``: its folder,
    or ``"minari:NAME"`` for its Minari export (the same records give the same hash)."""
    from gymforge.envs.cmab.datasets import load_dataset

    dataset = load_dataset(path)
    return dataset_sha256(dataset.arrays, dataset.metadata)


def collector_kwargs(env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The env kwargs that describe the logged problem (the episode's length and the action
    format do not)."""
    episode_only = ("horizon", "action_format", "report_regret")
    return {k: v for k, v in env_kwargs.items() if k not in episode_only}


def build_dataset(env_id: str, env_kwargs: dict[str, Any], block: dict[str, Any], seed: int):
    """The dataset of evaluation seed ``seed`` (cached per process) and its sha256.

    Returns ``(dataset, sha256)``; the dataset's ``params`` are emptied (agents must not see the
    instance's true parameters).
    """
    from gymforge.envs.cmab.collect import DATASET_KIND, collect_records, problem_for
    from gymforge.envs.cmab.datasets import LoggedDataset
    from gymforge.envs.cmab.problem import instance_params, params_hash

    if block["kind"] != DATASET_KIND:
        raise ValueError(f"offline dataset kind {block['kind']!r} is not supported")
    kwargs = collector_kwargs(env_kwargs)
    key = canonical_json([env_id, kwargs, block["logging"], block["n"], block["options"], seed])
    if key not in _CACHE:
        problem = problem_for(env_id, kwargs)
        params = instance_params(problem, seed)
        options = block["options"]
        arrays = collect_records(
            problem,
            params,
            block["logging"],
            block["n"],
            seed,
            block=options.get("block"),
            q=options.get("q", 0.5),
            delta=options.get("delta", 0.1),
        )
        metadata = {
            "kind": DATASET_KIND,
            "env_id": env_id,
            "env_kwargs": kwargs,
            "application": problem.name,
            "logging": block["logging"],
            "logging_options": dict(options),
            "n": int(block["n"]),
            "seed": int(seed),
            "instance_params_hash": params_hash(params),
            "problem": problem.public_config(),
        }
        dataset = LoggedDataset(arrays=arrays, metadata=metadata, problem=problem, params={})
        _CACHE[key] = (dataset, dataset_sha256(arrays, metadata))
    return _CACHE[key]


def episode_datasets(protocol: Any, indices: list[int]) -> dict[int, tuple[Any, str]]:
    """The checked datasets of episodes ``indices`` of an offline protocol.

    Raises:
        ValueError: the protocol is not calibrated (no hashes yet), or a rebuilt dataset does not
            hash to the sha256 the protocol records (the collector, the env or the protocol
            changed).
    """
    block = protocol.offline_dataset
    hashes = block["sha256"]
    if hashes is None:
        raise ValueError(
            f"protocol {protocol.task}: offline_dataset.sha256 is null; run `gymforge leaderboard "
            f"calibrate {protocol.task}` to build the datasets and record their hashes"
        )
    out = {}
    for index in indices:
        seed = protocol.seeds[index]
        dataset, digest = build_dataset(protocol.env_id, protocol.env_kwargs, block, seed)
        if digest != hashes[index]:
            raise ValueError(
                f"protocol {protocol.task}: the offline dataset of episode {index} (seed {seed}) "
                f"hashes to {digest}, but the protocol records {hashes[index]} (the collector, "
                "the env or the protocol's dataset hash changed); freeze a new protocol version"
            )
        out[index] = (dataset, digest)
    return out


def dataset_hashes(protocol: Any) -> list[str]:
    """The sha256 of every evaluation seed's dataset, built afresh (for ``calibrate``)."""
    block = protocol.offline_dataset
    return [
        build_dataset(protocol.env_id, protocol.env_kwargs, block, seed)[1]
        for seed in protocol.seeds
    ]
