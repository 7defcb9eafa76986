"""Instance parameters of the BBOB functions: COCO's exact instances and MetaBox-style draws.

Both generators return plain numpy arrays (``x_opt``, ``f_opt``, ``rot_r``, ``rot_q`` and the
Gallagher peak fields of :class:`gymforge.envs.metabbo.bbob.BBOBInstances`).

**COCO instances** (:func:`coco_parameters`). COCO derives every parameter of its noiseless
``bbob`` instances from the legacy BBOB-2009 generator (``suite_bbob_legacy_code.c``):
``bbob2009_unif`` (a Park-Miller minimal-standard LCG behind a 32-entry Bays-Durham shuffle
table, warmed up for 40 steps), ``bbob2009_gauss`` (Box-Muller on ``2N`` uniforms) and, on top of
them, ``x_opt``, ``f_opt`` and Gram-Schmidt rotations. The seed of function ``f`` and instance
``i`` is ``rseed = f + 10000 i`` (``3 + 10000 i`` for f4, ``17 + 10000 i`` for f18); rotations
use ``rseed`` and ``rseed + 1000000``. This module re-implements that generator from its
definition, in ``int64`` integer arithmetic so that the uniforms are bit-identical to COCO's, and
vectorised over seeds.

**Random instances** (:func:`random_parameters`). MetaBox draws ``shift = 0.8 U[lb, ub]`` with
``ub = -lb = 5``, a random rotation and ``bias = 100 randint(1, 26)``. Here every instance has
its own CPU ``torch.Generator`` seeded with ``100 seed + function_id`` and draws, in order: the
shift (``D`` uniforms), the normal matrices of ``R`` and ``Q`` (``D x D`` each, orthonormalised
by Gram-Schmidt: Haar-random orthogonal matrices), ``f_opt``, then the Gallagher peaks for
f21/f22 (BBOB's recipe: shuffled peak conditions and coordinate ranks, centres uniform in
``[-5, 5]^D`` for f21 and ``[-4.9, 4.9]^D`` for f22, peak 0 at ``x_opt``).
"""

from __future__ import annotations

import math

import numpy as np
import torch

__all__ = [
    "GALLAGHER_PEAKS",
    "coco_parameters",
    "gallagher_weights",
    "gram_schmidt",
    "legacy_gauss",
    "legacy_rotation",
    "legacy_unif",
    "random_parameters",
]

GALLAGHER_PEAKS = {21: 101, 22: 21}
SCHWEFEL_HALF_OPT = 0.5 * 4.2096874637  # |x_opt_i| of f20

_LCG_A, _LCG_M, _LCG_Q, _LCG_R = 16807, 2147483647, 127773, 2836
_TABLE = 32
_TABLE_DIV = 67108865  # (2^31 - 1) // 32 + 1: maps a state to a shuffle-table slot
_ROT_OFFSET = 1000000
_GALLAGHER_BOX = {21: (10.0, 5.0), 22: (9.8, 4.9)}  # peak centres are b U[0, 1) - c


def _empty_peaks(n: int, k: int, d: int) -> dict[str, np.ndarray]:
    return {
        "peak_centers": np.zeros((n, k, d)),
        "peak_scales": np.ones((n, k, d)),
        "peak_weights": np.zeros((n, k)),
    }


def gallagher_weights(k: int) -> np.ndarray:
    """Peak heights: 10 for the global peak, then evenly from 1.1 to 9.1."""
    return np.concatenate([[10.0], np.arange(k - 1) / (k - 2) * (9.1 - 1.1) + 1.1])


# ----------------------------------------------------------------------------- COCO instances


def _lcg_step(state: np.ndarray) -> np.ndarray:
    """One Park-Miller step (Schrage's method), element-wise on int64 states."""
    hi = state // _LCG_Q
    state = _LCG_A * (state - hi * _LCG_Q) - _LCG_R * hi
    return np.where(state < 0, state + _LCG_M, state)


