"""``CompiledLine``: a ``LineSpec`` turned into index and parameter tensors for the torch engine.

Stations get one row each in station order; buffers one row each in buffer order, with their
slots padded to the longest buffer (``cmax``). Every wiring question the engine asks ("which
buffer does station s take from?") is answered by an index tensor built here once.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from gymforge.envs.lineflow.spec import (
    AssemblySpec,
    LineSpec,
    ProcessSpec,
    SinkSpec,
    SourceSpec,
)

SUPPORTED = (SourceSpec, ProcessSpec, AssemblySpec, SinkSpec)
KIND_SOURCE, KIND_PROCESS, KIND_ASSEMBLY, KIND_SINK = 0, 1, 2, 3
KIND_OF = {
    SourceSpec: KIND_SOURCE,
    ProcessSpec: KIND_PROCESS,
    AssemblySpec: KIND_ASSEMBLY,
    SinkSpec: KIND_SINK,
}
NO_BUFFER = -1


def unsupported_reason(spec: LineSpec) -> str | None:
    """Why the torch engine cannot run ``spec`` yet, or None when it can."""
    for station in spec.stations:
        if not isinstance(station, SUPPORTED):
            return f"{type(station).__name__} {station.name!r} is not supported by the torch engine yet"
        if getattr(station, "worker_pool", None):
            return f"worker pools ({station.name!r}) are not supported by the torch engine yet"
        if isinstance(station, AssemblySpec) and station.slowdown is not None:
            return (
                f"assembly slowdowns ({station.name!r}) are not supported by the torch engine yet"
            )
        if isinstance(station, SourceSpec):
            if len(station.carrier_specs) > 1 or station.nok_probability > 0:
                return f"source {station.name!r}: several carrier types or NOK parts are not supported yet"
            for parts in station.carrier_specs.values():
                for stations in parts.values():
                    for values in stations.values():
                        if set(values) - {"assembly_condition"}:
                            return f"source {station.name!r}: only assembly conditions are supported yet"
    if any(b.kind == "return" for b in spec.buffers):
        return "return buffers are not supported by the torch engine yet"
    return None


@dataclass(frozen=True)
class CompiledLine:
    """Static tensors describing a line (all on one device). Shapes in comments."""

    spec: LineSpec
    kind: torch.Tensor  # (S,) station kind codes
    processing_time: torch.Tensor  # (S,) float64
    noise_scale: torch.Tensor  # (S,) float64, absolute scale of the exponential noise
    rework_probability: torch.Tensor  # (S,) float64
    nok_time: torch.Tensor  # (S,) float64, assemblies' time lost on a scrapped component
    initial_waiting: torch.Tensor  # (S,) float64, sources' initial waiting time
    waiting_step: torch.Tensor  # (S,) float64
    buffer_in: torch.Tensor  # (S,) long, main input buffer or -1
    buffer_out: torch.Tensor  # (S,) long, output buffer or -1
    component: torch.Tensor  # (S, K) long, component buffers of assemblies, -1 padded
    n_components: torch.Tensor  # (S,) long
    condition: (
        torch.Tensor
    )  # (S_origin, S) float64, assembly condition of a part from a source at a station (inf: none)
    capacity: torch.Tensor  # (NB,) long
    slot_time: torch.Tensor  # (NB,) float64
    put_time: torch.Tensor  # (NB,) float64
    put_scale: torch.Tensor  # (NB,) float64
    get_time: torch.Tensor  # (NB,) float64
    slot_valid: torch.Tensor  # (NB, C) bool
    last_slot: torch.Tensor  # (NB,) long
    actionable_sources: torch.Tensor  # (A,) long, station index of each waiting-time action
    sink_mask: torch.Tensor  # (S,) bool
    assembly_mask: torch.Tensor  # (S,) bool

    @property
    def n_stations(self) -> int:
        return int(self.kind.shape[0])

    @property
    def n_buffers(self) -> int:
        return int(self.capacity.shape[0])

    @property
    def cmax(self) -> int:
        return int(self.slot_valid.shape[1])


def compile_line(spec: LineSpec, device: torch.device | str = "cpu") -> CompiledLine:
    """Compile ``spec``; raises ``ValueError`` naming the first unsupported component."""
    reason = unsupported_reason(spec)
    if reason is not None:
        raise ValueError(reason)
    names = [s.name for s in spec.stations]
    buffers = {b.name: i for i, b in enumerate(spec.buffers)}
    f64 = {"dtype": torch.float64, "device": device}
    long = {"dtype": torch.long, "device": device}

    def one_buffer(found: list) -> int:
        return buffers[found[0].name] if found else NO_BUFFER

    components = [[buffers[b.name] for b in spec.components_of(n)] for n in names]
    width = max(1, max(len(c) for c in components))
    condition = torch.full((len(names), len(names)), float("inf"), **f64)
    for s, station in enumerate(spec.stations):
        if isinstance(station, SourceSpec):
            for parts in station.carrier_specs.values():
                for part in parts.values():
                    for target, values in part.items():
                        if "assembly_condition" in values:
                            condition[s, names.index(target)] = values["assembly_condition"]
    cmax = max(b.capacity for b in spec.buffers)
    return CompiledLine(
        spec=spec,
        kind=torch.tensor([KIND_OF[type(s)] for s in spec.stations], **long),
        processing_time=torch.tensor([s.processing_time for s in spec.stations], **f64),
        noise_scale=torch.tensor(
            [s.processing_std * s.processing_time for s in spec.stations], **f64
        ),
        rework_probability=torch.tensor(
            [getattr(s, "rework_probability", 0.0) for s in spec.stations], **f64
        ),
        nok_time=torch.tensor(
            [getattr(s, "nok_part_error_time", 0.0) for s in spec.stations], **f64
        ),
        initial_waiting=torch.tensor(
            [getattr(s, "waiting_time", 0.0) for s in spec.stations], **f64
        ),
        waiting_step=torch.tensor(
            [getattr(s, "waiting_time_step", 1.0) for s in spec.stations], **f64
        ),
        buffer_in=torch.tensor([one_buffer(spec.inputs_of(n)) for n in names], **long),
        buffer_out=torch.tensor([one_buffer(spec.outputs_of(n)) for n in names], **long),
        component=torch.tensor([c + [NO_BUFFER] * (width - len(c)) for c in components], **long),
        n_components=torch.tensor([len(c) for c in components], **long),
        condition=condition,
        capacity=torch.tensor([b.capacity for b in spec.buffers], **long),
        slot_time=torch.tensor([b.slot_time for b in spec.buffers], **f64),
        put_time=torch.tensor([b.put_time for b in spec.buffers], **f64),
        put_scale=torch.tensor([b.put_std * b.put_time for b in spec.buffers], **f64),
        get_time=torch.tensor([b.get_time for b in spec.buffers], **f64),
        slot_valid=torch.arange(cmax, device=device)[None, :]
        < torch.tensor([b.capacity for b in spec.buffers], **long)[:, None],
        last_slot=torch.tensor([b.capacity - 1 for b in spec.buffers], **long),
        actionable_sources=torch.tensor(
            [names.index(s.name) for s in spec.actionable_sources], **long
        ),
        sink_mask=torch.tensor(
            [isinstance(s, SinkSpec) for s in spec.stations], dtype=torch.bool, device=device
        ),
        assembly_mask=torch.tensor(
            [isinstance(s, AssemblySpec) for s in spec.stations], dtype=torch.bool, device=device
        ),
    )
