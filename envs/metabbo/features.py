"""The 9 optimization-status features of Q-Mamba (``cal_symbol_feature``), batched and masked.

Notation for one instance: the alive population ``x_1..x_n`` with costs ``c_1..c_n``; ``g`` the
best cost found so far (gbest) and ``x_g`` its point; ``c*`` the best cost of the current
population (cbest) and ``x_c`` its point; ``c_max`` the worst *finite* cost of the initial
population; ``diag = (hi - lo) sqrt(D)`` the diagonal of the search box; ``T`` the generation
budget, ``t`` generations done, ``s`` generations since gbest last improved.

=====  ======================================  =====================================================
Index  Name                                    Formula (then clipped to [0, 1])
=====  ======================================  =====================================================
0      mean cost gap to gbest                  mean_i (c_i - g) / (c_max - g + 1e-8)
1      mean pairwise distance                  mean_{i,j} ||x_i - x_j|| / diag (over all n^2 pairs)
2      cost spread                             std_i(c_i) / ((c_max - g) / 2 + 1e-8)
3      remaining budget                        (T - t) / T
4      stagnation                              s / T
5      mean distance to cbest                  mean_i ||x_i - x_c|| / diag
6      mean cost gap to cbest                  mean_i (c_i - c*) / (c_max - g + 1e-8)
7      mean distance to gbest                  mean_i ||x_i - x_g|| / diag
8      improved                                1 if the last generation improved gbest, else 0
=====  ======================================  =====================================================

Feature 2's denominator is the standard deviation of a population split half at ``c_max``, half
at ``g`` (Q-Mamba's normaliser). The features are ratios of cost differences, so they do not
depend on ``f_opt``.

Non-finite costs: a cost that is NaN or infinite counts as ``c_max`` here, and ``c_max`` is taken
over the finite initial costs only; while no finite cost exists at all (or gbest is not finite)
the cost features 0, 2 and 6 are 0. Every feature is clipped to ``[0, 1]`` and NaN-free, so a
non-finite objective never reaches an agent. The pairwise distances of feature 1 are computed in
float32 on the centred population (see :func:`pairwise_distances`; relative error about 1e-6 of
the population's spread); the others in float64. An instance's features do not depend on the
rest of the batch.
"""

from __future__ import annotations

import math
import threading

import torch
from torch import Tensor

from gymforge.core.host_guards import guards_enabled
from gymforge.envs.metabbo.workspace import block_size, scratch, temporary

__all__ = [
    "FEATURE_NAMES",
    "NUM_FEATURES",
    "centred_float32",
    "pairwise_distances",
    "status_features",
]

FEATURE_NAMES: tuple[str, ...] = (
    "mean cost gap to gbest",
    "mean pairwise distance",
    "cost spread",
    "remaining budget",
    "stagnation",
    "mean distance to cbest",
    "mean cost gap to cbest",
    "mean distance to gbest",
    "improved",
)
NUM_FEATURES = len(FEATURE_NAMES)
_EPS = 1e-8


def pairwise_distances(a: Tensor, b: Tensor) -> Tensor:
    """``[B, Pa, Pb]`` float32 Euclidean distances between the rows of ``a`` and ``b``.

    Both are first centred on ``b``'s mean row (distances do not change, cancellation in the
    matrix-product formula shrinks to the population's spread), then computed in float32 by
    ``torch.cdist``'s matrix-product path (spelled out here, with the same arithmetic, so that
    the large ``[B, Pa, Pb]`` result is clamped and square-rooted in place): about 4x faster than
    the float64 difference path. Each instance is its own matrix product, so its distances do
    not depend on the batch.
    """
    lhs, rhs = _distance_operands(a, b)
    return lhs.matmul(rhs.mT).clamp_min_(0).sqrt_()


