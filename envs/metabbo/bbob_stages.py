"""Staged evaluation of a mixed BBOB batch: one pass per shared transform, not per function.

The 24 BBOB functions share their front parts: a shift ``x - x_opt``, a first rotation (``R``
or ``Q``), ``T_osz``, ``T_asy``, a conditioning ``L(alpha)``, a second and a third rotation.
Evaluating function by function repeats each of these (a rotation alone is some twenty small
tensor operations) once per distinct function in the batch, and at the usual batch sizes the
cost of a tensor operation is mostly its fixed dispatch cost, so the time grew with the number
of distinct functions. Here a batch is put in :data:`STAGE_ORDER` (functions that share a stage
are neighbours), and each stage runs once over the contiguous rows that need it, with per-row
matrices and scales; only the short outer parts (``tails``) remain per function, and the long
inner loops of f21/f22 (peaks), f16 (Weierstrass terms) and f23 (Katsuura terms) are one
broadcast pass each with a sequential ``cumsum``.

Every stage is the same element-wise arithmetic, in the same order, as the plain kernels of
:mod:`.bbob_functions` (products with per-row scales commute exactly, ``cumsum`` adds left to
right from zero like the kernels' loops), so each value is bit for bit the kernel's; tests
compare the two on every function. The order and per-row parameters of a batch (its
:class:`StagePlan`) are computed once per :class:`~.bbob.BBOBInstances` object and kept on it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch
from torch import Tensor

from gymforge.envs.metabbo import bbob_functions as bf
from gymforge.envs.metabbo.bbob_functions import KernelArgs
from gymforge.envs.metabbo.bbob_instances import GALLAGHER_PEAKS
from gymforge.envs.metabbo.workspace import row_block, temporary

if TYPE_CHECKING:  # bbob imports this module
    from gymforge.envs.metabbo.bbob import BBOBInstances

__all__ = ["STAGE_ORDER", "StagePlan", "evaluate_staged", "plan"]

#: The row order of a staged batch: every stage's functions are contiguous in it.
STAGE_ORDER: tuple[int, ...] = (1, 5, 8, 20, 4, 3, 2, 10, 11, 16, 15, 12, 17, 18, 6, 13, 23, 24, 7)
STAGE_ORDER += (9, 19, 14, 21, 22)

#: functions on the rows of each stage (each a contiguous run of :data:`STAGE_ORDER`)
ROTATE_1 = (10, 11, 16, 15, 12, 17, 18, 6, 13, 23, 24, 7, 9, 19, 14, 21, 22)
OSZ = (4, 3, 2, 10, 11, 16, 15)
ASY_05 = (12, 17, 18)
COND_BEFORE_2 = (6, 13, 23, 24, 7)  # L(alpha), then the second rotation
ROTATE_2 = (16, 15, 12, 17, 18, 6, 13, 23, 24, 7)
ROTATE_3 = (16, 15)
Q_FIRST = frozenset({6, 7, 13, 23, 24})  # first rotation Q (else R)
Q_SECOND = frozenset({15, 16, 17, 18})  # second rotation Q (else R)
#: alpha of the conditioning L(alpha) of each function that applies one between stages
CONDITION = {6: 10.0, 13: 10.0, 23: 100.0, 24: 100.0, 7: 10.0, 16: 0.01, 15: 10.0}
CONDITION |= {17: 10.0, 18: 1000.0}

_POW2 = [2.0**j for j in range(1, bf.KATSUURA_TERMS + 1)]
_POW3 = [3.0**k for k in range(bf.WEIERSTRASS_TERMS)]
_HALF_POW = [0.5**k for k in range(bf.WEIERSTRASS_TERMS)]
_INV_POW2 = [0.5**j for j in range(1, bf.KATSUURA_TERMS + 1)]
_TERM_CONSTANTS = {"pow2": _POW2, "pow3": _POW3, "half_pow": _HALF_POW, "inv_pow2": _INV_POW2}


@functools.cache
def _terms(name: str, dtype: torch.dtype, device: torch.device) -> Tensor:
    """A constant row of series terms, made once per dtype and device (no copy per call)."""
    return torch.tensor(_TERM_CONSTANTS[name], dtype=dtype, device=device)


PENALISED = frozenset({4, 7, 16, 17, 18, 21, 22, 23, 24})  # tails with a multiple of f_pen(x)

assert set(STAGE_ORDER) == set(range(1, 25)) and len(STAGE_ORDER) == 24


@dataclass(frozen=True)
class StagePlan:
    """A batch in stage order: the permutation, each function's rows and per-row parameters."""

    perm: Tensor | None  # [B] batch rows in stage order (None: already in order)
    inverse: Tensor | None  # [B] stage-order position of each batch row
    spans: dict[int, tuple[int, int]]  # fid -> rows [lo, hi) in stage order (present ones)
    args: KernelArgs  # every instance parameter, in stage order
    f_opt: Tensor  # [B, 1] in stage order
    shift: Tensor  # [B, 1, D] subtracted from x first (x_opt; 0 for f21/f22)
    rot1: Tensor  # [n1, D, D] first rotation of the ROTATE_1 rows
    rot2: Tensor  # [n2, D, D] second rotation of the ROTATE_2 rows
    cond: Tensor  # [B, 1, D] diagonal of each row's between-stage L(alpha) (1 elsewhere)
    two_signs: Tensor  # [n24, 1, D] 2 sign(x_opt) of the f24 rows
    ranges: dict[tuple[int, ...], tuple[int, int]] = field(default_factory=dict)  # memo
    tail_args: dict[tuple[int, ...], KernelArgs] = field(default_factory=dict)  # memo
    constants: dict[int, tuple[Tensor, ...]] = field(default_factory=dict)  # memo of tails

    def span(self, fids: tuple[int, ...]) -> tuple[int, int]:
        """Rows ``[lo, hi)`` of the run of :data:`STAGE_ORDER` holding ``fids``."""
        got = self.ranges.get(fids)
        if got is None:
            got = self.ranges[fids] = _span(self.spans, fids)
        return got

    def rows(self, fids: tuple[int, ...]) -> KernelArgs:
        """The parameters of the rows of ``fids`` (with their Gallagher peaks)."""
        got = self.tail_args.get(fids)
        if got is None:
            lo, hi = self.span(fids)
            got = self.tail_args[fids] = _rows(self.args, lo, hi, GALLAGHER_PEAKS.get(fids[0], 0))
        return got


