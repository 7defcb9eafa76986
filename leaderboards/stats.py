"""Aggregates of per-episode scores: mean, std, median, IQM and a seeded bootstrap CI."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

#: resamples of the percentile bootstrap; seeded, so the interval is a function of the scores.
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 0


def iqm(values: Sequence[float]) -> float:
    """Interquartile mean: the mean of the sorted scores after dropping ⌊n/4⌋ from each end."""
    ordered = np.sort(np.asarray(values, dtype=np.float64))
    cut = len(ordered) // 4
    return float(ordered[cut : len(ordered) - cut].mean())


def bootstrap_ci(
    values: Sequence[float], level: float = 0.95, resamples: int = BOOTSTRAP_RESAMPLES
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean (``numpy`` generator seeded 0)."""
    data = np.asarray(values, dtype=np.float64)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    means = data[rng.integers(0, len(data), size=(resamples, len(data)))].mean(axis=1)
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(means, [tail, 100.0 - tail])
    return float(low), float(high)


def aggregate(values: Sequence[float]) -> dict[str, Any]:
    """The aggregate block of a results file for the per-episode metric ``values``.

    ``std`` is the sample standard deviation (``ddof=1``; 0 for a single episode).
    """
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0 or not np.all(np.isfinite(data)):
        raise ValueError("aggregate needs at least one finite score")
    low, high = bootstrap_ci(data)
    return {
        "n": int(data.size),
        "mean": float(data.mean()),
        "std": float(data.std(ddof=1)) if data.size > 1 else 0.0,
        "median": float(np.median(data)),
        "iqm": iqm(data),
        "min": float(data.min()),
        "max": float(data.max()),
        "ci95": [low, high],
    }


def close(a: float, b: float, tolerance: float) -> bool:
    """``|a − b| <= tolerance`` (plus a few ulps, so a zero tolerance accepts equal floats)."""
    return abs(a - b) <= tolerance + 4 * math.ulp(max(abs(a), abs(b), 1.0))


@contextmanager
def seeded_global_numpy(seed: int) -> Iterator[None]:
    """Seed numpy's global random state for the block, then put the caller's state back.

    rliable's stratified bootstrap draws its resamples with ``np.random.choice`` (the global
    state) and ignores the ``random_state`` it is given, so without this its intervals change
    from run to run; restoring the state leaves every other user of the global state untouched.
    """
    saved = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(saved)


#: resamples and seed of the bootstrap over a method's rows (seeded: renders are reproducible)
METHOD_RESAMPLES = 20_000
METHOD_SEED = 0


def method_iqm(row_scores: Sequence[float]) -> tuple[float, float, float]:
    """IQM over a method's rows (one score per training seed) with its 95% bootstrap CI.

    The field's standard for reporting RL across seeds (Agarwal et al., 2021), computed with
    rliable: the interquartile mean of the rows' scores and a percentile-bootstrap interval over
    rows, seeded so that a board renders the same bytes every time. One row gives ``(x, x, x)``.
    """
    try:
        from rliable import library as rly
        from rliable import metrics
    except ImportError as error:  # pragma: no cover - depends on the install
        raise ImportError(
            "the boards' by-method IQM needs rliable: pip install 'gymforge[stats]'"
        ) from error
    data = np.asarray(row_scores, dtype=np.float64)
    if data.size == 0 or not np.all(np.isfinite(data)):
        raise ValueError("method_iqm needs at least one finite score")
    if data.size == 1:
        value = float(data[0])
        return value, value, value
    with warnings.catch_warnings(), seeded_global_numpy(METHOD_SEED):
        warnings.simplefilter("ignore", FutureWarning)  # arch deprecates RandomState
        point, ci = rly.get_interval_estimates(
            {"m": data[:, None]},
            lambda x: np.array([metrics.aggregate_iqm(x)]),
            reps=METHOD_RESAMPLES,
            random_state=np.random.RandomState(METHOD_SEED),
        )
    return float(point["m"][0]), float(ci["m"][0, 0]), float(ci["m"][1, 0])
