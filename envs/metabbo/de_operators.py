"""Differential evolution's variation operators, batched over instances: the random donors
and the draws of one generation, mutation, crossover, bound handling and the archive (the
formulas are in :mod:`.optimizer`'s docstring).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import torch
from torch import Tensor

from gymforge.core.host_guards import guards_enabled
from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.metabbo.de_config import (
    BOUND_HANDLINGS,
    CONTROLLED,
    MUTATIONS,
    DEConfig,
    DEState,
    _clean,
)
from gymforge.envs.metabbo.draws import uniforms
from gymforge.envs.metabbo.workspace import temporary


def _distinct_indices(u: Tensor, sizes: list[Tensor | int], current: Tensor) -> list[Tensor]:
    """Distinct random indices per individual, all different from ``current``.

    ``u`` [B, P, k] uniforms; ``sizes[m]`` [B, 1] int64 (or an int, the same for every instance)
    the range ``[0, size)`` of donor ``m``;
    ``current`` [P] int64. Donor ``m`` is uniform over its range minus the ``m + 1`` indices
    already taken, by ranking: draw ``j`` in ``[0, size - m - 1)`` and step over each taken index
    ``e <= j`` in ascending order. The taken indices are kept sorted by insertion (min/max), as
    ``k`` is small.
    """
    taken = [current[None, :].expand(u.shape[0], -1)]  # ascending, each [B, P]
    out = []
    firsts = _first_draws(u, sizes)
    for m, size in enumerate(sizes):
        if firsts is not None:
            j = firsts[m]
        else:
            free = (size - (m + 1)).clamp(min=1)  # [B, 1]
            j = (u[..., m].to(torch.float64) * free).long().clamp(max=free - 1)  # [B, P]
        for e in taken:
            j.add_(j >= e)
        out.append(j)
        if m + 1 < len(sizes):  # insert j into the sorted list
            merged, carry = [], j
            for e in taken:
                merged.append(torch.minimum(e, carry))
                carry = torch.maximum(e, carry)
            taken = [*merged, carry]
    return out


def _first_draws(u: Tensor, sizes: list[Tensor | int]) -> list[Tensor] | None:
    """For ranges that are ints (the same for every instance), each donor's draw ``j`` in
    ``[0, size - m - 1)`` before stepping over the taken indices, all at once: ``k`` contiguous
    ``[B, P]`` int64 tensors (``None`` when a range is per instance)."""
    if not all(isinstance(s, int) for s in sizes):
        return None
    free, top = _free_counts(tuple(sizes), u.device)  # type: ignore[arg-type]
    # the same product per element as u[..., m].to(float64) * free_m
    j = (u.to(torch.float64) * free).long().clamp_(max=top)  # [B, P, k]
    return list(j.permute(2, 0, 1).contiguous().unbind(0))


@functools.cache
def _free_counts(sizes: tuple[int, ...], device: torch.device) -> tuple[Tensor, Tensor]:
    """``max(size_m - (m + 1), 1)`` per donor ``m`` (float64) and that minus one (int64)."""
    free = [max(s - (m + 1), 1) for m, s in enumerate(sizes)]
    return (
        torch.tensor(free, dtype=torch.float64, device=device),
        torch.tensor(free, dtype=torch.int64, device=device) - 1,
    )


@functools.cache
def _arange(
    n: int, device: torch.device, step: int = 1, dtype: torch.dtype = torch.int64
) -> Tensor:
    """``torch.arange(n) * step`` (exact), built once per arguments: a shared constant that
    callers read but never modify."""
    return (torch.arange(n, device=device) * step).to(dtype)


def _row_offsets(b: int, n: int, device: torch.device) -> Tensor:
    """``[B, 1]`` int64 ``i * n``: the flat row of instance ``i``'s first row (a constant)."""
    return _arange(b, device, n)[:, None]


def _gather_rows(x: Tensor, idx: Tensor) -> Tensor:
    """``x[b, idx[b, p]]``: ``x`` [B, N, D], ``idx`` [B, P] -> [B, P, D] (one ``index_select`` of
    whole rows, several times faster on CPU than ``gather`` with an expanded index)."""
    b, n, d = x.shape
    rows = idx + _row_offsets(b, n, idx.device)
    return x.reshape(b * n, d).index_select(0, rows.reshape(-1)).view(b, idx.shape[1], d)


