"""The stations of a ``LineSpec`` and its worker pools: one frozen, validated dataclass each.

Times are in simulation time units; a processing time ``T`` is sampled as
``T + Exp(scale = processing_std · T)``. Each spec checks its fields on construction and names
the field and the allowed values in its ``ValueError``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

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
