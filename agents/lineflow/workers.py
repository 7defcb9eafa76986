"""Worker-assignment controllers (WorkerAssignment, ComplexLine).

A station with nominal time ``T`` and ``n`` workers (skill 1) takes about
``T·exp(−0.3·n) + 0.1·T`` per job, the last term being the mean processing noise. The line's
throughput is set by its slowest station, so the best partition minimises the largest of these
cycle times; :func:`best_partition` finds it by exhaustive search over all compositions of the
workers (``C(n + k − 1, k − 1)``: 55 for WorkerAssignment k = 3) when that is small, and by
assigning workers one at a time to the current bottleneck otherwise — which is exact for this
min-max objective because each station's time decreases convexly in its workers.
"""

from __future__ import annotations

import itertools
from typing import Any

import gymnasium as gym
import numpy as np

from gymforge.agents.lineflow.base import LineController
from gymforge.core.arrays import host_array

EXHAUSTIVE_LIMIT = 200_000


def station_times(times: np.ndarray, workers: np.ndarray) -> np.ndarray:
    """Mean job time of each station: ``T·exp(−0.3·n) + 0.1·T``."""
    return times * np.exp(-0.3 * workers) + 0.1 * times


def compositions(n: int, k: int) -> np.ndarray:
    """Every way to split ``n`` identical workers over ``k`` stations, shape ``(count, k)``."""
    rows = []
    for cuts in itertools.combinations(range(n + k - 1), k - 1):
        bounds = (-1, *cuts, n + k - 1)
        rows.append([bounds[i + 1] - bounds[i] - 1 for i in range(k)])
    return np.array(rows, dtype=np.int64)


def best_partition(times: list[float], n_workers: int) -> np.ndarray:
    """Workers per station minimising the slowest station's time (ties: smaller total time)."""
    t = np.asarray(times, dtype=np.float64)
    k = len(t)
    count = (
        int(np.prod(range(n_workers + 1, n_workers + k)) // np.prod(range(1, k))) if k > 1 else 1
    )
    if count <= EXHAUSTIVE_LIMIT:
        options = compositions(n_workers, k)
        cycle = station_times(t[None, :], options)
        score = cycle.max(axis=1) + 1e-6 * cycle.sum(axis=1)
        return options[int(score.argmin())]
    workers = np.zeros(k, dtype=np.int64)
    for _ in range(n_workers):
        workers[int(station_times(t, workers).argmax())] += 1
    return workers


def balanced_partition(times: list[float], n_workers: int) -> np.ndarray:
    """The reference ComplexLine heuristic's objective: minimise the variance of station times
    subject to ``n_0 ≤ n_1 ≤ …`` (solved exactly by exhaustive search instead of GEKKO)."""
    t = np.asarray(times, dtype=np.float64)
    options = compositions(n_workers, len(t))
    options = options[np.all(np.diff(options, axis=1) >= 0, axis=1)]
    cycle = station_times(t[None, :], options)
    return options[int(cycle.var(axis=1).argmin())]


def assignment_from_counts(counts: np.ndarray) -> np.ndarray:
    """Worker → station index, filling stations in order: counts (2, 3, 4) → 0 0 1 1 1 2 2 2 2."""
    return np.repeat(np.arange(len(counts)), counts)


class BestPartitionAgent(LineController):
    """Assigns the pool's workers by :func:`best_partition` and keeps them there.

    Args:
        env: a LineFlow env whose line has exactly one worker pool.
    """

    def __init__(self, env: gym.Env | gym.vector.VectorEnv) -> None:
        super().__init__(env)
        if len(self.line.pools) != 1:
            raise ValueError(f"line {self.line.name!r} must have exactly one worker pool")
        pool = self.line.pools[0]
        stations = self.line.pool_stations(pool.name)
        times = [self.line.station(s).processing_time for s in stations]
        self.counts = best_partition(times, pool.n_workers)
        self._assignment = assignment_from_counts(self.counts)
        self._slots = [self.slot(pool.name, "worker", w) for w in range(pool.n_workers)]

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> np.ndarray:
        obs = host_array(observation)
        action = self.zero_action(obs)
        action[..., self._slots] = self._assignment
        return action