def legacy_unif(seeds: np.ndarray, n: int) -> np.ndarray:
    """``bbob2009_unif``: ``n`` uniforms in (0, 1) per seed, shape ``[len(seeds), n]``."""
    state = np.maximum(np.abs(np.asarray(seeds, dtype=np.int64)), 1)
    table = np.empty((state.shape[0], _TABLE), dtype=np.int64)
    for i in range(39, -1, -1):
        state = _lcg_step(state)
        if i < _TABLE:
            table[:, i] = state
    rows = np.arange(state.shape[0])
    current = table[:, 0].copy()
    out = np.empty((state.shape[0], n), dtype=np.float64)
    for i in range(n):
        state = _lcg_step(state)
        slot = current // _TABLE_DIV
        current = table[rows, slot]
        table[rows, slot] = state
        out[:, i] = current / 2.147483647e9
    out[out == 0.0] = 1e-99
    return out


def legacy_gauss(seeds: np.ndarray, n: int) -> np.ndarray:
    """``bbob2009_gauss``: ``n`` standard normals per seed (Box-Muller), ``[len(seeds), n]``."""
    u = legacy_unif(seeds, 2 * n)
    g = np.sqrt(-2.0 * np.log(u[:, :n])) * np.cos(2.0 * math.pi * u[:, n:])
    g[g == 0.0] = 1e-99
    return g


def gram_schmidt(b: np.ndarray) -> np.ndarray:
    """Orthonormalise the columns of each ``[D, D]`` matrix in ``b`` (``[S, D, D]``), in order."""
    b = b.copy()
    for i in range(b.shape[-1]):
        for j in range(i):
            proj = np.sum(b[:, :, i] * b[:, :, j], axis=1)
            b[:, :, i] -= proj[:, None] * b[:, :, j]
        b[:, :, i] /= np.sqrt(np.sum(b[:, :, i] * b[:, :, i], axis=1))[:, None]
    return b


def legacy_rotation(seeds: np.ndarray, d: int) -> np.ndarray:
    """``bbob2009_compute_rotation``: one orthogonal ``[d, d]`` matrix per seed, ``[S, d, d]``."""
    g = legacy_gauss(seeds, d * d)
    # COCO fills B[i][j] = g[j * d + i], i.e. the row-major reshape transposed.
    return gram_schmidt(g.reshape(-1, d, d).transpose(0, 2, 1))


def legacy_xopt(seeds: np.ndarray, d: int) -> np.ndarray:
    """``bbob2009_compute_xopt``: a grid point in [-4, 4) per coordinate, ``[S, d]``."""
    x = 8.0 * np.floor(1e4 * legacy_unif(seeds, d)) / 1e4 - 4.0
    x[x == 0.0] = -1e-5
    return x


def legacy_fopt(function_id: int, instance_ids: np.ndarray) -> np.ndarray:
    """``bbob2009_compute_fopt``: the optimal value, rounded to 0.01 in [-1000, 1000]."""
    seeds = np.array([_rseed(function_id, int(i)) for i in instance_ids], dtype=np.int64)
    ratio = 100.0 * 100.0 * legacy_gauss(seeds, 1)[:, 0] / legacy_gauss(seeds + 1, 1)[:, 0]
    return np.clip(np.floor(ratio + 0.5) / 100.0, -1000.0, 1000.0)


def _gallagher(fid: int, seeds: np.ndarray, d: int, rot: np.ndarray) -> dict[str, np.ndarray]:
    """Peaks of f21/f22 (``f_gallagher.c``): centres (rotated frame), scales, weights, x_opt."""
    peaks = GALLAGHER_PEAKS[fid]
    b, c = _GALLAGHER_BOX[fid]
    s = seeds.shape[0]
    first_condition = math.sqrt(1000.0) if peaks == 101 else 1000.0
    order = np.argsort(legacy_unif(seeds, peaks - 1), axis=1, kind="stable")
    conditions = np.empty((s, peaks))
    conditions[:, 0] = first_condition
    conditions[:, 1:] = 1000.0 ** (order / (peaks - 2))
    weights = gallagher_weights(peaks)
    peak_seeds = (seeds[:, None] + 1000 * np.arange(peaks)[None, :]).reshape(-1)
    ranks = np.argsort(legacy_unif(peak_seeds, d), axis=1, kind="stable").reshape(s, peaks, d)
    scales = conditions[:, :, None] ** (ranks / (d - 1) - 0.5)
    raw = b * legacy_unif(seeds, d * peaks).reshape(s, peaks, d) - c
    centers = np.einsum("sik,spk->spi", rot, raw)
    centers[:, 0, :] *= 0.8
    return {
        "x_opt": 0.8 * raw[:, 0, :],  # COCO's best_parameter
        "peak_centers": centers,
        "peak_scales": scales,
        "peak_weights": np.broadcast_to(weights, (s, peaks)).copy(),
    }


