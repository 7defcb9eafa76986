"""MetaBBO metrics: Perf, log error, random search, AEI-style scores and the evaluation protocol."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gymforge.envs.metabbo import coco_instances
from gymforge.envs.metabbo.metrics import (
    aei_scores,
    evaluate,
    log_error,
    perf,
    random_search_error,
)


def test_metrics__perf_and_log_error_known_values() -> None:
    np.testing.assert_allclose(perf([1.0, 0.0, 5.0], [4.0, 2.0, 0.0]), [0.75, 1.0, 1.0])
    np.testing.assert_allclose(log_error([100.0, 1e-12, 0.0]), [2.0, -8.0, -8.0])


def test_metrics__aei_known_value() -> None:
    # one problem, two seeds: 1 and 2 orders of magnitude better than random search, the
    # second run stopped after half the budget
    score = aei_scores(np.array([[-1.0, -2.0]]), np.array([[0.0, 0.0]]), np.array([[100, 50]]), 100)
    assert score[0] == pytest.approx(math.exp(1.5 + 0.25))


def test_metrics__random_search_is_seeded_and_improves_with_budget() -> None:
    problems = coco_instances([1, 1], 3, 1)
    a = random_search_error(problems, 500, [1, 2])
    assert np.array_equal(a, random_search_error(problems, 500, [1, 2]))
    assert not np.array_equal(a, random_search_error(problems, 500, [3, 4]))
    big = random_search_error(problems, 20_000, [1, 2])
    assert (big < a).all() and (big >= 0).all()


class _FixedAgent:
    """Always F1 = F2 = 0.5, Cr = 0.9 (bins 8, 8, 14)."""

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: np.ndarray, info: dict | None = None) -> np.ndarray:
        return np.tile([8, 8, 14], (observation.shape[0], 1))


def test_metrics__evaluate_runs_the_protocol() -> None:
    result = evaluate(
        _FixedAgent(), split=[1, 3], seeds=2, dimension=3, population_size=12, max_generations=30
    )
    assert [p["function_id"] for p in result["problems"]] == [1, 3]
    assert result["seeds"] == [1, 2]
    runs = result["runs"]
    assert np.asarray(runs["perf"]).shape == (2, 2)
    assert ((np.asarray(runs["perf"]) > 0) & (np.asarray(runs["perf"]) <= 1)).all()
    assert np.asarray(runs["evaluations"]).max() <= 12 * 31
    # DE with a sane setting beats random search on the sphere with the same budget
    assert result["problems"][0]["aei"] > 1.0
    again = evaluate(
        _FixedAgent(), split=[1, 3], seeds=2, dimension=3, population_size=12, max_generations=30
    )
    assert again["runs"] == runs
    with pytest.raises(ValueError, match="seeds must be an integer >= 1"):
        evaluate(_FixedAgent(), seeds=0)
