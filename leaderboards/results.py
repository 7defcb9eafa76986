"""The schema of a results document (what ``gymforge evaluate`` writes), checked on every read."""

from __future__ import annotations

from typing import Any

from gymforge.leaderboards.evaluator import RESULTS_SCHEMA, episodes_digest, summarise
from gymforge.leaderboards.files import canonical_json
from gymforge.leaderboards.protocol import Protocol

_RESULTS_KEYS = {
    "schema",
    "task",
    "protocol",
    "env",
    "agent",
    "metric",
    "episodes",
    "episodes_sha256",
    "aggregate",
    "provenance",
}


def check_results(results: Any, protocol: Protocol, where: str) -> None:
    """Schema and internal consistency of a results document; raises ``ValueError``."""
    if not isinstance(results, dict):
        raise ValueError(f"{where}: must be a JSON object")
    missing = sorted(_RESULTS_KEYS - set(results))
    unknown = sorted(set(results) - _RESULTS_KEYS)
    if missing:
        raise ValueError(f"{where}: field {missing[0]!r} is missing")
    if unknown:
        raise ValueError(f"{where}: field {unknown[0]!r} is unknown")
    if results["schema"] != RESULTS_SCHEMA:
        raise ValueError(f"{where}: schema must be {RESULTS_SCHEMA!r}")
    if results["task"] != protocol.task:
        raise ValueError(f"{where}: task {results['task']!r} is not {protocol.task!r}")
    if results["protocol"] != {"version": protocol.version, "sha256": protocol.sha256}:
        raise ValueError(
            f"{where}: evaluated under protocol {results['protocol']}, but {protocol.path} is now "
            f"version {protocol.version} with sha256 {protocol.sha256} (the protocol changed)"
        )
    if results["metric"] != protocol.metric:
        raise ValueError(f"{where}: metric {results['metric']!r} is not {protocol.metric!r}")
    episodes = results["episodes"]
    if not isinstance(episodes, list) or not all(isinstance(e, dict) for e in episodes):
        raise ValueError(f"{where}: episodes must be a list of objects")
    if [e.get("index") for e in episodes] != list(range(len(protocol.seeds))) or [
        e.get("seed") for e in episodes
    ] != protocol.seeds:
        raise ValueError(f"{where}: episodes are not the protocol's seeds, in order")
    for e in episodes:
        for key in ("metric", "return"):
            if isinstance(e.get(key), bool) or not isinstance(e.get(key), int | float):
                raise ValueError(f"{where}: episode {e['index']} has no numeric {key!r}")
    hashes = (protocol.offline_dataset or {}).get("sha256")
    if protocol.offline_dataset is not None:
        for e in episodes:
            expected = hashes[e["index"]] if hashes else None
            if e.get("dataset_sha256") != expected:
                raise ValueError(
                    f"{where}: episode {e['index']} was evaluated on offline dataset "
                    f"{e.get('dataset_sha256')!r}, but the protocol's dataset for seed "
                    f"{e['seed']} has sha256 {expected!r} (mismatched dataset)"
                )
            if not isinstance(e.get("fit"), bool):
                raise ValueError(f"{where}: episode {e['index']} has no boolean 'fit'")
    if results["episodes_sha256"] != episodes_digest(episodes):
        raise ValueError(f"{where}: episodes do not match episodes_sha256 (edited episodes)")
    if canonical_json(results["aggregate"]) != canonical_json(summarise(protocol, episodes)):
        raise ValueError(f"{where}: aggregate differs from the one recomputed from its episodes")
