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

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

BufferKind = Literal["main", "component", "return"]
BUFFER_KINDS: tuple[str, ...] = ("main", "component", "return")
PART_SPEC_KEYS = ("extra_processing_time", "assembly_condition", "error_probability", "error_time")


def _check_non_negative(owner: str, **values: float) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            raise ValueError(f"{owner}.{name} must be a number >= 0, got {value!r}")
        if math.isinf(value):
            raise ValueError(f"{owner}.{name} must be finite, got {value!r}")


def _check_probability(owner: str, **values: float) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise ValueError(f"{owner}.{name} must be a probability in [0, 1], got {value!r}")


def _check_name(kind: str, name: object) -> None:
    if not isinstance(name, str) or not name:
        raise ValueError(f"{kind}.name must be a non-empty string, got {name!r}")


@dataclass(frozen=True)
class SourceSpec:
    """A source puts new parts on carriers and pushes the carriers downstream.

    Attributes:
        name: unique station name.
        processing_time: time to put the parts on a carrier.
        processing_std: noise scale as a fraction of ``processing_time``, in [0, 1].
        waiting_time: initial waiting time between two carriers.
        waiting_time_step: spacing of the waiting-time choices ``0, step, 2·step, … < 100``.
        actionable_waiting_time: whether the agent sets the waiting time (one discrete action).
        unlimited_carriers: create a new carrier each cycle instead of taking one from the input.
        carrier_capacity: parts a carrier can hold.
        carrier_specs: ``{carrier type: {part name: {station: {key: value}}}}`` with keys from
            ``extra_processing_time``, ``assembly_condition``, ``error_probability``, ``error_time``.
        carrier_min_creation: fewest identical carriers emitted in a row.
        carrier_max_creation: most identical carriers in a row (default ``2·carrier_min_creation``).
        nok_probability: probability that a created part is not OK (scrapped at assembly).
    """

    name: str
    processing_time: float = 2.0
    processing_std: float = 0.1
    waiting_time: float = 0.0
    waiting_time_step: float = 0.5
    actionable_waiting_time: bool = True
    unlimited_carriers: bool = False
    carrier_capacity: float = math.inf
    carrier_specs: Mapping[str, Mapping[str, Mapping[str, Mapping[str, float]]]] = field(
        default_factory=lambda: {"carrier": {"part": {}}}
    )
    carrier_min_creation: int = 1
    carrier_max_creation: int | None = None
    nok_probability: float = 0.0

    def __post_init__(self) -> None:
        _check_name("source", self.name)
        owner = f"source {self.name!r}"
        _check_non_negative(
            owner, processing_time=self.processing_time, waiting_time=self.waiting_time
        )
        _check_probability(
            owner, processing_std=self.processing_std, nok_probability=self.nok_probability
        )
        if (
            not isinstance(self.waiting_time_step, (int, float))
            or not 0 < self.waiting_time_step < 100
        ):
            raise ValueError(
                f"{owner}.waiting_time_step must be in (0, 100), got {self.waiting_time_step!r}"
            )
        if not self.waiting_time < 100:
            raise ValueError(f"{owner}.waiting_time must be in [0, 100), got {self.waiting_time!r}")
        if not self.carrier_capacity >= 1:
            raise ValueError(
                f"{owner}.carrier_capacity must be >= 1, got {self.carrier_capacity!r}"
            )
        if not isinstance(self.carrier_min_creation, int) or self.carrier_min_creation < 1:
            raise ValueError(
                f"{owner}.carrier_min_creation must be an int >= 1, got {self.carrier_min_creation!r}"
            )
        if (
            self.carrier_max_creation is not None
            and self.carrier_max_creation < self.carrier_min_creation
        ):
            raise ValueError(
                f"{owner}.carrier_max_creation must be >= carrier_min_creation "
                f"({self.carrier_min_creation}), got {self.carrier_max_creation!r}"
            )
        if not self.carrier_specs:
            raise ValueError(f"{owner}.carrier_specs must name at least one carrier type")
        for carrier, parts in self.carrier_specs.items():
            if len(parts) > self.carrier_capacity:
                raise ValueError(
                    f"{owner}.carrier_specs[{carrier!r}] has {len(parts)} parts, more than "
                    f"carrier_capacity={self.carrier_capacity}"
                )
            for part, stations in parts.items():
                for station, values in stations.items():
                    for key, value in values.items():
                        where = f"{owner}.carrier_specs[{carrier!r}][{part!r}][{station!r}]"
                        if key not in PART_SPEC_KEYS:
                            raise ValueError(
                                f"{where} has unknown key {key!r}; allowed: {PART_SPEC_KEYS}"
                            )
                        if key == "error_probability":
                            _check_probability(where, **{key: value})
                        else:
                            _check_non_negative(where, **{key: value})

    @property
    def max_creation(self) -> int:
        """Most identical carriers emitted in a row."""
        return self.carrier_max_creation or 2 * self.carrier_min_creation

    @property
    def waiting_time_choices(self) -> int:
        """Number of discrete waiting times ``0, step, …`` below 100."""
        return math.ceil(100 / self.waiting_time_step)


