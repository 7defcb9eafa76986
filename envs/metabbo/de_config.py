"""Differential evolution's configuration and state: the operators a ``DEConfig`` may name
(mutations, crossovers, bound handlings, selections), the hyperparameters each needs, and the
``DEState`` of ``B`` runs. The operators themselves are in :mod:`.de_operators`, a generation
in :mod:`.optimizer` (whose docstring describes them all).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

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