def _span(spans: dict[int, tuple[int, int]], fids: tuple[int, ...]) -> tuple[int, int]:
    present = [spans[f] for f in fids if f in spans]
    if not present:
        return 0, 0
    return min(lo for lo, _ in present), max(hi for _, hi in present)


def plan(instances: BBOBInstances) -> StagePlan:
    """The :class:`StagePlan` of ``instances``, computed once and kept on the (immutable)
    object, so that evaluating the same instances every generation does not regroup them."""
    cached = instances.__dict__.get("_stage_plan")
    if cached is not None:
        return cached
    fid = instances.function_id
    rank = torch.empty(25, dtype=torch.int64)
    rank[torch.tensor(STAGE_ORDER)] = torch.arange(24)
    key = rank.to(fid.device)[fid]
    perm = torch.sort(key, stable=True).indices
    ordered = fid[perm].tolist()
    in_order = torch.equal(perm, torch.arange(len(ordered), device=fid.device))
    spans: dict[int, tuple[int, int]] = {}
    for i, f in enumerate(ordered):
        lo, _ = spans.get(f, (i, i))
        spans[f] = (lo, i + 1)

    def take(t: Tensor) -> Tensor:
        return t if in_order else t.index_select(0, perm)

    args = KernelArgs(*(take(t) for t in _instance_fields(instances)))
    d, dtype, device = instances.dimension, torch.float64, instances.device
    shift = args.x_opt[:, None, :].clone()
    for f in (21, 22):
        if f in spans:
            shift[spans[f][0] : spans[f][1]] = 0.0
    cond = torch.ones(len(ordered), 1, d, dtype=dtype, device=device)
    for f, alpha in CONDITION.items():
        if f in spans:
            cond[spans[f][0] : spans[f][1]] = bf._constant_scales(
                d, math.sqrt(alpha), dtype, device
            )
    rows = torch.tensor(ordered, device=device)
    lo1, hi1 = _span(spans, ROTATE_1)
    lo2, hi2 = _span(spans, ROTATE_2)
    first_q = _member(rows[lo1:hi1], Q_FIRST)[:, None, None]
    second_q = _member(rows[lo2:hi2], Q_SECOND)[:, None, None]
    lo24, hi24 = spans.get(24, (0, 0))
    staged = StagePlan(
        perm=None if in_order else perm,
        inverse=None if in_order else torch.argsort(perm),
        spans=spans,
        args=args,
        f_opt=take(instances.f_opt)[:, None],
        shift=shift,
        rot1=torch.where(first_q, args.rot_q[lo1:hi1], args.rot_r[lo1:hi1]),
        rot2=torch.where(second_q, args.rot_q[lo2:hi2], args.rot_r[lo2:hi2]),
        cond=cond,
        two_signs=2.0 * bf._signs(args.x_opt[lo24:hi24]),
    )
    instances.__dict__["_stage_plan"] = staged  # a cache, not a field (frozen dataclass)
    return staged


