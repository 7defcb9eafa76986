"""Exact spectra of the heavy-ball update maps on linear games, and stability maps.

On a :class:`~gymforge.envs.minmax.games.LinearGame` the Sim-HB and Alt-HB updates are linear maps
of the state ``s = (x_k, y_k, x_{k−1}, y_{k−1})``; their spectral radius ``ρ`` decides
convergence (``ρ < 1``), cycling (``ρ = 1``) or divergence (``ρ > 1``). The matrices are built
batched over (step size, momentum) pairs and their eigenvalues computed with
``torch.linalg.eigvals``.
"""

from __future__ import annotations

from typing import Any

import torch

from gymforge.agents.minmax.heavy_ball import as_batch, check_order
from gymforge.envs.minmax.games import LinearGame


def update_matrix(game: LinearGame, h: Any, beta: Any, order: str) -> torch.Tensor:
    """The ``(B, 2d, 2d)`` matrix of one HB step on ``s = (x, y, x_prev, y_prev)``, ``d = m + n``.

    ``h`` and ``beta`` are floats or ``(B,)`` values; a game with per-game parameters needs
    ``B`` equal to its batch (or scalar ``h`` and ``beta``).
    """
    check_order(order)
    g = game.operator()  # (Bg, d, d): (∇_x f, −∇_y f) = G z
    ref_h = torch.as_tensor(h)
    ref_b = torch.as_tensor(beta)
    batch = max(
        g.shape[0], ref_h.numel() if ref_h.dim() else 1, ref_b.numel() if ref_b.dim() else 1
    )
    if g.shape[0] not in (1, batch):
        raise ValueError(
            f"h and beta must be scalars or have one entry per game ({g.shape[0]}), got {batch}"
        )
    like = g.new_zeros(1)
    h_t = as_batch("h (step size)", h, batch, like, minimum=0.0)[:, :, None]  # (B, 1, 1)
    b_t = as_batch("beta (momentum)", beta, batch, like)[:, :, None]
    m, d = game.x_dim, g.shape[-1]
    g = g.expand(batch, d, d)
    eye = torch.eye(d, dtype=g.dtype, device=g.device).expand(batch, d, d)
    zero = torch.zeros_like(eye)
    if order == "simultaneous":
        top = torch.cat([(1 + b_t) * eye - h_t * g, -b_t * eye], 2)
        return torch.cat([top, torch.cat([eye, zero], 2)], 1)
    # Alternating: first the x step (y, y_prev unchanged), then the y step at the new x.
    px = torch.zeros(d, d, dtype=g.dtype, device=g.device)
    px[:m, :m] = torch.eye(m, dtype=g.dtype, device=g.device)  # selects the x block
    py = torch.eye(d, dtype=g.dtype, device=g.device) - px  # selects the y block
    # T1: (x, y, xp, yp) -> (x', y, x, yp)
    t1_top = torch.cat([py + px @ ((1 + b_t) * eye - h_t * g), -b_t * px], 2)
    t1_bottom = torch.cat([px.expand_as(eye), py.expand_as(eye)], 2)
    t1 = torch.cat([t1_top, t1_bottom], 1)
    # T2: (x', y, xo, yp) -> (x', y', xo, y)
    t2_top = torch.cat([px + py @ ((1 + b_t) * eye - h_t * g), -b_t * py], 2)
    t2_bottom = torch.cat([py.expand_as(eye), px.expand_as(eye)], 2)
    t2 = torch.cat([t2_top, t2_bottom], 1)
    return t2 @ t1


def spectral_radius(game: LinearGame, h: Any, beta: Any, order: str) -> torch.Tensor:
    """``ρ`` (B,) of the HB update map for each (h, β) pair."""
    return torch.linalg.eigvals(update_matrix(game, h, beta, order)).abs().amax(-1)


