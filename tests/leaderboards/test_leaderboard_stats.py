"""Aggregates: known answers for IQM and std; the bootstrap interval is seeded and sensible."""

from __future__ import annotations

import numpy as np
import pytest

from gymforge.leaderboards.stats import aggregate, bootstrap_ci, close, iqm


def test_leaderboards__iqm_drops_a_quarter_at_each_end():
    # 8 values: drop 2 lowest (0, 1) and 2 highest (50, 100); mean of 2, 3, 4, 5 = 3.5
    assert iqm([100, 0, 1, 2, 3, 4, 5, 50]) == 3.5
    # 3 values: n // 4 = 0, nothing dropped
    assert iqm([1, 2, 6]) == 3.0


def test_leaderboards__aggregate_known_answer():
    block = aggregate([1.0, 2.0, 3.0, 4.0])
    assert block["mean"] == 2.5
    assert block["median"] == 2.5
    assert block["std"] == pytest.approx(np.sqrt(5 / 3))  # sample std, ddof=1
    assert (block["min"], block["max"], block["n"]) == (1.0, 4.0, 4)
    assert aggregate([7.0])["std"] == 0.0


def test_leaderboards__bootstrap_ci_is_seeded_and_brackets_the_mean():
    rng = np.random.default_rng(3)
    values = rng.normal(10.0, 2.0, size=40)
    low, high = bootstrap_ci(values)
    assert (low, high) == bootstrap_ci(values)
    assert low < values.mean() < high
    # the percentile interval of the mean is close to ±1.96 standard errors
    se = values.std(ddof=1) / np.sqrt(len(values))
    assert high - low == pytest.approx(2 * 1.96 * se, rel=0.15)
    assert bootstrap_ci([5.0, 5.0, 5.0]) == (5.0, 5.0)


def test_leaderboards__aggregate_rejects_empty_or_nan():
    with pytest.raises(ValueError, match="finite"):
        aggregate([])
    with pytest.raises(ValueError, match="finite"):
        aggregate([1.0, float("nan")])


def test_leaderboards__close_uses_an_absolute_tolerance():
    assert close(1.0, 1.0, 0.0)
    assert close(1.0, 1.0 + 1e-7, 1e-6)
    assert not close(1.0, 1.0 + 1e-5, 1e-6)


def test_ranks_whose_intervals_overlap_the_row_above_are_marked_tied():
    from gymforge.leaderboards.board import tied_with_above

    rows = [
        {"ci95_low": 10.0, "ci95_high": 12.0},
        {"ci95_low": 11.5, "ci95_high": 13.0},  # overlaps the first
        {"ci95_low": 5.0, "ci95_high": 11.0},  # below the second's interval: separated
        {"ci95_low": 11.0, "ci95_high": 11.0},  # touches the third's upper end
    ]
    assert tied_with_above(rows) == [False, True, False, True]
    assert tied_with_above([]) == [] and tied_with_above(rows[:1]) == [False]
