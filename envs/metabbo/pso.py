"""Batched particle swarm optimisation (PSO), one generation per call, for MetaBBO environments.

The PSO module of ConfigX's ``currentxbest3`` update, batched like :mod:`.optimizer`: ``B``
independent swarms with per-instance ``w, c1, c2, c3`` every generation. With ``x_i`` a
particle, ``v_i`` its velocity, ``p_i`` its personal best, ``g`` the swarm's best point so far
and ``c`` the best particle of the current swarm::

    v_i <- w v_i + c1 r1 (p_i - x_i) + c2 r2 (g - x_i) + c3 r3 (c - x_i)
    v_i <- clip(v_i, -v_max, v_max),   x_i <- clip(x_i + v_i, lower, upper)

with ``r1, r2, r3`` uniform in ``[0, 1)`` per coordinate and ``v_max = 0.2 (upper - lower)``.
Every particle moves (ConfigX's ``inherit`` selection); personal and global bests keep the best
value seen (NaN and infinities count as ``+inf``). Initial velocities are uniform in
``[-v_max, v_max]``. Instance ``i`` draws from its own stream of an
:class:`~gymforge.core.instance_rng.InstanceRNG`, so a swarm does not depend on the batch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import torch
from torch import Tensor

from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.metabbo.bbob import BBOBInstances, evaluate

__all__ = ["PSOConfig", "PSOState", "initial_state", "step"]


@dataclass(frozen=True)
class PSOConfig:
    """Static PSO configuration shared by a batch."""

    dimension: int
    population_size: int = 100
    lower: float = -5.0
    upper: float = 5.0
    max_velocity: float = 0.2  # fraction of (upper - lower)

    def __post_init__(self) -> None:
        for name, low in (("dimension", 1), ("population_size", 2)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
        if not self.lower < self.upper:
            raise ValueError(f"lower must be < upper, got {self.lower}, {self.upper}")
        if not 0.0 < self.max_velocity <= 1.0:
            raise ValueError(f"max_velocity must be in (0, 1], got {self.max_velocity!r}")

    @property
    def v_max(self) -> float:
        return self.max_velocity * (self.upper - self.lower)


@dataclass(frozen=True)
class PSOState:
    """State of ``B`` swarms (``P = population_size``)."""

    population: Tensor  # [B, P, D] float64
    fitness: Tensor  # [B, P] float64 (may hold +inf/NaN)
    velocity: Tensor  # [B, P, D] float64
    pbest_x: Tensor  # [B, P, D] float64
    pbest_f: Tensor  # [B, P] float64, cleaned (+inf for non-finite)
    best_x: Tensor  # [B, D] float64
    best_f: Tensor  # [B] float64
    generation: Tensor  # [B] int64
    evaluations: Tensor  # [B] int64
    alive: Tensor  # [B, P] bool (all True: a swarm does not shrink)


def _clean(f: Tensor) -> Tensor:
    return torch.where(torch.isfinite(f), f, math.inf)


def _argmin_rows(x: Tensor, key: Tensor) -> tuple[Tensor, Tensor]:
    idx = key.argmin(-1)
    return x.gather(1, idx[:, None, None].expand(-1, 1, x.shape[2])).squeeze(1), key.gather(
        1, idx[:, None]
    ).squeeze(1)


def initial_state(
    config: PSOConfig, problems: BBOBInstances, rng: InstanceRNG, where: Tensor | None = None
) -> PSOState:
    """Uniform swarm and velocities; ``P`` evaluations. Streams advance only ``where``."""
    if problems.dimension != config.dimension:
        raise ValueError(
            f"problems have dimension {problems.dimension}, config.dimension is {config.dimension}"
        )
    b, p, d = problems.batch_size, config.population_size, config.dimension
    u = rng.uniform(p, 2 * d, where=where).to(torch.float64)
    x = config.lower + u[..., :d] * (config.upper - config.lower)
    v = (2.0 * u[..., d:] - 1.0) * config.v_max
    f = evaluate(problems, x)
    key = _clean(f)
    bx, bf = _argmin_rows(x, key)
    dev = problems.device
    return PSOState(
        population=x,
        fitness=f,
        velocity=v,
        pbest_x=x,
        pbest_f=key,
        best_x=bx,
        best_f=bf,
        generation=torch.zeros(b, dtype=torch.int64, device=dev),
        evaluations=torch.full((b,), p, dtype=torch.int64, device=dev),
        alive=torch.ones(b, p, dtype=torch.bool, device=dev),
    )


def _coef(hyper: dict[str, Tensor | float], name: str, b: int, dev: torch.device) -> Tensor:
    if name not in hyper:
        raise ValueError(f"hyper is missing {name!r} (got keys {sorted(hyper)})")
    v = torch.as_tensor(hyper[name], dtype=torch.float64, device=dev)
    v = v.expand(b) if v.dim() == 0 else v
    if v.shape != (b,):
        raise ValueError(f"hyper[{name!r}] must have shape [B={b}], got {tuple(v.shape)}")
    return v[:, None, None]


def step(
    config: PSOConfig,
    problems: BBOBInstances,
    state: PSOState,
    hyper: dict[str, Tensor | float],
    rng: InstanceRNG,
    active: Tensor | None = None,
) -> PSOState:
    """One generation with per-instance ``w, c1, c2, c3`` (``[B]`` tensors or floats);
    instances outside ``active`` are returned unchanged and their streams do not advance."""
    b, dev = problems.batch_size, problems.device
    w, c1, c2, c3 = (_coef(hyper, n, b, dev) for n in ("w", "c1", "c2", "c3"))
    x, d = state.population, config.dimension
    r = rng.uniform(x.shape[1], 3 * d, where=active).to(torch.float64)
    cbest, _ = _argmin_rows(x, _clean(state.fitness))
    v = (
        w * state.velocity
        + c1 * r[..., :d] * (state.pbest_x - x)
        + c2 * r[..., d : 2 * d] * (state.best_x[:, None, :] - x)
        + c3 * r[..., 2 * d :] * (cbest[:, None, :] - x)
    )
    v = torch.where(torch.isfinite(v), v, 0.0).clamp(-config.v_max, config.v_max)
    new_x = (x + v).clamp(config.lower, config.upper)
    f = evaluate(problems, new_x)
    key = _clean(f)
    better = key < state.pbest_f
    pbest_x = torch.where(better[..., None], new_x, state.pbest_x)
    pbest_f = torch.where(better, key, state.pbest_f)
    bx, bf = _argmin_rows(new_x, key)
    gbetter = bf < state.best_f
    new = PSOState(
        population=new_x,
        fitness=f,
        velocity=v,
        pbest_x=pbest_x,
        pbest_f=pbest_f,
        best_x=torch.where(gbetter[:, None], bx, state.best_x),
        best_f=torch.where(gbetter, bf, state.best_f),
        generation=state.generation + 1,
        evaluations=state.evaluations + x.shape[1],
        alive=state.alive,
    )
    if active is None:
        return new
    out = {}
    for fld in fields(PSOState):
        a, o = getattr(new, fld.name), getattr(state, fld.name)
        out[fld.name] = torch.where(active.view(-1, *([1] * (a.dim() - 1))), a, o)
    return PSOState(**out)
