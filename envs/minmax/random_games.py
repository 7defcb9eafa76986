"""Random bilinear games drawn from each instance's seed (``MinMax-RandomBilinear-v0``).

A board that scores min-max solvers over held-out games needs games that come from the seed:
the env draws, per instance, ``A = U diag(σ) Vᵀ`` with ``U`` and ``V`` random orthogonal
matrices and singular values ``σ`` uniform in ``[SIGMA_MIN, 1]``. The spectrum is bounded on
both sides on purpose: every game has the unique equilibrium ``(0, 0)`` (``A`` is invertible)
and a condition number of at most ``1 / SIGMA_MIN``, so the distance after a fixed number of
steps reflects the method, not an unlucky near-singular draw.
"""

from __future__ import annotations

import math

import torch

from gymforge.core.instance_rng import InstanceRNG

#: smallest singular value of a drawn game (the largest is 1).
SIGMA_MIN = 0.2


def _normals(rng: InstanceRNG, count: int) -> torch.Tensor:
    """``(B, count)`` standard normals by Box–Muller from the instances' own streams."""
    half = (count + 1) // 2
    u = rng.uniform(2 * half).to(torch.float64)
    u1, u2 = 1.0 - u[:, :half], u[:, half:]  # u1 in (0, 1]: the log is finite
    radius = torch.sqrt(-2.0 * torch.log(u1))
    angle = 2.0 * math.pi * u2
    return torch.cat([radius * torch.cos(angle), radius * torch.sin(angle)], 1)[:, :count]


def _orthogonal(rng: InstanceRNG, dim: int) -> torch.Tensor:
    """``(B, dim, dim)`` orthogonal matrices (QR of a Gaussian matrix, signs made unique)."""
    gauss = _normals(rng, dim * dim).reshape(-1, dim, dim)
    q, r = torch.linalg.qr(gauss)
    signs = torch.sign(torch.diagonal(r, dim1=-2, dim2=-1))
    signs = torch.where(signs == 0, torch.ones_like(signs), signs)
    return q * signs[:, None, :]


def draw_bilinear_matrices(rng: InstanceRNG, dim: int) -> torch.Tensor:
    """One ``dim × dim`` game matrix per instance, ``(B, dim, dim)`` float64 (see module doc).

    Uses only the instances' own random streams, so instance ``i`` gets the same game whatever
    else is in the batch.
    """
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
        raise ValueError(f"dim must be an int >= 1, got {dim!r}")
    u = _orthogonal(rng, dim)
    v = _orthogonal(rng, dim)
    sigma = SIGMA_MIN + (1.0 - SIGMA_MIN) * rng.uniform(dim).to(torch.float64)
    return u @ (sigma[:, :, None] * v.mT)
