"""Aggregates of per-episode scores: mean, std, median, IQM and a seeded bootstrap CI."""

from __future__ import annotations

import math
from collections.abc import Sequence
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
