"""The LineFlow RL table's time-to-score column: first evaluation at the threshold, seconds from
the run's average speed, medians with "never" counted as infinitely late."""

from __future__ import annotations

import pytest

from benchmarks.lineflow.rl_torch import _time_cell, best_controllers, time_to_score


def _row(returns: list[float], every: int = 100_000, train_s: float = 100.0) -> dict:
    curve = [{"timesteps": every * (k + 1), "mean_return": r} for k, r in enumerate(returns)]
    return {"curve": curve, "train_s": train_s, "steps": every * len(returns)}


def test_time_to_score__first_evaluation_at_the_threshold_and_estimated_seconds():
    rows = [_row([10, 150, 140, 155]), _row([10, 20, 151, 30]), _row([1, 2, 3, 4])]
    score = time_to_score(rows, 149.9)
    assert score["steps"] == [200_000, 300_000, None]
    assert score["reached"] == 2
    assert score["median_steps"] == 300_000  # median of 200k, 300k and never
    assert score["median_train_s_estimate"] == pytest.approx(75.0)  # 300k of 400k steps in 100 s
    assert _time_cell(score, 3) == "0.30M, ~75 s (2/3)"


def test_time_to_score__never_when_fewer_than_half_the_seeds_reach_it():
    score = time_to_score([_row([1, 2]), _row([1, 2]), _row([200, 1])], 149.9)
    assert score["median_steps"] is None and _time_cell(score, 3) == "never (1/3)"


def test_best_controllers__come_from_the_recorded_controller_search():
    best = best_controllers()
    assert best["WT"] == pytest.approx(157.8) and best["WA"] == pytest.approx(285.6)
    assert set(best) == {"WT", "WTJ", "PD", "WA", "CL"}
