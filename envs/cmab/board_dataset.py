"""The logged dataset an Off-CMAB offline board hands its agents (``EnvSpec.board_dataset``).

The dataset of evaluation seed ``s`` holds ``n`` plays of the instance that ``env.reset(seed=s)``
draws, logged with record seed ``s``: exactly what ``gymforge dataset collect ENV_ID --logging L
--n N --seed s --kwargs K`` writes, where ``K`` is the protocol's env kwargs without the
episode-only ones. The agents' copy has its ``params`` (the instance's true parameters) removed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gymforge.hashing import dataset_sha256

#: env kwargs that describe an episode, not the logged problem
EPISODE_ONLY = ("horizon", "action_format", "report_regret")


def collector_kwargs(env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The env kwargs that describe the logged problem (the episode's length and the action
    format do not)."""
    return {k: v for k, v in env_kwargs.items() if k not in EPISODE_ONLY}


def build(
    env_id: str, env_kwargs: dict[str, Any], block: dict[str, Any], seed: int
) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """The agents' dataset of evaluation seed ``seed`` of a protocol's ``offline_dataset``
    ``block``, with the arrays and metadata its hash is taken of."""
    from gymforge.envs.cmab.collect import DATASET_KIND, collect_records, problem_for
    from gymforge.envs.cmab.datasets import LoggedDataset
    from gymforge.envs.cmab.problem import instance_params, params_hash

    if block["kind"] != DATASET_KIND:
        raise ValueError(f"offline dataset kind {block['kind']!r} is not supported")
    kwargs = collector_kwargs(env_kwargs)
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
    return dataset, arrays, metadata


def folder_sha256(path: str | Path) -> str:
    """The board's hash of a dataset written by ``gymforge dataset collect``: its folder, or
    ``"minari:NAME"`` for its Minari export (the same records give the same hash)."""
    from gymforge.envs.cmab.datasets import load_dataset

    dataset = load_dataset(path)
    return dataset_sha256(dataset.arrays, dataset.metadata)