def _instance_fields(instances: BBOBInstances) -> tuple[Tensor, ...]:
    return (
        instances.x_opt,
        instances.rot_r,
        instances.rot_q,
        instances.peak_centers,
        instances.peak_scales,
        instances.peak_weights,
    )


def _member(fids: Tensor, members: frozenset[int]) -> Tensor:
    """``[n]`` bool: which of ``fids`` are in ``members``."""
    return torch.isin(fids, torch.tensor(sorted(members), device=fids.device))


def _rows(args: KernelArgs, lo: int, hi: int, peaks: int = 0) -> KernelArgs:
    """The parameters of rows ``[lo, hi)`` (with their first ``peaks`` Gallagher peaks)."""
    return KernelArgs(
        args.x_opt[lo:hi],
        args.rot_r[lo:hi],
        args.rot_q[lo:hi],
        args.peak_centers[lo:hi, :peaks],
        args.peak_scales[lo:hi, :peaks],
        args.peak_weights[lo:hi, :peaks],
    )


# ----------------------------------------------------------------------------- evaluation


def evaluate_staged(instances: BBOBInstances, x: Tensor) -> Tensor:
    """``f(x)`` of shape ``[B, P]`` for a float64 ``x`` of shape ``[B, P, D]`` (before the NaN
    clean-up of :func:`~.bbob.evaluate`), stage by stage."""
    p = plan(instances)
    if p.perm is not None:
        xp = torch.index_select(x, 0, p.perm, out=temporary("stage_x", x.shape, x.dtype, x.device))
    else:
        xp = x
    # s: the running transform of every row, updated in place stage by stage
    s = torch.sub(xp, p.shift, out=temporary("stage_s", x.shape, x.dtype, x.device))
    if 24 in p.spans:  # Lunacek's x_hat - mu0, x_hat = 2 sign(x_opt) x
        lo, hi = p.spans[24]
        torch.sub(p.two_signs * xp[lo:hi], bf.LUNACEK_MU0, out=s[lo:hi])
    lo, hi = p.span(ROTATE_1)
    if hi > lo:
        bf._rot(p.rot1, s[lo:hi], out=s[lo:hi])
    for rows in _blocks(p.span(OSZ), s):
        block = s[rows]
        buffers = [temporary(f"stage_osz{i}", block.shape, x.dtype, x.device) for i in range(3)]
        block.copy_(bf._t_osz(block, (buffers[0], buffers[1], buffers[2])))
    for rows in _blocks(p.spans.get(15, (0, 0)), s):
        s[rows].copy_(bf._t_asy(s[rows], 0.2))
    for rows in _blocks(p.span(ASY_05), s):
        s[rows].copy_(bf._t_asy(s[rows], 0.5))
    lo, hi = p.span(COND_BEFORE_2)
    if hi > lo:
        s[lo:hi].mul_(p.cond[lo:hi])
    z_hat0 = None
    if 7 in p.spans:  # step ellipsoid: round z_hat (kept for its first coordinate)
        lo, hi = p.spans[7]
        z_hat = s[lo:hi]
        z_hat0 = z_hat[..., 0].clone()
        rounded = torch.floor(10.0 * z_hat + 0.5) / 10.0
        z_hat.copy_(bf._select(z_hat.abs() > 0.5, torch.floor(z_hat + 0.5), rounded))
    lo, hi = p.span(ROTATE_2)
    if hi > lo:
        bf._rot(p.rot2, s[lo:hi], out=s[lo:hi])
    lo, hi = p.span(ROTATE_3)
    if hi > lo:
        s[lo:hi].mul_(p.cond[lo:hi])
        bf._rot(p.args.rot_r[lo:hi], s[lo:hi], out=s[lo:hi])
    pen = None
    if any(f in p.spans for f in PENALISED):  # f_pen(x) of every row, in scratch memory
        buf = temporary("stage_pen", x.shape, x.dtype, x.device)
        pen = torch.abs(xp, out=buf).sub_(5.0).clamp_min_(0.0).square_().sum(-1)
    values = [_tail(p, fids, s, xp, pen, z_hat0) for fids in _TAIL_GROUPS]
    out = torch.cat([v for v in values if v is not None]).add_(p.f_opt)
    return out if p.inverse is None else out.index_select(0, p.inverse)


