"""The continuous-time models of Sim-HB and Alt-HB (Thm 3.1), integrated with RK4 in torch.

With the modified loss ``𝓕 = f/(1−β) + h(1+β)/(4(1−β)³) · (‖∇_x f‖² − ‖∇_y f‖²)``:

- Sim-HB: ``ẋ = −∇_x 𝓕``, ``ẏ = +∇_y 𝓕``;
- Alt-HB: the same, and ``ẏ`` gains ``−h/(2(1−β)²) · ∇_y ‖∇_x f‖²``.

One discrete step corresponds to time ``h``; from exact history the models track the iterates
with local error ``O(h³)``. With ``correction=False`` the field is the plain rescaled flow
``(−∇_x f, ∇_y f)/(1−β)``, whose local error is only ``O(h²)`` (a test compares the two). The
gradients of the squared gradient norms come from ``torch.autograd`` through the games' analytic
gradients.
"""

from __future__ import annotations

import torch

from gymforge.agents.minmax.heavy_ball import check_order
from gymforge.envs.minmax.games import Game


def modified_field(
    game: Game,
    x: torch.Tensor,
    y: torch.Tensor,
    h: float,
    beta: float,
    order: str,
    correction: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(ẋ, ẏ)`` of the continuous-time model at ``x`` (B, m), ``y`` (B, n)."""
    check_order(order)
    if not -1.0 < beta < 1.0:
        raise ValueError(f"beta (momentum) must lie in (-1, 1) for the ODE model, got {beta}")
    if h < 0:
        raise ValueError(f"h (step size) must be >= 0, got {h}")
    with torch.enable_grad():
        xr = x.detach().requires_grad_(True)
        yr = y.detach().requires_grad_(True)
        gx, gy = game.grads(xr, yr)
        dx = -gx / (1.0 - beta)
        dy = gy / (1.0 - beta)
        if not correction:
            return dx.detach(), dy.detach()
        nx = (gx * gx).sum()  # Σ_b ‖∇_x f‖²: games are independent, so gradients stay per row
        ny = (gy * gy).sum()
        dnx_x, dnx_y = torch.autograd.grad(
            nx, (xr, yr), retain_graph=True, allow_unused=True, materialize_grads=True
        )
        dny_x, dny_y = torch.autograd.grad(ny, (xr, yr), allow_unused=True, materialize_grads=True)
    k = h * (1.0 + beta) / (4.0 * (1.0 - beta) ** 3)
    dx = dx - k * (dnx_x - dny_x)
    dy = dy + k * (dnx_y - dny_y)
    if order == "alternating":
        dy = dy - h / (2.0 * (1.0 - beta) ** 2) * dnx_y
    return dx.detach(), dy.detach()


def integrate_ode(
    game: Game,
    x0: torch.Tensor,
    y0: torch.Tensor,
    h: float,
    beta: float,
    order: str,
    duration: float,
    substeps: int,
    correction: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Integrate the model for time ``duration`` (negative runs backwards) with ``substeps`` RK4 steps.

    Returns the trajectory ``(substeps + 1, B, m)`` and ``(substeps + 1, B, n)``.
    """
    if isinstance(substeps, bool) or not isinstance(substeps, int) or substeps < 1:
        raise ValueError(f"substeps must be an int >= 1, got {substeps!r}")

    def field(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return modified_field(game, x, y, h, beta, order, correction)

    dt = duration / substeps
    x, y = x0.clone(), y0.clone()
    xs, ys = [x], [y]
    for _ in range(substeps):
        k1 = field(x, y)
        k2 = field(x + 0.5 * dt * k1[0], y + 0.5 * dt * k1[1])
        k3 = field(x + 0.5 * dt * k2[0], y + 0.5 * dt * k2[1])
        k4 = field(x + dt * k3[0], y + dt * k3[1])
        x = x + dt / 6.0 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        y = y + dt / 6.0 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        xs.append(x)
        ys.append(y)
    return torch.stack(xs), torch.stack(ys)


def local_error(
    game: Game,
    x0: torch.Tensor,
    y0: torch.Tensor,
    h: float,
    beta: float,
    order: str,
    correction: bool = True,
    substeps: int = 64,
) -> torch.Tensor:
    """One-step error ``‖(x_1, y_1) − (X(h), Y(h))‖`` (B,) of HB started on the model's trajectory.

    The history ``(x_{−1}, y_{−1}) = (X(−h), Y(−h))`` and the target ``(X(h), Y(h))`` come from
    integrating the model from ``(x0, y0)`` backwards and forwards; the discrete step is the plain
    HB step (no projection).
    """
    xb, yb = integrate_ode(game, x0, y0, h, beta, order, -h, substeps, correction)
    xf, yf = integrate_ode(game, x0, y0, h, beta, order, h, substeps, correction)
    x_prev, y_prev = xb[-1], yb[-1]
    gx, gy = game.grads(x0, y0)
    x1 = x0 - h * gx + beta * (x0 - x_prev)
    if order == "alternating":
        _, gy = game.grads(x1, y0)
    y1 = y0 + h * gy + beta * (y0 - y_prev)
    diff = torch.cat([x1 - xf[-1], y1 - yf[-1]], -1)
    return torch.linalg.vector_norm(diff, dim=-1)
