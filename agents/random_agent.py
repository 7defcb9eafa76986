"""``RandomAgent``: uniform random actions from the env's action space."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from gymforge.core.arrays import host_array


class RandomAgent:
    """Samples actions uniformly; for a batch of observations, one action per instance.

    Args:
        env: a ``gym.Env`` or a Gymnasium ``VectorEnv`` (its single action space is used).
    """

    def __init__(self, env: gym.Env | gym.vector.VectorEnv) -> None:
        space = getattr(env, "single_action_space", None) or env.action_space
        self.action_space = space
        self._obs_ndim = len(
            (getattr(env, "single_observation_space", None) or env.observation_space).shape
        )
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        self.action_space.seed(seed)

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> Any:
        obs = host_array(observation)
        if obs.ndim == self._obs_ndim:
            return self.action_space.sample()
        return np.stack([self.action_space.sample() for _ in range(obs.shape[0])])