def _hyper(hyper: dict[str, Tensor | float], name: str, b: int, dev: torch.device) -> Tensor:
    """Hyperparameter ``name`` as a float64 ``[B, 1, 1]`` tensor."""
    if name not in hyper:
        raise ValueError(f"hyper is missing {name!r} (got keys {sorted(hyper)})")
    v = torch.as_tensor(hyper[name], dtype=torch.float64, device=dev)
    if v.dim() == 0:
        v = v.expand(b)
    if v.shape != (b,):
        raise ValueError(f"hyper[{name!r}] must have shape [B={b}], got {tuple(v.shape)}")
    return v.view(b, 1, 1)


def _gather_donors(x: Tensor, donors: list[Tensor]) -> list[Tensor]:
    """``[_gather_rows(x, r) for r in donors]`` by one ``index_select`` (contiguous results).

    The rows land in a reused scratch buffer (:mod:`.workspace`): the results are temporaries
    of the current generation (the mutation computes in place on them, the trial vectors end
    up there), never part of a returned state.
    """
    b, n, d = x.shape
    k, p = len(donors), donors[0].shape[1]
    rows = torch.stack(donors).add_(_row_offsets(b, n, x.device))  # [k, B, P]
    got = temporary("donors", (k * b * p, d), x.dtype, x.device)
    torch.index_select(x.reshape(b * n, d), 0, rows.view(-1), out=got)
    return list(got.view(k, b, p, d).unbind(0))


@dataclass(frozen=True)
class _Draws:
    """The uniforms one generation draws, in the order of the stream (see :func:`_draw`)."""

    donors: Tensor  # [B, P, k] donor indices of the mutation
    start: Tensor  # [B, P] crossover start
    crossover: Tensor  # [B, P, D - 1] (exponential) or [B, P, D] (binomial)
    repair: Tensor | None  # [B, P, D] fresh values of the "random" bound handling, if it runs


def _draw(config: DEConfig, p: int, rng: InstanceRNG, active: Tensor | None) -> _Draws:
    """Every uniform of a generation, as the modules draw them one after the other (mutation,
    crossover start, crossover mask, random bound repair), in one pass (:func:`.draws.uniforms`)."""
    d = config.dimension
    shapes = [(p, MUTATIONS[config.mutation]), (p,)]
    shapes.append((p, d - 1) if config.crossover == "exponential" else (p, d))
    repair = config.bound_handling in ("random", CONTROLLED)
    if repair:
        shapes.append((p, d))
    u = uniforms(rng, shapes, where=active)
    return _Draws(u[0], u[1], u[2], u[3] if repair else None)


def _mutate(config: DEConfig, state: DEState, f1: Tensor, f2: Tensor, u: Tensor) -> Tensor:
    """Mutant vectors ``[B, P, D]``; ``u`` [B, P, k] the donor uniforms."""
    x, alive = state.population, state.alive
    p = x.shape[1]
    k = MUTATIONS[config.mutation]
    current = _arange(p, x.device)
    # Without population-size reduction every row stays alive: the same range everywhere.
    n: Tensor | int = p if config.min_population_size is None else alive.sum(-1, keepdim=True)
    if config.mutation == "current-to-best/1" and config.archive_size > 0:
        n = alive.sum(-1, keepdim=True)  # [B, 1]
        a = state.archive_inserted.clamp(max=config.archive_size)[:, None]  # [B, 1]
        r1, r2 = _distinct_indices(u, [n, n + a], current)
        from_archive = r2 >= n
        xr2 = torch.where(
            from_archive[..., None],
            _gather_rows(state.archive, torch.where(from_archive, r2 - n, 0)),
            _gather_rows(x, torch.where(from_archive, 0, r2)),
        )
        xr = [_gather_rows(x, r1), xr2]
    else:
        xr = _gather_donors(x, _distinct_indices(u, [n] * k, current))
    if config.mutation in ("best/2", "current-to-best/1", "rand-to-best/1"):
        key = torch.where(alive, _clean(state.fitness), math.inf)
        xbest = _gather_rows(x, key.argmin(-1)[:, None])  # [B, 1, D]
    # Same sums and products as the formulas in the module docstring, in the same order, in
    # place on the freshly gathered donor rows (so no [B, P, D] temporaries are allocated).
    m = config.mutation
    if m == "rand/1":
        return xr[1].sub_(xr[2]).mul_(f1).add_(xr[0])
    if m == "best/2":
        head = xr[0].sub_(xr[1]).mul_(f1).add_(xbest)
        return head.add_(xr[2].sub_(xr[3]).mul_(f2))
    if m == "rand/2":
        head = xr[1].sub_(xr[2]).mul_(f1).add_(xr[0])
        return head.add_(xr[3].sub_(xr[4]).mul_(f2))
    if m == "current-to-rand/1":
        head = xr[0].sub_(x).mul_(f1).add_(x)
        return head.add_(xr[1].sub_(xr[2]).mul_(f2))
    if m == "current-to-best/1":
        head = (xbest - x).mul_(f1).add_(x)
        return head.add_(xr[0].sub_(xr[1]).mul_(f2))
    head = (xbest - xr[0]).mul_(f1).add_(xr[0])  # rand-to-best/1
    return head.add_(xr[1].sub_(xr[2]).mul_(f2))


