"""``LineSpec``: the one declarative description of a production line.

Both LineFlow engines consume it: the SimPy engine interprets it exactly, the torch engine compiles
it into tensors. A spec is validated on construction, so a bad line fails with a ``ValueError``
that names the field and the allowed values before anything runs.

Stations are sources, processes, assemblies and sinks; buffers are the conveyors between them.
Each buffer names its ``upstream`` station (which puts carriers on it) and its ``downstream``
station (which takes them off), and a ``kind``:

| kind | upstream end | downstream end |
|---|---|---|
| ``"main"`` | the upstream station's output | the downstream station's main input |
| ``"component"`` | the upstream station's output | one component input of an assembly |
| ``"return"`` | an assembly's return of emptied component carriers | the downstream station's main input |

Times are in simulation time units. Noise follows the reference: a processing time ``T`` is
sampled as ``T + Exp(scale = processing_std · T)``, a put time ``p`` as ``p + Exp(scale = put_std · p)``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from gymforge.envs.lineflow.station_specs import (
    PART_SPEC_KEYS,
    AssemblySpec,
    MagazineSpec,
    ProcessSpec,
    SequentialProcessSpec,
    SinkSpec,
    Slowdown,
    SourceSpec,
    SwitchSpec,
    WorkerPoolSpec,
    _check_non_negative,
    _check_probability,
)

__all__ = [
    "BUFFER_KINDS",
    "PART_SPEC_KEYS",
    "POOLED_STATIONS",
    "AssemblySpec",
    "BufferKind",
    "BufferSpec",
    "LineSpec",
    "MagazineSpec",
    "ProcessSpec",
    "SequentialProcessSpec",
    "SinkSpec",
    "Slowdown",
    "SourceSpec",
    "StationSpec",
    "SwitchSpec",
    "WorkerPoolSpec",
]

BufferKind = Literal["main", "component", "return"]
#: the most slots a buffer may have (see :class:`BufferSpec`).
MAX_BUFFER_CAPACITY = 1000
BUFFER_KINDS: tuple[str, ...] = ("main", "component", "return")


StationSpec = (
    SourceSpec
    | ProcessSpec
    | SequentialProcessSpec
    | AssemblySpec
    | SinkSpec
    | SwitchSpec
    | MagazineSpec
)
POOLED_STATIONS = (ProcessSpec, SequentialProcessSpec, AssemblySpec)


@dataclass(frozen=True)
class BufferSpec:
    """A conveyor of ``capacity`` slots from ``upstream`` to ``downstream``.

    A carrier needs ``put_time + Exp(put_std · put_time)`` to get on, ``transition_time /
    (capacity − 1)`` to move one slot (it waits while the next slot is taken) and ``get_time`` to
    get off. ``fill`` is the number of carriers on the conveyor divided by ``capacity``.

    Attributes:
        upstream: station that puts carriers on the buffer.
        downstream: station that takes them off.
        kind: ``"main"``, ``"component"`` or ``"return"`` (see the module docstring).
        capacity: number of slots, 1 to :data:`MAX_BUFFER_CAPACITY` (the benchmark lines use at
            most 8; the torch engine holds every slot for every instance, so the bound keeps a
            typo such as ``10**9`` from allocating until the machine runs out of memory).
        transition_time: time to traverse all slots.
        put_time: time to put a carrier on.
        get_time: time to take a carrier off.
        put_std: noise scale of the put time as a fraction of ``put_time``, in [0, 1].
        name: defaults to ``Buffer_<upstream>_to_<downstream>``.
    """

    upstream: str
    downstream: str
    kind: BufferKind = "main"
    capacity: int = 2
    transition_time: float = 10.0
    put_time: float = 1.0
    get_time: float = 1.0
    put_std: float = 0.1
    name: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", f"Buffer_{self.upstream}_to_{self.downstream}")
        owner = f"buffer {self.name!r}"
        if self.kind not in BUFFER_KINDS:
            raise ValueError(f"{owner}.kind must be one of {BUFFER_KINDS}, got {self.kind!r}")
        if (
            isinstance(self.capacity, bool)
            or not isinstance(self.capacity, int)
            or not 1 <= self.capacity <= MAX_BUFFER_CAPACITY
        ):
            raise ValueError(
                f"{owner}.capacity must be an int in [1, {MAX_BUFFER_CAPACITY}], got "
                f"{self.capacity!r} (every slot is state of every batched instance)"
            )
        _check_non_negative(
            owner,
            transition_time=self.transition_time,
            put_time=self.put_time,
            get_time=self.get_time,
        )
        _check_probability(owner, put_std=self.put_std)

    @property
    def slot_time(self) -> float:
        """Time to move one slot."""
        return self.transition_time / (self.capacity - 1) if self.capacity > 1 else 0.0


@dataclass(frozen=True)
class LineSpec:
    """A validated production line: stations, the buffers wiring them, worker pools, reward weights.

    Attributes:
        name: a label for the line (shown in ``info`` and docs).
        stations: every station, in a fixed order that fixes the observation and action order.
        buffers: every buffer, in a fixed order.
        pools: worker pools; stations join one through their ``worker_pool`` field.
        scrap_factor: default weight of a scrapped part in the ``parts`` reward.
    """

    name: str
    stations: tuple[StationSpec, ...]
    buffers: tuple[BufferSpec, ...]
    pools: tuple[WorkerPoolSpec, ...] = ()
    scrap_factor: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "stations", tuple(self.stations))
        object.__setattr__(self, "buffers", tuple(self.buffers))
        object.__setattr__(self, "pools", tuple(self.pools))
        _check_non_negative(f"line {self.name!r}", scrap_factor=self.scrap_factor)
        names = (
            [s.name for s in self.stations]
            + [b.name for b in self.buffers]
            + [p.name for p in self.pools]
        )
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"line {self.name!r}: names must be unique, repeated: {duplicates}")
        if not any(isinstance(s, SinkSpec) for s in self.stations):
            raise ValueError(f"line {self.name!r}.stations must contain at least one sink")
        by_name = {s.name: s for s in self.stations}
        for buffer in self.buffers:
            self._check_buffer_ends(buffer, by_name)
        for station in self.stations:
            self._check_station_wiring(station)
        self._check_pools()
        self._check_reachable()
        for source in self.sources:
            for carrier, parts in source.carrier_specs.items():
                for part, stations in parts.items():
                    unknown = sorted(set(stations) - set(by_name))
                    if unknown:
                        raise ValueError(
                            f"source {source.name!r}.carrier_specs[{carrier!r}][{part!r}] names "
                            f"unknown stations {unknown}; allowed: {sorted(by_name)}"
                        )

    def _check_buffer_ends(self, buffer: BufferSpec, by_name: Mapping[str, StationSpec]) -> None:
        for end in ("upstream", "downstream"):
            station = getattr(buffer, end)
            if station not in by_name:
                raise ValueError(
                    f"buffer {buffer.name!r}.{end} must name a station of the line, got "
                    f"{station!r}; allowed: {sorted(by_name)}"
                )
        up, down = by_name[buffer.upstream], by_name[buffer.downstream]
        if buffer.kind == "component" and not isinstance(down, AssemblySpec):
            raise ValueError(
                f"buffer {buffer.name!r}.downstream must be an assembly for kind='component', "
                f"got {type(down).__name__} {down.name!r}"
            )
        if buffer.kind == "return" and not isinstance(up, AssemblySpec):
            raise ValueError(
                f"buffer {buffer.name!r}.upstream must be an assembly for kind='return', "
                f"got {type(up).__name__} {up.name!r}"
            )
        if isinstance(down, (SourceSpec, MagazineSpec)) and down.unlimited_carriers:
            raise ValueError(
                f"buffer {buffer.name!r}.downstream is {down.name!r} with unlimited_carriers=True, "
                "which takes no input; set unlimited_carriers=False"
            )

    def _check_station_wiring(self, station: StationSpec) -> None:
        owner = f"{_kind(station)} {station.name!r}"
        n_in = len(self.inputs_of(station.name))
        n_out = len(self.outputs_of(station.name))
        n_comp = len(self.components_of(station.name))
        n_ret = len(self.returns_of(station.name))
        if n_comp and not isinstance(station, AssemblySpec):
            raise ValueError(f"{owner} cannot have component inputs; only assemblies do")
        if not isinstance(station, SwitchSpec) and (n_in > 1 or n_out > 1 or n_ret > 1):
            raise ValueError(
                f"{owner} may have at most one input, one output and one return buffer "
                f"(got {n_in}, {n_out}, {n_ret}); route several through a switch"
            )
        takes_no_input = (
            isinstance(station, (SourceSpec, MagazineSpec)) and station.unlimited_carriers
        )
        needs_in = not takes_no_input and not isinstance(station, MagazineSpec)
        needs_out = not isinstance(station, SinkSpec)
        if needs_in and n_in == 0:
            raise ValueError(
                f"{owner} needs an input buffer (a buffer with downstream={station.name!r})"
            )
        if needs_out and n_out == 0:
            raise ValueError(
                f"{owner} needs an output buffer (a buffer with upstream={station.name!r})"
            )
        if isinstance(station, AssemblySpec) and n_comp == 0:
            raise ValueError(f"{owner} needs at least one buffer of kind='component'")

    def _check_pools(self) -> None:
        pools = {p.name for p in self.pools}
        for station in self.stations:
            pool = getattr(station, "worker_pool", None)
            if pool is not None and pool not in pools:
                raise ValueError(
                    f"{_kind(station)} {station.name!r}.worker_pool must name a pool of the line, "
                    f"got {pool!r}; allowed: {sorted(pools)}"
                )
        for pool in self.pools:
            if not self.pool_stations(pool.name):
                raise ValueError(
                    f"worker pool {pool.name!r} serves no station; set worker_pool= on a station"
                )
            for skills in pool.skill_levels.values():
                unknown = sorted(set(skills) - set(self.pool_stations(pool.name)))
                if unknown:
                    raise ValueError(
                        f"worker pool {pool.name!r}.skill_levels names stations outside the pool: {unknown}"
                    )

    def _check_reachable(self) -> None:
        """Every station must be reachable from a source or magazine along the buffers."""
        reached = {s.name for s in self.stations if isinstance(s, (SourceSpec, MagazineSpec))}
        frontier = list(reached)
        while frontier:
            name = frontier.pop()
            for buffer in self.buffers:
                if buffer.upstream == name and buffer.downstream not in reached:
                    reached.add(buffer.downstream)
                    frontier.append(buffer.downstream)
        unreachable = [s.name for s in self.stations if s.name not in reached]
        if unreachable:
            raise ValueError(
                f"line {self.name!r}: stations {unreachable} are unreachable from any source or magazine"
            )

    # --- wiring queries -------------------------------------------------------------------
    def inputs_of(self, station: str) -> list[BufferSpec]:
        """Main input buffers (kind ``main`` or ``return``) ending at ``station``."""
        return [b for b in self.buffers if b.downstream == station and b.kind != "component"]

    def outputs_of(self, station: str) -> list[BufferSpec]:
        """Output buffers (kind ``main`` or ``component``) starting at ``station``."""
        return [b for b in self.buffers if b.upstream == station and b.kind != "return"]

    def components_of(self, station: str) -> list[BufferSpec]:
        """Component buffers ending at assembly ``station``."""
        return [b for b in self.buffers if b.downstream == station and b.kind == "component"]

    def returns_of(self, station: str) -> list[BufferSpec]:
        """Return buffers starting at assembly ``station``."""
        return [b for b in self.buffers if b.upstream == station and b.kind == "return"]

    @property
    def sources(self) -> list[SourceSpec]:
        return [s for s in self.stations if isinstance(s, SourceSpec)]

    @property
    def actionable_sources(self) -> list[SourceSpec]:
        """Sources whose waiting time is an action, in station order."""
        return [s for s in self.sources if s.actionable_waiting_time]

    @property
    def sinks(self) -> list[SinkSpec]:
        return [s for s in self.stations if isinstance(s, SinkSpec)]

    def station(self, name: str) -> StationSpec:
        for s in self.stations:
            if s.name == name:
                return s
        raise KeyError(f"no station {name!r}; stations: {[s.name for s in self.stations]}")

    def pool_stations(self, pool: str) -> list[str]:
        """Names of the stations served by ``pool``, in station order (a worker's action order)."""
        return [s.name for s in self.stations if getattr(s, "worker_pool", None) == pool]

    def replace(self, **changes: Any) -> LineSpec:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)


def _kind(station: StationSpec) -> str:
    """``"sequential process"`` for ``SequentialProcessSpec`` and so on."""
    words = re.findall(r"[A-Z][a-z]*", type(station).__name__.removesuffix("Spec"))
    return " ".join(w.lower() for w in words)