@dataclass(frozen=True)
class ProcessSpec:
    """A process takes a carrier, works on it and pushes it downstream.

    Attributes:
        name: unique station name.
        processing_time: nominal processing time.
        processing_std: noise scale as a fraction of ``processing_time``, in [0, 1].
        rework_probability: probability that a carrier needs rework (twice the time).
    """

    name: str
    processing_time: float = 5.0
    processing_std: float = 0.1
    rework_probability: float = 0.0

    def __post_init__(self) -> None:
        _check_name("process", self.name)
        owner = f"process {self.name!r}"
        _check_non_negative(owner, processing_time=self.processing_time)
        _check_probability(
            owner, processing_std=self.processing_std, rework_probability=self.rework_probability
        )


@dataclass(frozen=True)
class AssemblySpec:
    """An assembly joins the parts of one carrier from each component input onto the main carrier.

    A component carrier is scrapped when one of its parts is older than its
    ``assembly_condition`` for this station, or is not OK; scrapping takes ``nok_part_error_time``
    and the assembly waits for the next component carrier.

    Attributes:
        name: unique station name.
        processing_time: nominal assembly time.
        processing_std: noise scale as a fraction of ``processing_time``, in [0, 1].
        nok_part_error_time: time lost on each scrapped component carrier.
    """

    name: str
    processing_time: float = 5.0
    processing_std: float = 0.1
    nok_part_error_time: float = 2.0

    def __post_init__(self) -> None:
        _check_name("assembly", self.name)
        owner = f"assembly {self.name!r}"
        _check_non_negative(
            owner,
            processing_time=self.processing_time,
            nok_part_error_time=self.nok_part_error_time,
        )
        _check_probability(owner, processing_std=self.processing_std)


@dataclass(frozen=True)
class SinkSpec:
    """A sink removes finished parts and counts them; an output buffer returns empty carriers.

    Attributes:
        name: unique station name.
        processing_time: time to unload a carrier.
        processing_std: noise scale as a fraction of ``processing_time``, in [0, 1].
    """

    name: str
    processing_time: float = 2.0
    processing_std: float = 0.1

    def __post_init__(self) -> None:
        _check_name("sink", self.name)
        owner = f"sink {self.name!r}"
        _check_non_negative(owner, processing_time=self.processing_time)
        _check_probability(owner, processing_std=self.processing_std)


StationSpec = SourceSpec | ProcessSpec | AssemblySpec | SinkSpec


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
        capacity: number of slots (>= 1).
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
            or self.capacity < 1
        ):
            raise ValueError(f"{owner}.capacity must be an int >= 1, got {self.capacity!r}")
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
    """A validated production line: stations, the buffers wiring them, and reward parameters.

    Attributes:
        name: a label for the line (shown in ``info`` and docs).
        stations: every station, in a fixed order that fixes the observation order too.
        buffers: every buffer, in a fixed order.
        scrap_factor: default weight of a scrapped part in the ``parts`` reward.
    """

    name: str
    stations: tuple[StationSpec, ...]
    buffers: tuple[BufferSpec, ...]
    scrap_factor: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "stations", tuple(self.stations))
        object.__setattr__(self, "buffers", tuple(self.buffers))
        _check_non_negative(f"line {self.name!r}", scrap_factor=self.scrap_factor)
        names = [s.name for s in self.stations] + [b.name for b in self.buffers]
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
        if isinstance(down, SourceSpec) and down.unlimited_carriers:
            raise ValueError(
                f"buffer {buffer.name!r}.downstream is source {down.name!r} with "
                "unlimited_carriers=True, which takes no input; set unlimited_carriers=False"
            )

    def _check_station_wiring(self, station: StationSpec) -> None:
        owner = f"{type(station).__name__.removesuffix('Spec').lower()} {station.name!r}"
        n_in = len(self.inputs_of(station.name))
        n_out = len(self.outputs_of(station.name))
        n_comp = len(self.components_of(station.name))
        n_ret = len(self.returns_of(station.name))
        if n_in > 1 or n_out > 1 or n_ret > 1:
            raise ValueError(
                f"{owner} may have at most one input, one output and one return buffer"
            )
        needs_in = not (isinstance(station, SourceSpec) and station.unlimited_carriers)
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
        """Sources whose waiting time is an action, in station order (the action order)."""
        return [s for s in self.sources if s.actionable_waiting_time]

    def station(self, name: str) -> StationSpec:
        for s in self.stations:
            if s.name == name:
                return s
        raise KeyError(f"no station {name!r}; stations: {[s.name for s in self.stations]}")

    def replace(self, **changes: Any) -> LineSpec:
        """A copy with some fields changed (validated again)."""
        fields = {
            "name": self.name,
            "stations": self.stations,
            "buffers": self.buffers,
            "scrap_factor": self.scrap_factor,
        }
        fields.update(changes)
        return LineSpec(**fields)