def _rseed(fid: int, instance_id: int) -> int:
    """COCO's seed of function ``fid``, instance ``instance_id``."""
    return {4: 3, 18: 17}.get(fid, fid) + 10000 * instance_id


# Which COCO rotations each function uses: "rq" -> R from rseed + 1e6 and Q from rseed,
# "r_offset" -> one rotation from rseed + 1e6, "r_plain" -> one rotation from rseed.
_ROTATIONS = {
    **dict.fromkeys((6, 7, 13, 15, 16, 17, 18, 23, 24), "rq"),
    **dict.fromkeys((10, 11, 12, 14), "r_offset"),
    **dict.fromkeys((9, 19, 21, 22), "r_plain"),
}


def _xopt(fid: int, seeds: np.ndarray, d: int, rot_r: np.ndarray) -> np.ndarray:
    """``x_opt`` of one function for a vector of seeds (the special cases of each ``f_*.c``)."""
    if fid == 5:
        return np.where(legacy_xopt(seeds, d) < 0.0, -5.0, 5.0)
    if fid == 8:
        return 0.75 * legacy_xopt(seeds, d)
    if fid in (9, 19):
        scale = max(1.0, math.sqrt(d) / 8.0)
        return rot_r.sum(axis=1) / (2.0 * scale)  # R^T 1 / (2c)
    if fid == 12:
        return legacy_xopt(seeds + _ROT_OFFSET, d)
    if fid == 20:
        return np.where(legacy_unif(seeds, d) < 0.5, -SCHWEFEL_HALF_OPT, SCHWEFEL_HALF_OPT)
    if fid == 24:
        return np.where(legacy_gauss(seeds, d) < 0.0, -1.25, 1.25)
    x = legacy_xopt(seeds, d)
    if fid == 4:
        x[:, ::2] = np.abs(x[:, ::2])
    return x


