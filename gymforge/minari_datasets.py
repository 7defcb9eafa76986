"""Minari datasets of any single-agent id, written with Minari's own dataset writer.

``gymforge dataset collect ID --agent NAME|PATH --episodes N --minari NAME`` runs ``N`` episodes
of the agent (a reference agent of the id, or a saved agent as ``gymforge evaluate`` takes it:
an SB3 ``model.zip``, an on-device ``policy.pt``, a ``gymforge train`` run folder) on
``gym.make(ID)``, episode ``k`` reset with seed ``SEED + k``, keeps each as Minari's
``EpisodeBuffer`` and writes them with ``minari.create_dataset_from_buffers`` (Minari's
``DataCollector`` wrapper would do the same but needs jax, ``minari[create]``, to add steps),
as the Minari dataset ``NAME`` (Minari's ``name-v0`` naming) under Minari's datasets
folder (``MINARI_DATASETS_PATH``, or ``--minari-root``). ``minari.load_dataset(NAME)`` reads it
back; its description holds what produced it (id, kwargs, agent, seeds, gymforge version).
Ids with a family collector (MetaBBO, Off-CMAB) keep theirs; both export to Minari too.
"""

from __future__ import annotations

import argparse
import json
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from gymforge.agents.episode import run_episode
from gymforge.core.extras import require
from gymforge.core.minari_folder import minari_root

__all__ = ["collect_cli", "collect_minari", "load_minari", "minari_root"]


def collect_minari(
    env_id: str,
    agent: str,
    episodes: int,
    dataset_id: str,
    *,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    max_steps: int | None = None,
    root: str | Path | None = None,
    overwrite: bool = False,
    progress: bool = False,
) -> Any:
    """Collect ``episodes`` episodes of ``agent`` on ``env_id`` as the Minari dataset
    ``dataset_id`` (see the module docstring) and return the ``minari.MinariDataset``;
    ``progress`` shows a bar of the episodes on stderr."""
    minari = require("minari", "Minari datasets")
    from gymforge.cli import check_agent_name, load_agent, package_version
    from gymforge.registry import get_spec

    spec = get_spec(env_id)
    if spec.capabilities.multi_agent:
        raise ValueError(f"{env_id} is a PettingZoo id; Minari datasets need a single-agent id")
    check_agent_name(spec, agent)
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise ValueError(f"--episodes must be an int >= 1, got {episodes!r}")
    with minari_root(root):
        if dataset_id in minari.list_local_datasets():
            if not overwrite:
                raise ValueError(f"Minari dataset {dataset_id!r} exists; pass --overwrite")
            minari.delete_dataset(dataset_id)
        limit = {} if max_steps is None else {"max_episode_steps": max_steps}
        env = gym.make(env_id, **(env_kwargs or {}), **limit)
        policy = load_agent(spec, agent, env, batched=False)
        from tqdm import tqdm

        buffers = [
            _episode(env, policy, seed + k, k, minari)
            for k in tqdm(range(episodes), desc=f"collect {env_id}", unit="episode",
                          disable=not progress)
        ]  # fmt: skip
        returns = [float(b.rewards.sum()) for b in buffers]
        provenance = {
            "env_id": env_id,
            "env_kwargs": env_kwargs or {},
            "max_steps": max_steps,
            "agent": agent,
            "seeds": [seed, seed + episodes - 1],
            "mean_return": sum(returns) / len(returns),
            "gymforge_version": package_version(),
        }
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=UserWarning, module="minari")
            dataset = minari.create_dataset_from_buffers(
                dataset_id=dataset_id,
                buffer=buffers,
                env=env.spec,
                algorithm_name=f"gymforge agent {agent}",
                author="gymforge",
                code_permalink="gymforge.minari_datasets",
                description="gymforge episodes. " + json.dumps(provenance, sort_keys=True),
            )
        env.close()
    return dataset


def _episode(env: gym.Env, policy: Any, seed: int, index: int, minari: Any) -> Any:
    """One episode of ``policy`` as Minari's ``EpisodeBuffer`` (observations: length + 1 rows)."""
    observations, actions, rewards, terminations, truncations = [], [], [], [], []

    def keep(obs: Any, action: Any, reward: float, terminated: bool, truncated: bool, _: Any):
        observations.append(obs)
        actions.append(np.asarray(action))
        rewards.append(reward)
        terminations.append(terminated)
        truncations.append(truncated)

    episode = run_episode(env, policy, seed, on_step=keep)
    return minari.data_collector.EpisodeBuffer(
        id=index,
        seed=seed,
        observations=np.stack([episode.first_observation, *observations]),
        actions=np.stack(actions).astype(env.action_space.dtype),
        rewards=np.asarray(rewards, dtype=np.float64),
        terminations=np.asarray(terminations),
        truncations=np.asarray(truncations),
    )


def load_minari(dataset_id: str, root: str | Path | None = None) -> Any:
    """``minari.load_dataset(dataset_id)`` under the datasets folder ``root``."""
    minari = require("minari", "Minari datasets")
    with minari_root(root):
        return minari.load_dataset(dataset_id)


def collect_cli(env_id: str, argv: Sequence[str]) -> int:
    """``gymforge dataset collect ID --agent NAME|PATH --episodes N --minari NAME``."""
    parser = argparse.ArgumentParser(
        prog=f"gymforge dataset collect {env_id}",
        description="Run an agent for some episodes and write them as a Minari dataset: each "
        "episode kept as a minari EpisodeBuffer, all written with "
        "minari.create_dataset_from_buffers.",
    )
    parser.add_argument(
        "--agent",
        required=True,
        help="a reference agent of the id (see gymforge info ID) or a saved agent: model.zip, "
        "policy.pt or a gymforge train run folder",
    )
    parser.add_argument(
        "--episodes", "--n", dest="episodes", type=int, required=True, help="episodes to run"
    )
    parser.add_argument(
        "--minari", required=True, metavar="NAME", help="Minari dataset id, e.g. lineflow-wt-v0"
    )
    parser.add_argument("--seed", type=int, default=0, help="episode k uses seed SEED + k")
    parser.add_argument(
        "--kwargs", default="{}", help="env kwargs as JSON, e.g. '{\"horizon\": 500}'"
    )
    parser.add_argument(
        "--max-steps", type=int, default=None, help="truncate every episode after this many steps"
    )
    parser.add_argument(
        "--minari-root", default=None, help="Minari datasets folder (default: Minari's own)"
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing dataset")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(list(argv))
    try:
        env_kwargs = json.loads(args.kwargs)
    except json.JSONDecodeError as error:
        raise ValueError(f"--kwargs must be a JSON object: {error}") from None
    if not isinstance(env_kwargs, dict):
        raise ValueError(f"--kwargs must be a JSON object, got {args.kwargs!r}")
    dataset = collect_minari(
        env_id,
        args.agent,
        args.episodes,
        args.minari,
        seed=args.seed,
        env_kwargs=env_kwargs,
        max_steps=args.max_steps,
        root=args.minari_root,
        overwrite=args.overwrite,
        progress=not args.quiet,
    )
    print(
        f"wrote Minari dataset {args.minari}: {dataset.total_episodes} episodes, "
        f"{dataset.total_steps} steps of {env_id} by {args.agent}"
    )
    return 0
