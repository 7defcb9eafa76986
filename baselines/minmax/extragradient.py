"""Extragradient (Korpelevich 1976), batched over ``B`` games.

A look-ahead step, then the real step with the gradient taken at the look-ahead point::

    x_½ = P_X(x_k − h ∇_x f(x_k, y_k)),      y_½ = y_k + h ∇_y f(x_k, y_k)
    x_{k+1} = P_X(x_k − h ∇_x f(x_½, y_½)),  y_{k+1} = y_k + h ∇_y f(x_½, y_½)
"""

from __future__ import annotations

from typing import Any

import torch

from gymforge.agents.minmax.heavy_ball import Trajectory, as_batch, record_trajectory
from gymforge.envs.minmax.games import Game


def extragradient_step(
    game: Game, x: torch.Tensor, y: torch.Tensor, h: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """One extragradient step; ``h`` is ``(B, 1)``."""
    gx, gy = game.grads(x, y)
    x_half = game.project_x(x - h * gx)
    y_half = y + h * gy
    gx_half, gy_half = game.grads(x_half, y_half)
    return game.project_x(x - h * gx_half), y + h * gy_half


def run_extragradient(
    game: Game, x0: torch.Tensor, y0: torch.Tensor, h: Any, steps: int
) -> Trajectory:
    """``steps`` extragradient steps from ``(x0, y0)`` with per-game step sizes ``h``."""
    h_t = as_batch("h (step size)", h, x0.shape[0], x0, minimum=0.0)
    return record_trajectory(game, x0, y0, steps, lambda x, y: extragradient_step(game, x, y, h_t))
