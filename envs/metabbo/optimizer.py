"""Batched differential evolution (DE), one generation per call, for MetaBBO environments.

The low-level optimiser that a MetaBBO agent configures: ``B`` independent DE runs, one per
problem instance of a :class:`~gymforge.envs.metabbo.bbob.BBOBInstances` batch, each with its own
hyperparameters every generation. Everything is a pure function of ``(config, problems, state,
hyper, rng)``; nothing loops over instances, and instance ``i``'s run depends only on its own
random stream (a :class:`~gymforge.core.instance_rng.InstanceRNG`), never on the rest of the batch.

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

The configuration and state are in :mod:`.de_config`, the variation operators in
:mod:`.de_operators`; this module holds the initial population, selection and one generation
(``step``), and re-exports the public names of the other two.

Precision: population and fitness are float64. Results are bit-reproducible on CPU; on GPU they
may differ from CPU in the last bits.
"""

from __future__ import annotations

import math
from dataclasses import replace

import torch
from torch import Tensor

from gymforge.core.host_guards import guards_enabled
from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.metabbo.bbob import BBOBInstances, evaluate, evaluate_finite
from gymforge.envs.metabbo.de_config import (  # (re-exported: they were defined here)
    BOUND_HANDLINGS,
    CONTROLLED,
    CROSSOVERS,
    MUTATIONS,
    SELECTIONS,
    DEConfig,
    DEState,
    _clean,
    required_hyperparameters,
)
from gymforge.envs.metabbo.de_operators import (  # noqa: F401 (reached through this module)
    _arange,
    _archive_insert,
    _bound,
    _bound_choice,
    _crossover,
    _distinct_indices,
    _draw,
    _exponential_masks,
    _first_draws,
    _float32_threshold,
    _gather_rows,
    _hyper,
    _leading_successes,
    _mutate,
    _row_offsets,
)
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
    all_alive = guards_enabled() and bool(alive.all())
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
    if not guards_enabled():  # the same values, without a shape that depends on them
        index = torch.where(replace_, src, 0)
        new_x = torch.where(
            replace_[..., None], trial.gather(1, index[..., None].expand(-1, -1, d)), x
        )
        return new_x, torch.where(replace_, ft.gather(1, index), f)
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
