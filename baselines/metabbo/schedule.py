"""Budget-schedule configurator: every hyperparameter's bin follows a fixed curve over the budget.

A hand-designed dynamic configuration, the classic alternative to learning one: large steps early
(exploration), small steps late (exploitation). With ``q`` the fraction of the generation budget
used so far (``1 - `` the remaining-budget feature, observation index 3), hyperparameter ``k``
plays bin

    round(start_k + (end_k - start_k) * q ** power + u),   u uniform on {-jitter, ..., jitter},

clipped to ``0..15``. The jitter keeps some of the per-generation variety that makes uniform random
configuration a strong baseline for DE; the power bends the curve (``power > 1`` keeps the early
values longer).

:data:`DEFAULT_SCHEDULES` holds, per preset, the schedule picked by
``benchmarks/metabbo/schedule_search.py`` on the easy split's *train* functions (an instance no
test run uses; ranked by mean Perf, the test split never touched); its table is recorded in
``benchmarks/results/metabbo_schedule_search.md``. For Alg0 it beats uniform random configuration
there on Perf and, by a wide margin, on log10 final error, so it serves as the exploitation
behaviour of offline datasets (``--behavior mix --expert schedule``) in the way Q-Mamba uses
pretrained RL configurators.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gymforge.baselines.metabbo.common import REMAINING_BUDGET, as_batch, env_preset, unbatch
from gymforge.envs.metabbo.presets import BINS

__all__ = ["DEFAULT_SCHEDULES", "Schedule", "ScheduleAgent"]


@dataclass(frozen=True)
class Schedule:
    """Start and end bins per controlled hyperparameter, the jitter and the curve's power."""

    start: tuple[int, ...]
    end: tuple[int, ...]
    jitter: int = 0
    power: float = 1.0

    def __post_init__(self) -> None:
        for name in ("start", "end"):
            bins = getattr(self, name)
            if not bins or any(
                isinstance(b, bool) or not isinstance(b, (int, np.integer)) or not 0 <= b < BINS
                for b in bins
            ):
                raise ValueError(f"{name} must be bins in 0..{BINS - 1}, got {bins!r}")
        if len(self.start) != len(self.end):
            raise ValueError(
                f"start and end must have the same length, got {len(self.start)} and "
                f"{len(self.end)}"
            )
        if isinstance(self.jitter, bool) or not isinstance(self.jitter, int) or self.jitter < 0:
            raise ValueError(f"jitter must be an integer >= 0, got {self.jitter!r}")
        if not (
            isinstance(self.power, (int, float)) and np.isfinite(self.power) and self.power > 0
        ):
            raise ValueError(f"power must be a finite number > 0, got {self.power!r}")

    def bins(self, used: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        """``[B, K]`` bins at budget fractions ``used`` (``[B]`` in ``[0, 1]``)."""
        start = np.asarray(self.start, dtype=np.float64)
        end = np.asarray(self.end, dtype=np.float64)
        curve = np.clip(used, 0.0, 1.0)[:, None] ** self.power
        value = start + (end - start) * curve
        if self.jitter:
            if rng is None:
                raise ValueError("a schedule with jitter needs a random generator")
            value = value + rng.integers(-self.jitter, self.jitter + 1, value.shape)
        return np.clip(np.rint(value), 0, BINS - 1).astype(np.int64)


#: the schedule :class:`ScheduleAgent` plays by default, per preset (see the module docstring)
DEFAULT_SCHEDULES: dict[str, Schedule] = {
    "alg0": Schedule(start=(10, 6, 15), end=(2, 0, 15), jitter=5, power=1.0),
}


class ScheduleAgent:
    """Plays a :class:`Schedule` on batched MetaBBO observations.

    Args:
        env: a ``MetaBBO`` env (its preset selects the default schedule and checks the length).
        schedule: the schedule to play; default: :data:`DEFAULT_SCHEDULES` of the env's preset.
    """

    def __init__(self, env: Any, schedule: Schedule | None = None) -> None:
        preset = env_preset(env)
        if schedule is None:
            schedule = DEFAULT_SCHEDULES.get(preset.name)
            if schedule is None:
                raise ValueError(
                    f"no default schedule for preset {preset.name!r} (defaults: "
                    f"{sorted(DEFAULT_SCHEDULES)}); pass schedule=Schedule(...)"
                )
        if len(schedule.start) != preset.num_controlled:
            raise ValueError(
                f"schedule must set {preset.num_controlled} hyperparameters for preset "
                f"{preset.name!r}, got {len(schedule.start)}"
            )
        self.schedule = schedule
        self.rng = np.random.default_rng()

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> np.ndarray:
        obs, single = as_batch(observation)
        return unbatch(self.schedule.bins(1.0 - obs[:, REMAINING_BUDGET], self.rng), single)
