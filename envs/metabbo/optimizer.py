"""Batched differential evolution (DE), one generation per call, for MetaBBO environments.

The low-level optimiser that a MetaBBO agent configures: ``B`` independent DE runs, one per
problem instance of a :class:`~gymforge.envs.metabbo.bbob.BBOBInstances` batch, each with its own
hyperparameters every generation. Everything is a pure function of ``(config, problems, state,
hyper, rng)``; nothing loops over instances, and instance ``i``'s run depends only on its own
random stream (a :class:`~gymforge.core.seeding.InstanceRNG`), never on the rest of the batch.

Notation: ``x_i`` the current (target) individual, ``x_best`` the best individual of the current
population, ``x_r1, x_r2, ...`` distinct random individuals different from ``x_i``, ``x~_r2`` a
random member of population-union-archive, ``F1, F2`` per-instance scale factors.

Mutation operators (``DEConfig.mutation``):

=====================  ===================================================================
``rand/1``             ``v = x_r1 + F1 (x_r2 - x_r3)``
``best/2``             ``v = x_best + F1 (x_r1 - x_r2) + F2 (x_r3 - x_r4)``
``rand/2``             ``v = x_r1 + F1 (x_r2 - x_r3) + F2 (x_r4 - x_r5)``
``current-to-rand/1``  ``v = x_i + F1 (x_r1 - x_i) + F2 (x_r2 - x_r3)``
``current-to-best/1``  ``v = x_i + F1 (x_best - x_i) + F2 (x_r1 - x~_r2)`` (archive: JADE)
``rand-to-best/1``     ``v = x_r1 + F1 (x_best - x_r1) + F2 (x_r2 - x_r3)``
=====================  ===================================================================

Crossover (``DEConfig.crossover``), trial ``u`` from target ``x_i`` and mutant ``v``:

- ``binomial``: ``u_j = v_j`` if ``rand_j < Cr`` or ``j = j_rand``, else ``x_ij``.
- ``exponential``: from a random start ``j0``, copy ``L`` consecutive (cyclic) coordinates of
  ``v``, where ``L = 1 + `` the number of leading successes ``rand_k < Cr`` (``L <= D``).

Bound handling (``DEConfig.bound_handling``), per coordinate outside ``[lo, hi]``:

- ``clip``: ``min(max(u, lo), hi)``.
- ``reflect``: mirror at the bounds, repeatedly (a triangle wave of period ``2 (hi - lo)``).
- ``random``: a fresh uniform value in ``[lo, hi]``.
- ``periodic``: ``lo + (u - lo) mod (hi - lo)``.
- ``halving``: ``(x_ij + lo) / 2`` below, ``(x_ij + hi) / 2`` above (``x_i`` the parent).

- ``controlled``: per instance, one of the five above chosen by ``hyper["bound"]`` (a ``[B]``
  integer tensor indexing :data:`BOUND_HANDLINGS`), so an agent can switch it every generation.

Non-finite trial coordinates (e.g. from infinite ``F``) are first replaced by the parent's.

Selection (``DEConfig.selection``); NaN and infinite fitness count as ``+inf`` in both, so they
never win and never poison the best-so-far:

- ``greedy`` (one-to-one): the trial ``u_i`` replaces its parent ``x_i`` if ``f(u_i) <= f(x_i)``.
- ``crowding`` (Thomsen's crowding DE, 2004): the trial ``u_i`` competes with the alive
  individual nearest to it in Euclidean distance, ``x_j``, ``j = argmin_k ||u_i - x_k||``
  (first index on ties; squared distances in float32 on the centred population, by one matrix
  product per instance), and replaces it if ``f(u_i) <= f(x_j)``. Thomsen processes the trials
  one by one; here all trials of a generation are matched against the *parent* population at
  once, and when several trials pick the same ``x_j`` only the best of them (lowest ``f``, then
  lowest ``i``) competes. So a generation replaces each individual at most once and the result
  does not depend on any processing order.

Optional linear population-size reduction (L-SHADE): after each generation the population
shrinks to ``round(NP_max + (NP_min - NP_max) * evaluations / max_evaluations)``, dropping the
worst. The population is stored at ``NP_max`` with an ``alive`` mask; the alive individuals are
always the leading ``n`` rows. Optional archive (JADE): replaced parents go into a ring buffer of
``archive_size`` rows (overwriting the oldest), and ``current-to-best/1`` draws ``x~_r2`` from
population-union-archive.

Hyperparameters are a dict of ``[B]`` tensors (or Python floats, broadcast): ``F1`` (all
operators), ``F2`` (two-term operators) and ``Cr``. Values are used as given (no clipping).

Precision: population and fitness are float64. Results are bit-reproducible on CPU; on GPU they
may differ from CPU in the last bits.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import torch
from torch import Tensor

from gymforge.core.seeding import InstanceRNG
from gymforge.envs.metabbo.bbob import BBOBInstances, evaluate, evaluate_finite
from gymforge.envs.metabbo.draws import uniforms
from gymforge.envs.metabbo.features import centred_float32
from gymforge.envs.metabbo.workspace import block_size, scratch, temporary

__all__ = [
    "BOUND_HANDLINGS",
    "CONTROLLED",
    "CROSSOVERS",
    "MUTATIONS",
    "SELECTIONS",
    "DEConfig",
    "DEState",
    "initial_state",
    "required_hyperparameters",
    "step",
]

# operator -> number of distinct random donors (besides x_i and x_best)
MUTATIONS: dict[str, int] = {
    "rand/1": 3,
    "best/2": 4,
    "rand/2": 5,
    "current-to-rand/1": 3,
    "current-to-best/1": 2,
    "rand-to-best/1": 3,
}
CROSSOVERS: tuple[str, ...] = ("binomial", "exponential")
BOUND_HANDLINGS: tuple[str, ...] = ("clip", "reflect", "random", "periodic", "halving")
CONTROLLED = "controlled"  # bound handling chosen per instance by hyper["bound"]
SELECTIONS: tuple[str, ...] = ("greedy", "crowding")
_ONE_TERM = ("rand/1",)


def required_hyperparameters(mutation: str, bound_handling: str = "clip") -> tuple[str, ...]:
    """Names of the per-instance hyperparameters :func:`step` needs for ``mutation`` (and
    ``bound`` when ``bound_handling`` is ``"controlled"``)."""
    names = ("F1", "Cr") if mutation in _ONE_TERM else ("F1", "F2", "Cr")
    return (*names, "bound") if bound_handling == CONTROLLED else names


@dataclass(frozen=True)
class DEConfig:
    """Static DE configuration, shared by every instance of a batch.

    Attributes:
        dimension: search-space dimension ``D`` (must match the problems).
        population_size: ``NP_max``, rows of the population storage.
        lower, upper: box bounds, ``lower < upper``.
        mutation: one of :data:`MUTATIONS`.
        crossover: one of :data:`CROSSOVERS`.
        bound_handling: one of :data:`BOUND_HANDLINGS`, or ``"controlled"`` (per instance).
        selection: one of :data:`SELECTIONS` (``greedy`` one-to-one or ``crowding``).
        min_population_size: ``NP_min`` for linear population-size reduction, or ``None`` (off).
        max_evaluations: evaluation budget the reduction schedule spans (required with it).
        archive_size: rows of the JADE archive (0: none); only ``current-to-best/1`` reads it.
    """

    dimension: int
    population_size: int = 100
    lower: float = -5.0
    upper: float = 5.0
    mutation: str = "current-to-rand/1"
    crossover: str = "exponential"
    bound_handling: str = "clip"
    selection: str = "greedy"
    min_population_size: int | None = None
    max_evaluations: int | None = None
    archive_size: int = 0

    def __post_init__(self) -> None:
        def is_int(v: object) -> bool:
            return isinstance(v, int) and not isinstance(v, bool)

        if not is_int(self.dimension) or self.dimension < 1:
            raise ValueError(f"dimension must be an integer >= 1, got {self.dimension!r}")
        if self.mutation not in MUTATIONS:
            raise ValueError(f"mutation must be one of {sorted(MUTATIONS)}, got {self.mutation!r}")
        if self.crossover not in CROSSOVERS:
            raise ValueError(f"crossover must be one of {CROSSOVERS}, got {self.crossover!r}")
        if self.bound_handling not in (*BOUND_HANDLINGS, CONTROLLED):
            raise ValueError(
                f"bound_handling must be one of {(*BOUND_HANDLINGS, CONTROLLED)}, "
                f"got {self.bound_handling!r}"
            )
        if self.selection not in SELECTIONS:
            raise ValueError(f"selection must be one of {SELECTIONS}, got {self.selection!r}")
        need = MUTATIONS[self.mutation] + 1
        if not is_int(self.population_size) or self.population_size < need:
            raise ValueError(
                f"population_size must be an integer >= {need} for {self.mutation}, "
                f"got {self.population_size!r}"
            )
        for name in ("lower", "upper"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"{name} must be a finite number, got {v!r}")
        if not self.lower < self.upper:
            raise ValueError(f"lower must be < upper, got lower={self.lower}, upper={self.upper}")
        if self.min_population_size is not None:
            m = self.min_population_size
            if not is_int(m) or not need <= m <= self.population_size:
                raise ValueError(
                    f"min_population_size must be an integer in {need}..{self.population_size} "
                    f"for {self.mutation}, got {m!r}"
                )
            if not is_int(self.max_evaluations) or self.max_evaluations < 1:
                raise ValueError(
                    "max_evaluations must be an integer >= 1 when min_population_size is set, "
                    f"got {self.max_evaluations!r}"
                )
        elif self.max_evaluations is not None and (
            not is_int(self.max_evaluations) or self.max_evaluations < 1
        ):
            raise ValueError(
                f"max_evaluations must be an integer >= 1, got {self.max_evaluations!r}"
            )
        if not is_int(self.archive_size) or self.archive_size < 0:
            raise ValueError(f"archive_size must be an integer >= 0, got {self.archive_size!r}")


@dataclass(frozen=True)
class DEState:
    """State of ``B`` DE runs (``P = NP_max``, ``A = archive_size``)."""

    population: Tensor  # [B, P, D] float64; rows with alive=False are stale
    fitness: Tensor  # [B, P] float64; may hold +inf/NaN (treated as +inf)
    best_x: Tensor  # [B, D] float64, best point evaluated so far
    best_f: Tensor  # [B] float64, its fitness (+inf if nothing finite yet)
    generation: Tensor  # [B] int64, generations done
    evaluations: Tensor  # [B] int64, objective evaluations used
    alive: Tensor  # [B, P] bool, a prefix of each row (population-size reduction)
    archive: Tensor  # [B, A, D] float64, ring buffer of replaced parents
    archive_inserted: Tensor  # [B] int64, parents ever inserted (archive holds min(., A))

    @property
    def population_size(self) -> Tensor:
        """Current population size ``n`` per instance, ``[B]`` int64."""
        return self.alive.sum(-1)


def _clean(f: Tensor) -> Tensor:
    """Fitness with NaN and +-inf replaced by +inf (for selection): ``torch.where(
    torch.isfinite(f), f, math.inf)`` in one pass (``isfinite`` alone takes four)."""
    return torch.nan_to_num(f, nan=math.inf, posinf=math.inf, neginf=math.inf)


def _check_problems(config: DEConfig, problems: BBOBInstances, rng: InstanceRNG) -> None:
    if problems.dimension != config.dimension:
        raise ValueError(
            f"problems have dimension {problems.dimension}, config.dimension is {config.dimension}"
        )
    if rng.seed.shape[0] != problems.batch_size:
        raise ValueError(
            f"rng has {rng.seed.shape[0]} instances, problems have {problems.batch_size}"
        )


def _best_so_far(
    x: Tensor, f: Tensor, alive: Tensor | None, clean_f: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """Best alive point ``[B, D]`` and value ``[B]`` of a population (first index on ties;
    ``alive`` ``None``: every row); ``clean_f`` is ``_clean(f)`` when the caller has it."""
    clean_f = _clean(f) if clean_f is None else clean_f
    key = clean_f if alive is None else torch.where(alive, clean_f, math.inf)
    idx = key.argmin(-1)  # [B]
    bx = x.gather(1, idx[:, None, None].expand(-1, 1, x.shape[2])).squeeze(1)
    return bx, key.gather(1, idx[:, None]).squeeze(1)


def initial_state(
    config: DEConfig, problems: BBOBInstances, rng: InstanceRNG, where: Tensor | None = None
) -> DEState:
    """Uniform random population of ``NP_max`` in the box, evaluated (``NP_max`` evaluations).

    Only the random streams of the instances in ``where`` (``[B]`` bool, default all) advance;
    the rows of the others are computed but meant to be discarded by the caller.
    """
    _check_problems(config, problems, rng)
    b, p, d = problems.batch_size, config.population_size, config.dimension
    dev = problems.device
    u = rng.uniform(p, d, where=where).to(torch.float64)
    x = config.lower + u * (config.upper - config.lower)  # [B, P, D]
    f = evaluate(problems, x)  # [B, P]
    alive = torch.ones(b, p, dtype=torch.bool, device=dev)
    bx, bf = _best_so_far(x, f, alive)
    return DEState(
        population=x,
        fitness=f,
        best_x=bx,
        best_f=bf,
        generation=torch.zeros(b, dtype=torch.int64, device=dev),
        evaluations=torch.full((b,), p, dtype=torch.int64, device=dev),
        alive=alive,
        archive=torch.zeros(b, config.archive_size, d, dtype=torch.float64, device=dev),
        archive_inserted=torch.zeros(b, dtype=torch.int64, device=dev),
    )


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
    if not math.isfinite(float(u.sum())):
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
    if v.shape != (b,) or bool(((v < 0) | (v >= len(BOUND_HANDLINGS))).any()):
        raise ValueError(
            f"hyper['bound'] must be a [B={b}] tensor of indices in 0..{len(BOUND_HANDLINGS) - 1} "
            f"into {BOUND_HANDLINGS}, got {v.tolist()}"
        )
    return v


def _nearest(u: Tensor, x: Tensor, alive: Tensor | None) -> Tensor:
    """``[B, Pu]`` index of the alive ``x_j`` nearest to each ``u_i`` (first index on ties).

    Scores ``||x_j||^2 - 2 u_i . x_j`` (the squared distance minus ``||u_i||^2``) in float32 on
    points centred on the population's mean, by one matrix product per instance (so no instance
    sees the others); ``alive`` ``[B, Px]`` (``None``: all) masks dead ``x_j`` out. The argmin is
    taken as ``min_j (P [s_ij > min_k s_ik] + j)``: the same first index as ``argmin``, by
    element-wise float arithmetic and two ``amin`` reductions, which torch runs several times
    faster on CPU than ``argmin`` or boolean comparisons on a ``[B, P, P]`` tensor. The
    comparison writes its 1.0 / 0.0 straight into the float score matrix (``torch.gt(...,
    out=)``, one fast pass; a ``bool`` result is several times slower), the same values as
    ``sign(s_ij - min_k s_ik)`` in one pass instead of two (scores are finite or ``+inf``).
    """
    b, pu, p = u.shape[0], u.shape[1], x.shape[1]
    # x centred in float32 and its squared norms (x * x and x ** 2 round alike), usually
    # computed already for the last observation's pairwise distances
    centre, xc, sq = centred_float32(x)
    # (u - centre) rounded to float32 as it is stored (no float64 temporary)
    uc = torch.sub(u, centre, out=temporary("uc", u.shape, torch.float32, u.device))
    norms = sq.view(b, 1, p)  # [B, 1, Px]
    dead = None if alive is None else torch.where(alive, 0.0, math.inf).to(torch.float32)
    index = _arange(p, x.device, dtype=torch.float32)
    out = torch.empty(b, pu, dtype=torch.float32, device=x.device)
    # block by block of instances, in a reused scratch matrix (see .workspace); each operand's
    # blocks are views made in one split call
    step = block_size(pu * p, torch.float32.itemsize)
    u_blocks = uc.split(step)
    deads = (None,) * len(u_blocks) if dead is None else dead[:, None, :].split(step)
    blocks = zip(
        u_blocks, xc.mT.split(step), norms.split(step), deads, out.split(step), strict=True
    )
    for ub, xb, nb, db, ob in blocks:
        score = scratch("score", (ub.shape[0], pu, p), torch.float32, x.device)
        torch.bmm(ub, xb, out=score)  # [b, Pu, Px]
        # ||x_j||^2 - 2 u_i . x_j, in place on the product (-2 s is exact, so fused or not, the
        # addition rounds once)
        torch.add(nb, score, alpha=-2.0, out=score)
        if db is not None:
            score.add_(db)
        # 0 at each row's minima, 1 elsewhere (in place: the minima are read first)
        torch.gt(score, score.amin(-1, keepdim=True), out=score)
        torch.amin(torch.add(index, score, alpha=float(p), out=score), -1, out=ob)
    return out.long()


def _crowding_select(
    x: Tensor, f: Tensor, trial: Tensor, ft: Tensor, alive: Tensor, clean_ft: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """Crowding selection (see the module docstring); ``clean_ft`` is ``_clean(ft)`` when the
    caller has it.

    Returns the new population ``[B, P, D]``, its fitness ``[B, P]`` and the ``[B, P]`` mask of
    replaced individuals (rows of ``x``).
    """
    b, p, _ = x.shape
    all_alive = bool(alive.all())
    nearest = _nearest(trial, x, None if all_alive else alive)  # [B, P]: each trial's rival
    clean_ft = _clean(ft) if clean_ft is None else clean_ft
    key = clean_ft if all_alive else torch.where(alive, clean_ft, math.inf)  # dead: no rival
    best = torch.full((b, p), math.inf, dtype=key.dtype, device=x.device)
    best.scatter_reduce_(1, nearest, key, reduce="amin", include_self=True)  # [B, P(pop)]
    rows = _arange(p, x.device).expand(b, -1)
    cand = torch.where(key == best.gather(1, nearest), rows, p)
    winner = torch.full((b, p), p, dtype=torch.long, device=x.device)
    winner.scatter_reduce_(1, nearest, cand, reduce="amin", include_self=True)  # [B, P]
    has = winner < p
    if all_alive:
        # key is clean_ft, so a target's winner has exactly the smallest key it received: best
        replace_ = has & (best <= _clean(f))
    else:
        challenger_f = torch.where(has, clean_ft.gather(1, torch.where(has, winner, 0)), math.inf)
        replace_ = has & (challenger_f <= _clean(f)) & alive
    new_x, new_f = _replace_rows(x, f, trial, ft, replace_, winner)
    return new_x, new_f, replace_


def _replace_rows(
    x: Tensor, f: Tensor, trial: Tensor, ft: Tensor, replace_: Tensor, src: Tensor
) -> tuple[Tensor, Tensor]:
    """``x`` [B, P, D] and ``f`` [B, P] with row ``j`` replaced by ``trial[src[j]]`` and
    ``ft[src[j]]`` where ``replace_`` [B, P]: ``torch.where(replace_, gathered, x)``, by copying
    the population and writing only the replaced rows."""
    b, p, d = x.shape
    dst = torch.nonzero(replace_.reshape(-1)).squeeze(1)  # flat rows of x
    offset = _row_offsets(b, trial.shape[1], x.device)
    rows = (src + offset).reshape(-1).index_select(0, dst)  # their flat rows of trial
    new_x = x.clone(memory_format=torch.contiguous_format)
    new_x.view(b * p, d).index_copy_(0, dst, trial.reshape(-1, d).index_select(0, rows))
    new_f = f.clone(memory_format=torch.contiguous_format)
    new_f.view(-1).index_copy_(0, dst, ft.reshape(-1).index_select(0, rows))
    return new_x, new_f


def _reduce(
    config: DEConfig, x: Tensor, f: Tensor, alive: Tensor, evaluations: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """Linear population-size reduction: keep the best ``n_new`` as the leading rows."""
    p_max, p_min = config.population_size, config.min_population_size
    if p_min is None or config.max_evaluations is None:  # guarded by DEConfig
        raise ValueError("population-size reduction needs min_population_size and max_evaluations")
    frac = (evaluations.to(torch.float64) / config.max_evaluations).clamp(max=1.0)
    target = torch.round(p_max + (p_min - p_max) * frac).long()  # [B]
    n_new = torch.minimum(target.clamp(p_min, p_max), alive.sum(-1))  # [B]
    key = torch.where(alive, _clean(f), math.inf)
    order = torch.sort(key, dim=-1, stable=True).indices  # alive rows stay ahead of dead ones
    x = _gather_rows(x, order)
    f = f.gather(1, order)
    alive = torch.arange(p_max, device=x.device)[None, :] < n_new[:, None]
    return x, f, alive


def step(
    config: DEConfig,
    problems: BBOBInstances,
    state: DEState,
    hyper: dict[str, Tensor | float],
    rng: InstanceRNG,
    active: Tensor | None = None,
) -> DEState:
    """One DE generation for every instance with its own hyperparameters.

    ``hyper`` maps :func:`required_hyperparameters` names to ``[B]`` tensors (or floats).
    ``active`` (``[B]`` bool, default all) freezes the other instances: their state is returned
    unchanged and their random streams do not advance.
    """
    _check_problems(config, problems, rng)
    b, dev = problems.batch_size, problems.device
    act = None if active is None else active.to(dev)  # None: every instance (the same draws)
    names = required_hyperparameters(config.mutation, config.bound_handling)
    f1 = _hyper(hyper, "F1", b, dev)
    f2 = _hyper(hyper, "F2", b, dev) if "F2" in names else f1
    cr = _hyper(hyper, "Cr", b, dev)
    choice = _bound_choice(hyper, b, dev) if "bound" in names else None

    x, alive = state.population, state.alive
    u = _draw(config, x.shape[1], rng, act)
    v = _mutate(config, state, f1, f2, u.donors)
    trial = _crossover(config, x, v, cr, u.start, u.crossover)
    trial = _bound(config, x, trial, u.repair, choice, in_place=True)
    ft = evaluate_finite(problems, trial)  # [B, P]; bounded trials are finite

    clean_ft = _clean(ft)
    if config.selection == "crowding":
        new_x, new_f, replaced = _crowding_select(x, state.fitness, trial, ft, alive, clean_ft)
    else:
        clean_f = _clean(state.fitness)
        win = alive & (clean_ft <= clean_f)  # [B, P]
        new_x = torch.where(win[..., None], trial, x)
        new_f = torch.where(win, ft, state.fitness)
        replaced = win & (clean_ft < clean_f)
    # without population-size reduction every row is alive: P evaluations
    fixed = config.min_population_size is None
    evaluations = state.evaluations + (x.shape[1] if fixed else alive.sum(-1))

    tbx, tbf = _best_so_far(trial, ft, None if fixed else alive, clean_ft)
    better = tbf < state.best_f
    best_x = torch.where(better[:, None], tbx, state.best_x)
    best_f = torch.where(better, tbf, state.best_f)

    archive, inserted = state.archive, state.archive_inserted
    if config.archive_size > 0:
        archive, inserted = _archive_insert(config, state, replaced)
    new_alive = alive
    if config.min_population_size is not None:
        new_x, new_f, new_alive = _reduce(config, new_x, new_f, alive, evaluations)

    new = DEState(
        population=new_x,
        fitness=new_f,
        best_x=best_x,
        best_f=best_f,
        generation=state.generation + 1,
        evaluations=evaluations,
        alive=new_alive,
        archive=archive,
        archive_inserted=inserted,
    )
    if act is None:  # every instance ran
        return new
    return _select_state(act, new, state)


def _select_state(mask: Tensor, new: DEState, old: DEState) -> DEState:
    """Per instance, ``new`` where ``mask`` [B] else ``old``."""
    out = {}
    for name in DEState.__dataclass_fields__:
        a, o = getattr(new, name), getattr(old, name)
        out[name] = torch.where(mask.view(-1, *([1] * (a.dim() - 1))), a, o)
    return replace(new, **out)
