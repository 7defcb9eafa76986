"""Optimistic gradient descent–ascent (Daskalakis et al. 2018), batched over ``B`` games.

Each player extrapolates with its last gradient::

    x_{k+1} = P_X(x_k − 2h ∇_x f(x_k, y_k) + h ∇_x f(x_{k−1}, y_{k−1}))
    y_{k+1} = y_k + 2h ∇_y f(x_k, y_k) − h ∇_y f(x_{k−1}, y_{k−1})

The first step uses ``(x_{−1}, y_{−1}) = (x_0, y_0)``, i.e. a plain GDA step.
"""

from __future__ import annotations

from typing import Any

import torch

from gymforge.agents.minmax.heavy_ball import Trajectory, as_batch, record_trajectory
from gymforge.envs.minmax.games import Game


def ogda_step(
    game: Game,
    x: torch.Tensor,
    y: torch.Tensor,
    last_grads: tuple[torch.Tensor, torch.Tensor],
    h: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
    """One OGDA step; returns the new point and the gradients at the current one."""
    gx, gy = game.grads(x, y)
    gx_last, gy_last = last_grads
    x_new = game.project_x(x - 2.0 * h * gx + h * gx_last)
    y_new = y + 2.0 * h * gy - h * gy_last
    return x_new, y_new, (gx, gy)


def run_ogda(game: Game, x0: torch.Tensor, y0: torch.Tensor, h: Any, steps: int) -> Trajectory:
    """``steps`` OGDA steps from ``(x0, y0)`` with per-game step sizes ``h``."""
    h_t = as_batch("h (step size)", h, x0.shape[0], x0, minimum=0.0)
    last = game.grads(x0, y0)

    def advance(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        nonlocal last
        x, y, last = ogda_step(game, x, y, last, h_t)
        return x, y

    return record_trajectory(game, x0, y0, steps, advance)
