"""Optimizer presets of ``MetaBBO-v0``: which DE modules run and which hyperparameters the agent sets.

A preset composes the modules of :mod:`gymforge.envs.metabbo.optimizer` into ``S``
sub-populations (each with its own mutation, crossover, bound handling, selection and archive)
and declares the ``K`` hyperparameters an agent controls every generation. Each controlled
hyperparameter takes one of ``BINS = 16`` values (Q-Mamba's action discretisation):

- continuous, range ``[lo, hi]``: bin ``b`` means ``lo + b / 15 (hi - lo)``, i.e. the grid
  ``{0, 1/15, 2/15, ..., 1}`` for ``[0, 1]``;
- a choice among ``n`` options: bin ``b`` means option ``floor(b n / 16)``; for the five bound
  handlings (``clip, reflect, random, periodic, halving``) bins 0-3 mean ``clip``, 4-6
  ``reflect``, 7-9 ``random``, 10-12 ``periodic``, 13-15 ``halving``.

With ``S > 1`` the sub-populations exchange individuals by ring migration: each generation, with
probability ``m`` (a controlled hyperparameter or a preset constant), every sub-population ``s``
replaces its worst individual by the best one of sub-population ``s - 1`` (taken before the
exchange). The population size of the env is split over the sub-populations as evenly as
possible (the first ones get one more individual when it does not divide).

=========  ==  ==========================================================================
Preset      K  Modules and controlled hyperparameters (in action order)
=========  ==  ==========================================================================
``alg0``    3  Q-Mamba's Alg0: one population, DE/current-to-rand/1 + exponential crossover,
               crowding selection, clip bounds; ``F1, F2, Cr`` in ``[0, 1]``.
``alg1``   10  three sub-populations: (1) DE/current-to-best/1 with JADE archive + binomial,
               (2) DE/rand/2 + exponential, (3) DE/best/2 + binomial; greedy selection, clip
               bounds; ``F1, F2, Cr`` of each (``[0, 1]``) and the migration probability
               ``m`` in ``[0, 1]``.
``alg2``   16  four sub-populations: (1) DE/current-to-rand/1 + exponential with crowding,
               (2) DE/current-to-best/1 with archive + binomial, (3) DE/rand-to-best/1 +
               binomial, (4) DE/rand/2 + exponential; each controls ``F1, F2, Cr`` in
               ``[0, 1]`` and its bound handling (a choice of five); ``m = 0.1`` fixed.
``pso``     4  one particle swarm (:mod:`.pso`, ConfigX's ``currentxbest3``): inertia ``w`` in
               ``[0, 1]``, ``c1, c2, c3`` in ``[0, 2]`` (grid ``{0, 2/15, ..., 2}``).
=========  ==  ==========================================================================

Q-Mamba's Alg1/Alg2 are sampled ConfigX algorithms stored in a pickle; only their ``K`` (10 and
16) is known, so ``alg1``/``alg2`` are presets of the same sizes built from these modules, not
copies of them. Q-Mamba's Alg0 states ``NP_max = 100``; its reduction schedule (if any) is not
recoverable from the published code, so ``alg0`` keeps the population size constant.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor

from gymforge.envs.metabbo.optimizer import BOUND_HANDLINGS, MUTATIONS, DEConfig
from gymforge.envs.metabbo.pso import PSOConfig

__all__ = ["BINS", "PRESETS", "Hyperparameter", "Preset", "SubPopulation", "get_preset"]

BINS = 16


@dataclass(frozen=True)
class Hyperparameter:
    """One controlled hyperparameter (one action dimension).

    Attributes:
        name: display name, e.g. ``"pop1.F1"``.
        key: what it sets: ``"F1"``, ``"F2"``, ``"Cr"``, ``"bound"`` (a sub-population's) or
            ``"migration"`` (global).
        subpop: index of the sub-population it belongs to, ``None`` for global ones.
        low, high: range of a continuous hyperparameter.
        options: option names of a choice (empty for continuous ones).
    """

    name: str
    key: str
    subpop: int | None
    low: float = 0.0
    high: float = 1.0
    options: tuple[str, ...] = ()

    def grid(self) -> list[float] | list[str]:
        """The value of each of the 16 bins."""
        if self.options:
            n = len(self.options)
            return [self.options[b * n // BINS] for b in range(BINS)]
        return [self.low + b / (BINS - 1) * (self.high - self.low) for b in range(BINS)]

    def decode(self, bins: Tensor) -> Tensor:
        """Values for ``[B]`` int bins: float64 values, or int64 option indices for a choice."""
        if self.options:
            return bins.long() * len(self.options) // BINS
        return self.low + bins.to(torch.float64) / (BINS - 1) * (self.high - self.low)


@dataclass(frozen=True)
class SubPopulation:
    """Static modules of one sub-population (see :class:`~.optimizer.DEConfig`); ``kind="pso"``
    makes it a particle swarm (:mod:`.pso`) and ignores the DE fields."""

    mutation: str = "current-to-rand/1"
    crossover: str = "exponential"
    selection: str = "greedy"
    bound_handling: str = "clip"
    archive: bool = False  # JADE archive as large as the sub-population
    kind: str = "de"  # "de" or "pso"


@dataclass(frozen=True)
class Preset:
    """A composed optimizer and its controlled hyperparameters (action order)."""

    name: str
    summary: str
    subpops: tuple[SubPopulation, ...]
    hyperparameters: tuple[Hyperparameter, ...]
    migration: float = 0.0  # migration probability when not controlled
    defaults: dict[str, int] = field(default_factory=dict)  # name -> bin of a sensible setting

    @property
    def num_controlled(self) -> int:
        """``K``, the number of action dimensions."""
        return len(self.hyperparameters)

    def sizes(self, population_size: int) -> list[int]:
        """Sub-population sizes summing to ``population_size``."""
        s = len(self.subpops)
        return [population_size // s + (1 if i < population_size % s else 0) for i in range(s)]

    def min_population_size(self) -> int:
        """Smallest total population every sub-population's mutation supports."""
        need = max(2 if sp.kind == "pso" else MUTATIONS[sp.mutation] + 1 for sp in self.subpops)
        return need * len(self.subpops)

    def configs(self, dimension: int, population_size: int) -> tuple[DEConfig | PSOConfig, ...]:
        """One :class:`DEConfig` (or :class:`PSOConfig`) per sub-population."""
        if population_size < self.min_population_size():
            raise ValueError(
                f"population_size must be >= {self.min_population_size()} for preset "
                f"{self.name!r} ({len(self.subpops)} sub-populations), got {population_size}"
            )
        return tuple(
            PSOConfig(dimension=dimension, population_size=size)
            if sp.kind == "pso"
            else DEConfig(
                dimension=dimension,
                population_size=size,
                mutation=sp.mutation,
                crossover=sp.crossover,
                bound_handling=sp.bound_handling,
                selection=sp.selection,
                archive_size=size if sp.archive else 0,
            )
            for sp, size in zip(self.subpops, self.sizes(population_size), strict=True)
        )

    def decode(self, action: Tensor) -> tuple[list[dict[str, Tensor]], Tensor]:
        """Per-sub-population hyperparameter dicts and the ``[B]`` migration probabilities for
        a ``[B, K]`` integer action."""
        b = action.shape[0]
        values = self._lookup(action)
        hyper: list[dict[str, Tensor]] = [{} for _ in self.subpops]
        migration = torch.full((b,), self.migration, dtype=torch.float64, device=action.device)
        for k, hp in enumerate(self.hyperparameters):
            value = hp.decode(action[:, k]) if values is None else values[k]
            if hp.subpop is None:
                migration = value
            else:
                hyper[hp.subpop][hp.key] = value
        return hyper, migration

    def _lookup(self, action: Tensor) -> list[Tensor] | None:
        """Each action dimension's values, looked up in the 16-bin tables of
        :meth:`Hyperparameter.decode` (so the same values); ``None`` for a floating action or
        one with bins outside ``0..15`` (decoded by the formulas instead)."""
        if action.is_floating_point() or action.dim() != 2:
            return None
        tables = _decode_tables(self, action.device)
        index = action.T.long()  # [K, B]
        try:
            # gather checks the bounds (and raises on any bin outside the tables)
            looked_up = {dt: t.gather(1, index) for dt, t in tables.items()}
        except (RuntimeError, IndexError):
            return None
        return [
            looked_up[torch.int64 if hp.options else torch.float64][k]
            for k, hp in enumerate(self.hyperparameters)
        ]

    def default_action(self) -> list[int]:
        """The bins of the preset's default configuration (``F = 0.5``-ish, ``Cr = 0.9``-ish)."""
        return [self.defaults.get(hp.key, 8) for hp in self.hyperparameters]


def _decode_tables(preset: Preset, device: torch.device) -> dict[torch.dtype, Tensor]:
    """``[K, BINS]`` tables of every action dimension's decoded bins, float64 for continuous
    hyperparameters and int64 for choices (rows of the other kind are unused); built once per
    preset and device and kept on the (immutable) preset."""
    cache = preset.__dict__.setdefault("_decode_tables", {})  # a cache, not a field
    if device not in cache:
        bins = torch.arange(BINS, device=device)
        rows = [hp.decode(bins) for hp in preset.hyperparameters]
        cache[device] = {
            dtype: torch.stack([r.to(dtype) for r in rows])
            for dtype in (torch.float64, torch.int64)
            if any(r.dtype == dtype for r in rows)
        }
    return cache[device]


def _de_params(s: int, two_terms: bool = True, bound: bool = False) -> list[Hyperparameter]:
    names = ["F1", "F2", "Cr"] if two_terms else ["F1", "Cr"]
    out = [Hyperparameter(f"pop{s + 1}.{n}", n, s) for n in names]
    if bound:
        out.append(Hyperparameter(f"pop{s + 1}.bound", "bound", s, options=BOUND_HANDLINGS))
    return out


_DEFAULT_BINS = {"F1": 8, "F2": 8, "Cr": 14, "bound": 0, "migration": 2}

ALG0 = Preset(
    name="alg0",
    summary="Q-Mamba Alg0: DE/current-to-rand/1 + exponential crossover, crowding (K=3)",
    subpops=(SubPopulation("current-to-rand/1", "exponential", selection="crowding"),),
    hyperparameters=(
        Hyperparameter("F1", "F1", 0),
        Hyperparameter("F2", "F2", 0),
        Hyperparameter("Cr", "Cr", 0),
    ),
    defaults=_DEFAULT_BINS,
)

ALG1 = Preset(
    name="alg1",
    summary="three DE sub-populations (current-to-best+archive, rand/2, best/2) + migration (K=10)",
    subpops=(
        SubPopulation("current-to-best/1", "binomial", archive=True),
        SubPopulation("rand/2", "exponential"),
        SubPopulation("best/2", "binomial"),
    ),
    hyperparameters=(
        *_de_params(0),
        *_de_params(1),
        *_de_params(2),
        Hyperparameter("migration", "migration", None),
    ),
    defaults=_DEFAULT_BINS,
)

ALG2 = Preset(
    name="alg2",
    summary="four DE sub-populations, each with F1/F2/Cr and its bound handling (K=16)",
    subpops=(
        SubPopulation(
            "current-to-rand/1", "exponential", selection="crowding", bound_handling="controlled"
        ),
        SubPopulation("current-to-best/1", "binomial", bound_handling="controlled", archive=True),
        SubPopulation("rand-to-best/1", "binomial", bound_handling="controlled"),
        SubPopulation("rand/2", "exponential", bound_handling="controlled"),
    ),
    hyperparameters=tuple(p for s in range(4) for p in _de_params(s, bound=True)),
    migration=0.1,
    defaults=_DEFAULT_BINS,
)

PSO = Preset(
    name="pso",
    summary="particle swarm, ConfigX's currentxbest3 update: w, c1, c2, c3 (K=4)",
    subpops=(SubPopulation(kind="pso"),),
    hyperparameters=(
        Hyperparameter("w", "w", 0),
        Hyperparameter("c1", "c1", 0, 0.0, 2.0),
        Hyperparameter("c2", "c2", 0, 0.0, 2.0),
        Hyperparameter("c3", "c3", 0, 0.0, 2.0),
    ),
    defaults={"w": 11, "c1": 11, "c2": 11, "c3": 0},  # w = 0.73, c1 = c2 = 1.47, c3 = 0
)

PRESETS: dict[str, Preset] = {p.name: p for p in (ALG0, ALG1, ALG2, PSO)}


def get_preset(name: object) -> Preset:
    """The preset called ``name`` (case-insensitive)."""
    if not isinstance(name, str) or name.lower() not in PRESETS:
        raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {name!r}")
    return PRESETS[name.lower()]