def _rotations(fids: np.ndarray, seeds: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    """``rot_r`` and ``rot_q`` of every instance (identity where unused), in one legacy call."""
    kinds = [_ROTATIONS.get(int(f)) for f in fids]
    r_seeds = [
        s + _ROT_OFFSET if k in ("rq", "r_offset") else s
        for s, k in zip(seeds.tolist(), kinds, strict=True)
    ]
    r_rows = [i for i, k in enumerate(kinds) if k is not None]
    q_rows = [i for i, k in enumerate(kinds) if k == "rq"]
    all_seeds = np.array([r_seeds[i] for i in r_rows] + [seeds[i] for i in q_rows], dtype=np.int64)
    mats = legacy_rotation(all_seeds, d)
    rot_r = np.tile(np.eye(d), (len(fids), 1, 1))
    rot_q = rot_r.copy()
    rot_r[r_rows] = mats[: len(r_rows)]
    rot_q[q_rows] = mats[len(r_rows) :]
    return rot_r, rot_q


def coco_parameters(
    function_ids: np.ndarray, d: int, instance_ids: np.ndarray
) -> dict[str, np.ndarray]:
    """Parameters of COCO's ``bbob`` instances: instance ``n`` is function ``function_ids[n]``,
    COCO instance ``instance_ids[n]``, in ``d``-D.

    Returns ``x_opt [N, d]``, ``f_opt [N]``, ``rot_r``/``rot_q [N, d, d]`` (identity where unused)
    and ``peak_centers``/``peak_scales [N, K, d]``, ``peak_weights [N, K]`` (``K`` = most peaks
    in the batch; weight 0 and scale 1 where unused).
    """
    fids = np.asarray(function_ids, dtype=np.int64)
    iids = np.asarray(instance_ids, dtype=np.int64)
    n = fids.shape[0]
    seeds = np.array(
        [_rseed(int(f), int(i)) for f, i in zip(fids, iids, strict=True)], dtype=np.int64
    )
    rot_r, rot_q = _rotations(fids, seeds, d)
    k = max((GALLAGHER_PEAKS.get(int(f), 0) for f in fids), default=0)
    out = {
        "x_opt": np.zeros((n, d)),
        "f_opt": np.zeros(n),
        "rot_r": rot_r,
        "rot_q": rot_q,
        **_empty_peaks(n, k, d),
    }
    for fid in sorted(set(fids.tolist())):
        rows = np.nonzero(fids == fid)[0]
        out["f_opt"][rows] = legacy_fopt(fid, iids[rows])
        if fid in GALLAGHER_PEAKS:
            for name, value in _gallagher(fid, seeds[rows], d, rot_r[rows]).items():
                out[name][rows, : value.shape[1]] = value
        else:
            out["x_opt"][rows] = _xopt(fid, seeds[rows], d, rot_r[rows])
    return out


# ----------------------------------------------------------------------------- random instances


def _draw_gallagher(gen: torch.Generator, fid: int, d: int) -> dict[str, np.ndarray]:
    """Peak conditioning and centres (unrotated; peak 0 is replaced by ``x_opt`` later)."""
    k = GALLAGHER_PEAKS[fid]
    spread = _GALLAGHER_BOX[fid][1]
    first_condition = math.sqrt(1000.0) if k == 101 else 1000.0
    ranks = torch.randperm(k - 1, generator=gen).numpy()
    conditions = np.concatenate([[first_condition], 1000.0 ** (ranks / (k - 2))])
    coord_ranks = torch.stack([torch.randperm(d, generator=gen) for _ in range(k)]).numpy()
    centers = (torch.rand(k, d, generator=gen, dtype=torch.float64).numpy() * 2.0 - 1.0) * spread
    return {
        "peak_scales": conditions[:, None] ** (coord_ranks / (d - 1) - 0.5),
        "centers": centers,
    }


def _random_x_opt(fid: int, shift: np.ndarray) -> np.ndarray:
    """Optimum of a random instance: the shift, or BBOB's fixed magnitudes with its signs."""
    sign = np.where(shift < 0.0, -1.0, 1.0)
    magnitude = {5: 5.0, 20: SCHWEFEL_HALF_OPT, 24: 1.25}.get(fid)
    if magnitude is not None:
        return magnitude * sign
    if fid == 4:  # COCO's legacy |x_opt| on even (0-based) coordinates
        return np.where(np.arange(shift.shape[0]) % 2 == 0, np.abs(shift), shift)
    return shift


def _draw_instance(seed: int, fid: int, d: int) -> dict[str, np.ndarray]:
    """The random draws of one instance, from its own generator."""
    gen = torch.Generator().manual_seed(100 * seed + fid)
    shift = 0.8 * (torch.rand(d, generator=gen, dtype=torch.float64).numpy() * 10.0 - 5.0)
    normals = torch.randn(2, d, d, generator=gen, dtype=torch.float64).numpy()
    f_opt = 100.0 * int(torch.randint(1, 26, (1,), generator=gen).item())
    draw = {"x_opt": _random_x_opt(fid, shift), "f_opt": np.array(f_opt), "normals": normals}
    if fid in GALLAGHER_PEAKS:
        draw |= _draw_gallagher(gen, fid, d)
    return draw


def random_parameters(function_ids: np.ndarray, d: int, seeds: list[int]) -> dict[str, np.ndarray]:
    """Parameters of MetaBox-style random instances (see the module docstring)."""
    fids = [int(f) for f in function_ids]
    n = len(fids)
    k = max((GALLAGHER_PEAKS.get(f, 0) for f in fids), default=0)
    draws = [_draw_instance(s, f, d) for s, f in zip(seeds, fids, strict=True)]
    normals = np.stack([r["normals"] for r in draws]) if draws else np.zeros((0, 2, d, d))
    rotations = gram_schmidt(normals.reshape(-1, d, d)).reshape(n, 2, d, d)
    out = {
        "x_opt": np.stack([r["x_opt"] for r in draws]) if draws else np.zeros((0, d)),
        "f_opt": np.array([float(r["f_opt"]) for r in draws]),
        "rot_r": rotations[:, 0],
        "rot_q": rotations[:, 1],
        **_empty_peaks(n, k, d),
    }
    for i, (fid, draw) in enumerate(zip(fids, draws, strict=True)):
        if fid in GALLAGHER_PEAKS:
            peaks = GALLAGHER_PEAKS[fid]
            centers = draw["centers"]
            centers[0] = out["x_opt"][i]
            out["peak_centers"][i, :peaks] = centers @ out["rot_r"][i].T
            out["peak_scales"][i, :peaks] = draw["peak_scales"]
            out["peak_weights"][i, :peaks] = gallagher_weights(peaks)
    return out
