"""Worker pools for the SimPy LineFlow engine.

Each worker has a current station, a target station (the last action) and is either free, held
by a station for a job, or walking. A free worker whose target differs from its station starts
walking at once and arrives ``transition_time`` later; a held worker leaves when the station
releases it. A station starting a job takes every worker that stands at it and is free, and its
processing time is multiplied by ``exp(−0.3 · Σ skill)`` over them.
"""

from __future__ import annotations

import math

import simpy

from gymforge.envs.lineflow.spec import WorkerPoolSpec


class Worker:
    """One worker: where it stands, where it should go, and whether it is busy or walking."""

    __slots__ = ("held", "in_transit", "index", "station", "target")

    def __init__(self, index: int, station: int) -> None:
        self.index = index
        self.station = station  # index into the pool's stations
        self.target = station
        self.held = False
        self.in_transit = False


class WorkerPool:
    """The workers of one pool and their moves between the pool's stations."""

    def __init__(self, env: simpy.Environment, spec: WorkerPoolSpec, stations: list[str]) -> None:
        self.env = env
        self.spec = spec
        self.stations = stations
        # Round-robin start: worker w stands at station w mod n.
        self.workers = [Worker(w, w % len(stations)) for w in range(spec.n_workers)]
        self._skill = [[spec.skill(w, s) for s in stations] for w in range(spec.n_workers)]

    def assign(self, worker: int, station: int) -> None:
        """Send ``worker`` to the station with index ``station`` (when it is free)."""
        w = self.workers[worker]
        w.target = station
        self._maybe_leave(w)

    def _maybe_leave(self, w: Worker) -> None:
        if w.held or w.in_transit or w.target == w.station:
            return
        destination = w.target
        if self.spec.transition_time == 0:
            w.station = destination
            return
        w.in_transit = True
        self.env.timeout(self.spec.transition_time).callbacks.append(
            lambda _: self._arrive(w, destination)
        )

    def _arrive(self, w: Worker, destination: int) -> None:
        w.station = destination
        w.in_transit = False
        self._maybe_leave(w)

    def present(self, station: int) -> int:
        """Workers standing at ``station`` (not walking)."""
        return sum(1 for w in self.workers if w.station == station and not w.in_transit)

    def take(self, station: int) -> tuple[list[Worker], float]:
        """Hold the free workers at ``station``; returns them and the processing-time factor."""
        taken = [
            w for w in self.workers if w.station == station and not w.in_transit and not w.held
        ]
        for w in taken:
            w.held = True
        skill = sum(self._skill[w.index][station] for w in taken)
        return taken, math.exp(-0.3 * skill)

    def release(self, workers: list[Worker]) -> None:
        for w in workers:
            w.held = False
            self._maybe_leave(w)