def _blocks(span: tuple[int, int], s: Tensor) -> list[slice]:
    """The rows ``[lo, hi)`` of ``s`` (``[B, P, D]``) in blocks whose ``[n, P, D]`` work tensors
    stay in cache (:func:`~.workspace.row_block`); no block when the span is empty."""
    lo, hi = span
    step = row_block(s.shape[1] * s.shape[2], s)
    return [slice(i, min(i + step, hi)) for i in range(lo, hi, step)]


#: functions whose outer parts run together (contiguous in STAGE_ORDER), in stage order
_TAIL_GROUPS: tuple[tuple[int, ...], ...] = (
    (1,),
    (5,),
    (8,),
    (20,),
    (4,),
    (3,),
    (2, 10),
    (11,),
    (16,),
    (15,),
    (12,),
    (17, 18),
    (6,),
    (13,),
    (23,),
    (24,),
    (7,),
    (9, 19),
    (14,),
    (21,),
    (22,),
)
assert tuple(f for g in _TAIL_GROUPS for f in g) == STAGE_ORDER


def _tail(
    p: StagePlan,
    fids: tuple[int, ...],
    s: Tensor,
    x: Tensor,
    pen: Tensor | None,
    z_hat0: Tensor | None,
) -> Tensor | None:
    """``f - f_opt`` of the rows of ``fids`` from their staged ``s`` (``None`` if absent)."""
    lo, hi = p.span(fids)
    if hi == lo:
        return None
    a, z, xs = p.rows(fids), s[lo:hi], x[lo:hi]
    pen_rows = torch.empty(0) if pen is None else pen[lo:hi]
    if fids == (9, 19):
        return _rosenbrock_pair(p, z, xs)
    if fids == (17, 18):
        return _schaffers(p.cond[lo:hi] * z, xs, pen_rows)
    if fids[0] == 7:
        assert z_hat0 is not None
        core = (bf._scales(xs, 100.0) * z.square()).sum(-1)
        return 0.1 * torch.maximum(z_hat0.abs() * 1e-4, core) + pen_rows
    if fids[0] == 24:
        return _lunacek(p.two_signs, z, xs, pen_rows)
    if fids[0] == 20:
        got = p.constants.get(20)
        if got is None:  # 2 sign(x_opt) and 2 |x_opt|, once per batch
            got = p.constants[20] = (2.0 * bf._signs(a.x_opt), 2.0 * a.x_opt.abs()[:, None, :])
        return _schwefel(*got, xs)
    return _TAILS[fids[0]](a, z, xs, pen_rows)


def _rosenbrock_pair(p: StagePlan, z: Tensor, x: Tensor) -> Tensor:
    """f9 and f19 from ``R (x - x_opt)``: both take ``c R (x - x_opt) + 1``."""
    r = bf._rosenbrock_scale(x) * z + 1.0
    parts = []
    for f in (9, 19):
        if f not in p.spans:
            continue
        lo, hi = (i - p.span((9, 19))[0] for i in p.spans[f])
        rows = r[lo:hi]
        if f == 9:
            parts.append(bf._rosenbrock(rows))
        else:
            head, tail = rows[..., :-1], rows[..., 1:]
            s = 100.0 * (head.square() - tail).square() + (head - 1.0).square()
            parts.append(10.0 + 10.0 * (s / 4000.0 - torch.cos(s)).sum(-1) / (x.shape[-1] - 1))
    return parts[0] if len(parts) == 1 else torch.cat(parts)


