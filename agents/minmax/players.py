"""Reference players of the ``MinMax-<Game>-v0`` PettingZoo envs, used by ``gymforge rollout``.

Built from the ``ParallelEnv``, a players object answers ``act(observations)`` with one action
per agent (see :mod:`gymforge.agents.random_players`). Observations are those of
:class:`~gymforge.envs.minmax.parallel_env.MinMaxParallelEnv`: ``[x, y, ∇_x f, ∇_y f]``, one
per agent or a batch ``(B, ·)`` of them (every player here works on the last axis, so the same
object plays a ``MinMaxBatchedParallelEnv``).

Every env step evaluates the gradient once (at the new point), so methods compare at equal
numbers of gradient evaluations: Sim-HB makes one round per step, Alt-HB one round per two steps
(``x`` moves, then ``y`` moves after seeing the gradient at the new ``x``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo import ParallelEnv

from gymforge.core.arrays import host_array


def player_direction(obs: np.ndarray, agent: str, m: int, n: int) -> np.ndarray:
    """The gradient step direction of ``agent`` read from observations ``[x, y, ∇_x f, ∇_y f]``
    (last axis): ``−∇_x f`` for the minimiser ``x``, ``+∇_y f`` for the maximiser ``y``."""
    if agent == "x":
        return -obs[..., m + n : 2 * m + n]
    return obs[..., 2 * m + n : 2 * (m + n)]


def _setup_players(players: Any, env: ParallelEnv, step_size: float, momentum: float) -> None:
    """The settings both heavy-ball players share: ``h > 0``, ``β``, the agents' action boxes
    and the two players' dimensions; then a reset."""
    if not step_size > 0:
        raise ValueError(f"step_size must be > 0, got {step_size}")
    players.step_size = float(step_size)
    players.momentum = float(momentum)
    players.spaces = {agent: env.action_space(agent) for agent in env.possible_agents}
    players.x_dim = players.spaces["x"].shape[0]
    players.y_dim = players.spaces["y"].shape[0]
    players.reset()


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
        _setup_players(self, env, step_size, momentum)

    def reset(self, seed: int | None = None) -> None:
        self.last = {
            agent: np.zeros(space.shape, np.float32) for agent, space in self.spaces.items()
        }

    def act(self, observations: dict[str, Any]) -> dict[str, np.ndarray]:
        obs = host_array(observations["x"], np.float64)
        m, n = self.x_dim, self.y_dim
        gradients = {"x": -obs[..., m + n : 2 * m + n], "y": obs[..., 2 * m + n : 2 * (m + n)]}
        actions = {}
        for agent, direction in gradients.items():
            space = self.spaces[agent]
            move = self.step_size * direction + self.momentum * self.last[agent]
            actions[agent] = np.clip(move, space.low, space.high).astype(np.float32)
        self.last = actions
        return actions


class AltHeavyBallPlayers:
    """Alternating heavy-ball gradient descent–ascent (Alt-HB), one round per two env steps.

    Step 1 of a round: ``x`` plays ``−h ∇_x f(x_k, y_k) + β (x_k − x_{k−1})`` while ``y`` stays.
    Step 2: ``y`` plays ``+h ∇_y f(x_{k+1}, y_k) + β (y_k − y_{k−1})`` from the gradient it now
    observes at the new ``x``, while ``x`` stays. On bilinear games Alt-HB with negative momentum
    converges where every Sim-HB diverges (Feng et al., ICML 2025, Prop. 3.2).

    Args:
        env: the ``ParallelEnv``.
        step_size: ``h > 0``.
        momentum: ``β``, may be negative.
    """

    def __init__(self, env: ParallelEnv, step_size: float = 0.3, momentum: float = -0.3) -> None:
        _setup_players(self, env, step_size, momentum)

    def reset(self, seed: int | None = None) -> None:
        self.phase = 0
        self.last = {
            agent: np.zeros(space.shape, np.float64) for agent, space in self.spaces.items()
        }

    def act(self, observations: dict[str, Any]) -> dict[str, np.ndarray]:
        obs = host_array(observations["x"], np.float64)
        m, n = self.x_dim, self.y_dim
        mover, other = ("x", "y") if self.phase == 0 else ("y", "x")
        direction = player_direction(obs, mover, m, n)
        space = self.spaces[mover]
        move = self.step_size * direction + self.momentum * self.last[mover]
        move = np.clip(move, space.low, space.high)
        self.last[mover] = move
        self.phase = 1 - self.phase
        still = np.zeros(obs.shape[:-1] + self.spaces[other].shape, np.float32)
        return {mover: move.astype(np.float32), other: still}


class HeavyBallSide:
    """One side of simultaneous heavy-ball GDA, for the per-agent form of a submission.

    ``act(observation, info)`` returns this agent's move only: ``−h ∇_x f + β Δx_prev`` for
    ``x``, ``+h ∇_y f + β Δy_prev`` for ``y`` (clipped to its action box). A dict
    ``{"x": HeavyBallSide(env, "x", ...), "y": HeavyBallSide(env, "y", ...)}`` plays the same
    game as :class:`HeavyBallPlayers` with the same ``h`` and ``β``.

    Args:
        env: the ``ParallelEnv``.
        agent: ``"x"`` or ``"y"``.
        step_size: ``h > 0``.
        momentum: ``β``.
    """

    def __init__(
        self, env: ParallelEnv, agent: str, step_size: float = 0.05, momentum: float = 0.0
    ) -> None:
        if agent not in env.possible_agents:
            raise ValueError(f"agent must be one of {list(env.possible_agents)}, got {agent!r}")
        if not step_size > 0:
            raise ValueError(f"step_size must be > 0, got {step_size}")
        self.agent = agent
        self.step_size = float(step_size)
        self.momentum = float(momentum)
        self.space = env.action_space(agent)
        self.x_dim = env.action_space("x").shape[0]
        self.y_dim = env.action_space("y").shape[0]
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        self.last = np.zeros(self.space.shape, np.float64)

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> np.ndarray:
        obs = host_array(observation, np.float64)
        m, n = self.x_dim, self.y_dim
        direction = player_direction(obs, self.agent, m, n)
        move = np.clip(
            self.step_size * direction + self.momentum * self.last, self.space.low, self.space.high
        )
        self.last = move
        return move.astype(np.float32)


def gda_players(env: ParallelEnv) -> HeavyBallPlayers:
    """Plain simultaneous GDA with step size 0.05."""
    return HeavyBallPlayers(env, step_size=0.05, momentum=0.0)


def negative_momentum_players(env: ParallelEnv) -> HeavyBallPlayers:
    """Simultaneous heavy ball with step size 0.05 and momentum −0.3."""
    return HeavyBallPlayers(env, step_size=0.05, momentum=-0.3)


def alt_negative_momentum_players(env: ParallelEnv) -> AltHeavyBallPlayers:
    """Alternating heavy ball with step size 0.3 and momentum −0.3."""
    return AltHeavyBallPlayers(env, step_size=0.3, momentum=-0.3)
