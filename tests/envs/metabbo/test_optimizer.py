"""Batched differential evolution: convergence, batch-composition independence, per-instance
hyperparameters, bound handling, config validation, best-so-far and non-finite fitness."""

from __future__ import annotations

import itertools
import math

import pytest
import torch

import gymforge.envs.metabbo.optimizer as opt
from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.metabbo import BBOBInstances, coco_instances, random_instances
from gymforge.envs.metabbo.optimizer import (
    BOUND_HANDLINGS,
    MUTATIONS,
    DEConfig,
    DEState,
    initial_state,
    step,
)


def _hyper(b: int, f1: float = 0.5, f2: float = 0.5, cr: float = 0.9) -> dict[str, torch.Tensor]:
    return {
        "F1": torch.full((b,), f1, dtype=torch.float64),
        "F2": torch.full((b,), f2, dtype=torch.float64),
        "Cr": torch.full((b,), cr, dtype=torch.float64),
    }


def _run(
    config: DEConfig,
    problems: BBOBInstances,
    seeds: list[int],
    hyper: dict[str, torch.Tensor],
    generations: int,
) -> list[DEState]:
    rng = InstanceRNG.create(seeds)
    states = [initial_state(config, problems, rng)]
    for _ in range(generations):
        states.append(step(config, problems, states[-1], hyper, rng))
    return states


def _states_equal(a: DEState, b: DEState) -> bool:
    return all(
        torch.equal(getattr(a, name), getattr(b, name)) for name in DEState.__dataclass_fields__
    )


def _row(state: DEState, i: int) -> DEState:
    return DEState(**{n: getattr(state, n)[i : i + 1] for n in DEState.__dataclass_fields__})


# ----------------------------------------------------------------------------- convergence


@pytest.mark.parametrize(
    ("mutation", "crossover", "hyper"),
    [
        ("rand/1", "binomial", {"f1": 0.5, "cr": 0.9}),
        ("current-to-rand/1", "exponential", {"f1": 0.9, "f2": 0.5, "cr": 0.9}),  # Alg0
    ],
)
def test_solves_sphere(mutation: str, crossover: str, hyper: dict[str, float]) -> None:
    config = DEConfig(dimension=5, population_size=30, mutation=mutation, crossover=crossover)
    problems = coco_instances(1, 5, [1, 2, 3])
    states = _run(config, problems, [11, 12, 13], _hyper(3, **hyper), 300)
    error = states[-1].best_f - problems.f_opt
    assert (error < 1e-6).all(), error
    assert torch.equal(states[-1].generation, torch.full((3,), 300))
    assert torch.equal(states[-1].evaluations, torch.full((3,), 30 * 301))


# ----------------------------------------------------------------------------- batch equivalence

_EQUIV_CONFIGS = [
    DEConfig(
        dimension=4, population_size=12, mutation="current-to-rand/1", crossover="exponential"
    ),
    DEConfig(dimension=4, population_size=12, mutation="best/2", bound_handling="random"),
    DEConfig(
        dimension=4,
        population_size=16,
        mutation="current-to-best/1",
        crossover="binomial",
        bound_handling="reflect",
        archive_size=8,
        min_population_size=4,
        max_evaluations=200,
    ),
    DEConfig(dimension=4, population_size=12, mutation="rand/2", bound_handling="halving"),
]


@pytest.mark.parametrize("config", _EQUIV_CONFIGS, ids=lambda c: c.mutation)
def test_batch_equals_separate_runs(config: DEConfig) -> None:
    fids, seeds = [1, 8, 15, 21], [3, 5, 7, 9]
    problems = random_instances(fids, 4, seeds)
    hyper = {
        "F1": torch.tensor([0.2, 0.5, 0.9, 1.5], dtype=torch.float64),
        "F2": torch.tensor([0.7, 0.0, 0.3, 1.0], dtype=torch.float64),
        "Cr": torch.tensor([0.0, 0.4, 0.9, 1.0], dtype=torch.float64),
    }
    batch = _run(config, problems, seeds, hyper, 15)
    if config.min_population_size is not None:  # the reduction really ran
        assert (batch[-1].population_size < config.population_size).all()
    for i in range(4):
        alone = _run(
            config,
            problems.select([i]),
            [seeds[i]],
            {k: v[i : i + 1] for k, v in hyper.items()},
            15,
        )
        for g in (0, 7, 15):
            assert _states_equal(_row(batch[g], i), alone[g]), (i, g)


def test_active_mask_freezes_instances() -> None:
    config = DEConfig(dimension=3, population_size=8, mutation="rand/1")
    problems = coco_instances([1, 2], 3, 1)
    rng = InstanceRNG.create([1, 2])
    s0 = initial_state(config, problems, rng)
    counter = rng.counter.clone()
    s1 = step(config, problems, s0, _hyper(2), rng, active=torch.tensor([True, False]))
    assert _states_equal(_row(s1, 1), _row(s0, 1))
    assert rng.counter[1] == counter[1] and rng.counter[0] > counter[0]
    assert s1.generation.tolist() == [1, 0]


