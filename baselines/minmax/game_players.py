"""Extragradient and optimistic GDA as players of the ``MinMax-<Game>-v0`` PettingZoo envs.

Same players protocol as :mod:`gymforge.agents.minmax.players` (``reset(seed)``,
``act(observations) -> {agent: move}``; single observations or a batch on the last axis). Each
env step evaluates the gradient once, so:

- extragradient takes two env steps per iteration: to the look-ahead point
  ``z_½ = z_k + h v(z_k)``, then to ``z_{k+1} = z_k + h v(z_½)`` (the move is
  ``z_{k+1} − z_½``), where ``v = (−∇_x f, ∇_y f)``;
- OGDA takes one: ``z_{k+1} = z_k + h (2 v(z_k) − v(z_{k−1}))``, with ``v(z_{−1}) = v(z_0)``.

Moves are clipped to the action box (``max_increment``), which the tuned step sizes never reach
on the boards' games.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo import ParallelEnv

from gymforge.agents.minmax.players import player_direction
from gymforge.core.arrays import host_array


class _GradientPlayers:
    """Shared set-up: the step size, the action boxes and the players' dimensions."""

    def __init__(self, env: ParallelEnv, step_size: float) -> None:
        if isinstance(step_size, bool) or not isinstance(step_size, int | float) or step_size <= 0:
            raise ValueError(f"step_size must be a number > 0, got {step_size!r}")
        self.step_size = float(step_size)
        self.spaces = {agent: env.action_space(agent) for agent in env.possible_agents}
        self.x_dim = self.spaces["x"].shape[0]
        self.y_dim = self.spaces["y"].shape[0]

    def _field(self, observations: dict[str, Any]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The observation (float64) and each player's direction ``v`` at the current point."""
        obs = host_array(observations["x"], np.float64)
        return obs, {a: player_direction(obs, a, self.x_dim, self.y_dim) for a in self.spaces}

    def _clip(self, moves: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {
            a: np.clip(move, self.spaces[a].low, self.spaces[a].high).astype(np.float32)
            for a, move in moves.items()
        }


class ExtragradientPlayers(_GradientPlayers):
    """Extragradient (Korpelevich 1976), two env steps per iteration (see the module doc).

    Args:
        env: the ``ParallelEnv``.
        step_size: ``h > 0``.
    """

    def __init__(self, env: ParallelEnv, step_size: float = 0.5) -> None:
        super().__init__(env, step_size)
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        self.anchor: dict[str, np.ndarray] | None = None  # z_k while at the look-ahead point

    def act(self, observations: dict[str, Any]) -> dict[str, np.ndarray]:
        obs, v = self._field(observations)
        m, n = self.x_dim, self.y_dim
        here = {"x": obs[..., :m].copy(), "y": obs[..., m : m + n].copy()}
        h = self.step_size
        if self.anchor is None:  # look ahead from z_k
            self.anchor = here
            return self._clip({a: h * v[a] for a in v})
        target = {a: self.anchor[a] + h * v[a] for a in v}  # z_k + h v(z_½)
        self.anchor = None
        return self._clip({a: target[a] - here[a] for a in v})


class OptimisticPlayers(_GradientPlayers):
    """Optimistic gradient descent–ascent (Daskalakis et al. 2018), one env step per iteration.

    Args:
        env: the ``ParallelEnv``.
        step_size: ``h > 0``.
    """

    def __init__(self, env: ParallelEnv, step_size: float = 0.3) -> None:
        super().__init__(env, step_size)
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        self.last: dict[str, np.ndarray] | None = None  # v(z_{k−1})

    def act(self, observations: dict[str, Any]) -> dict[str, np.ndarray]:
        _, v = self._field(observations)
        last = v if self.last is None else self.last
        self.last = v
        h = self.step_size
        return self._clip({a: h * (2.0 * v[a] - last[a]) for a in v})
