"""Words for comparisons, decided by the interval of a paired difference.

Results files and the README compare methods in words ("beats", "ties with", "loses to"). The
word is a claim about a paired difference, so it comes from that difference's confidence
interval and from nothing else: an interval that excludes 0 on the good side beats, one that
excludes 0 on the bad side loses, one that holds 0 ties. A point estimate that happens to be
higher is a tie when its interval holds 0.

A comparison picked as the best of several candidates, or one test among many, is stated with
the number of candidates or tests: :func:`bonferroni_note` writes that sentence.
"""

from __future__ import annotations

from typing import Literal

Verdict = Literal["beats", "ties with", "loses to"]


def verdict(low: float, high: float, higher_is_better: bool = True) -> Verdict:
    """``"beats"``, ``"ties with"`` or ``"loses to"`` from the interval ``[low, high]`` of a
    paired difference (method minus comparator).

    ``higher_is_better`` says which sign is good (``False`` for errors, where a negative
    difference beats). An interval touching 0 ties.
    """
    if low > high:
        raise ValueError(f"interval [{low}, {high}] has low above high")
    if low > 0.0:
        return "beats" if higher_is_better else "loses to"
    if high < 0.0:
        return "loses to" if higher_is_better else "beats"
    return "ties with"


def bonferroni_threshold(n_tests: int, alpha: float = 0.05) -> float:
    """The per-test level that keeps the family-wise error rate of ``n_tests`` tests at
    ``alpha`` (Bonferroni)."""
    if n_tests < 1:
        raise ValueError("n_tests must be at least 1")
    return alpha / n_tests


def bonferroni_note(p_value: float, n_tests: int, alpha: float = 0.05) -> str:
    """One sentence saying whether ``p_value`` survives a Bonferroni correction over
    ``n_tests`` tests (or candidates) at family-wise level ``alpha``."""
    threshold = bonferroni_threshold(n_tests, alpha)
    survives = p_value < threshold
    return (
        f"p = {p_value:.2g} {'is below' if survives else 'is not below'} the Bonferroni level "
        f"{alpha:g} / {n_tests} = {threshold:.2g}, so it "
        f"{'survives' if survives else 'does not survive'} correction for {n_tests} "
        "tests or candidates"
    )
