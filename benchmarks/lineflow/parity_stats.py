"""The statistics of ``parity.py``: means with t-based confidence intervals, Welch's test
and the comparison of one metric between the two engines against the tolerances.

Pure functions of the per-seed figures, kept apart so they can be read and checked alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks.lineflow.parity_jobs import RELATIVE_TOLERANCE, SCRAP_ABSOLUTE_TOLERANCE

# --------------------------------------------------------------------------------------------
# Statistics


def t_quantile(df: int) -> tuple[float, str]:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom and where it came from."""
    try:
        from scipy import stats
    except ImportError:
        return 1.959964, "normal 1.96 (SciPy not installed)"
    return float(stats.t.ppf(0.975, df)), "Student's t (SciPy)"


def describe(values: Sequence[float]) -> dict[str, Any]:
    """Mean, sample std, standard error and 95% CI half-width of ``values``."""
    x = np.asarray(values, dtype=np.float64)
    n = int(x.size)
    if n == 0:
        return {"n": 0, "mean": None, "std": None, "se": None, "ci95": None}
    std = float(x.std(ddof=1)) if n > 1 else 0.0
    se = std / math.sqrt(n)
    q, _ = t_quantile(max(n - 1, 1))
    return {
        "n": n,
        "mean": float(x.mean()),
        "std": std,
        "se": se,
        "ci95": q * se,
        "min": float(x.min()),
        "max": float(x.max()),
    }


def welch_p(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Two-sided Welch t-test p-value (information only), or None without SciPy."""
    try:
        from scipy import stats
    except ImportError:
        return None
    if len(a) < 2 or len(b) < 2 or (np.std(a) == 0 and np.std(b) == 0):
        return None if np.mean(a) != np.mean(b) else 1.0
    return float(stats.ttest_ind(a, b, equal_var=False).pvalue)


def compare(metric: str, simpy: Sequence[float], torch_: Sequence[float]) -> dict[str, Any]:
    """SimPy and torch statistics of one metric and the parity verdict."""
    s, t = describe(simpy), describe(torch_)
    out: dict[str, Any] = {"simpy": s, "torch": t, "welch_p": welch_p(simpy, torch_)}
    if s["mean"] is None or t["mean"] is None:
        out.update({"delta": None, "delta_pct": None, "pass": False, "rule": "missing data"})
        return out
    delta = t["mean"] - s["mean"]
    delta_pct = 100.0 * delta / s["mean"] if s["mean"] else None
    rules: list[tuple[str, float]] = [
        ("within SimPy 95% CI", s["ci95"]),
        ("within 2%", RELATIVE_TOLERANCE * abs(s["mean"])),
    ]
    if metric == "scrap" and s["mean"] < 1:
        rules.append(("within abs. 1 (SimPy mean scrap < 1)", SCRAP_ABSOLUTE_TOLERANCE))
    passed = [name for name, tolerance in rules if abs(delta) <= tolerance + 1e-12]
    out.update(
        {
            "delta": delta,
            "delta_pct": delta_pct,
            "tolerance": max(tol for _, tol in rules),
            "pass": bool(passed),
            "rule": passed[0] if passed else "outside every tolerance",
        }
    )
    return out
