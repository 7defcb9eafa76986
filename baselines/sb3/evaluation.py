"""Deterministic episodes of an :class:`SB3Agent` on held-out seeds."""

from __future__ import annotations

from typing import Any

import numpy as np

from gymforge.agents.episode import run_episode
from gymforge.baselines.sb3.envs import EVAL_SEED_BASE, make_single_env


def eval_seeds(episodes: int, offset: int = 0) -> list[int]:
    """The held-out seeds ``EVAL_SEED_BASE + offset + k`` for ``k < episodes``."""
    return [EVAL_SEED_BASE + offset + k for k in range(episodes)]


def run_episodes(
    agent: Any, env_id: str, env_kwargs: dict[str, Any], seeds: list[int]
) -> list[dict[str, Any]]:
    """One episode per seed with ``agent`` acting; ``[{seed, return, length}, ...]``."""
    env = make_single_env(env_id, env_kwargs)
    try:
        played = [run_episode(env, agent, seed) for seed in seeds]
    finally:
        env.close()
    return [{"seed": e.seed, "return": e.total_return, "length": e.length} for e in played]


def summarize(episodes: list[dict[str, Any]]) -> dict[str, float]:
    """Mean and population std of the episode returns."""
    returns = np.array([e["return"] for e in episodes], dtype=float)
    return {"mean_return": float(returns.mean()), "std_return": float(returns.std())}
