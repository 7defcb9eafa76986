"""Figures of the min-max family: stability maps, trajectories, AvgS against momentum.

Each function computes its data with the reference solvers, draws it with matplotlib (Agg
backend, no display) and writes a PNG atomically (temporary file, then rename).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from gymforge.agents.minmax.heavy_ball import avg_slope, run_heavy_ball
from gymforge.agents.minmax.spectral import (
    simulated_growth_rate,
    stability_map,
    thm46_step_bound,
)
from gymforge.core.extras import require
from gymforge.envs.minmax.games import Game, LinearGame

ORDERS = ("simultaneous", "alternating")


def _check_png(out: str | Path) -> Path:
    path = Path(out)
    if path.suffix.lower() != ".png":
        raise ValueError(f"out must be a .png file, got {str(out)!r}")
    if not path.parent.exists():
        raise ValueError(f"out's folder {str(path.parent)!r} does not exist")
    return path


def _save(fig: Any, path: Path) -> Path:
    plt = require("matplotlib.pyplot", "min-max plots")

    fd, tmp = tempfile.mkstemp(suffix=".png", dir=path.parent, prefix=f".{path.name}.")
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=110, bbox_inches="tight")
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the usual file mode
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def _figure(ncols: int) -> tuple[Any, Any]:
    matplotlib = require("matplotlib", "min-max plots")

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(1, ncols, figsize=(5.2 * ncols, 4.2), squeeze=False)


def plot_stability_map(
    game: LinearGame,
    out: str | Path,
    h_max: float = 1.0,
    beta_range: tuple[float, float] = (-0.9, 0.9),
    grid: int = 128,
    method: str = "exact",
    iterations: int = 2000,
) -> Path:
    """Sim-HB and Alt-HB side by side: ``log ρ`` over (momentum, step size), ρ = 1 contour.

    ``method="exact"`` uses the update maps' eigenvalues, ``"simulate"`` the growth rate of
    ``iterations`` simulated steps. The Thm 4.6 bound is overlaid on the Sim-HB panel when the
    game is Hamiltonian-dominated.
    """
    if not isinstance(game, LinearGame):
        raise ValueError(
            f"stability-map needs a linear game (bilinear or quadratic), got {game.name!r}"
        )
    if method not in ("exact", "simulate"):
        raise ValueError(f"method must be one of ['exact', 'simulate'], got {method!r}")
    if isinstance(grid, bool) or not isinstance(grid, int) or grid < 2:
        raise ValueError(f"grid must be an int >= 2, got {grid!r}")
    if not h_max > 0:
        raise ValueError(f"h_max must be > 0, got {h_max}")
    lo, hi = beta_range
    if not -1 < lo < hi < 1:
        raise ValueError(f"beta range must satisfy -1 < beta_min < beta_max < 1, got {beta_range}")
    path = _check_png(out)
    hs = torch.linspace(h_max / grid, h_max, grid, dtype=torch.float64)
    betas = torch.linspace(lo, hi, grid, dtype=torch.float64)
    fig, axes = _figure(2)
    for ax, order in zip(axes[0], ORDERS, strict=True):
        if method == "exact":
            rate = stability_map(game, hs, betas, order).log()
        else:
            rate = simulated_growth_rate(game, hs, betas, order, iterations)
        limit = max(float(rate.abs().max()), 1e-6)
        mesh = ax.pcolormesh(
            betas.numpy(), hs.numpy(), rate.numpy(), cmap="RdBu_r", vmin=-limit, vmax=limit
        )
        ax.contour(betas.numpy(), hs.numpy(), rate.numpy(), levels=[0.0], colors="k")
        if order == "simultaneous":
            try:
                bound = [thm46_step_bound(game, float(b)) for b in betas]
                ax.plot(betas.numpy(), bound, "g--", label="Thm 4.6 bound")
                ax.set_ylim(0, h_max)
                ax.legend(loc="upper right")
            except ValueError:
                pass  # not Hamiltonian-dominated: no bound to draw
        ax.set_title(f"{order} HB: log ρ ({method})")
        ax.set_xlabel("momentum β")
        ax.set_ylabel("step size h")
        fig.colorbar(mesh, ax=ax)
    return _save(fig, path)


def _starts(game: Game, starts: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    x0 = torch.rand(starts, game.x_dim, generator=gen, dtype=torch.float64) - 0.5
    y0 = torch.rand(starts, game.y_dim, generator=gen, dtype=torch.float64) - 0.5
    return (x0.abs() if game.name == "xy2" else x0), y0


def plot_trajectories(
    game: Game,
    out: str | Path,
    h: float = 0.1,
    betas: Sequence[float] = (-0.3, 0.0, 0.3),
    steps: int = 1000,
    seed: int = 0,
) -> Path:
    """Iterates in the (x₁, y₁) plane from one seeded start, one curve per β, Sim vs Alt."""
    path = _check_png(out)
    betas = [float(b) for b in betas]
    if not betas:
        raise ValueError("betas must hold at least one momentum")
    x0, y0 = _starts(game, 1, seed)
    fig, axes = _figure(2)
    for ax, order in zip(axes[0], ORDERS, strict=True):
        traj = run_heavy_ball(
            game, x0.repeat(len(betas), 1), y0.repeat(len(betas), 1), h, betas, order, steps
        )
        for i, beta in enumerate(betas):
            ax.plot(traj.x[:, i, 0].numpy(), traj.y[:, i, 0].numpy(), lw=0.8, label=f"β = {beta:g}")
        ax.plot([float(x0[0, 0])], [float(y0[0, 0])], "ko", label="start")
        ax.set_title(f"{game.name}: {order} HB, h = {h:g}")
        ax.set_xlabel("x₁")
        ax.set_ylabel("y₁")
        ax.legend(fontsize=8)
    return _save(fig, path)


def plot_avgs(
    game: Game,
    out: str | Path,
    h: float = 0.1,
    betas: Sequence[float] = (-0.3, 0.0, 0.3, 0.5),
    steps: int = 3000,
    starts: int = 16,
    seed: int = 0,
) -> Path:
    """Final ``AvgS`` (mean over ``starts`` seeded starts) against β, Sim vs Alt."""
    path = _check_png(out)
    betas = [float(b) for b in betas]
    if not betas:
        raise ValueError("betas must hold at least one momentum")
    if isinstance(starts, bool) or not isinstance(starts, int) or starts < 1:
        raise ValueError(f"starts must be an int >= 1, got {starts!r}")
    x0, y0 = _starts(game, starts, seed)
    beta_runs = torch.tensor(betas, dtype=torch.float64).repeat_interleave(starts)
    fig, axes = _figure(1)
    ax = axes[0][0]
    for order in ORDERS:
        traj = run_heavy_ball(
            game, x0.repeat(len(betas), 1), y0.repeat(len(betas), 1), h, beta_runs, order, steps
        )
        avgs = avg_slope(traj)[-1].reshape(len(betas), starts).mean(1)
        ax.plot(betas, avgs.numpy(), "o-", label=order)
    ax.set_title(f"{game.name}: AvgS after {steps} steps, h = {h:g}")
    ax.set_xlabel("momentum β")
    ax.set_ylabel("AvgS = mean of ‖∇ₓf‖² + ‖∇ᵧf‖²")
    ax.legend()
    return _save(fig, path)


__all__ = ["plot_avgs", "plot_stability_map", "plot_trajectories"]