# ----------------------------------------------------------------------------- hyperparameters


def test_per_instance_hyperparameters_honoured() -> None:
    """rand/1 + binomial: Cr=0 changes at most one coordinate of a parent; F=0 with Cr=1 makes
    every trial a copy of another individual, so each new row is an old row."""
    config = DEConfig(dimension=6, population_size=20, mutation="rand/1", crossover="binomial")
    problems = coco_instances([1, 1], 6, [1, 2])
    hyper = {
        "F1": torch.tensor([0.5, 0.0], dtype=torch.float64),
        "Cr": torch.tensor([0.0, 1.0], dtype=torch.float64),
    }
    rng = InstanceRNG.create([4, 5])
    state = initial_state(config, problems, rng)
    changed = [0, 0]
    for _ in range(10):
        new = step(config, problems, state, hyper, rng)
        # instance 0: Cr = 0 -> at most one coordinate differs from the parent
        diff = (new.population[0] != state.population[0]).sum(-1)
        assert (diff <= 1).all()
        changed[0] += int((diff == 1).sum())
        # instance 1: F = 0, Cr = 1 -> every row is a row of the previous population
        eq = (new.population[1][:, None, :] == state.population[1][None, :, :]).all(-1)
        assert eq.any(-1).all()
        changed[1] += int((new.population[1] != state.population[1]).any(-1).sum())
        state = new
    assert changed[0] > 0 and changed[1] > 0


def test_hyper_validation() -> None:
    config = DEConfig(dimension=3, population_size=8)
    problems = coco_instances(1, 3, [1, 2])
    rng = InstanceRNG.create([1, 2])
    state = initial_state(config, problems, rng)
    with pytest.raises(ValueError, match="F2"):
        step(config, problems, state, {"F1": 0.5, "Cr": 0.5}, rng)
    with pytest.raises(ValueError, match="Cr"):
        step(config, problems, state, {"F1": 0.5, "F2": 0.5, "Cr": torch.zeros(3)}, rng)
    # scalars broadcast
    step(config, problems, state, {"F1": 0.5, "F2": 0.5, "Cr": 0.5}, rng)


# ----------------------------------------------------------------------------- bounds


@pytest.mark.parametrize("mode", BOUND_HANDLINGS)
def test_bound_handling_keeps_population_inside(mode: str) -> None:
    lo, hi = -2.0, 3.0
    config = DEConfig(
        dimension=5,
        population_size=12,
        lower=lo,
        upper=hi,
        mutation="rand/2",
        crossover="binomial",
        bound_handling=mode,
    )
    problems = random_instances([1, 3, 20], 5, [0, 1, 2])  # f20's optimum lies near the bounds
    rng = InstanceRNG.create([1, 2, 3])
    state = initial_state(config, problems, rng)
    hyper = _hyper(3, f1=3.0, f2=2.0, cr=1.0)  # large steps: most trials leave the box
    for _ in range(20):
        state = step(config, problems, state, hyper, rng)
        assert (state.population >= lo).all() and (state.population <= hi).all()
        assert (state.best_x >= lo).all() and (state.best_x <= hi).all()


def test_bound_modes_differ() -> None:
    """A trial outside the box is repaired differently by each mode (not all a clip)."""
    x = torch.zeros(1, 1, 2, dtype=torch.float64)
    u = torch.tensor([[[7.0, -6.0]]], dtype=torch.float64)
    expected = {
        "clip": [5.0, -5.0],
        "reflect": [3.0, -4.0],
        "periodic": [-3.0, 4.0],
        "halving": [2.5, -2.5],
    }
    for mode, want in expected.items():
        cfg = DEConfig(dimension=2, population_size=4, bound_handling=mode)
        got = opt._bound(cfg, x, u, None)
        assert got.flatten().tolist() == want, mode


# ----------------------------------------------------------------------------- config


@pytest.mark.parametrize(
    ("field", "kwargs"),
    [
        ("dimension", {"dimension": 0}),
        ("population_size", {"population_size": 3}),
        ("population_size", {"population_size": 5, "mutation": "rand/2"}),
        ("mutation", {"mutation": "rand/3"}),
        ("crossover", {"crossover": "uniform"}),
        ("bound_handling", {"bound_handling": "wrap"}),
        ("lower", {"lower": 5.0, "upper": 5.0}),
        ("lower", {"lower": float("nan")}),
        ("upper", {"upper": math.inf}),
        ("min_population_size", {"min_population_size": 200, "max_evaluations": 1000}),
        ("max_evaluations", {"min_population_size": 10}),
        ("archive_size", {"archive_size": -1}),
    ],
)
def test_bad_config_raises(field: str, kwargs: dict[str, object]) -> None:
    args: dict[str, object] = {"dimension": 5, **kwargs}
    with pytest.raises(ValueError, match=field):
        DEConfig(**args)  # type: ignore[arg-type]


