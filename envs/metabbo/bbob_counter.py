"""MetaBox-style random BBOB instances drawn for a whole batch from counter-based streams.

:func:`~.bbob.random_instances` gives every instance its own CPU ``torch.Generator``, which
needs a Python loop over the instances and a host round trip at every reset. Here the same
distribution is drawn in a few tensor operations on the instances' device: instance ``i`` reads
the counter-based stream (:class:`~gymforge.core.instance_rng.InstanceRNG`) keyed by
``100 seeds[i] + function_ids[i]``, so it depends neither on the rest of the batch nor on the
device. The draws, in order of the stream's counter:

- ``shift = 0.8 U[-5, 5]^D``, ``x_opt`` from the shift with BBOB's special cases (as
  :func:`~.bbob_instances.random_parameters`);
- ``R`` and ``Q``: Gram-Schmidt of standard normal matrices (Box-Muller), Haar-random rotations;
- ``f_opt = 100 k``, ``k`` uniform in 1..25;
- for f21/f22 only: the peak conditions as a random permutation (argsort of uniform keys, the
  batched form of ``randperm``), each peak's coordinate ranks likewise, and the peak centres.

Uniforms in float64 take 48 bits (two 24-bit draws of the stream). The numbers differ from
the generator version's (another random source), the distribution is the same; the ``draws``
argument of the MetaBBO envs chooses between them (``"counter"``, the v1 ids).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from gymforge.core.instance_rng import InstanceRNG, seed_key
from gymforge.envs.metabbo.bbob_instances import (
    GALLAGHER_PEAKS,
    SCHWEFEL_HALF_OPT,
    gallagher_weights,
)

__all__ = ["counter_parameters"]

_GALLAGHER_SPREAD = {21: 5.0, 22: 4.9}  # peak centres uniform in [-spread, spread]^D
_X_OPT_MAGNITUDE = {5: 5.0, 20: SCHWEFEL_HALF_OPT, 24: 1.25}  # |x_opt| fixed, signs of the shift


def _uniform64(rng: InstanceRNG, n: int) -> Tensor:
    """``[B, n]`` float64 uniforms in ``[0, 1)`` with 48 random bits (two draws of the stream)."""
    high = rng.uniform(n).to(torch.float64)
    low = rng.uniform(n).to(torch.float64)
    return high + low * (1.0 / 16777216.0)


def _normals(rng: InstanceRNG, n: int) -> Tensor:
    """``[B, n]`` standard normals (Box-Muller, both branches; ``n`` even)."""
    half = n // 2
    radius = torch.sqrt(-2.0 * torch.log1p(-_uniform64(rng, half)))
    angle = (2.0 * math.pi) * _uniform64(rng, half)
    return torch.cat([radius * torch.cos(angle), radius * torch.sin(angle)], dim=1)


def _permutations(rng: InstanceRNG, *shape: int) -> Tensor:
    """Uniformly random permutations of ``0..shape[-1]-1`` along the last axis, ``[B, *shape]``."""
    keys = _uniform64(rng, math.prod(shape)).reshape(-1, *shape)
    return torch.argsort(keys, dim=-1, stable=True)


def gram_schmidt(b: Tensor) -> Tensor:
    """Orthonormalise the columns of each ``[D, D]`` matrix of ``b`` ``[..., D, D]``, in order
    (modified Gram-Schmidt, each projection applied twice: orthogonal to rounding error)."""
    columns: list[Tensor] = []
    for i in range(b.shape[-1]):
        v = b[..., i]
        for _ in range(2):
            for u in columns:
                v = v - (v * u).sum(-1, keepdim=True) * u
        columns.append(v / torch.linalg.vector_norm(v, dim=-1, keepdim=True))
    return torch.stack(columns, dim=-1)


def _x_opt(function_ids: Tensor, shift: Tensor) -> Tensor:
    """The optimum: the shift, or BBOB's fixed magnitudes with its signs (f4: ``|shift|`` on even
    coordinates, as COCO)."""
    sign = torch.where(shift < 0.0, -1.0, 1.0).to(shift.dtype)
    fid = function_ids[:, None]
    x = shift
    for function_id, magnitude in _X_OPT_MAGNITUDE.items():
        x = torch.where(fid == function_id, magnitude * sign, x)
    even = (torch.arange(shift.shape[1], device=shift.device) % 2 == 0)[None, :]
    return torch.where((fid == 4) & even, shift.abs(), x)


def counter_parameters(function_ids: Tensor, d: int, seeds: Tensor) -> dict[str, Tensor]:
    """Parameters of ``N`` random instances (``function_ids``, ``seeds``: ``[N]`` int64 on one
    device): ``x_opt [N, d]``, ``f_opt [N]``, ``rot_r``/``rot_q [N, d, d]`` and
    ``peak_centers``/``peak_scales [N, K, d]``, ``peak_weights [N, K]`` (``K`` = most peaks the
    batch needs; weight 0 and scale 1 where unused), all float64 on that device."""
    device = function_ids.device
    n = function_ids.shape[0]
    stream_seed = 100 * seeds + function_ids
    rng = InstanceRNG(
        seed=stream_seed, counter=torch.zeros_like(stream_seed), key=seed_key(stream_seed)
    )
    shift = 0.8 * (_uniform64(rng, d) * 10.0 - 5.0)
    rotations = gram_schmidt(_normals(rng, 2 * d * d).reshape(n, 2, d, d))
    f_opt = 100.0 * (1 + rng.integers(25, 1)[:, 0]).to(torch.float64)
    x_opt = _x_opt(function_ids, shift)
    rot_r = rotations[:, 0]
    on = torch.isin(torch.tensor(list(GALLAGHER_PEAKS), device=device), function_ids).tolist()
    present = [f for f, p in zip(GALLAGHER_PEAKS, on, strict=True) if p]
    k = max((GALLAGHER_PEAKS[f] for f in present), default=0)
    out = {
        "x_opt": x_opt,
        "f_opt": f_opt,
        "rot_r": rot_r,
        "rot_q": rotations[:, 1],
        "peak_centers": torch.zeros(n, k, d, dtype=torch.float64, device=device),
        "peak_scales": torch.ones(n, k, d, dtype=torch.float64, device=device),
        "peak_weights": torch.zeros(n, k, dtype=torch.float64, device=device),
    }
    for fid in present:  # a loop over the (at most two) Gallagher functions, not the instances
        rows = torch.nonzero(function_ids == fid).squeeze(1)
        peaks = GALLAGHER_PEAKS[fid]
        sub = InstanceRNG(seed=rng.seed[rows], counter=rng.counter[rows], key=rng.key[rows])
        first_condition = math.sqrt(1000.0) if peaks == 101 else 1000.0
        ranks = _permutations(sub, peaks - 1).to(torch.float64)
        conditions = torch.cat(
            [
                torch.full((rows.shape[0], 1), first_condition, dtype=torch.float64, device=device),
                1000.0 ** (ranks / (peaks - 2)),
            ],
            dim=1,
        )
        coordinate_ranks = _permutations(sub, peaks, d).to(torch.float64)
        spread = _GALLAGHER_SPREAD[fid]
        centers = (_uniform64(sub, peaks * d).reshape(-1, peaks, d) * 2.0 - 1.0) * spread
        centers[:, 0] = x_opt[rows]
        out["peak_centers"][rows, :peaks] = centers @ rot_r[rows].transpose(1, 2)
        out["peak_scales"][rows, :peaks] = conditions[:, :, None] ** (
            coordinate_ranks / (d - 1) - 0.5
        )
        out["peak_weights"][rows, :peaks] = torch.as_tensor(gallagher_weights(peaks), device=device)
    return out
