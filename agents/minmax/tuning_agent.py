"""``SpectralTuningAgent``: the best constant (step size, momentum) for ``MinMaxTuning-v0``.

On a linear game (bilinear or quadratic) the heavy-ball update is a linear map, and the constant
``(h, β)`` that minimises its exact spectral radius ``ρ`` gives the fastest asymptotic
convergence (or, where every choice diverges — Sim-HB on bilinear games — the slowest
divergence). The agent searches a grid over the env's action box once, at construction, and then
plays that pair every step. On the nonlinear games (``xy2``, ``sextic``) there is no single
linear map to optimise, so it plays the conservative constant ``(h_max / 10, 0)`` (plain GDA
with a small step).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch

from gymforge.agents.minmax.spectral import stability_map
from gymforge.core.arrays import host_array
from gymforge.envs.minmax.games import LinearGame


def observation_ndim(env: gym.Env | gym.vector.VectorEnv) -> int:
    """Dimensions of one observation (a batch has one more)."""
    return len((getattr(env, "single_observation_space", None) or env.observation_space).shape)


class ConstantChoice:
    """Plays ``self.choice`` (an ``(h, β)`` pair) every step, for one env or a batch."""

    choice: np.ndarray
    _obs_ndim: int

    def reset(self, seed: int | None = None) -> None:
        """Nothing to reset: the choice is fixed."""

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> np.ndarray:
        obs = host_array(observation)
        if obs.ndim == self._obs_ndim:
            return self.choice.copy()
        return np.repeat(self.choice[None], obs.shape[0], axis=0)


class SpectralTuningAgent(ConstantChoice):
    """Plays the ``(h, β)`` of least spectral radius on a ``grid × grid`` search of the action box.

    Args:
        env: a ``MinMaxTuning-v0`` env (scalar or vector).
        grid: grid points per axis of the search.
    """

    def __init__(self, env: gym.Env | gym.vector.VectorEnv, grid: int = 64) -> None:
        base = env.unwrapped
        vector = getattr(base, "_vector", base)  # the scalar env wraps a vector env
        space = getattr(env, "single_action_space", None) or env.action_space
        low, high = space.low.astype(np.float64), space.high.astype(np.float64)
        game = vector.game
        if isinstance(game, LinearGame):
            hs = torch.linspace(high[0] / grid, high[0], grid, dtype=torch.float64)
            betas = torch.linspace(low[1], high[1], grid, dtype=torch.float64)
            rho = stability_map(game.to("cpu"), hs, betas, vector.order)
            i, j = divmod(int(torch.argmin(rho)), grid)
            self.choice = np.array([hs[i], betas[j]], dtype=np.float32)
            self.spectral_radius: float | None = float(rho[i, j])
        else:
            self.choice = np.array([high[0] / 10.0, 0.0], dtype=np.float32)
            self.spectral_radius = None
        self.choice = np.clip(self.choice, space.low, space.high)
        self._obs_ndim = observation_ndim(env)
