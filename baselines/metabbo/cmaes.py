"""CMA-ES (pycma) on the MetaBBO problems: an un-configured reference for the configured DEs.

As MetaBox does, the reproduction's tables place the configured differential evolutions beside
optimizers that nobody configures per generation: random search
(:func:`gymforge.envs.metabbo.metrics.random_search_error`) and CMA-ES. This runs pycma's
IPOP-CMA-ES (``cma.fmin2`` with restarts at doubled population sizes until the budget is
spent) on the same BBOB instances and with the same budget of evaluations as a DE episode
(``population_size x (max_generations + 1)``), in the same box ``[-5, 5]^D`` (pycma's bound
handling), from a uniform start and a step size of 2 (a fifth of the box's width). Each
population is evaluated in one batched call of the suite's BBOB functions; runs are
independent, seeded ``seeds[i]``.

Needs the ``cma`` package (the ``metabbo`` extra).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from gymforge.envs.metabbo.bbob import evaluate as evaluate_f
from gymforge.envs.metabbo.problems import ProblemSet, build_instances

SIGMA0 = 2.0
BOX = (-5.0, 5.0)
MAX_RESTARTS = 9


def cmaes_error(
    problem_set: ProblemSet,
    function_ids: Sequence[int],
    instance_ids: Sequence[int],
    seeds: Sequence[int],
    budget: int,
) -> np.ndarray:
    """Best error (``f - f_opt``, at least 0) of one IPOP-CMA-ES run per ``(function, instance,
    seed)`` triple, each with ``budget`` evaluations."""
    import cma  # the metabbo extra; imported here so the module imports without it

    if not len(function_ids) == len(instance_ids) == len(seeds):
        raise ValueError("function_ids, instance_ids and seeds must have one entry per run")
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"budget must be an integer >= 1, got {budget!r}")
    d = problem_set.dimension
    errors = np.empty(len(seeds))
    for run, (fid, iid, seed) in enumerate(zip(function_ids, instance_ids, seeds, strict=True)):
        problem = build_instances(problem_set, [int(fid)], [int(iid)], "cpu")
        f_opt = float(problem.f_opt[0])
        best, used = math.inf, 0

        def batch_objective(xs: list[np.ndarray], problem=problem) -> list[float]:
            # pycma may overshoot the budget by part of its last population: not counted
            nonlocal best, used
            x = torch.as_tensor(np.stack(xs), dtype=torch.float64)[None]
            values = evaluate_f(problem, x)[0].tolist()
            counted = values[: max(budget - used, 0)]
            best = min(best, *counted) if counted else best
            used += len(values)
            return values

        x0 = np.random.default_rng(int(seed)).uniform(*BOX, size=d)
        options = {
            "bounds": list(BOX),
            "maxfevals": budget,
            "seed": int(seed) + 1,  # pycma treats 0 as "seed from the clock"
            "verbose": -9,
            "ftarget": f_opt + 1e-8,
        }
        cma.fmin2(
            None,
            x0,
            SIGMA0,
            options=options,
            restarts=MAX_RESTARTS,
            incpopsize=2,
            parallel_objective=batch_objective,
        )
        errors[run] = max(best - f_opt, 0.0)
    return errors
