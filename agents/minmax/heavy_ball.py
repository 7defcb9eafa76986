"""Heavy-ball gradient descent–ascent (Sim-HB and Alt-HB), batched over ``B`` games.

The update of the reference (§1), with per-game step size ``h`` and momentum ``β`` (``β`` may be
negative; ``β = 0`` is plain Sim-GDA / Alt-GDA)::

    x_{k+1} = P_X( x_k − h ∇_x f(x_k, y_k) + β (x_k − x_{k−1}) )
    y_{k+1} = y_k + h ∇_y f(x_k', y_k) + β (y_k − y_{k−1})

where ``x_k' = x_k`` (simultaneous) or ``x_{k+1}`` (alternating: y sees the new x) and ``P_X``
projects onto the minimiser's feasible set (the identity except for ``xy2``). Runs start at rest
(``x_{−1} = x_0``, ``y_{−1} = y_0``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from gymforge.envs.minmax.dynamics import HBState, hb_step
from gymforge.envs.minmax.games import Game

ORDERS: tuple[str, ...] = ("simultaneous", "alternating")


def check_order(order: str) -> None:
    if order not in ORDERS:
        raise ValueError(f"order must be one of {list(ORDERS)}, got {order!r}")


def as_batch(
    name: str,
    value: Any,
    batch: int,
    like: torch.Tensor,
    minimum: float | None = None,
    below: float | None = None,
) -> torch.Tensor:
    """``value`` (a float or ``B`` values) as a ``(B, 1)`` tensor like ``like``, validated.

    Raises ``ValueError`` naming ``name`` when a value is not finite, below ``minimum`` or not
    below ``below``.
    """
    t = torch.as_tensor(value, dtype=like.dtype, device=like.device)
    if t.dim() == 0:
        t = t.expand(batch)
    if t.shape != (batch,):
        raise ValueError(f"{name} must be a number or have shape ({batch},), got {tuple(t.shape)}")
    if not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} must be finite, got {t.tolist()}")
    if minimum is not None and bool((t < minimum).any()):
        raise ValueError(f"{name} must be >= {minimum}, got {t.tolist()}")
    if below is not None and bool((t >= below).any()):
        raise ValueError(f"{name} must be < {below}, got {t.tolist()}")
    return t[:, None]


@dataclass
class Trajectory:
    """Iterates and gradients of ``B`` runs over ``T`` steps (index 0 is the start)."""

    x: torch.Tensor  # (T+1, B, m)
    y: torch.Tensor  # (T+1, B, n)
    grad_x: torch.Tensor  # (T+1, B, m) ∇_x f at (x_k, y_k)
    grad_y: torch.Tensor  # (T+1, B, n) ∇_y f at (x_k, y_k)


def run_heavy_ball(
    game: Game,
    x0: torch.Tensor,
    y0: torch.Tensor,
    h: Any,
    beta: Any,
    order: str,
    steps: int,
) -> Trajectory:
    """Run ``steps`` heavy-ball steps from rest for ``B = x0.shape[0]`` games.

    ``h`` (≥ 0) and ``beta`` are floats or ``(B,)`` values, one per game.
    """
    check_order(order)
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be an int >= 0, got {steps!r}")
    batch = x0.shape[0]
    h_t = as_batch("h (step size)", h, batch, x0, minimum=0.0)
    beta_t = as_batch("beta (momentum)", beta, batch, x0)
    state = HBState.at_rest(x0, y0)

    def advance(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        nonlocal state
        state = hb_step(game, state, h_t, beta_t, order)
        return state.x, state.y

    return record_trajectory(game, x0, y0, steps, advance)


def record_trajectory(
    game: Game,
    x0: torch.Tensor,
    y0: torch.Tensor,
    steps: int,
    advance: Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
) -> Trajectory:
    """The iterates ``0 … steps`` of ``(x, y) <- advance(x, y)`` from ``(x0, y0)``, with gradients.

    ``advance`` is one step of a method; a method with memory (momentum, last gradients) keeps it
    in its closure.
    """
    x, y = x0, y0
    xs, ys, gxs, gys = [], [], [], []
    for k in range(steps + 1):
        gx, gy = game.grads(x, y)
        xs.append(x)
        ys.append(y)
        gxs.append(gx)
        gys.append(gy)
        if k < steps:
            x, y = advance(x, y)
    return Trajectory(torch.stack(xs), torch.stack(ys), torch.stack(gxs), torch.stack(gys))


def avg_slope(traj: Trajectory) -> torch.Tensor:
    """``AvgS(t) = (1/t) Σ_{s<t} (‖∇_x f‖² + ‖∇_y f‖²)`` of shape ``(T+1, B)`` (t = 1 … T+1)."""
    sq = (traj.grad_x**2).sum(-1) + (traj.grad_y**2).sum(-1)
    counts = torch.arange(1, sq.shape[0] + 1, dtype=sq.dtype, device=sq.device)[:, None]
    return torch.cumsum(sq, 0) / counts


__all__ = [
    "ORDERS",
    "HBState",
    "Trajectory",
    "as_batch",
    "avg_slope",
    "check_order",
    "hb_step",
    "run_heavy_ball",
]
