"""Held-out evaluation of a policy under training: deterministic episodes on the exact engine.

Both backends evaluate the same way (one ``gym.make`` env, one episode per held-out seed,
through :func:`gymforge.agents.episode.run_episode`) so that their ``evaluations.json`` rows
compare; only the agent differs (an SB3 model or an on-device policy).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from gymforge.agents.episode import run_episode


def make_single_env(env_id: str, env_kwargs: dict[str, Any]) -> gym.Env:
    """``gym.make(env_id, **env_kwargs)``."""
    return gym.make(env_id, **env_kwargs)


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
