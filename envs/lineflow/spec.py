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
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

BufferKind = Literal["main", "component", "return"]
#: the most slots a buffer may have (see :class:`BufferSpec`).
MAX_BUFFER_CAPACITY = 1000
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
        worker_pool: name of the worker pool serving this station, if any.
    """

    name: str
    processing_time: float = 5.0
    processing_std: float = 0.1
    rework_probability: float = 0.0
    worker_pool: str | None = None

    def __post_init__(self) -> None:
        _check_name("process", self.name)
        owner = f"process {self.name!r}"
        _check_non_negative(owner, processing_time=self.processing_time)
        _check_probability(
            owner, processing_std=self.processing_std, rework_probability=self.rework_probability
        )


@dataclass(frozen=True)
class Slowdown:
    """A seeded temporary slowdown of an assembly (the reference's WaitingTimeJump).

    At the start of an episode the line's generator draws a duration
    ``T_jump ~ U(0.8, 1)·t_jump_max`` and a start ``U(0.25, 0.75)·t_jump_max``; during
    ``[start, start + T_jump)`` the nominal processing time is multiplied by
    ``1/T·(T_jump·(T + S + E) / ((R − 1)·2·t_jump_max + T_jump) − S − E)`` with ``T`` the processing
    time, ``S = processing_std·T`` and ``E = 3.1``, so that the expected output is ``R`` times the
    undisturbed one over ``2·t_jump_max`` time units.

    Attributes:
        t_jump_max: longest slowdown.
        ratio: ``R``, the expected output relative to the undisturbed line, in (0, 1].
    """

    t_jump_max: float = 2000.0
    ratio: float = 0.75

    def __post_init__(self) -> None:
        if not isinstance(self.t_jump_max, (int, float)) or not self.t_jump_max > 0:
            raise ValueError(f"slowdown.t_jump_max must be > 0, got {self.t_jump_max!r}")
        if not isinstance(self.ratio, (int, float)) or not 0 < self.ratio <= 1:
            raise ValueError(f"slowdown.ratio must be in (0, 1], got {self.ratio!r}")


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
        worker_pool: name of the worker pool serving this station, if any.
        slowdown: a temporary slowdown of the processing time (the WaitingTimeJump line).
    """

    name: str
    processing_time: float = 5.0
    processing_std: float = 0.1
    nok_part_error_time: float = 2.0
    worker_pool: str | None = None
    slowdown: Slowdown | None = None

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


@dataclass(frozen=True)
class SequentialProcessSpec:
    """A process that works on each part of a carrier in turn, with per-part errors.

    After ``handling_time`` it processes every part whose carrier specs name this station:
    with the part's ``error_probability`` it first spends ``error_time`` (+ noise) on an error,
    then ``processing_time + extra_processing_time`` (+ noise). Unlike the other stations the
    noise scales are absolute times, as in the reference's ``SequentialProcess``.

    Attributes:
        name: unique station name.
        processing_time: base time per part.
        processing_std: absolute noise scale of a part's processing time.
        error_std: absolute noise scale of an error's time.
        handling_time: time to take a carrier in before its parts are processed.
        worker_pool: name of the worker pool serving this station, if any.
    """

    name: str
    processing_time: float = 0.0
    processing_std: float = 0.1
    error_std: float = 0.0
    handling_time: float = 2.0
    worker_pool: str | None = None

    def __post_init__(self) -> None:
        _check_name("sequential process", self.name)
        owner = f"sequential process {self.name!r}"
        _check_non_negative(
            owner,
            processing_time=self.processing_time,
            processing_std=self.processing_std,
            error_std=self.error_std,
            handling_time=self.handling_time,
        )


@dataclass(frozen=True)
class SwitchSpec:
    """A switch routes carriers from one of its inputs to one of its outputs.

    With ``alternate=True`` it cycles through inputs and outputs round-robin; otherwise the
    input and output indices are actions (each only when there is more than one). It waits while
    the selected input is empty or the selected output is full, looking again every
    ``poll_interval`` time units, as the reference does.

    Attributes:
        name: unique station name.
        processing_time: time to pass a carrier through (no noise).
        alternate: route round-robin instead of by action.
        poll_interval: time between two looks at a blocked input or output.
    """

    name: str
    processing_time: float = 5.0
    alternate: bool = False
    poll_interval: float = 1.0

    def __post_init__(self) -> None:
        _check_name("switch", self.name)
        owner = f"switch {self.name!r}"
        _check_non_negative(owner, processing_time=self.processing_time)
        if not isinstance(self.poll_interval, (int, float)) or not self.poll_interval > 0:
            raise ValueError(f"{owner}.poll_interval must be > 0, got {self.poll_interval!r}")


@dataclass(frozen=True)
class MagazineSpec:
    """A magazine stores empty carriers and feeds them to the line, closing a carrier loop.

    With ``unlimited_carriers`` it makes a new carrier every ``carrier_getting_time``. Otherwise
    it starts with ``carriers_in_magazine`` carriers, stores the carriers returned through its
    input, and waits while it is empty. With ``actionable_magazine`` the number of carriers it
    holds is an action in ``0 … max_carriers`` (the magazine creates or removes carriers to
    match when it next fetches one), so closed-loop work-in-progress becomes a control.

    Attributes:
        name: unique station name.
        unlimited_carriers: create carriers instead of storing them.
        carriers_in_magazine: carriers stored at the start.
        actionable_magazine: the stored count is an action (limited magazines only).
        max_carriers: largest stored count the action can set.
        carrier_getting_time: time to take a carrier out.
        carrier_capacity: parts a carrier can hold.
    """

    name: str
    unlimited_carriers: bool = True
    carriers_in_magazine: int = 0
    actionable_magazine: bool = False
    max_carriers: int = 30
    carrier_getting_time: float = 2.0
    carrier_capacity: float = math.inf

    def __post_init__(self) -> None:
        _check_name("magazine", self.name)
        owner = f"magazine {self.name!r}"
        _check_non_negative(owner, carrier_getting_time=self.carrier_getting_time)
        for field_name in ("carriers_in_magazine", "max_carriers"):
            value = getattr(self, field_name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{owner}.{field_name} must be an int >= 0, got {value!r}")
        if self.unlimited_carriers and self.carriers_in_magazine > 0:
            raise ValueError(f"{owner}.carriers_in_magazine must be 0 with unlimited_carriers=True")
        if (
            not self.unlimited_carriers
            and self.carriers_in_magazine == 0
            and not self.actionable_magazine
        ):
            raise ValueError(
                f"{owner}.carriers_in_magazine must be >= 1 with unlimited_carriers=False"
            )
        if self.actionable_magazine and self.unlimited_carriers:
            raise ValueError(f"{owner}.actionable_magazine needs unlimited_carriers=False")
        if self.carriers_in_magazine > self.max_carriers:
            raise ValueError(
                f"{owner}.max_carriers must be >= carriers_in_magazine ({self.carriers_in_magazine}), "
                f"got {self.max_carriers}"
            )

    @property
    def actionable(self) -> bool:
        return self.actionable_magazine and not self.unlimited_carriers


@dataclass(frozen=True)
class WorkerPoolSpec:
    """Workers shared by the stations that name this pool; each worker's station is an action.

    A station's processing time is multiplied by ``exp(−0.3 · Σ skill)`` over the workers at
    it (skill 1 unless ``skill_levels`` says otherwise). Workers start round-robin over the
    pool's stations (in station order); moving to another station takes ``transition_time``,
    and a worker cannot leave a station in the middle of a job.

    Attributes:
        name: unique pool name.
        n_workers: number of workers (>= 1), named ``W0 … W{n−1}``.
        transition_time: time to move between stations.
        skill_levels: ``{worker name: {station: skill}}``; skills are >= 0.
    """

    name: str
    n_workers: int
    transition_time: float = 5.0
    skill_levels: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_name("worker pool", self.name)
        owner = f"worker pool {self.name!r}"
        if (
            isinstance(self.n_workers, bool)
            or not isinstance(self.n_workers, int)
            or self.n_workers < 1
        ):
            raise ValueError(f"{owner}.n_workers must be an int >= 1, got {self.n_workers!r}")
        _check_non_negative(owner, transition_time=self.transition_time)
        names = set(self.worker_names)
        for worker, skills in self.skill_levels.items():
            if worker not in names:
                raise ValueError(
                    f"{owner}.skill_levels names unknown worker {worker!r}; allowed: W0 … W{self.n_workers - 1}"
                )
            for station, skill in skills.items():
                _check_non_negative(f"{owner}.skill_levels[{worker!r}]", **{station: skill})

    @property
    def worker_names(self) -> list[str]:
        return [f"W{i}" for i in range(self.n_workers)]

    def skill(self, worker: int, station: str) -> float:
        return float(self.skill_levels.get(f"W{worker}", {}).get(station, 1.0))


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
