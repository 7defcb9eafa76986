"""The stations of the SimPy LineFlow engine, one SimPy process each.

Semantics follow the reference (lineflow-rl 0.5.0); see each spec class in ``spec.py`` for the
parameters. Every station has a ``mode`` (working, waiting, failing), can be switched off (it
finishes its current cycle, then waits until switched on) and draws randomness only from the
line's generator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import simpy

from gymforge.envs.lineflow.sim_buffer import Buffer, Carrier, Part, Process
from gymforge.envs.lineflow.sim_workers import Worker, WorkerPool
from gymforge.envs.lineflow.spec import (
    AssemblySpec,
    MagazineSpec,
    ProcessSpec,
    SequentialProcessSpec,
    SinkSpec,
    SourceSpec,
    SwitchSpec,
)

if TYPE_CHECKING:
    from gymforge.envs.lineflow.simpy_engine import LineSimulation

WORKING, WAITING, FAILING = 0, 1, 2
MODES = ("working", "waiting", "failing")
JUMP_OVERHEAD = 3.1  # the reference's E: mean get/put overhead of an assembly cycle


class Station:
    """Common state of every station: mode, on/off, last processing time, workers, noise."""

    def __init__(self, sim: LineSimulation, spec: Any) -> None:
        self.sim = sim
        self.env = sim.env
        self.rng = sim.rng
        self.spec = spec
        self.name: str = spec.name
        self.mode = WAITING
        self.is_on = True
        self._switched_on: simpy.Event | None = None
        self.last_processing_time = float(getattr(spec, "processing_time", 0.0))
        pool_name = getattr(spec, "worker_pool", None)
        self.pool: WorkerPool | None = sim.pools[pool_name] if pool_name else None
        self.pool_index = self.pool.stations.index(self.name) if self.pool else -1

    # --- on/off -------------------------------------------------------------------------
    def switch(self, on: bool) -> None:
        """Switch the station on or off; an off station stops before its next cycle."""
        self.is_on = on
        if on and self._switched_on is not None:
            self._switched_on.succeed()
            self._switched_on = None

    def wait_until_on(self) -> Process:
        if not self.is_on:
            self._switched_on = self.env.event()
            yield self._switched_on

    # --- workers ------------------------------------------------------------------------
    def take_workers(self) -> tuple[list[Worker], float]:
        """Hold this station's free workers; returns them and the processing-time factor."""
        if self.pool is None:
            return [], 1.0
        return self.pool.take(self.pool_index)

    def release_workers(self, workers: list[Worker]) -> None:
        if self.pool is not None:
            self.pool.release(workers)

    @property
    def n_workers(self) -> int:
        """Workers standing at this station."""
        return self.pool.present(self.pool_index) if self.pool else 0

    # --- timing -------------------------------------------------------------------------
    def noise_scale(self) -> float:
        return self.spec.processing_std * self.spec.processing_time

    def sample_time(
        self, time: float, factor: float = 1.0, rework_probability: float = 0.0
    ) -> float:
        """``time·factor + Exp(noise scale)``, doubled on rework."""
        scale = self.noise_scale()
        sampled = time * factor + (self.rng.exponential(scale) if scale > 0 else 0.0)
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
            yield from self.wait_until_on()
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
            yield from self.wait_until_on()
            self.mode = WAITING
            carrier = yield from buffer_in.get()
            workers, factor = self.take_workers()
            self.mode = WORKING
            extra = extra_time(carrier.parts, self.name)
            time = self.sample_time(
                self.spec.processing_time + extra, factor, self.spec.rework_probability
            )
            yield self.env.timeout(time)
            self.last_processing_time = time
            self.release_workers(workers)
            self.mode = WAITING
            yield from buffer_out.put(carrier)


class SequentialProcessStation(Station):
    """Processes each part of a carrier in turn, with per-part errors (absolute noise scales)."""

    spec: SequentialProcessSpec

    def noise_scale(self) -> float:
        return self.spec.processing_std

    def run(self) -> Process:
        spec = self.spec
        buffer_in = self.sim.input_of[self.name]
        buffer_out = self.sim.output_of[self.name]
        while True:
            yield from self.wait_until_on()
            self.mode = WAITING
            carrier = yield from buffer_in.get()
            yield self.env.timeout(spec.handling_time)
            total = 0.0
            for part in [p for p in carrier.parts if self.name in p.specs]:
                part_spec = part.specs[self.name]
                error_probability = part_spec.get("error_probability", 0.0)
                if error_probability > 0 and self.rng.random() < error_probability:
                    self.mode = FAILING
                    error_time = part_spec.get("error_time", 0.0)
                    if spec.error_std > 0:
                        error_time += self.rng.exponential(spec.error_std)
                    yield self.env.timeout(error_time)
                    total += error_time
                    self.mode = WAITING
                workers, factor = self.take_workers()
                self.mode = WORKING
                time = self.sample_time(
                    spec.processing_time + part_spec.get("extra_processing_time", 0.0), factor
                )
                yield self.env.timeout(time)
                total += time
                self.release_workers(workers)
                self.mode = WAITING
            self.last_processing_time = total
            yield from buffer_out.put(carrier)


