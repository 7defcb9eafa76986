"""The observation and action layout of a line, derived once from its ``LineSpec``.

Both engines fill the same layout, so an agent sees identical features whichever engine runs.
Every observation feature is normalised to [0, 1]:

| Feature | Per | Value |
|---|---|---|
| ``<station>.mode=working/waiting/failing`` | station | one-hot of the station's current mode |
| ``<source>.waiting_time`` | actionable source | current waiting time ÷ largest choice |
| ``<source>.carrier_type=<type>`` | source with > 1 carrier type | one-hot of the type being emitted |
| ``<station>.processing_time`` | (sequential) process, assembly | last processing time ÷ (4 × nominal), clipped to 1 |
| ``<station>.n_workers`` | station in a worker pool | workers at the station ÷ pool size |
| ``<assembly>.scrap`` | assembly | component carriers scrapped during the last step, clipped to 1 |
| ``<switch>.index_in=<i>`` / ``index_out=<i>`` | switch with > 1 input / output | one-hot of the selected buffer |
| ``<magazine>.stored`` | limited magazine | carriers stored ÷ ``max_carriers``, clipped to 1 |
| ``<pool>.W<w>=<station>`` | worker | one-hot of the station the worker stands at or walks to |
| ``<buffer>.fill`` | buffer | carriers on the buffer ÷ capacity |
| ``time`` | line | simulation time ÷ horizon |

Actions (``MultiDiscrete``), in this order: for each station in order, an actionable source's
waiting time (index ``k`` → ``k · waiting_time_step``), an actionable switch's input then output
index, an actionable magazine's stored count; then for each pool, each worker's station (index
into the pool's stations).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gymforge.envs.lineflow.spec import (
    AssemblySpec,
    LineSpec,
    MagazineSpec,
    ProcessSpec,
    SequentialProcessSpec,
    SourceSpec,
    SwitchSpec,
)

MODE_NAMES = ("working", "waiting", "failing")
PROCESSING_TIME_SCALE = 4.0
TIMED_STATIONS = (ProcessSpec, SequentialProcessSpec, AssemblySpec)


@dataclass(frozen=True)
class Feature:
    """One observation feature: its name, unit and what it means."""

    name: str
    unit: str
    description: str


@dataclass(frozen=True)
class ActionSlot:
    """One entry of the ``MultiDiscrete`` action.

    Attributes:
        owner: station or pool name.
        kind: ``waiting_time``, ``index_in``, ``index_out``, ``magazine`` or ``worker``.
        n: number of choices.
        labels: what each choice means (waiting times, buffer or station names, counts).
        worker: the worker index for kind ``worker``.
    """

    owner: str
    kind: str
    n: int
    labels: tuple[str, ...]
    worker: int = -1

    @property
    def name(self) -> str:
        return (
            f"{self.owner}.W{self.worker}" if self.kind == "worker" else f"{self.owner}.{self.kind}"
        )


def switch_buffers(spec: LineSpec, switch: str) -> tuple[list[str], list[str]]:
    """Names of a switch's input and output buffers, in buffer order."""
    return [b.name for b in spec.inputs_of(switch)], [b.name for b in spec.outputs_of(switch)]


def action_slots(spec: LineSpec) -> list[ActionSlot]:
    """The action entries of ``spec``, in action order."""
    slots: list[ActionSlot] = []
    for station in spec.stations:
        if isinstance(station, SourceSpec) and station.actionable_waiting_time:
            labels = tuple(
                f"{k * station.waiting_time_step:g}" for k in range(station.waiting_time_choices)
            )
            slots.append(ActionSlot(station.name, "waiting_time", len(labels), labels))
        elif isinstance(station, SwitchSpec) and not station.alternate:
            inputs, outputs = switch_buffers(spec, station.name)
            if len(inputs) > 1:
                slots.append(ActionSlot(station.name, "index_in", len(inputs), tuple(inputs)))
            if len(outputs) > 1:
                slots.append(ActionSlot(station.name, "index_out", len(outputs), tuple(outputs)))
        elif isinstance(station, MagazineSpec) and station.actionable:
            labels = tuple(str(k) for k in range(station.max_carriers + 1))
            slots.append(ActionSlot(station.name, "magazine", len(labels), labels))
    for pool in spec.pools:
        stations = tuple(spec.pool_stations(pool.name))
        for w in range(pool.n_workers):
            slots.append(ActionSlot(pool.name, "worker", len(stations), stations, worker=w))
    return slots


def action_nvec(spec: LineSpec) -> np.ndarray:
    """Number of choices of each action entry."""
    return np.array([slot.n for slot in action_slots(spec)], dtype=np.int64)


def observation_features(spec: LineSpec) -> list[Feature]:
    """The observation features of ``spec``, in observation order."""
    features: list[Feature] = []
    add = features.append
    for station in spec.stations:
        name = station.name
        for mode in MODE_NAMES:
            add(Feature(f"{name}.mode={mode}", "one-hot", f"{name} is {mode}"))
        if isinstance(station, SourceSpec):
            if station.actionable_waiting_time:
                largest = (station.waiting_time_choices - 1) * station.waiting_time_step
                add(Feature(f"{name}.waiting_time", f"÷ {largest:g}", "current waiting time"))
            if len(station.carrier_specs) > 1:
                for kind in station.carrier_specs:
                    add(Feature(f"{name}.carrier_type={kind}", "one-hot", f"emitting {kind!r}"))
        if isinstance(station, TIMED_STATIONS):
            scale = timed_scale(station)
            add(Feature(f"{name}.processing_time", f"÷ {scale:g}, clipped", "last processing time"))
        if getattr(station, "worker_pool", None) is not None:
            pool = next(p for p in spec.pools if p.name == station.worker_pool)
            add(Feature(f"{name}.n_workers", f"÷ {pool.n_workers}", "workers at the station"))
        if isinstance(station, AssemblySpec):
            add(Feature(f"{name}.scrap", "count, clipped to 1", "scrapped during the last step"))
        if isinstance(station, SwitchSpec):
            inputs, outputs = switch_buffers(spec, name)
            for label, buffers in (("index_in", inputs), ("index_out", outputs)):
                if len(buffers) > 1:
                    for i, buffer in enumerate(buffers):
                        add(Feature(f"{name}.{label}={i}", "one-hot", f"routes via {buffer}"))
        if isinstance(station, MagazineSpec) and not station.unlimited_carriers:
            add(Feature(f"{name}.stored", f"÷ {station.max_carriers}, clipped", "carriers stored"))
    for pool in spec.pools:
        stations = spec.pool_stations(pool.name)
        for w in range(pool.n_workers):
            for station_name in stations:
                add(
                    Feature(
                        f"{pool.name}.W{w}={station_name}",
                        "one-hot",
                        f"W{w} works for {station_name}",
                    )
                )
    for buffer in spec.buffers:
        add(Feature(f"{buffer.name}.fill", f"÷ {buffer.capacity}", "carriers on the buffer"))
    add(Feature("time", "÷ horizon", "simulation time"))
    return features


def timed_scale(station: ProcessSpec | SequentialProcessSpec | AssemblySpec) -> float:
    """Divisor of the ``processing_time`` feature."""
    return PROCESSING_TIME_SCALE * max(station.processing_time, 1.0)
