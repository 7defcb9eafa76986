"""Batched dynamics shared by the min-max envs: starting points, player moves, observations.

Pure functions of (game, config, state, action, rng); the env classes own the state.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from gymforge.core.seeding import InstanceRNG
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
