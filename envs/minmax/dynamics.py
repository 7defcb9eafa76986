"""Batched dynamics shared by the min-max envs: starting points, observations, the heavy-ball step.

Pure functions of (game, config, state, action, rng); the env classes own the state.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.minmax.config import GameConfig
from gymforge.envs.minmax.games import Game


@dataclass
class PlayState:
    """State of ``B`` two-player games."""

    x: torch.Tensor  # (B, m) float64, the minimiser's parameter
    y: torch.Tensor  # (B, n) float64, the maximiser's parameter
    steps: torch.Tensor  # (B,) int64, completed rounds in the episode


def starting_point(
    game: Game, config: GameConfig, rng: InstanceRNG, where: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Uniform ``x`` (B, m) and ``y`` (B, n) in ``[−init_scale, init_scale]`` (``x ≥ 0`` for xy2)."""
    u = rng.uniform(game.x_dim + game.y_dim, where=where).to(torch.float64)
    z = (2.0 * u - 1.0) * config.init_scale
    x, y = z[:, : game.x_dim], z[:, game.x_dim :]
    if game.name == "xy2":
        x = x.abs()
    return x, y


def observe(game: Game, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``(x, y, ∇_x f, ∇_y f)`` of shape ``(B, 2(m + n))``, float64."""
    gx, gy = game.grads(x, y)
    return torch.cat([x, y, gx, gy], dim=1)


def gradient_norm(game: Game, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``sqrt(‖∇_x f‖² + ‖∇_y f‖²)`` of shape ``(B,)``."""
    gx, gy = game.grads(x, y)
    return torch.sqrt((gx * gx).sum(1) + (gy * gy).sum(1))


def progress_measure(game: Game, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Distance to the equilibria where known, else the gradient norm; shape ``(B,)``."""
    distance = game.equilibrium_distance(x, y)
    return gradient_norm(game, x, y) if distance is None else distance


@dataclass
class HBState:
    """Iterates of ``B`` heavy-ball runs."""

    x: torch.Tensor  # (B, m) current minimiser parameter x_k
    y: torch.Tensor  # (B, n) current maximiser parameter y_k
    x_prev: torch.Tensor  # (B, m) x_{k-1}
    y_prev: torch.Tensor  # (B, n) y_{k-1}

    @classmethod
    def at_rest(cls, x0: torch.Tensor, y0: torch.Tensor) -> HBState:
        """Start at ``(x0, y0)`` with zero velocity."""
        return cls(x0.clone(), y0.clone(), x0.clone(), y0.clone())


def hb_step(game: Game, state: HBState, h: torch.Tensor, beta: torch.Tensor, order: str) -> HBState:
    """One Sim-HB or Alt-HB step; ``h`` and ``beta`` are ``(B, 1)`` tensors (see :func:`as_batch`)."""
    gx, gy = game.grads(state.x, state.y)
    x_new = game.project_x(state.x - h * gx + beta * (state.x - state.x_prev))
    if order == "alternating":
        _, gy = game.grads(x_new, state.y)
    y_new = state.y + h * gy + beta * (state.y - state.y_prev)
    return HBState(x_new, y_new, state.x, state.y)