def stability_map(
    game: LinearGame, step_sizes: torch.Tensor, momenta: torch.Tensor, order: str
) -> torch.Tensor:
    """Exact ``ρ`` on the grid: shape ``(len(step_sizes), len(momenta))``.

    The game must have shared parameters (``game.batch == 1``).
    """
    if game.batch != 1:
        raise ValueError(f"stability_map needs a single game (batch 1), got batch {game.batch}")
    hs = torch.as_tensor(step_sizes, dtype=torch.float64)
    bs = torch.as_tensor(momenta, dtype=torch.float64)
    hh, bb = torch.meshgrid(hs, bs, indexing="ij")
    return spectral_radius(game, hh.reshape(-1), bb.reshape(-1), order).reshape(hh.shape)


def max_stable_step(
    game: LinearGame, beta: float, order: str, h_max: float = 4.0, grid: int = 2000
) -> float:
    """The largest ``h`` such that ``ρ(h', β) < 1`` for every ``h'`` in ``(0, h]``.

    Scans ``grid`` step sizes in ``(0, h_max]`` for the first unstable one, then bisects.
    Returns ``0.0`` when even the smallest grid step is unstable and ``h_max`` when none is.
    """
    hs = torch.linspace(h_max / grid, h_max, grid, dtype=torch.float64)
    rho = spectral_radius(game, hs, torch.full_like(hs, float(beta)), order)
    unstable = torch.nonzero(rho >= 1.0)
    if unstable.numel() == 0:
        return float(h_max)
    first = int(unstable[0, 0])
    if first == 0:
        return 0.0
    lo, hi = float(hs[first - 1]), float(hs[first])
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if float(spectral_radius(game, mid, float(beta), order)[0]) < 1.0:
            lo = mid
        else:
            hi = mid
    return lo


def thm46_step_bound(game: LinearGame, beta: float) -> float:
    """The Thm 4.6 step-size bound of Sim-HB: ``min_λ 2(1−β)²/(1+β) · |Re λ| / (Im λ² − Re λ²)``.

    ``λ`` ranges over the eigenvalues of the game Jacobian ``J``. The bound assumes Hamiltonian
    dominance (``|Im λ| > |Re λ|`` for every ``λ``) and ``−1 < β < 1``; otherwise ``ValueError``.
    """
    if not -1.0 < beta < 1.0:
        raise ValueError(f"beta (momentum) must lie in (-1, 1), got {beta}")
    lam = torch.linalg.eigvals(game.jacobian()).reshape(-1)
    re, im = lam.real.abs(), lam.imag.abs()
    if bool((im <= re).any()):
        raise ValueError(
            "thm46_step_bound needs a Hamiltonian-dominated game (|Im λ| > |Re λ| for every "
            f"Jacobian eigenvalue λ), got eigenvalues {lam.tolist()}"
        )
    factor = 2.0 * (1.0 - beta) ** 2 / (1.0 + beta)
    return float((factor * re / (im**2 - re**2)).min())


def simulated_growth_rate(
    game: LinearGame,
    step_sizes: torch.Tensor,
    momenta: torch.Tensor,
    order: str,
    iterations: int = 2000,
    renormalize_every: int = 50,
    seed: int = 0,
) -> torch.Tensor:
    """Empirical ``log ρ`` per (h, β) pair by simulating ``iterations`` HB steps, batched.

    All ``len(step_sizes) × len(momenta)`` pairs run at once from one seeded random start.
    Because the map is linear, the state is rescaled to unit norm every ``renormalize_every``
    steps (the log-norms are summed), so divergent pairs never overflow. Returns the growth rate
    per step, shape ``(len(step_sizes), len(momenta))``; ``< 0`` means the iterates converge.
    """
    check_order(order)
    if game.batch != 1:
        raise ValueError(f"simulated_growth_rate needs a single game (batch 1), got {game.batch}")
    dtype, device = game.b.dtype, game.b.device
    hs = torch.as_tensor(step_sizes, dtype=dtype, device=device)
    bs = torch.as_tensor(momenta, dtype=dtype, device=device)
    hh, bb = torch.meshgrid(hs, bs, indexing="ij")
    h = hh.reshape(-1, 1).contiguous()
    beta = bb.reshape(-1, 1).contiguous()
    gen = torch.Generator().manual_seed(seed)
    z0 = torch.randn(1, game.x_dim + game.y_dim, generator=gen, dtype=dtype).to(device)
    z0 = z0 / torch.linalg.vector_norm(z0)
    if game.x_dim == 1 and game.y_dim == 1:
        log_norm = _scalar_growth(game, h, beta, z0, order, iterations, renormalize_every)
    else:
        log_norm = _generic_growth(game, h, beta, z0, order, iterations, renormalize_every)
    return (log_norm / iterations).reshape(hh.shape)