def _schaffers(z: Tensor, x: Tensor, pen: Tensor) -> Tensor:
    """f17/f18 from ``z = L(alpha) Q T_asy^0.5(R (x - x_opt))``."""
    s2 = z[..., :-1].square() + z[..., 1:].square()
    log_s2 = torch.log(s2)  # both powers are exp(e log(s2)) (see bbob_functions._pow): one log
    terms = torch.exp(0.25 * log_s2) * (1.0 + torch.sin(50.0 * torch.exp(0.1 * log_s2)).square())
    return (terms.sum(-1) / (x.shape[-1] - 1)) ** 2 + 10.0 * pen


def _weierstrass(a: KernelArgs, z: Tensor, x: Tensor, pen: Tensor) -> Tensor:
    """f16 from ``z = R L(1/100) Q T_osz(R (x - x_opt))``: the twelve terms in one pass (in
    scratch memory: fresh blocks of this size cost more in page faults than in arithmetic)."""
    shape = (*z.shape, bf.WEIERSTRASS_TERMS)
    terms = temporary("stage_terms", shape, z.dtype, z.device)
    total = temporary("stage_total", shape, z.dtype, z.device)
    pow3, half = (_terms(name, z.dtype, z.device) for name in ("pow3", "half_pow"))
    base = (2.0 * math.pi * (z + 0.5))[..., None]
    torch.mul(base, pow3, out=terms).cos_().mul_(half)
    total = torch.cumsum(terms, -1, out=total)[..., -1].contiguous()
    d = x.shape[-1]
    return 10.0 * (total.sum(-1) / d - bf._weierstrass_f0()) ** 3 + 10.0 / d * pen


def _katsuura(a: KernelArgs, z: Tensor, x: Tensor, pen: Tensor) -> Tensor:
    """f23 from ``z = R L(100) Q (x - x_opt)``: the 32 terms in one pass (scratch memory)."""
    shape = (*z.shape, bf.KATSUURA_TERMS)
    scaled = temporary("stage_terms", shape, z.dtype, z.device)
    rounded = temporary("stage_total", shape, z.dtype, z.device)
    pow2 = _terms("pow2", z.dtype, z.device)
    torch.mul(z[..., None], pow2, out=scaled)
    torch.add(scaled, 0.5, out=rounded).floor_()
    # / 2^j as * 2^-j: both are the exact quotient, correctly rounded (powers of two)
    terms = scaled.sub_(rounded).abs_().mul_(_terms("inv_pow2", z.dtype, z.device))
    total = torch.cumsum(terms, -1, out=rounded)[..., -1].contiguous()
    d = x.shape[-1]
    index = torch.arange(1, d + 1, dtype=x.dtype, device=x.device)
    product = torch.prod(1.0 + index * total, dim=-1)
    return 10.0 / d / d * (bf._pow(product, 10.0 / d**1.2) - 1.0) + pen


def _gallagher(a: KernelArgs, t: Tensor, x: Tensor, pen: Tensor) -> Tensor:
    """f21/f22 from ``t = R x``: every peak's weighted distance in one pass (scratch memory)."""
    b, p, d = t.shape
    shape = (b, p, a.peak_weights.shape[1], d)
    diff = temporary("stage_terms", shape, t.dtype, t.device)
    dist = temporary("stage_total", shape, t.dtype, t.device)
    torch.sub(t[:, :, None, :], a.peak_centers[:, None], out=diff).square_()
    diff.mul_(a.peak_scales[:, None])
    dist = torch.cumsum(diff, -1, out=dist)[..., -1].contiguous()  # [b, P, K]
    best = (a.peak_weights[:, None, :] * torch.exp(-0.5 / d * dist)).amax(-1)
    return bf._t_osz(10.0 - best).square() + pen


def _lunacek(two_signs: Tensor, z: Tensor, x: Tensor, pen: Tensor) -> Tensor:
    """f24 from ``z = R L(100) Q (x_hat - mu0)``; ``two_signs = 2 sign(x_opt)``."""
    d = x.shape[-1]
    s = 1.0 - 0.5 / (math.sqrt(d + 20.0) - 4.1)
    mu1 = -math.sqrt((bf.LUNACEK_MU0**2 - 1.0) / s)
    x_hat = two_signs * x
    sphere0 = (x_hat - bf.LUNACEK_MU0).square().sum(-1)
    sphere1 = d + s * (x_hat - mu1).square().sum(-1)
    multimodal = 10.0 * (d - torch.cos(2.0 * math.pi * z).sum(-1))
    return torch.minimum(sphere0, sphere1) + multimodal + 1e4 * pen