class Assembly(Station):
    """Joins one valid component carrier from each component input onto the main carrier."""

    spec: AssemblySpec

    def __init__(self, sim: LineSimulation, spec: AssemblySpec) -> None:
        super().__init__(sim, spec)
        self.n_scrap = 0
        self.n_scrap_observed = 0
        self.jump_start = self.jump_end = 0.0
        self.jump_factor = 1.0
        if spec.slowdown is not None:
            self._draw_slowdown()

    def _draw_slowdown(self) -> None:
        slowdown = self.spec.slowdown
        assert slowdown is not None
        t_jump = float(self.rng.uniform(0.8 * slowdown.t_jump_max, slowdown.t_jump_max))
        time, noise = self.spec.processing_time, self.noise_scale()
        horizon = 2 * slowdown.t_jump_max
        self.jump_factor = (
            1
            / time
            * (
                t_jump * (time + noise + JUMP_OVERHEAD) / ((slowdown.ratio - 1) * horizon + t_jump)
                - noise
                - JUMP_OVERHEAD
            )
        )
        self.jump_start = float(self.rng.uniform(0.25, 0.75)) * slowdown.t_jump_max
        self.jump_end = self.jump_start + t_jump

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
            yield from self.wait_until_on()
            self.mode = WAITING
            carrier = yield from buffer_in.get()
            workers, factor = self.take_workers()
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
            if self.jump_start <= self.env.now < self.jump_end:
                factor *= self.jump_factor
            time = self.sample_time(
                self.spec.processing_time + extra_time(parts, self.name), factor
            )
            yield self.env.timeout(time)
            self.last_processing_time = time
            self.release_workers(workers)
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
            yield from self.wait_until_on()
            self.mode = WAITING
            carrier = yield from buffer_in.get()
            self.mode = WORKING
            yield self.env.timeout(self.sample_time(self.spec.processing_time))
            self.n_parts += 1
            carrier.parts.clear()
            if buffer_out is not None:
                self.mode = WAITING
                yield from buffer_out.put(carrier)


class Switch(Station):
    """Routes carriers from the selected input to the selected output, polling while blocked."""

    spec: SwitchSpec

    def __init__(self, sim: LineSimulation, spec: SwitchSpec) -> None:
        super().__init__(sim, spec)
        self.inputs: list[Buffer] = sim.switch_inputs[self.name]
        self.outputs: list[Buffer] = sim.switch_outputs[self.name]
        self.index_in = 0
        self.index_out = 0

    def noise_scale(self) -> float:
        return 0.0

    def run(self) -> Process:
        poll = self.spec.poll_interval
        while True:
            yield from self.wait_until_on()
            self.mode = WAITING
            while self.inputs[self.index_in].n_carriers == 0:
                yield self.env.timeout(poll)
            self.mode = WORKING
            carrier = yield from self.inputs[self.index_in].get()
            if self.spec.processing_time > 0:
                yield self.env.timeout(self.spec.processing_time)
            self.mode = WAITING
            while self.outputs[self.index_out].is_full:
                yield self.env.timeout(poll)
            yield from self.outputs[self.index_out].put(carrier)
            if self.spec.alternate:
                self.index_in = (self.index_in + 1) % len(self.inputs)
                self.index_out = (self.index_out + 1) % len(self.outputs)


class Magazine(Station):
    """Stores empty carriers and feeds them to its output (see ``MagazineSpec``)."""

    spec: MagazineSpec

    def __init__(self, sim: LineSimulation, spec: MagazineSpec) -> None:
        super().__init__(sim, spec)
        self.stored: list[Carrier] = [Carrier("carrier") for _ in range(spec.carriers_in_magazine)]
        self.target: int | None = spec.carriers_in_magazine if spec.actionable else None

    @property
    def n_stored(self) -> int:
        return len(self.stored)

    def _match_target(self) -> None:
        if self.target is None:
            return
        while len(self.stored) < self.target:
            self.stored.append(Carrier("carrier"))
        del self.stored[self.target :]

    def _collect(self, buffer_in: Buffer) -> Process:
        while True:
            carrier = yield from buffer_in.get()
            self.stored.append(carrier)

    def run(self) -> Process:
        spec = self.spec
        buffer_out = self.sim.output_of[self.name]
        buffer_in = self.sim.input_of.get(self.name)
        if buffer_in is not None:
            self.env.process(self._collect(buffer_in))
        while True:
            yield from self.wait_until_on()
            self.mode = WORKING
            self._match_target()
            yield self.env.timeout(spec.carrier_getting_time)
            if spec.unlimited_carriers:
                carrier = Carrier("carrier")
            else:
                self._match_target()
                while not self.stored:
                    self.mode = WAITING
                    yield self.env.timeout(1.0)
                    self._match_target()
                self.mode = WORKING
                carrier = self.stored.pop(0)
            self.mode = WAITING
            yield from buffer_out.put(carrier)


def extra_time(parts: list[Part], station: str) -> float:
    """Sum of the parts' ``extra_processing_time`` at ``station``."""
    return sum(p.specs.get(station, {}).get("extra_processing_time", 0.0) for p in parts)


STATION_CLASSES: dict[type, type[Station]] = {
    SourceSpec: Source,
    ProcessSpec: ProcessStation,
    SequentialProcessSpec: SequentialProcessStation,
    AssemblySpec: Assembly,
    SinkSpec: Sink,
    SwitchSpec: Switch,
    MagazineSpec: Magazine,
}
