"""LineFlow reward functions: ``parts`` (default), ``uptime`` and ``parts-sparse``.

| name | reward of a step |
|---|---|
| ``parts`` | parts finished − ``scrap_factor`` × components scrapped, during the step |
| ``uptime`` | mean over stations of the fraction of the last ``lookback`` steps (0: all steps so far) they ended in mode ``working`` |
| ``parts-sparse`` | 0, except at the episode's last step: total parts − ``scrap_factor`` × total scrap |

The reference's ``uptime`` with lookback 0 uses ``X[-0:]``, i.e. the whole history, by accident;
here 0 means "since the episode started" by definition. Every reward costs O(stations) per step.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from gymforge.envs.lineflow.sim_stations import WORKING

if TYPE_CHECKING:
    from gymforge.envs.lineflow.simpy_engine import LineSimulation

REWARDS = ("parts", "uptime", "parts-sparse")


class LineReward:
    """Base: keeps the counts seen at the previous step."""

    def __init__(self, scrap_factor: float) -> None:
        self.scrap_factor = scrap_factor
        self.reset()

    def reset(self) -> None:
        self._parts = 0
        self._scrap = 0

    def __call__(self, sim: LineSimulation, last_step: bool) -> float:
        raise NotImplementedError


class PartsReward(LineReward):
    def __call__(self, sim: LineSimulation, last_step: bool) -> float:
        parts, scrap = sim.n_parts, sim.n_scrap
        reward = (parts - self._parts) - self.scrap_factor * (scrap - self._scrap)
        self._parts, self._scrap = parts, scrap
        return float(reward)


class SparsePartsReward(LineReward):
    def __call__(self, sim: LineSimulation, last_step: bool) -> float:
        if not last_step:
            return 0.0
        return float(sim.n_parts - self.scrap_factor * sim.n_scrap)


class UptimeReward(LineReward):
    """Mean working fraction over a sliding window of ``lookback`` steps, kept in a ring buffer."""

    def __init__(self, scrap_factor: float, n_stations: int, lookback: int) -> None:
        self.lookback = lookback
        self._ring = np.zeros((max(lookback, 1), n_stations))
        super().__init__(scrap_factor)

    def reset(self) -> None:
        super().reset()
        self._ring[:] = 0.0
        self._sum = np.zeros(self._ring.shape[1])
        self._steps = 0

    def __call__(self, sim: LineSimulation, last_step: bool) -> float:
        working = np.fromiter((s.mode == WORKING for s in sim.stations.values()), dtype=np.float64)
        self._sum += working
        if self.lookback > 0:
            slot = self._steps % self.lookback
            if self._steps >= self.lookback:
                self._sum -= self._ring[slot]
            self._ring[slot] = working
        self._steps += 1
        window = min(self._steps, self.lookback) if self.lookback > 0 else self._steps
        return float(self._sum.mean() / window)


def check_scrap_factor(factor: object) -> float:
    """``factor`` as a float, or ``ValueError`` unless it is a finite number >= 0."""
    if (
        isinstance(factor, bool)
        or not isinstance(factor, (int, float))
        or not 0 <= factor < math.inf
    ):
        raise ValueError(f"scrap_factor must be a finite number >= 0, got {factor!r}")
    return float(factor)


def make_reward(name: str, scrap_factor: float, n_stations: int, lookback: int) -> LineReward:
    if name not in REWARDS:
        raise ValueError(f"reward must be one of {REWARDS}, got {name!r}")
    if isinstance(lookback, bool) or not isinstance(lookback, int) or lookback < 0:
        raise ValueError(f"uptime_lookback must be an int >= 0, got {lookback!r}")
    if name == "uptime":
        return UptimeReward(scrap_factor, n_stations, lookback)
    if name == "parts-sparse":
        return SparsePartsReward(scrap_factor)
    return PartsReward(scrap_factor)