def _generic_growth(
    game: LinearGame,
    h: torch.Tensor,
    beta: torch.Tensor,
    z0: torch.Tensor,
    order: str,
    iterations: int,
    renormalize_every: int,
) -> torch.Tensor:
    """Sum of log-norms over the run, through ``game.grads`` (any dimensions)."""
    dtype = z0.dtype
    one_plus_beta = 1.0 + beta
    n = h.shape[0]
    m = game.x_dim
    x = z0[:, :m].expand(n, m).clone()
    y = z0[:, m:].expand(n, game.y_dim).clone()
    xp, yp = x.clone(), y.clone()
    log_norm = torch.zeros(n, dtype=dtype, device=z0.device)
    alternating = order == "alternating"
    for k in range(1, iterations + 1):
        gx, gy = game.grads(x, y)
        x_new = one_plus_beta * x - h * gx - beta * xp
        if alternating:
            _, gy = game.grads(x_new, y)
        y_new = one_plus_beta * y + h * gy - beta * yp
        xp, yp, x, y = x, y, x_new, y_new
        if k % renormalize_every == 0 or k == iterations:
            norm = torch.sqrt((x * x).sum(1) + (y * y).sum(1) + (xp * xp).sum(1) + (yp * yp).sum(1))
            norm = norm.clamp_min(torch.finfo(dtype).tiny)
            log_norm += torch.log(norm)
            scale = (1.0 / norm)[:, None]
            x, y, xp, yp = x * scale, y * scale, xp * scale, yp * scale
    return log_norm


def _scalar_growth(
    game: LinearGame,
    h: torch.Tensor,
    beta: torch.Tensor,
    z0: torch.Tensor,
    order: str,
    iterations: int,
    renormalize_every: int,
) -> torch.Tensor:
    """The same for scalar players, with the update folded into per-pair coefficients.

    With ``∇_x f = 2a x + b y`` and ``∇_y f = b x − 2c y``, one step is
    ``x' = (1 + β − 2ah) x − hb y − β x_prev`` and
    ``y' = (1 + β − 2ch) y + hb x'' − β y_prev`` with ``x'' = x`` (simultaneous) or ``x'``
    (alternating): six fused multiply-adds per step into preallocated buffers.
    """
    two_a, b, two_c = 2.0 * float(game.a[0]), float(game.b[0, 0, 0]), 2.0 * float(game.c[0])
    n = h.shape[0]
    h, beta = h[:, 0], beta[:, 0]
    c_xx = 1.0 + beta - two_a * h
    c_xy = -b * h
    c_yy = 1.0 + beta - two_c * h
    c_yx = b * h
    c_prev = -beta
    x = z0[0, 0].expand(n).clone()
    y = z0[0, 1].expand(n).clone()
    xp, yp = x.clone(), y.clone()
    x_new, y_new = torch.empty_like(x), torch.empty_like(y)
    log_norm = torch.zeros_like(x)
    alternating = order == "alternating"
    for k in range(1, iterations + 1):
        torch.mul(x, c_xx, out=x_new)
        x_new.addcmul_(y, c_xy).addcmul_(xp, c_prev)
        torch.mul(y, c_yy, out=y_new)
        y_new.addcmul_(x_new if alternating else x, c_yx).addcmul_(yp, c_prev)
        # rotate: (x, x_prev, spare) <- (x_new, x, x_prev)
        xp, x, x_new = x, x_new, xp
        yp, y, y_new = y, y_new, yp
        if k % renormalize_every == 0 or k == iterations:
            norm = torch.sqrt(x * x + y * y + xp * xp + yp * yp)
            norm = norm.clamp_min(torch.finfo(x.dtype).tiny)
            log_norm += torch.log(norm)
            x.div_(norm)
            y.div_(norm)
            xp.div_(norm)
            yp.div_(norm)
    return log_norm
