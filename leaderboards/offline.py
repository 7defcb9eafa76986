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

The dataset of each evaluation seed comes from the env id's ``EnvSpec.board_dataset`` (the
family's builder; for Off-CMAB, ``n`` plays of the instance that ``env.reset(seed=s)`` draws,
logged with record seed ``s``, exactly what ``gymforge dataset collect`` writes), so the agent is
evaluated on the instance its data came from, and never sees the instance's true parameters.
Datasets are small and rebuilt in memory (a few milliseconds each), not stored under
``leaderboards/``; :func:`gymforge.hashing.dataset_sha256` hashes the record arrays and the
dataset's identity, not a file, so a collected folder hashes to the protocol's figure too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gymforge.hashing import dataset_sha256
from gymforge.leaderboards.files import canonical_json
from gymforge.registry import get_spec, load_entry_point

#: collectors the evaluator can build datasets with.
KINDS = ("offcmab-logged-plays",)
KEYS = {"kind", "logging", "n", "options", "sha256", "agents", "description"}
OPTION_KEYS = {"block", "q", "delta"}
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


def build_dataset(env_id: str, env_kwargs: dict[str, Any], block: dict[str, Any], seed: int):
    """The dataset of evaluation seed ``seed`` (cached per process) and its sha256, built by the
    id's ``EnvSpec.board_dataset``.

    Returns ``(dataset, sha256)``; the family's builder empties the dataset's ``params`` (agents
    must not see the instance's true parameters).
    """
    key = canonical_json([env_id, env_kwargs, block["logging"], block["n"], block["options"], seed])
    if key not in _CACHE:
        spec = get_spec(env_id)
        if spec.board_dataset is None:
            raise ValueError(
                f"{env_id} builds no offline board dataset (its EnvSpec has no board_dataset)"
            )
        dataset, arrays, metadata = load_entry_point(spec.board_dataset)(
            env_id, env_kwargs, block, seed
        )
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
