"""CMA-ES (pycma) on the suite's BBOB problems: solves the sphere, beats random search."""

from __future__ import annotations

import numpy as np
import pytest

from gymforge.baselines.metabbo.cmaes import cmaes_error
from gymforge.envs.metabbo.metrics import random_search_error
from gymforge.envs.metabbo.problems import ProblemSet, build_instances

pytest.importorskip("cma")


def _problems(fids):
    return ProblemSet(function_ids=tuple(fids), dimension=5, instance_mode="random")


def test_cmaes_solves_the_sphere_and_beats_random_search_on_rosenbrock():
    fids, iids, seeds = [1, 8], [3, 3], [1, 2]
    errors = cmaes_error(_problems(fids), fids, iids, seeds, budget=3000)
    assert errors[0] <= 1e-8  # the sphere, to the target
    problems = build_instances(_problems(fids), fids, iids, "cpu")
    random = random_search_error(problems, 3000, [11, 12])
    assert (errors >= 0).all() and errors[1] < random[1] / 100


def test_same_seed_same_run_and_bad_arguments_are_named():
    ps = _problems([3])
    a = cmaes_error(ps, [3], [1], [5], budget=500)
    b = cmaes_error(ps, [3], [1], [5], budget=500)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="budget must be an integer >= 1"):
        cmaes_error(ps, [3], [1], [5], budget=0)
    with pytest.raises(ValueError, match="one entry per run"):
        cmaes_error(ps, [3, 3], [1], [5], budget=10)