def _float32_threshold(p: Tensor) -> Tensor:
    """The smallest float32 ``>= p`` (float64, NaN stays NaN): for any float32 ``u``, ``u < p``
    exactly when ``u < _float32_threshold(p)``, so uniforms compare without a float64 copy."""
    q = p.to(torch.float32)
    up = torch.nextafter(q, torch.full_like(q, math.inf))
    return torch.where(q.to(torch.float64) < p, up, q)


@functools.cache
def _exponential_masks(d: int, device: torch.device) -> Tensor:
    """``[D * D, D]`` bool: row ``j0 * D + (L - 1)`` is the exponential crossover's mask
    ``((j - j0) mod D) < L`` (start ``j0``, run length ``L``)."""
    j = torch.arange(d, device=device)
    table = torch.remainder(j[None, :] - j[:, None], d)[:, None, :] < (j + 1)[None, :, None]
    return table.reshape(d * d, d)


@functools.cache
def _exponential_words(d: int, device: torch.device) -> Tensor:
    """:func:`_exponential_masks` as int64 words, all bits set where True (a constant)."""
    return _exponential_masks(d, device).to(torch.int64).neg_()


def _leading_successes(u: Tensor, threshold: Tensor) -> Tensor:
    """``[B, P]`` int64 count of the leading ``u_k < threshold`` along the last axis of ``u``
    (``[B, P, K]`` float32 uniforms; ``threshold`` broadcasts): ``torch.cumprod((u <
    threshold).long(), -1).sum(-1)``, computed in float32.

    The comparison writes 1.0 / 0.0 into a float scratch tensor (torch's ``bool`` comparison
    result is several times slower to produce), the running product is taken in place on it,
    and the count is a matrix-vector product with ones (sums of at most ``K`` ones are exact in
    float32, in any order), where an integer ``cumprod`` and a ``sum`` over a short last axis
    each cost about as much as the whole float version.
    """
    cont = temporary("leading", u.shape, torch.float32, u.device)
    torch.lt(u, threshold, out=cont).cumprod_(-1)
    return cont.matmul(_ones(u.shape[-1], u.device)).long()


@functools.cache
def _ones(n: int, device: torch.device) -> Tensor:
    """``[n]`` float32 ones (a shared constant, never modified)."""
    return torch.ones(n, dtype=torch.float32, device=device)


def _crossover(
    config: DEConfig, x: Tensor, v: Tensor, cr: Tensor, u_start: Tensor, u_mask: Tensor
) -> Tensor:
    """Trial vectors ``[B, P, D]`` from targets ``x`` and mutants ``v``; ``u_start`` [B, P] and
    ``u_mask`` ([B, P, D - 1] exponential, [B, P, D] binomial) the crossover's uniforms.

    The trials are written over ``v`` (a temporary of the generation), which is returned."""
    d = x.shape[2]
    # rng.integers(d, ...) of the start uniforms
    start = torch.clamp((u_start * d).long(), max=d - 1)  # [B, P]
    cr32 = _float32_threshold(cr)  # u < cr32 iff u < cr, for the float32 uniforms u
    if config.crossover == "binomial":
        j = torch.arange(d, device=x.device)
        take = (u_mask < cr32) | (j == start[..., None])
    else:
        extra = _leading_successes(u_mask, cr32)  # [B, P]: L - 1, in 0..D-1
        # take_j = ((j - j0) mod D) < L, looked up in a [j0, L - 1] table of the D^2 masks
        rows = start.mul_(d).add_(extra).view(-1)
        # the masks as all-ones / zero int64 words: u = ((v ^ x) & m) ^ x is v where m, x
        # elsewhere, bit for bit (torch.where's bits, without its per-element branch)
        m = _exponential_words(d, x.device).index_select(0, rows).view(x.shape)
        xi = x.view(torch.int64)
        v.view(torch.int64).bitwise_xor_(xi).bitwise_and_(m).bitwise_xor_(xi)
        return v
    return torch.where(take, v, x, out=v)


