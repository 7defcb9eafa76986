"""The exact LineFlow engine: a SimPy discrete-event simulation that interprets a ``LineSpec``.

Each station is one SimPy process (``sim_stations.py``); buffers are conveyors whose slot moves
are single timeout events with callbacks (``sim_buffer.py``), so a simulated time unit costs few
events. All randomness comes from the line's own ``numpy.random.Generator``, seeded at
construction, so a seed fixes the whole trajectory. This engine is the oracle the torch engine is
tested against.
"""

from __future__ import annotations

import numpy as np
import simpy

from gymforge.envs.lineflow.features import action_slots, timed_scale
from gymforge.envs.lineflow.sim_buffer import Buffer
from gymforge.envs.lineflow.sim_stations import (
    MODES,
    STATION_CLASSES,
    Assembly,
    Magazine,
    ProcessStation,
    SequentialProcessStation,
    Sink,
    Source,
    Station,
    Switch,
)
from gymforge.envs.lineflow.sim_workers import WorkerPool
from gymforge.envs.lineflow.spec import LineSpec, SwitchSpec

__all__ = ["MODES", "LineSimulation"]


class LineSimulation:
    """One running instance of a line.

    Args:
        spec: the line to simulate.
        seed: seed of the line's random generator; the same seed gives the same trajectory.
    """

    def __init__(self, spec: LineSpec, seed: int) -> None:
        self.spec = spec
        self.env = simpy.Environment()
        self.rng = np.random.default_rng(seed)
        self.buffers = {b.name: Buffer(self.env, b, self.rng) for b in spec.buffers}
        switches = {s.name for s in spec.stations if isinstance(s, SwitchSpec)}
        self.input_of: dict[str, Buffer] = {}
        self.output_of: dict[str, Buffer] = {}
        self.return_of: dict[str, Buffer] = {}
        self.components_of: dict[str, list[Buffer]] = {}
        self.switch_inputs: dict[str, list[Buffer]] = {name: [] for name in switches}
        self.switch_outputs: dict[str, list[Buffer]] = {name: [] for name in switches}
        for b in spec.buffers:
            buffer = self.buffers[b.name]
            if b.kind == "return":
                self.return_of[b.upstream] = buffer
            elif b.upstream in switches:
                self.switch_outputs[b.upstream].append(buffer)
            else:
                self.output_of[b.upstream] = buffer
            if b.kind == "component":
                self.components_of.setdefault(b.downstream, []).append(buffer)
            elif b.downstream in switches:
                self.switch_inputs[b.downstream].append(buffer)
            else:
                self.input_of[b.downstream] = buffer
        self.pools = {
            p.name: WorkerPool(self.env, p, spec.pool_stations(p.name)) for p in spec.pools
        }
        self.stations: dict[str, Station] = {
            s.name: STATION_CLASSES[type(s)](self, s) for s in spec.stations
        }
        self.assemblies = [s for s in self.stations.values() if isinstance(s, Assembly)]
        self.sinks = [s for s in self.stations.values() if isinstance(s, Sink)]
        self._action_slots = action_slots(spec)
        for station in self.stations.values():
            self.env.process(station.run())
        self._clock = 0.0

    @property
    def now(self) -> float:
        """Simulation time reached by :meth:`run_until`."""
        return self._clock

    @property
    def n_parts(self) -> int:
        """Parts finished at all sinks so far."""
        return sum(s.n_parts for s in self.sinks)

    @property
    def n_scrap(self) -> int:
        """Component carriers scrapped at all assemblies so far."""
        return sum(a.n_scrap for a in self.assemblies)

    def apply_action(self, action: list[int]) -> None:
        """Apply one ``MultiDiscrete`` action (see ``features.action_slots`` for the layout)."""
        for slot, value in zip(self._action_slots, action, strict=True):
            if slot.kind == "worker":
                self.pools[slot.owner].assign(slot.worker, value)
                continue
            station = self.stations[slot.owner]
            if slot.kind == "waiting_time":
                assert isinstance(station, Source)
                station.waiting_time = value * station.spec.waiting_time_step
            elif slot.kind == "index_in":
                assert isinstance(station, Switch)
                station.index_in = value
            elif slot.kind == "index_out":
                assert isinstance(station, Switch)
                station.index_out = value
            elif slot.kind == "magazine":
                assert isinstance(station, Magazine)
                station.target = value

    def set_station_on(self, name: str, on: bool) -> None:
        """Switch station ``name`` on or off (it stops before its next cycle)."""
        if name not in self.stations:
            raise ValueError(f"station must be one of {sorted(self.stations)}, got {name!r}")
        self.stations[name].switch(on)

    def run_until(self, time: float) -> bool:
        """Process every event scheduled before ``time``; returns False once no event is left."""
        env = self.env
        while env.peek() < time:
            env.step()
        # Move SimPy's clock to the decision time too (no event lies in between), so that whatever
        # an action schedules — a worker's walk — starts now, not at the last event before it.
        # ``Environment`` keeps its clock in ``_now``; ``run(until=...)`` would leave its stop
        # event behind in the queue.
        env._now = max(env.now, time)
        self._clock = time
        return env.peek() != float("inf")

    def observe(self, out: np.ndarray, horizon: float) -> None:
        """Write the observation into ``out`` in the layout of ``features.observation_features``."""
        i = 0
        for station in self.stations.values():
            out[i : i + 3] = 0.0
            out[i + station.mode] = 1.0
            i += 3
            spec = station.spec
            if isinstance(station, Source):
                if spec.actionable_waiting_time:
                    largest = (spec.waiting_time_choices - 1) * spec.waiting_time_step
                    out[i] = station.waiting_time / largest
                    i += 1
                if len(spec.carrier_specs) > 1:
                    kinds = list(spec.carrier_specs)
                    out[i : i + len(kinds)] = 0.0
                    out[i + kinds.index(station.carrier_kind)] = 1.0
                    i += len(kinds)
            if isinstance(station, (ProcessStation, SequentialProcessStation, Assembly)):
                out[i] = min(station.last_processing_time / timed_scale(spec), 1.0)
                i += 1
            if station.pool is not None:
                out[i] = station.n_workers / station.pool.spec.n_workers
                i += 1
            if isinstance(station, Assembly):
                out[i] = min(station.n_scrap - station.n_scrap_observed, 1)
                station.n_scrap_observed = station.n_scrap
                i += 1
            if isinstance(station, Switch):
                for index, buffers in (
                    (station.index_in, station.inputs),
                    (station.index_out, station.outputs),
                ):
                    if len(buffers) > 1:
                        out[i : i + len(buffers)] = 0.0
                        out[i + index] = 1.0
                        i += len(buffers)
            if isinstance(station, Magazine) and not spec.unlimited_carriers:
                out[i] = min(station.n_stored / max(spec.max_carriers, 1), 1.0)
                i += 1
        for pool in self.pools.values():
            n = len(pool.stations)
            for worker in pool.workers:
                out[i : i + n] = 0.0
                out[i + (worker.target if worker.in_transit else worker.station)] = 1.0
                i += n
        for buffer in self.buffers.values():
            out[i] = buffer.fill
            i += 1
        out[i] = min(self.now / horizon, 1.0)
