"""Shift schedules: the confounding shift ``s`` of every stage of a stream.

The reference stream uses five stages with ``s = 0, 0.125, 0.25, 0.375, 0.5``. As ``s`` grows the
confounder separates the two groups more and the main effect less; at ``s = 0.5`` (with the default
gaps) the main effect carries no label information at all. Shifts are limited to ``[0, 1]``;
beyond ``signal_gap / 2`` the main effect reverses its direction.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

PAPER_SHIFTS: tuple[float, ...] = (0.0, 0.125, 0.25, 0.375, 0.5)
SCHEDULE_KINDS: tuple[str, ...] = ("paper", "linear", "step", "cyclic")
MIN_SHIFT, MAX_SHIFT = 0.0, 1.0


def validate_shifts(shifts: Sequence[float], field: str = "shifts") -> tuple[float, ...]:
    """Return ``shifts`` as a tuple of floats, or raise ``ValueError`` naming ``field``."""
    if isinstance(shifts, (str, bytes)) or not isinstance(shifts, Sequence) or len(shifts) == 0:
        raise ValueError(
            f"{field} must be a non-empty sequence of floats in [0, 1], got {shifts!r}"
        )
    out = []
    for k, value in enumerate(shifts):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{field}[{k}] must be a float in [0, 1], got {value!r}")
        if not math.isfinite(value) or not MIN_SHIFT <= value <= MAX_SHIFT:
            raise ValueError(f"{field}[{k}] must be a float in [0, 1], got {value!r}")
        out.append(float(value))
    return tuple(out)


def shift_schedule(
    kind: str = "paper",
    n_stages: int = 5,
    low: float = 0.0,
    high: float = 0.5,
    period: int = 4,
) -> tuple[float, ...]:
    """The shifts of ``n_stages`` stages.

    Args:
        kind: ``"paper"`` (0, 0.125, …, 0.5; ignores the other arguments), ``"linear"`` (evenly
            from ``low`` to ``high``), ``"step"`` (``low`` for the first half of the stages,
            ``high`` for the rest) or ``"cyclic"`` (a triangle wave from ``low`` up to ``high``
            and back, one cycle every ``period`` stages).
        n_stages: number of stages (>= 1; >= 2 for ``"step"``).
        low, high: the smallest and largest shift, each in [0, 1].
        period: stages per cycle of ``"cyclic"`` (>= 2).
    """
    if kind not in SCHEDULE_KINDS:
        raise ValueError(f"kind must be one of {SCHEDULE_KINDS}, got {kind!r}")
    if kind == "paper":
        return PAPER_SHIFTS
    if isinstance(n_stages, bool) or not isinstance(n_stages, int) or n_stages < 1:
        raise ValueError(f"n_stages must be an int >= 1, got {n_stages!r}")
    low, high = validate_shifts([low], "low")[0], validate_shifts([high], "high")[0]
    if kind == "linear":
        if n_stages == 1:
            return (low,)
        return tuple(low + (high - low) * k / (n_stages - 1) for k in range(n_stages))
    if kind == "step":
        if n_stages < 2:
            raise ValueError(f"n_stages must be >= 2 for a step schedule, got {n_stages}")
        return tuple(low if k < n_stages // 2 else high for k in range(n_stages))
    if isinstance(period, bool) or not isinstance(period, int) or period < 2:
        raise ValueError(f"period must be an int >= 2, got {period!r}")
    phase = [(k % period) / period for k in range(n_stages)]  # in [0, 1)
    return tuple(low + (high - low) * (1.0 - abs(2.0 * p - 1.0)) for p in phase)
