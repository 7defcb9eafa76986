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

#: bounds an episode's metric cannot leave, by metric name: an exact regret or suboptimality gap
#: is never negative; a log10 error or distance never falls below its floor (1e-8 for BBOB's
#: final error, 1e-12 for the games' distance) nor, for the distance, above the divergence cap.
#: A stored figure outside them cannot come from the env, whatever else matches.
PLAUSIBLE_METRIC_BOUNDS: dict[str, tuple[float | None, float | None]] = {
    "info:regret": (0.0, None),
    "info:best_error": (-8.0, None),
    "info:distance": (-12.0, 3.0),
}
#: slack for the bounds (rounding of the stored figures)
BOUND_SLACK = 1e-9


def check_plausible(value: float, metric: str, where: str) -> None:
    """Raise ``ValueError`` when ``value`` lies outside the bounds ``metric`` has."""
    low, high = PLAUSIBLE_METRIC_BOUNDS.get(metric, (None, None))
    if (low is not None and value < low - BOUND_SLACK) or (
        high is not None and value > high + BOUND_SLACK
    ):
        raise ValueError(
            f"{where}: metric {value!r} is impossible for {metric} (bounds {low}..{high}); "
            "such a figure cannot come from the env"
        )


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
        check_plausible(e["metric"], protocol.metric, f"{where}: episode {e['index']}")
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
