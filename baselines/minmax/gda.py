"""Plain gradient descent–ascent (simultaneous or alternating), batched over ``B`` games.

``x_{k+1} = P_X(x_k − h ∇_x f(x_k, y_k))``, ``y_{k+1} = y_k + h ∇_y f(x_k', y_k)`` with
``x_k' = x_k`` (simultaneous) or ``x_{k+1}`` (alternating). Heavy ball with ``β = 0``.
"""

from __future__ import annotations

from typing import Any

import torch

from gymforge.agents.minmax.heavy_ball import (
    Trajectory,
    as_batch,
    check_order,
    record_trajectory,
)
from gymforge.envs.minmax.games import Game


def gda_step(
    game: Game, x: torch.Tensor, y: torch.Tensor, h: torch.Tensor, order: str
) -> tuple[torch.Tensor, torch.Tensor]:
    """One GDA step; ``h`` is ``(B, 1)``."""
    gx, gy = game.grads(x, y)
    x_new = game.project_x(x - h * gx)
    if order == "alternating":
        _, gy = game.grads(x_new, y)
    return x_new, y + h * gy


def run_gda(
    game: Game, x0: torch.Tensor, y0: torch.Tensor, h: Any, order: str, steps: int
) -> Trajectory:
    """``steps`` GDA steps from ``(x0, y0)`` with per-game step sizes ``h`` (float or (B,))."""
    check_order(order)
    h_t = as_batch("h (step size)", h, x0.shape[0], x0, minimum=0.0)
    return record_trajectory(game, x0, y0, steps, lambda x, y: gda_step(game, x, y, h_t, order))
