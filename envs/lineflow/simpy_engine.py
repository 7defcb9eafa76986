"""The exact LineFlow engine: a SimPy discrete-event simulation that interprets a ``LineSpec``.

Each station is one SimPy process; buffers are conveyors whose slot moves are single timeout
events with callbacks (no process per slot), so a simulated time unit costs few events. All
randomness comes from the line's own ``numpy.random.Generator``, seeded at construction, so a seed
fixes the whole trajectory. This engine is the oracle the torch engine is tested against.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Generator, Mapping
from typing import Any

import numpy as np
import simpy

from gymforge.envs.lineflow.features import PROCESSING_TIME_SCALE
from gymforge.envs.lineflow.spec import (
    AssemblySpec,
    BufferSpec,
    LineSpec,
    ProcessSpec,
    SinkSpec,
    SourceSpec,
)

WORKING, WAITING, FAILING = 0, 1, 2
MODES = ("working", "waiting", "failing")

Process = Generator[simpy.Event, Any, Any]


class Part:
    """A part: its creation time, its per-station specs and whether it is not OK."""

    __slots__ = ("created", "nok", "specs")

    def __init__(self, created: float, specs: Mapping[str, Mapping[str, float]], nok: bool) -> None:
        self.created = created
        self.specs = specs
        self.nok = nok


class Carrier:
    """A carrier moving through the line with the parts it holds."""

    __slots__ = ("kind", "parts")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.parts: list[Part] = []


class Buffer:
    """A conveyor of ``capacity`` slots; see :class:`~gymforge.envs.lineflow.spec.BufferSpec`.

    ``_slots[i]`` is the carrier holding slot ``i`` (moving into it or sitting in it) and
    ``_arrived[i]`` says whether it has arrived. A carrier that arrives in slot ``i`` claims slot
    ``i+1`` as soon as it is free, which frees slot ``i``; the last slot is freed by ``get``.
    """

    def __init__(self, env: simpy.Environment, spec: BufferSpec, rng: np.random.Generator) -> None:
        self.env = env
        self.spec = spec
        self.rng = rng
        self.capacity = spec.capacity
        self._slot_time = spec.slot_time
        self._put_scale = spec.put_std * spec.put_time
        self._slots: list[Carrier | None] = [None] * spec.capacity
        self._arrived = [False] * spec.capacity
        self._put_waiters: deque[tuple[simpy.Event, Carrier]] = deque()
        self._get_waiters: deque[simpy.Event] = deque()
        self.n_carriers = 0  # carriers put on and not yet taken off: the `fill` numerator

    @property
    def fill(self) -> float:
        return self.n_carriers / self.capacity

    def put(self, carrier: Carrier) -> Process:
        """Wait for the first slot, then spend the put time; use with ``yield from``."""
        if self._slots[0] is None:
            self._slots[0] = carrier
        else:
            claimed = self.env.event()
            self._put_waiters.append((claimed, carrier))
            yield claimed
        put_time = self.spec.put_time
        if self._put_scale > 0:
            put_time += self.rng.exponential(self._put_scale)
        yield self.env.timeout(put_time)
        self.n_carriers += 1
        self._arrive(0)

    def get(self) -> Process:
        """Wait for a carrier in the last slot, take it, spend the get time; returns the carrier."""
        if self._arrived[-1]:
            carrier = self._take()
        else:
            ready = self.env.event()
            self._get_waiters.append(ready)
            carrier = yield ready
        yield self.env.timeout(self.spec.get_time)
        return carrier

    def _arrive(self, i: int) -> None:
        self._arrived[i] = True
        self._advance(i)

    def _advance(self, i: int) -> None:
        """Move the carrier that has arrived in slot ``i`` on, if it can."""
        if i == self.capacity - 1:
            if self._get_waiters:
                self._get_waiters.popleft().succeed(self._take())
            return
        if self._slots[i + 1] is not None:
            return
        self._slots[i + 1] = self._slots[i]
        self._free(i)
        self.env.timeout(self._slot_time).callbacks.append(lambda _: self._arrive(i + 1))

    def _take(self) -> Carrier:
        carrier = self._slots[-1]
        assert carrier is not None
        self.n_carriers -= 1
        self._free(self.capacity - 1)
        return carrier

    def _free(self, i: int) -> None:
        self._slots[i] = None
        self._arrived[i] = False
        if i == 0:
            if self._put_waiters:
                claimed, carrier = self._put_waiters.popleft()
                self._slots[0] = carrier
                claimed.succeed()
        elif self._arrived[i - 1]:
            self._advance(i - 1)


class Station:
    """Common state of every station: mode, last processing time, noise sampling."""

    def __init__(self, sim: LineSimulation, spec: Any) -> None:
        self.sim = sim
        self.env = sim.env
        self.rng = sim.rng
        self.spec = spec
        self.name: str = spec.name
        self.mode = WAITING
        self.last_processing_time = float(getattr(spec, "processing_time", 0.0))

    def sample_time(self, time: float, rework_probability: float = 0.0) -> float:
        """``time + Exp(processing_std · processing_time)``, doubled on rework."""
        scale = self.spec.processing_std * self.spec.processing_time
        sampled = time + (self.rng.exponential(scale) if scale > 0 else 0.0)
        if rework_probability > 0 and self.rng.random() < rework_probability:
            sampled *= 2
        return sampled

    def run(self) -> Process:
        raise NotImplementedError


class Source(Station):
    """Waits, puts new parts on a carrier (new or from its input) and pushes it downstream."""

    spec: SourceSpec

    def __init__(self, sim: LineSimulation, spec: SourceSpec) -> None:
        super().__init__(sim, spec)
        self.waiting_time = spec.waiting_time
        self._kinds = list(spec.carrier_specs)
        self.carrier_kind = self._kinds[0]
        self._left_in_run = 0

    def _next_kind(self) -> str:
        if self._left_in_run == 0:
            if len(self._kinds) > 1:
                self.carrier_kind = self._kinds[int(self.rng.integers(len(self._kinds)))]
            low, high = self.spec.carrier_min_creation, self.spec.max_creation
            self._left_in_run = low if low == high else int(self.rng.integers(low, high + 1))
        self._left_in_run -= 1
        return self.carrier_kind

    def run(self) -> Process:
        spec = self.spec
        buffer_in = self.sim.input_of.get(self.name)
        buffer_out = self.sim.output_of[self.name]
        while True:
            self.mode = WAITING
            if self.waiting_time > 0:
                yield self.env.timeout(self.waiting_time)
            if buffer_in is None:
                carrier = Carrier(self.carrier_kind)
            else:
                carrier = yield from buffer_in.get()
            kind = self._next_kind()
            carrier.kind = kind
            self.mode = WORKING
            now = self.env.now
            nok = spec.nok_probability
            parts = [
                Part(now, part_spec, nok > 0 and self.rng.random() < nok)
                for part_spec in spec.carrier_specs[kind].values()
            ]
            yield self.env.timeout(self.sample_time(spec.processing_time))
            carrier.parts.extend(parts)
            self.mode = WAITING
            yield from buffer_out.put(carrier)


class ProcessStation(Station):
    """Takes a carrier, works on it (plus its parts' extra time, ×2 on rework), pushes it on."""

    spec: ProcessSpec

    def run(self) -> Process:
        buffer_in = self.sim.input_of[self.name]
        buffer_out = self.sim.output_of[self.name]
        while True:
            self.mode = WAITING
            carrier = yield from buffer_in.get()
            self.mode = WORKING
            extra = self.sim.extra_time(carrier.parts, self.name)
            time = self.sample_time(self.spec.processing_time + extra, self.spec.rework_probability)
            yield self.env.timeout(time)
            self.last_processing_time = time
            self.mode = WAITING
            yield from buffer_out.put(carrier)


class Assembly(Station):
    """Joins one valid component carrier from each component input onto the main carrier."""

    spec: AssemblySpec

    def __init__(self, sim: LineSimulation, spec: AssemblySpec) -> None:
        super().__init__(sim, spec)
        self.n_scrap = 0
        self.n_scrap_observed = 0

    def _is_valid(self, carrier: Carrier) -> bool:
        now = self.env.now
        for part in carrier.parts:
            if part.nok:
                return False
            condition = part.specs.get(self.name, {}).get("assembly_condition")
            if condition is not None and now - part.created >= condition:
                return False
        return True

    def run(self) -> Process:
        buffer_in = self.sim.input_of[self.name]
        buffer_out = self.sim.output_of[self.name]
        components = self.sim.components_of[self.name]
        buffer_return = self.sim.return_of.get(self.name)
        while True:
            self.mode = WAITING
            carrier = yield from buffer_in.get()
            joined: list[Carrier] = []
            for buffer_component in components:
                while True:
                    component = yield from buffer_component.get()
                    if self._is_valid(component):
                        joined.append(component)
                        break
                    self.mode = FAILING
                    yield self.env.timeout(self.spec.nok_part_error_time)
                    self.n_scrap += 1
                    component.parts.clear()
                    self.mode = WAITING
                    if buffer_return is not None:
                        yield from buffer_return.put(component)
            self.mode = WORKING
            parts = [part for component in joined for part in component.parts]
            time = self.sample_time(
                self.spec.processing_time + self.sim.extra_time(parts, self.name)
            )
            yield self.env.timeout(time)
            self.last_processing_time = time
            carrier.parts.extend(parts)
            self.mode = WAITING
            yield from buffer_out.put(carrier)
            for component in joined:
                component.parts.clear()
                if buffer_return is not None:
                    yield from buffer_return.put(component)


class Sink(Station):
    """Unloads carriers and counts finished parts; returns empty carriers through its output."""

    spec: SinkSpec

    def __init__(self, sim: LineSimulation, spec: SinkSpec) -> None:
        super().__init__(sim, spec)
        self.n_parts = 0

    def run(self) -> Process:
        buffer_in = self.sim.input_of[self.name]
        buffer_out = self.sim.output_of.get(self.name)
        while True:
            self.mode = WAITING
            carrier = yield from buffer_in.get()
            self.mode = WORKING
            yield self.env.timeout(self.sample_time(self.spec.processing_time))
            self.n_parts += 1
            carrier.parts.clear()
            if buffer_out is not None:
                self.mode = WAITING
                yield from buffer_out.put(carrier)


_STATION_CLASSES: dict[type, type[Station]] = {
    SourceSpec: Source,
    ProcessSpec: ProcessStation,
    AssemblySpec: Assembly,
    SinkSpec: Sink,
}


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
        self.input_of = {
            b.downstream: self.buffers[b.name] for b in spec.buffers if b.kind != "component"
        }
        self.output_of = {
            b.upstream: self.buffers[b.name] for b in spec.buffers if b.kind != "return"
        }
        self.return_of = {
            b.upstream: self.buffers[b.name] for b in spec.buffers if b.kind == "return"
        }
        self.components_of: dict[str, list[Buffer]] = {}
        for b in spec.buffers:
            if b.kind == "component":
                self.components_of.setdefault(b.downstream, []).append(self.buffers[b.name])
        self.stations = {s.name: _STATION_CLASSES[type(s)](self, s) for s in spec.stations}
        self.sources = [s for s in self.stations.values() if isinstance(s, Source)]
        self.actionable_sources = [s for s in self.sources if s.spec.actionable_waiting_time]
        self.assemblies = [s for s in self.stations.values() if isinstance(s, Assembly)]
        self.sinks = [s for s in self.stations.values() if isinstance(s, Sink)]
        for station in self.stations.values():
            self.env.process(station.run())
        self._clock = 0.0

    @staticmethod
    def extra_time(parts: list[Part], station: str) -> float:
        """Sum of the parts' ``extra_processing_time`` at ``station``."""
        return sum(p.specs.get(station, {}).get("extra_processing_time", 0.0) for p in parts)

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

    def set_waiting_times(self, waiting_times: list[float]) -> None:
        """Set the waiting time of each actionable source (in station order)."""
        for source, value in zip(self.actionable_sources, waiting_times, strict=True):
            source.waiting_time = value

    def run_until(self, time: float) -> bool:
        """Process every event scheduled before ``time``; returns False once no event is left."""
        env = self.env
        while env.peek() < time:
            env.step()
        self._clock = time
        return env.peek() != float("inf")

    def observe(self, out: np.ndarray, horizon: float) -> None:
        """Write the observation into ``out`` in the layout of :func:`features.observation_features`."""
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
            if isinstance(station, (ProcessStation, Assembly)):
                scale = PROCESSING_TIME_SCALE * spec.processing_time
                out[i] = min(station.last_processing_time / scale, 1.0) if scale > 0 else 0.0
                i += 1
            if isinstance(station, Assembly):
                out[i] = min(station.n_scrap - station.n_scrap_observed, 1)
                station.n_scrap_observed = station.n_scrap
                i += 1
        for buffer in self.buffers.values():
            out[i] = buffer.fill
            i += 1
        out[i] = min(self.now / horizon, 1.0)
