"""Reference players of the ``MinMax-<Game>-v0`` PettingZoo envs, used by ``gymforge rollout``.

Built from the ``ParallelEnv``, a players object answers ``act(observations)`` with one action
per agent (see :mod:`gymforge.agents.random_players`). Observations are those of
:class:`~gymforge.envs.minmax.parallel_env.MinMaxParallelEnv`: ``[x, y, ∇_x f, ∇_y f]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo import ParallelEnv

from gymforge.core.arrays import host_array


class HeavyBallPlayers:
    """Simultaneous heavy-ball gradient descent–ascent from the observed gradients.

    ``x`` plays ``−h ∇_x f + β Δx_prev`` and ``y`` plays ``+h ∇_y f + β Δy_prev``, each clipped to
    its action box; ``β = 0`` is plain GDA. On the bilinear game every step size diverges (the
    paper's first claim), so this is a reference for the dynamics, not a solver.

    Args:
        env: the ``ParallelEnv``.
        step_size: ``h > 0``.
        momentum: ``β``, may be negative.
    """

    def __init__(self, env: ParallelEnv, step_size: float = 0.05, momentum: float = 0.0) -> None:
        if not step_size > 0:
            raise ValueError(f"step_size must be > 0, got {step_size}")
        self.step_size = float(step_size)
        self.momentum = float(momentum)
        self.spaces = {agent: env.action_space(agent) for agent in env.possible_agents}
        self.x_dim = self.spaces["x"].shape[0]
        self.y_dim = self.spaces["y"].shape[0]
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        self.last = {
            agent: np.zeros(space.shape, np.float32) for agent, space in self.spaces.items()
        }

    def act(self, observations: dict[str, Any]) -> dict[str, np.ndarray]:
        obs = host_array(observations["x"], np.float64)
        m, n = self.x_dim, self.y_dim
        gradients = {"x": -obs[m + n : 2 * m + n], "y": obs[2 * m + n : 2 * (m + n)]}
        actions = {}
        for agent, direction in gradients.items():
            space = self.spaces[agent]
            move = self.step_size * direction + self.momentum * self.last[agent]
            actions[agent] = np.clip(move, space.low, space.high).astype(np.float32)
        self.last = actions
        return actions


def gda_players(env: ParallelEnv) -> HeavyBallPlayers:
    """Plain simultaneous GDA with step size 0.05."""
    return HeavyBallPlayers(env, step_size=0.05, momentum=0.0)


def negative_momentum_players(env: ParallelEnv) -> HeavyBallPlayers:
    """Simultaneous heavy ball with step size 0.05 and momentum −0.3."""
    return HeavyBallPlayers(env, step_size=0.05, momentum=-0.3)