def _bound(
    config: DEConfig,
    x: Tensor,
    u: Tensor,
    fresh: Tensor | None,
    choice: Tensor | None = None,
    in_place: bool = False,
) -> Tensor:
    """Trial vectors ``u`` brought into ``[lower, upper]`` (``x`` the parents); ``fresh``
    [B, P, D] uniforms for the ``"random"`` handling (needed by it and by ``"controlled"``);
    ``choice`` (``[B]`` int64 into :data:`BOUND_HANDLINGS`) for ``"controlled"``.
    ``in_place``: ``u`` is a temporary that the clip handling may overwrite."""
    # A finite sum means every coordinate is finite (NaN and infinities propagate): the usual
    # case skips the replacement; a sum that overflows takes it too (a no-op then).
    if not guards_enabled() or not math.isfinite(float(u.sum())):
        u = torch.where(torch.isfinite(u), u, x)
    if config.bound_handling == "clip" and in_place:
        return u.clamp_(config.lower, config.upper)
    if config.bound_handling != CONTROLLED:
        return _bound_mode(config, config.bound_handling, x, u, fresh)
    if choice is None:
        raise ValueError('hyper is missing "bound" (required by bound_handling="controlled")')
    out = u
    for k, mode in enumerate(BOUND_HANDLINGS):
        # Every mode is computed (the random one's uniforms are drawn for every instance), so
        # each instance's random stream advances the same way whatever it chose.
        out = torch.where((choice == k)[:, None, None], _bound_mode(config, mode, x, u, fresh), out)
    return out


def _bound_mode(config: DEConfig, mode: str, x: Tensor, u: Tensor, fresh: Tensor | None) -> Tensor:
    """``u`` (finite) brought into the box by one of :data:`BOUND_HANDLINGS` (``fresh`` [B, P,
    D] uniforms for ``"random"``)."""
    lo, hi = config.lower, config.upper
    w = hi - lo
    if mode == "clip":
        return u.clamp(lo, hi)  # already in the box: no rounding guard needed
    if mode == "reflect":
        t = torch.remainder(u - lo, 2 * w)
        out = lo + torch.where(t > w, 2 * w - t, t)
    elif mode == "periodic":
        out = lo + torch.remainder(u - lo, w)
    elif mode == "halving":
        out = torch.where(u < lo, (x + lo) / 2, torch.where(u > hi, (x + hi) / 2, u))
    else:  # random
        if fresh is None:
            raise ValueError('the "random" bound handling needs its uniforms (fresh)')
        out = torch.where((u < lo) | (u > hi), lo + fresh.to(torch.float64) * w, u)
    return out.clamp_(lo, hi)  # rounding guard (in place: out is new); a no-op in the box


def _archive_insert(config: DEConfig, state: DEState, replaced: Tensor) -> tuple[Tensor, Tensor]:
    """Ring-buffer insert of the replaced parents (``replaced`` [B, P] bool)."""
    a = config.archive_size
    rank = torch.cumsum(replaced.long(), dim=-1) - 1  # [B, P]
    count = replaced.sum(-1, keepdim=True)  # [B, 1]
    # Only the last A replaced parents are written, so the slots are distinct.
    write = replaced & (rank >= count - a)
    slot = torch.remainder(state.archive_inserted[:, None] + rank, a)  # [B, P]
    slot = torch.where(write, slot, a)  # a = dump row
    buf = torch.cat([state.archive, state.archive[:, :1]], dim=1)  # [B, A+1, D]
    buf = buf.scatter(1, slot[..., None].expand(-1, -1, buf.shape[2]), state.population)
    return buf[:, :a], state.archive_inserted + count.squeeze(1)


def _bound_choice(hyper: dict[str, Tensor | float], b: int, dev: torch.device) -> Tensor:
    """``hyper["bound"]`` as a ``[B]`` int64 tensor of indices into :data:`BOUND_HANDLINGS`."""
    if "bound" not in hyper:
        raise ValueError(f"hyper is missing 'bound' (got keys {sorted(hyper)})")
    v = torch.as_tensor(hyper["bound"], device=dev)
    if v.dtype.is_floating_point or v.dtype == torch.bool:
        raise ValueError(f"hyper['bound'] must hold integers, got dtype {v.dtype}")
    v = v.long().expand(b) if v.dim() == 0 else v.long()
    in_range = not guards_enabled() or not bool(((v < 0) | (v >= len(BOUND_HANDLINGS))).any())
    if v.shape != (b,) or not in_range:
        raise ValueError(
            f"hyper['bound'] must be a [B={b}] tensor of indices in 0..{len(BOUND_HANDLINGS) - 1} "
            f"into {BOUND_HANDLINGS}, got {v.tolist()}"
        )
    return v