def _schwefel(two_signs: Tensor, two_abs_opt: Tensor, x: Tensor) -> Tensor:
    """f20 from ``x``, with ``2 sign(x_opt)`` and ``2 |x_opt|`` (``[b, 1, D]``) from the plan."""
    x_hat = two_signs * x
    lagged = torch.nn.functional.pad((x_hat - two_abs_opt)[..., :-1], (1, 0))
    z_hat = x_hat + 0.25 * lagged
    z = 100.0 * (bf._cond(x, 10.0) * (z_hat - two_abs_opt) + two_abs_opt)
    penalty = bf._f_pen(z, bound=500.0)
    core = (z * torch.sin(torch.sqrt(z.abs()))).sum(-1) / x.shape[-1]
    return 0.01 * (penalty + bf.SCHWEFEL_CONST - core)


@functools.cache
def _even(d: int, device: torch.device) -> Tensor:
    """``[D]`` bool: the even (0-based) coordinates (a cached constant: do not modify it)."""
    return torch.arange(d, device=device) % 2 == 0


def _bueche_rastrigin(z: Tensor, x: Tensor, pen: Tensor) -> Tensor:
    """f4 from ``z = T_osz(x - x_opt)``."""
    s = bf._cond(x, 10.0) * ((z > 0) & _even(x.shape[-1], x.device)).to(z.dtype).mul_(9.0).add_(1.0)
    return bf._rastrigin(s * z) + 100.0 * pen


def _attractive_sector(a: KernelArgs, z: Tensor, x: Tensor, pen: Tensor) -> Tensor:
    """f6 from ``z = R L(10) Q (x - x_opt)``."""
    z = z * (z * a.x_opt[:, None, :] > 0).to(z.dtype).mul_(99.0).add_(1.0)
    return bf._pow(bf._t_osz(z.square().sum(-1)), 0.9)


_Tail = Callable[[KernelArgs, Tensor, Tensor, Tensor], Tensor]


def _blocked(tail: _Tail, terms: int) -> _Tail:
    """``tail`` run block by block of instances so that its ``[n, P, D, terms]`` work tensors
    stay in cache (:func:`~.workspace.row_block`); each instance is computed on its own, so the
    values are the same bits as in one pass."""

    def run(a: KernelArgs, z: Tensor, x: Tensor, pen: Tensor) -> Tensor:
        n, p, d = z.shape
        step = row_block(p * d * terms, z)
        if n <= step:
            return tail(a, z, x, pen)
        parts = []
        for lo in range(0, n, step):
            rows = slice(lo, lo + step)
            block = KernelArgs(*(t[rows] for t in a))
            parts.append(tail(block, z[rows], x[rows], pen[rows] if pen.numel() else pen))
        return torch.cat(parts)

    return run


_TAILS: dict[int, _Tail] = {
    1: lambda a, z, x, pen: z.square().sum(-1),
    5: lambda a, z, x, pen: bf.f5_linear_slope(a, x),
    8: lambda a, z, x, pen: bf._rosenbrock(bf._rosenbrock_scale(x) * z + 1.0),
    4: lambda a, z, x, pen: _bueche_rastrigin(z, x, pen),
    3: lambda a, z, x, pen: bf._f3_of(a, z, x),
    2: lambda a, z, x, pen: bf._ellipsoid_of(a, z, x),
    10: lambda a, z, x, pen: bf._ellipsoid_of(a, z, x),
    11: lambda a, z, x, pen: bf._f11_of(a, z, x),
    16: _blocked(_weierstrass, bf.WEIERSTRASS_TERMS),
    15: lambda a, z, x, pen: bf._rastrigin(z),
    12: lambda a, z, x, pen: z[..., 0].square() + 1e6 * z[..., 1:].square().sum(-1),
    6: _attractive_sector,
    13: lambda a, z, x, pen: z[..., 0].square() + 100.0 * torch.sqrt(z[..., 1:].square().sum(-1)),
    23: _blocked(_katsuura, bf.KATSUURA_TERMS),
    14: lambda a, z, x, pen: torch.sqrt(bf._pow(z.abs(), 2.0 + 4.0 * bf._exponents(x)).sum(-1)),
    21: _blocked(_gallagher, GALLAGHER_PEAKS[21]),
    22: _blocked(_gallagher, GALLAGHER_PEAKS[22]),
}