def centred_float32(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """``x``'s mean row ``[B, 1, D]``, ``x`` centred on it in float32 ``[B, P, D]`` and the
    squared norms of those rows ``[B, P, 1]`` (float32).

    The mean pairwise distance feature of a population and crowding's nearest neighbours in the
    next generation both start from these, on the same population tensor; the last result is
    kept (per thread) and returned again while ``x`` is the same, unmodified tensor.
    """
    memo = _MEMO.__dict__.get("centred")
    if memo is not None and memo[0] is x and memo[1] == x._version:
        return memo[2]
    centre = x.mean(1, keepdim=True)
    xc = _centred_into(torch.empty(x.shape, dtype=torch.float32, device=x.device), x, centre)
    out = (centre, xc, xc.pow(2).sum(-1, keepdim=True))
    _MEMO.centred = (x, x._version, out)
    return out


_MEMO = threading.local()


def _centred_into(out: Tensor, x: Tensor, centre: Tensor) -> Tensor:
    """``(x - centre).to(out.dtype)`` written into ``out``: the float64 differences are
    rounded as they are stored (torch computes in the inputs' dtype and casts to ``out``'s),
    without a float64 temporary."""
    return torch.sub(x, centre, out=out)


def _distance_operands(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """The float32 factors ``[-2 a, |a|^2, 1]`` and ``[b, 1, |b|^2]`` (centred on ``b``'s mean
    row) whose product is the matrix of squared distances (``torch.cdist``'s mm path)."""
    centre, b32, b_norm = centred_float32(b)
    if b is a:
        a32, a_norm = b32, b_norm
    else:
        a32 = (a - centre).to(torch.float32)
        a_norm = a32.pow(2).sum(-1, keepdim=True)
    a_pad, b_pad = torch.ones_like(a_norm), torch.ones_like(b_norm)
    lhs = torch.cat([a32.mul(-2), a_norm, a_pad], -1)  # [B, Pa, D + 2]
    rhs = torch.cat([b32, b_pad, b_norm], -1)  # [B, Pb, D + 2]
    return lhs, rhs


def _pairwise_sum(x: Tensor, alive: Tensor | None) -> Tensor:
    """``[B]`` float64 sum of the distances over all ordered pairs of alive rows (``alive``
    ``None``: every row).

    The same arithmetic as ``pairwise_distances(x, x).sum((-1, -2), dtype=torch.float64)``
    (which converts the float32 distances to float64 and sums those), computed block by block
    of instances in reused scratch matrices (:mod:`.workspace`).
    """
    lhs, rhs = _distance_operands(x, x)
    b, p = x.shape[0], x.shape[1]
    out = torch.empty(b, dtype=torch.float64, device=x.device)
    # the blocks as views made in one call each (see .workspace.block_size); torch.bmm is the
    # product torch.matmul runs on these [n, P, D + 2] x [n, D + 2, P] operands
    step = block_size(p * p, torch.float64.itemsize)  # the largest matrix: the float64 copy
    lhs_blocks = lhs.split(step)
    masks = (None,) * len(lhs_blocks) if alive is None else alive.split(step)
    blocks = zip(lhs_blocks, rhs.mT.split(step), masks, out.split(step), strict=True)
    for lb, rb, mb, ob in blocks:
        n = lb.shape[0]
        pair = scratch("pair", (n, p, p), torch.float32, x.device)
        torch.bmm(lb, rb, out=pair).clamp_min_(0).sqrt_()
        if mb is not None:
            pair = torch.where(mb[:, :, None] & mb[:, None, :], pair, 0.0)
        pair64 = scratch("pair64", (n, p, p), torch.float64, x.device).copy_(pair)
        torch.sum(pair64, (-1, -2), out=ob)
    return out


def _distances_to(x: Tensor, points: Tensor) -> Tensor:
    """``[B, K, P]`` Euclidean distances ``(x - points[:, k]).norm(dim=-1)`` of the rows of
    ``x`` (``[B, P, D]``) to each of ``points`` (``[B, K, D]``), the differences in a reused
    scratch buffer (every row's norm is the same reduction over its ``D`` coordinates, whatever
    ``K``)."""
    b, p, d = x.shape
    k = points.shape[1]
    diff = temporary("diff", (b, k, p, d), x.dtype, x.device)
    return torch.sub(x[:, None], points[:, :, None], out=diff).norm(dim=-1)


def _masked_mean(v: Tensor, mask: Tensor | None, n: Tensor | float) -> Tensor:
    """Mean of ``v`` over the last axis where ``mask`` (``None``: everywhere), ``n`` entries."""
    return (v if mask is None else torch.where(mask, v, 0.0)).sum(-1) / n


def status_features(
    x: Tensor,
    cost: Tensor,
    alive: Tensor,
    best_x: Tensor,
    best_f: Tensor,
    init_max: Tensor,
    generation: Tensor,
    stagnation: Tensor,
    improved: Tensor,
    max_generations: int,
    box_width: float,
) -> Tensor:
    """The ``[B, 9]`` float32 features.

    Args:
        x: ``[B, P, D]`` population (rows with ``alive`` False are ignored).
        cost: ``[B, P]`` costs (may hold NaN and infinities).
        alive: ``[B, P]`` bool, at least one True per row.
        best_x, best_f: ``[B, D]`` and ``[B]`` best point and cost found so far.
        init_max: ``[B]`` worst finite initial cost (``+inf`` if none was finite).
        generation, stagnation: ``[B]`` int generations done / since the last improvement.
        improved: ``[B]`` bool, the last generation improved gbest.
        max_generations: ``T``.
        box_width: ``hi - lo`` of the search box.
    """
    x = x.to(torch.float64)
    d = x.shape[-1]
    diag = box_width * math.sqrt(d)
    mask = (
        None if guards_enabled() and bool(alive.all()) else alive
    )  # the usual full population skips the masking
    # alive rows per instance (dividing by the float P or by a tensor of P's is the same)
    n: Tensor | float = float(x.shape[1]) if mask is None else alive.sum(-1).to(torch.float64)
    # `t.abs() < inf` is torch.isfinite(t) (False for NaN and both infinities) in two passes
    # where torch's isfinite takes four
    finite_max = init_max.abs() < math.inf
    c_max = torch.where(finite_max, init_max, 0.0)
    c = torch.where(cost.abs() < math.inf, cost, c_max[:, None])  # [B, P]
    g = best_f
    ok = finite_max & (g.abs() < math.inf)
    g0 = torch.where(ok, g, 0.0)
    c = torch.where(ok[:, None], c, 0.0)
    span = (c_max - g0).clamp(min=0.0)
    gap_den = span + _EPS

    cbest_key = c if mask is None else torch.where(mask, c, math.inf)
    cbest_idx = cbest_key.argmin(-1)  # [B]
    cbest = c.gather(1, cbest_idx[:, None]).squeeze(1)
    x_c = x.gather(1, cbest_idx[:, None, None].expand(-1, 1, d))  # [B, 1, D]

    # The three cost means in one pass over a [B, 3, P] block: the gaps to gbest and to cbest,
    # and the costs themselves (c - 0 is c, signed zeros and NaN included); each row is the
    # same subtraction and sum over P as on its own.
    n_col = n if mask is None else n[:, None]  # type: ignore[index]
    refs = torch.stack([g0, cbest, torch.zeros_like(g0)], dim=1)  # [B, 3]
    row_mask = None if mask is None else mask[:, None, :]
    means = _masked_mean(c[:, None, :] - refs[:, :, None], row_mask, n_col)  # [B, 3]
    gaps = means[:, :2] / gap_den[:, None]  # f0, f6
    f0, f6, mean_c = gaps[:, 0], gaps[:, 1], means[:, 2]
    f1 = _pairwise_sum(x, mask) / (n * n) / diag
    var = _masked_mean((c - mean_c[:, None]) ** 2, mask, n)
    f2 = var.sqrt() / (span / 2.0 + _EPS)
    f3 = (max_generations - generation).to(torch.float64) / max_generations
    f4 = stagnation.to(torch.float64) / max_generations
    bx = best_x.to(torch.float64)[:, None, :]
    bx = torch.nan_to_num(bx, nan=0.0, posinf=0.0, neginf=0.0)  # non-finite -> 0
    # mean distances to cbest and to gbest, both from one [B, 2, P, D] block
    dist = _masked_mean(_distances_to(x, torch.cat([x_c, bx], dim=1)), row_mask, n_col) / diag
    f5, f7 = dist[:, 0], dist[:, 1]
    f8 = improved.to(torch.float64)
    if guards_enabled() and bool(
        ok.all()
    ):  # the usual case: the cost features are kept (f * 1.0 is f)
        out = torch.stack([f0, f1, f2, f3, f4, f5, f6, f7, f8], dim=-1)
    else:
        cost_ok = ok.to(torch.float64)
        out = torch.stack(
            [f0 * cost_ok, f1, f2 * cost_ok, f3, f4, f5, f6 * cost_ok, f7, f8], dim=-1
        )
    return torch.nan_to_num(out, nan=0.0).clamp(0.0, 1.0).to(torch.float32)
