"""Dynamics of ``MetaBBO-v0``, batched over instances: pure functions of (config, state, action, rng).

One env step is one generation of the preset's optimizer (:mod:`.presets`) with the
hyperparameters the action selects, on each instance's own BBOB problem. The state holds the
problems, one :class:`~.optimizer.DEState` per sub-population and the episode bookkeeping
(best-so-far error, stagnation, initial error for the reward).

Reward: ``r_t = (e_{t-1} - e_t) / e_0`` with ``e_t = f*_t - f_opt`` the error of the best value
found so far (``f*_t``) and ``e_0`` the initial population's best error; so the return
telescopes to Q-Mamba's ``Perf = 1 - e_T / e_0`` and stays right when ``f_opt != 0``. Where
``e_0`` is 0 or not finite the reward is 0. With ``reward="log_error"`` (for training
configurators: Perf's reward is almost all earned in the first generations, so later choices
barely register) ``r_t = log10 max(e_{t-1}, ε) − log10 max(e_t, ε)`` with ``ε`` the target
error (at least 1e-12): the return is the number of decades of error removed.

Episode end: ``terminated`` once ``e_t <= 1e-8`` (``target_error``); ``truncated`` after
``max_generations`` generations. A finished instance is frozen until it is reset (its random
stream does not advance, its reward is 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property

import torch
from torch import Tensor

from gymforge.core.host_guards import guards_enabled
from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.metabbo import optimizer, pso
from gymforge.envs.metabbo.bbob import BBOBInstances
from gymforge.envs.metabbo.features import status_features
from gymforge.envs.metabbo.optimizer import DEConfig, DEState
from gymforge.envs.metabbo.presets import Preset, get_preset
from gymforge.envs.metabbo.problems import (
    ProblemSet,
    build_instances,
    draw_problems,
    merge_instances,
)
from gymforge.envs.metabbo.pso import PSOConfig, PSOState

__all__ = [
    "MetaBBOConfig",
    "MetaBBOState",
    "initial_state",
    "observe",
    "reset_where",
    "step",
]


#: the env's reward kinds (see the module docstring).
REWARDS = ("perf", "log_error")
#: the least error floor of the ``log_error`` reward (for ``target_error = 0``).
LOG_ERROR_FLOOR = 1e-12


@dataclass(frozen=True)
class MetaBBOConfig:
    """Static configuration of a ``MetaBBO-v0`` batch.

    Attributes:
        preset: the optimizer preset (see :mod:`.presets`).
        problem_set: functions, dimension and instance mode (see :mod:`.problems`).
        population_size: total population (split over the preset's sub-populations).
        max_generations: generations per episode (``T``).
        target_error: an episode terminates once the best error is at most this.
        reward: ``"perf"`` (the error decrease over ``e_0``; the return is Perf) or
            ``"log_error"`` (the decrease of log10 of the error, floored at the target error).
    """

    preset: Preset
    problem_set: ProblemSet
    population_size: int = 100
    max_generations: int = 500
    target_error: float = 1e-8
    reward: str = "perf"

    def __post_init__(self) -> None:
        p = self.population_size
        if isinstance(p, bool) or not isinstance(p, int):
            raise ValueError(f"population_size must be an integer, got {p!r}")
        lo = self.preset.min_population_size()
        if not lo <= p <= 10_000:
            raise ValueError(
                f"population_size must be in {lo}..10000 for preset {self.preset.name!r}, got {p}"
            )
        t = self.max_generations
        if isinstance(t, bool) or not isinstance(t, int) or t < 1:
            raise ValueError(f"max_generations must be an integer >= 1, got {t!r}")
        e = self.target_error
        if isinstance(e, bool) or not isinstance(e, int | float) or not 0.0 <= e < math.inf:
            raise ValueError(f"target_error must be a finite number >= 0, got {e!r}")
        if self.reward not in REWARDS:
            raise ValueError(f"reward must be one of {list(REWARDS)}, got {self.reward!r}")

    @cached_property
    def de_configs(self) -> tuple[DEConfig | PSOConfig, ...]:
        """One optimizer configuration per sub-population."""
        return self.preset.configs(self.problem_set.dimension, self.population_size)

    @classmethod
    def make(cls, preset: object, problem_set: ProblemSet, **kwargs: object) -> MetaBBOConfig:
        """Build from a preset name."""
        return cls(preset=get_preset(preset), problem_set=problem_set, **kwargs)  # type: ignore[arg-type]


@dataclass(frozen=True)
class MetaBBOState:
    """State of ``B`` MetaBBO episodes."""

    problems: BBOBInstances  # B instances, one dimension
    subpops: tuple[DEState | PSOState, ...]  # one state per sub-population, [B, P_s, ...]
    best_x: Tensor  # [B, D] float64, best point found this episode
    best_f: Tensor  # [B] float64, its value (+inf if none finite yet)
    init_error: Tensor  # [B] float64, e_0: best error of the initial population
    init_max: Tensor  # [B] float64, worst finite initial value (+inf if none)
    generation: Tensor  # [B] int64, generations done this episode
    stagnation: Tensor  # [B] int64, generations since best_f last improved
    improved: Tensor  # [B] bool, the last generation improved best_f
    done: Tensor  # [B] bool, the episode has ended (frozen until reset)

    @property
    def error(self) -> Tensor:
        """``[B]`` float64 best error ``f* - f_opt`` (clamped at 0)."""
        err = self.__dict__.get("_error")  # computed already by the step that made this state
        return _error(self.best_f, self.problems.f_opt) if err is None else err

    @property
    def evaluations(self) -> Tensor:
        """``[B]`` int64 objective evaluations used this episode."""
        if len(self.subpops) == 1:
            return self.subpops[0].evaluations
        return torch.stack([s.evaluations for s in self.subpops]).sum(0)


def _error(best_f: Tensor, f_opt: Tensor) -> Tensor:
    err = best_f - f_opt
    # NaN -> +inf (infinities kept), then clamped: in [0, inf], never NaN
    return torch.nan_to_num(err, nan=math.inf, posinf=math.inf, neginf=-math.inf).clamp(min=0.0)


def _union(subpops: tuple[DEState, ...]) -> tuple[Tensor, Tensor, Tensor]:
    """Concatenated population ``[B, P, D]``, fitness and alive mask of all sub-populations."""
    if len(subpops) == 1:
        s = subpops[0]
        return s.population, s.fitness, s.alive
    return (
        torch.cat([s.population for s in subpops], dim=1),
        torch.cat([s.fitness for s in subpops], dim=1),
        torch.cat([s.alive for s in subpops], dim=1),
    )


def _best(subpops: tuple[DEState, ...]) -> tuple[Tensor, Tensor]:
    """Best-so-far point and value over the sub-populations (first on ties)."""
    if len(subpops) == 1:
        return subpops[0].best_x, subpops[0].best_f
    fs = torch.stack([s.best_f for s in subpops], dim=1)  # [B, S]
    idx = fs.argmin(1)
    xs = torch.stack([s.best_x for s in subpops], dim=1)  # [B, S, D]
    bx = xs.gather(1, idx[:, None, None].expand(-1, 1, xs.shape[2])).squeeze(1)
    return bx, fs.gather(1, idx[:, None]).squeeze(1)


def _init_sub(
    c: DEConfig | PSOConfig, problems: BBOBInstances, rng: InstanceRNG, where: Tensor
) -> DEState | PSOState:
    module = pso if isinstance(c, PSOConfig) else optimizer
    return module.initial_state(c, problems, rng, where=where)


def _step_sub(
    c: DEConfig | PSOConfig,
    problems: BBOBInstances,
    s: DEState | PSOState,
    hyper: dict[str, Tensor],
    rng: InstanceRNG,
    active: Tensor | None,
) -> DEState | PSOState:
    module = pso if isinstance(c, PSOConfig) else optimizer
    return module.step(c, problems, s, hyper, rng, active)


def _fresh(
    config: MetaBBOConfig, problems: BBOBInstances, rng: InstanceRNG, where: Tensor
) -> MetaBBOState:
    """New episodes on ``problems`` (streams advance only where ``where``)."""
    subpops = tuple(_init_sub(c, problems, rng, where) for c in config.de_configs)
    best_x, best_f = _best(subpops)
    _, f, _ = _union(subpops)
    finite = torch.isfinite(f)
    init_max = torch.where(finite, f, -math.inf).amax(-1)
    init_max = torch.where(finite.any(-1), init_max, math.inf)
    b = problems.batch_size
    zeros = torch.zeros(b, dtype=torch.int64, device=problems.device)
    false = torch.zeros(b, dtype=torch.bool, device=problems.device)
    return MetaBBOState(
        problems=problems,
        subpops=subpops,
        best_x=best_x,
        best_f=best_f,
        init_error=_error(best_f, problems.f_opt),
        init_max=init_max,
        generation=zeros,
        stagnation=zeros.clone(),
        improved=false,
        done=false.clone(),
    )


def initial_state(
    config: MetaBBOConfig,
    rng: InstanceRNG,
    device: torch.device | str = "cpu",
    problems: tuple[list[int], list[int]] | None = None,
) -> MetaBBOState:
    """Fresh episodes for every instance: each draws its problem from its own stream (or takes
    ``problems = (function_ids, instance_ids)``), then its initial population."""
    everyone = torch.ones(rng.seed.shape[0], dtype=torch.bool, device=rng.seed.device)
    if problems is None:
        fid, iid = draw_problems(config.problem_set, rng, everyone)
        inst = build_instances(config.problem_set, fid, iid, device)
    else:
        inst = build_instances(config.problem_set, problems[0], problems[1], device)
    return _fresh(config, inst, rng, everyone)


def reset_where(
    config: MetaBBOConfig, state: MetaBBOState, mask: Tensor, rng: InstanceRNG
) -> MetaBBOState:
    """Replace the instances selected by ``mask`` ``[B]`` with fresh episodes on new problems."""
    if bool(mask.all()):
        return initial_state(config, rng, state.problems.device)
    fid, iid = draw_problems(config.problem_set, rng, mask)
    idx = torch.nonzero(mask).squeeze(1)
    new = build_instances(config.problem_set, fid[idx], iid[idx], state.problems.device)
    problems = merge_instances(state.problems, new, idx)
    fresh = _fresh(config, problems, rng, mask)
    return _where(mask, fresh, state, problems)


def _where(
    mask: Tensor, new: MetaBBOState, old: MetaBBOState, problems: BBOBInstances
) -> MetaBBOState:
    """Per instance, ``new`` where ``mask`` else ``old`` (problems given)."""

    def pick(a: Tensor, o: Tensor) -> Tensor:
        return torch.where(mask.view(-1, *([1] * (a.dim() - 1))), a, o)

    subpops = tuple(
        type(a)(**{n: pick(getattr(a, n), getattr(o, n)) for n in type(a).__dataclass_fields__})
        for a, o in zip(new.subpops, old.subpops, strict=True)
    )
    fields_ = {
        n: pick(getattr(new, n), getattr(old, n))
        for n in MetaBBOState.__dataclass_fields__
        if n not in ("problems", "subpops")
    }
    return MetaBBOState(problems=problems, subpops=subpops, **fields_)


def _migrate(
    subpops: tuple[DEState, ...], prob: Tensor, rng: InstanceRNG, active: Tensor
) -> tuple[DEState, ...]:
    """Ring migration: with probability ``prob`` ``[B]``, each sub-population's worst alive
    individual is replaced by the best individual of the previous sub-population."""
    go = (rng.uniform(1, where=active)[:, 0].to(torch.float64) < prob) & active  # [B]
    bests = []
    for s in subpops:
        key = torch.where(s.alive, optimizer._clean(s.fitness), math.inf)
        i = key.argmin(-1)
        bests.append(
            (
                s.population.gather(1, i[:, None, None].expand(-1, 1, s.population.shape[2])),
                s.fitness.gather(1, i[:, None]),
            )
        )
    out = []
    for k, s in enumerate(subpops):
        bx, bf = bests[k - 1]
        key = torch.where(s.alive, optimizer._clean(s.fitness), -math.inf)
        # worst alive row: largest cleaned fitness, last index on ties is irrelevant (any)
        worst = key.argmax(-1)  # [B]
        rows = torch.arange(s.population.shape[1], device=worst.device)[None, :]
        hit = (rows == worst[:, None]) & go[:, None]  # [B, P_s]
        out.append(
            replace(
                s,
                population=torch.where(hit[..., None], bx, s.population),
                fitness=torch.where(hit, bf, s.fitness),
            )
        )
    return tuple(out)


def step(
    config: MetaBBOConfig, state: MetaBBOState, action: Tensor, rng: InstanceRNG
) -> tuple[MetaBBOState, Tensor, Tensor, Tensor]:
    """One generation with the hyperparameters of ``action`` (``[B, K]`` integer bins).

    Returns the new state, reward ``[B]`` float32, terminated ``[B]`` and truncated ``[B]`` bool.
    Finished instances (``state.done``) are frozen and get reward 0.
    """
    active = ~state.done
    hyper, migration = config.preset.decode(action)
    # Every instance running (the usual case): the masks by `active` below are identities and
    # are skipped; active=None also skips the optimizer's per-field freeze.
    everyone = guards_enabled() and not bool(state.done.any())
    opt_active = None if everyone else active
    subpops = tuple(
        _step_sub(c, state.problems, s, h, rng, opt_active)
        for c, s, h in zip(config.de_configs, state.subpops, hyper, strict=True)
    )
    if len(subpops) > 1:
        subpops = _migrate(subpops, migration, rng, active)
    sub_x, sub_f = _best(subpops)
    better = sub_f < state.best_f
    if not everyone:
        better &= active
    best_x = torch.where(better[:, None], sub_x, state.best_x)
    best_f = torch.where(better, sub_f, state.best_f)
    advance = 1 if everyone else active.long()
    generation = state.generation + advance
    stagnation = torch.where(better, 0, state.stagnation + advance)
    prev_err, err = state.error, _error(best_f, state.problems.f_opt)
    # per-episode constants of the reward, and whether the previous error was finite: computed
    # by the step that made `state` (caches in the instance dict, not fields)
    cache = state.__dict__
    if "_e0_usable" not in cache:
        e0 = state.init_error
        cache["_e0_usable"] = torch.isfinite(e0) & (e0 > 0)  # once per episode
        # e0 where usable, else 1: the divisor of every lane the reward keeps (other lanes are
        # discarded by the where below, so they may divide by anything)
        cache["_e0_divisor"] = torch.where(cache["_e0_usable"], e0, 1.0)
    prev_finite = cache.get("_error_finite")
    if prev_finite is None:
        prev_finite = torch.isfinite(prev_err)
    err_finite = err < math.inf  # errors are never NaN (see _error): isfinite(err)
    usable = cache["_e0_usable"] & err_finite & prev_finite
    if not everyone:
        usable &= active
    if config.reward == "perf":
        reward = torch.where(usable, (prev_err - err) / cache["_e0_divisor"], 0.0)
    else:
        floor = max(config.target_error, LOG_ERROR_FLOOR)
        decades = torch.log10(prev_err.clamp_min(floor)) - torch.log10(err.clamp_min(floor))
        reward = torch.where(usable, decades, 0.0)
    terminated = err <= config.target_error
    truncated = ~terminated & (generation >= config.max_generations)
    if everyone:
        improved, done = better, terminated | truncated
    else:
        terminated &= active
        truncated &= active
        improved = torch.where(active, better, state.improved)
        done = state.done | terminated | truncated
    new = MetaBBOState(
        problems=state.problems,
        subpops=subpops,
        best_x=best_x,
        best_f=best_f,
        init_error=state.init_error,
        init_max=state.init_max,
        generation=generation,
        stagnation=stagnation,
        improved=improved,
        done=done,
    )
    new.__dict__.update(
        _error=err,
        _error_finite=err_finite,
        _e0_usable=cache["_e0_usable"],
        _e0_divisor=cache["_e0_divisor"],
    )
    return new, reward.to(torch.float32), terminated, truncated


def observe(config: MetaBBOConfig, state: MetaBBOState) -> Tensor:
    """The ``[B, 9]`` float32 observation (see :mod:`.features`)."""
    x, f, alive = _union(state.subpops)
    pset = config.de_configs[0]
    return status_features(
        x,
        f,
        alive,
        state.best_x,
        state.best_f,
        state.init_max,
        state.generation,
        state.stagnation,
        state.improved,
        config.max_generations,
        pset.upper - pset.lower,
    )


def info(state: MetaBBOState) -> dict[str, Tensor]:
    """Per-instance episode information (every tensor ``[B]``)."""
    return {
        "best_error": state.error,
        "initial_error": state.init_error,
        "evaluations": state.evaluations,
        "generation": state.generation,
        "function_id": state.problems.function_id,
        "instance_id": state.problems.instance_id,
    }