def test_problem_dimension_mismatch() -> None:
    with pytest.raises(ValueError, match="dimension"):
        initial_state(DEConfig(dimension=4), coco_instances(1, 5, 1), InstanceRNG.create([0]))


# ----------------------------------------------------------------------------- best-so-far


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_best_so_far_never_worsens(mutation: str) -> None:
    config = DEConfig(
        dimension=3,
        population_size=10,
        mutation=mutation,
        archive_size=5 if mutation == "current-to-best/1" else 0,
    )
    problems = random_instances([3, 17], 3, [1, 2])
    states = _run(config, problems, [8, 9], _hyper(2, f1=0.7, f2=0.3, cr=0.5), 25)
    for prev, cur in itertools.pairwise(states):
        assert (cur.best_f <= prev.best_f).all()
        # the population's best fitness is never below the best-so-far
        assert (cur.fitness.min(-1).values >= cur.best_f).all()
    final = states[-1]
    assert torch.equal(opt.evaluate(problems, final.best_x[:, None, :])[:, 0], final.best_f)


def test_non_finite_fitness_never_poisons(monkeypatch: pytest.MonkeyPatch) -> None:
    """Random NaN/inf fitness: never selected over a finite parent, never the best-so-far."""
    real = opt.evaluate
    gen = torch.Generator().manual_seed(0)

    def flaky(problems: BBOBInstances, x: torch.Tensor) -> torch.Tensor:
        f = real(problems, x)
        r = torch.rand(f.shape, generator=gen, dtype=torch.float64)
        return torch.where(r < 0.2, math.nan, torch.where(r < 0.3, -math.inf, f))

    monkeypatch.setattr(opt, "evaluate", flaky)
    config = DEConfig(dimension=3, population_size=10, mutation="best/2")
    problems = coco_instances([1, 2], 3, 1)
    rng = InstanceRNG.create([1, 2])
    state = initial_state(config, problems, rng)
    hyper = _hyper(2)
    hyper["F1"][1] = math.nan  # non-finite hyperparameters are harmless too
    for _ in range(20):
        new = step(config, problems, state, hyper, rng)
        assert torch.isfinite(new.best_f).all()
        assert (new.best_f <= state.best_f).all()
        was_finite = torch.isfinite(state.fitness)
        assert torch.isfinite(new.fitness)[was_finite].all()
        assert torch.isfinite(new.population).all()
        state = new


# ----------------------------------------------------------------------------- reduction, archive


def test_linear_population_size_reduction() -> None:
    config = DEConfig(
        dimension=3,
        population_size=20,
        mutation="rand/1",
        min_population_size=4,
        max_evaluations=300,
    )
    problems = coco_instances([1, 7], 3, 1)
    states = _run(config, problems, [1, 2], _hyper(2), 30)
    sizes = [s.population_size.tolist() for s in states]
    assert sizes[0] == [20, 20] and sizes[-1] == [4, 4]
    for prev, cur in itertools.pairwise(states):
        assert torch.equal(cur.evaluations, prev.evaluations + prev.population_size)
        assert (cur.population_size <= prev.population_size).all()
        # alive rows are a prefix
        assert torch.equal(cur.alive, torch.arange(20)[None, :] < cur.population_size[:, None])
        # the kept rows are the best of the previous selection
        assert (cur.fitness[cur.alive].isfinite()).all()


def test_archive_fills_with_replaced_parents() -> None:
    config = DEConfig(dimension=3, population_size=10, mutation="current-to-best/1", archive_size=6)
    problems = coco_instances([1, 10], 3, 1)
    states = _run(config, problems, [1, 2], _hyper(2), 10)
    final = states[-1]
    assert (final.archive_inserted > 6).all()
    archive_rows = final.archive.reshape(-1, 3)
    seen = torch.cat([s.population for s in states]).reshape(-1, 3)
    # every archived row was once a population member
    assert (archive_rows[:, None, :] == seen[None, :, :]).all(-1).any(-1).all()


def test_donor_indices_distinct_and_uniform() -> None:
    """Donors differ from each other and from the target, and cover the alive range uniformly."""
    b, p, k = 2, 200, 5
    rng = InstanceRNG.create([1, 2])
    u = rng.uniform(p, k)
    n = torch.tensor([[7], [200]])  # instance 0 has only 7 alive rows
    current = torch.arange(p) % 7  # targets inside the alive range of both instances
    donors = torch.stack(opt._distinct_indices(u, [n] * k, current), dim=-1)  # [B, P, k]
    allidx = torch.cat([current.expand(b, p)[..., None], donors], dim=-1)
    assert (allidx.sort(-1).values.diff(dim=-1) > 0).all()
    assert (donors < n[..., None]).all() and (donors >= 0).all()
    counts = torch.bincount(donors[0].flatten(), minlength=7).double()
    assert counts.min() > 0.6 * counts.mean()
