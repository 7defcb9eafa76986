"""``CompiledLine``: a ``LineSpec`` turned into index and parameter tensors for the torch engine.

Rows of the station table are the line's stations in order, followed by one *collector* row per
magazine with an input (the process that stores returned carriers). Buffers are rows of the
buffer table, plus one *null* buffer that stations without an input or output point at: its only
slot is always held and never arrived, so nobody ever takes from it or puts on it. The slots of
all buffers are numbered in one flat, unpadded slot space of ``NS`` slots: buffer ``b`` owns the
consecutive slots ``slot_first[b] … slot_last[b]`` (upstream to downstream), and the null
buffer's slot is the last one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from gymforge.envs.lineflow.spec import (
    AssemblySpec,
    LineSpec,
    MagazineSpec,
    ProcessSpec,
    SequentialProcessSpec,
    SinkSpec,
    SourceSpec,
    SwitchSpec,
)

(
    KIND_SOURCE, KIND_PROCESS, KIND_ASSEMBLY, KIND_SINK, KIND_SWITCH, KIND_MAGAZINE,
    KIND_COLLECTOR, KIND_SEQUENTIAL,
) = range(8)  # fmt: skip
KIND_OF = {
    SourceSpec: KIND_SOURCE,
    ProcessSpec: KIND_PROCESS,
    SequentialProcessSpec: KIND_SEQUENTIAL,
    AssemblySpec: KIND_ASSEMBLY,
    SinkSpec: KIND_SINK,
    SwitchSpec: KIND_SWITCH,
    MagazineSpec: KIND_MAGAZINE,
}


PART_KEYS = {"assembly_condition", "extra_processing_time", "error_probability", "error_time"}
TIMING_KEYS = PART_KEYS - {"assembly_condition"}
EMPTY_TYPE = 0  # the carrier type of a carrier without parts (from a magazine)


def unsupported_reason(spec: LineSpec) -> str | None:
    """Why the torch engine cannot run ``spec`` yet, or None when it can."""
    has_assembly = any(isinstance(s, AssemblySpec) for s in spec.stations)
    for station in spec.stations:
        if type(station) not in KIND_OF:
            return f"{type(station).__name__} {station.name!r} is not supported by the torch engine yet"
        if isinstance(station, SourceSpec):
            if station.nok_probability > 0:
                return f"source {station.name!r}: NOK parts are not supported yet"
            for parts in station.carrier_specs.values():
                for stations in parts.values():
                    for values in stations.values():
                        if set(values) - PART_KEYS:
                            return f"source {station.name!r}: unknown part keys {sorted(set(values) - PART_KEYS)}"
                        if has_assembly and set(values) & TIMING_KEYS:
                            # an assembly merges parts of several carriers onto one, which the
                            # engine's one-type-per-carrier bookkeeping cannot follow
                            return (
                                f"source {station.name!r}: part-dependent times or errors on a "
                                "line with assemblies are not supported yet"
                            )
    if any(b.kind == "return" for b in spec.buffers):
        return "return buffers are not supported by the torch engine yet"
    return None


@dataclass(frozen=True)
class CompiledLine:
    """Static tensors describing a line, all on one device. R rows, NB buffers (+1 null)."""

    spec: LineSpec
    n_stations: int  # stations of the spec (the first rows)
    kind: torch.Tensor  # (R,) kind codes
    parent: torch.Tensor  # (R,) the magazine a collector row stores into (else itself)
    processing_time: torch.Tensor  # (R,) float64
    noise_scale: torch.Tensor  # (R,) float64, absolute scale of the exponential noise
    rework_probability: torch.Tensor  # (R,) float64
    nok_time: torch.Tensor  # (R,) float64
    initial_waiting: torch.Tensor  # (R,) float64
    waiting_step: torch.Tensor  # (R,) float64
    poll: torch.Tensor  # (R,) float64, switch poll interval (magazines poll every 1)
    alternate: torch.Tensor  # (R,) bool
    getting_time: torch.Tensor  # (R,) float64, magazine carrier getting time
    unlimited: torch.Tensor  # (R,) bool, magazine creates carriers
    initial_stored: torch.Tensor  # (R,) long
    actionable_magazine: torch.Tensor  # (R,) bool
    buffer_in: torch.Tensor  # (R,) long, main input (null buffer if none)
    buffer_out: torch.Tensor  # (R,) long, output (null buffer if none)
    inputs: torch.Tensor  # (R, I) long, switch inputs (padded with null)
    n_inputs: torch.Tensor  # (R,) long
    outputs: torch.Tensor  # (R, O) long, switch outputs
    n_outputs: torch.Tensor  # (R,) long
    component: torch.Tensor  # (R, K) long, assembly component buffers (padded with null)
    n_components: torch.Tensor  # (R,) long
    condition: torch.Tensor  # (T, R) float64, assembly condition of a carrier of type t at row r
    type_extra: torch.Tensor  # (T, R) float64, summed extra processing time of its parts at r
    part_count: torch.Tensor  # (T, R) long, its parts that name row r (sequential processes)
    part_extra: torch.Tensor  # (T, R, P) float64, extra time of the j-th of them at r
    part_error_probability: torch.Tensor  # (T, R, P) float64
    part_error_time: torch.Tensor  # (T, R, P) float64
    type_base: torch.Tensor  # (R,) long, a source's first carrier type (0 elsewhere)
    n_types: torch.Tensor  # (R,) long, a source's number of carrier types (1 elsewhere)
    run_min: torch.Tensor  # (R,) long, fewest identical carriers a source emits in a row
    run_span: torch.Tensor  # (R,) long, run_max - run_min + 1
    handling_time: torch.Tensor  # (R,) float64, sequential processes' handling time
    error_scale: torch.Tensor  # (R,) float64, sequential processes' error_std
    slowdown_max: torch.Tensor  # (R,) float64, t_jump_max (0: none)
    slowdown_ratio: torch.Tensor  # (R,) float64
    capacity: torch.Tensor  # (NB+1,) long
    slot_time: torch.Tensor  # (NB+1,) float64
    put_time: torch.Tensor  # (NB+1,) float64
    put_scale: torch.Tensor  # (NB+1,) float64
    get_time: torch.Tensor  # (NB+1,) float64
    slot_first: torch.Tensor  # (NB+1,) long, flat index of a buffer's first (upstream) slot
    slot_last: torch.Tensor  # (NB+1,) long, flat index of its last slot
    slot_buffer: torch.Tensor  # (NS,) long, the buffer owning each flat slot
    worker_station: torch.Tensor  # (W, M) long, row of each of a worker's pool stations (padded)
    worker_skill: torch.Tensor  # (W, R) float64, a worker's skill at each row (0 outside its pool)
    worker_transition: torch.Tensor  # (W,) float64
    worker_pool_size: torch.Tensor  # (R,) float64, size of the row's pool (0: none)
    actions: tuple[tuple[str, int, int], ...]  # (kind, row, worker) per action entry

    @property
    def rows(self) -> int:
        return int(self.kind.shape[0])

    @property
    def null_buffer(self) -> int:
        return int(self.capacity.shape[0]) - 1

    @property
    def cmax(self) -> int:
        """The longest buffer's capacity."""
        return int(self.capacity.max())

    @property
    def n_slots(self) -> int:
        """NS, the number of slots of all buffers (and the null buffer's one)."""
        return int(self.slot_buffer.shape[0])

    @property
    def n_workers(self) -> int:
        return int(self.worker_transition.shape[0])


def compile_line(spec: LineSpec, device: torch.device | str = "cpu") -> CompiledLine:
    """Compile ``spec``; raises ``ValueError`` naming the first unsupported component."""
    reason = unsupported_reason(spec)
    if reason is not None:
        raise ValueError(reason)
    names = [s.name for s in spec.stations]
    buffers = {b.name: i for i, b in enumerate(spec.buffers)}
    null = len(spec.buffers)
    collectors = [
        i
        for i, s in enumerate(spec.stations)
        if isinstance(s, MagazineSpec) and spec.inputs_of(s.name)
    ]
    rows = list(spec.stations) + [spec.stations[i] for i in collectors]
    n = len(rows)
    f64 = {"dtype": torch.float64, "device": device}
    long = {"dtype": torch.long, "device": device}
    boolean = {"dtype": torch.bool, "device": device}

    def station_value(attribute: str, default: float) -> list[float]:
        return [float(getattr(s, attribute, default)) for s in rows]

    def padded(lists: list[list[int]]) -> torch.Tensor:
        width = max(1, max(len(x) for x in lists))
        return torch.tensor([x + [null] * (width - len(x)) for x in lists], **long)

    def main_input(r: int) -> int:
        if r >= len(spec.stations):  # a collector takes the magazine's input
            return buffers[spec.inputs_of(rows[r].name)[0].name]
        s = rows[r]
        if isinstance(s, (SwitchSpec, MagazineSpec)):
            return null
        found = spec.inputs_of(s.name)
        return buffers[found[0].name] if found else null

    def main_output(r: int) -> int:
        s = rows[r]
        if r >= len(spec.stations) or isinstance(s, SwitchSpec):
            return null
        found = spec.outputs_of(s.name)
        return buffers[found[0].name] if found else null

    is_switch = [isinstance(s, SwitchSpec) and r < len(spec.stations) for r, s in enumerate(rows)]
    inputs = [
        [buffers[b.name] for b in spec.inputs_of(s.name)] if is_switch[r] else []
        for r, s in enumerate(rows)
    ]
    outputs = [
        [buffers[b.name] for b in spec.outputs_of(s.name)] if is_switch[r] else []
        for r, s in enumerate(rows)
    ]
    components = [
        [buffers[b.name] for b in spec.components_of(s.name)] if r < len(spec.stations) else []
        for r, s in enumerate(rows)
    ]
    types = _compile_types(spec, names, n, device)
    capacities = [b.capacity for b in spec.buffers] + [1]
    first_slots = [sum(capacities[:b]) for b in range(len(capacities))]
    kinds = [
        KIND_OF[type(s)] if r < len(spec.stations) else KIND_COLLECTOR for r, s in enumerate(rows)
    ]
    noise = [
        0.0
        if kinds[r] == KIND_SWITCH
        else s.processing_std  # absolute for sequential processes
        if kinds[r] == KIND_SEQUENTIAL
        else getattr(s, "processing_std", 0.0) * getattr(s, "processing_time", 0.0)
        for r, s in enumerate(rows)
    ]
    workers = _compile_workers(spec, names, n)
    return CompiledLine(
        spec=spec,
        n_stations=len(spec.stations),
        kind=torch.tensor(kinds, **long),
        parent=torch.tensor(list(range(len(spec.stations))) + collectors, **long),
        processing_time=torch.tensor(station_value("processing_time", 0.0), **f64),
        noise_scale=torch.tensor(noise, **f64),
        rework_probability=torch.tensor(station_value("rework_probability", 0.0), **f64),
        nok_time=torch.tensor(station_value("nok_part_error_time", 0.0), **f64),
        initial_waiting=torch.tensor(station_value("waiting_time", 0.0), **f64),
        waiting_step=torch.tensor(station_value("waiting_time_step", 1.0), **f64),
        poll=torch.tensor(station_value("poll_interval", 1.0), **f64),
        alternate=torch.tensor([bool(getattr(s, "alternate", False)) for s in rows], **boolean),
        getting_time=torch.tensor(station_value("carrier_getting_time", 0.0), **f64),
        unlimited=torch.tensor(
            [bool(getattr(s, "unlimited_carriers", False)) for s in rows], **boolean
        ),
        initial_stored=torch.tensor(
            [int(getattr(s, "carriers_in_magazine", 0)) for s in rows], **long
        ),
        actionable_magazine=torch.tensor(
            [isinstance(s, MagazineSpec) and s.actionable for s in rows], **boolean
        ),
        buffer_in=torch.tensor([main_input(r) for r in range(n)], **long),
        buffer_out=torch.tensor([main_output(r) for r in range(n)], **long),
        inputs=padded(inputs),
        n_inputs=torch.tensor([max(1, len(x)) for x in inputs], **long),
        outputs=padded(outputs),
        n_outputs=torch.tensor([max(1, len(x)) for x in outputs], **long),
        component=padded(components),
        n_components=torch.tensor([len(x) for x in components], **long),
        **types,
        handling_time=torch.tensor(station_value("handling_time", 0.0), **f64),
        error_scale=torch.tensor(station_value("error_std", 0.0), **f64),
        slowdown_max=torch.tensor(
            [s.slowdown.t_jump_max if getattr(s, "slowdown", None) else 0.0 for s in rows], **f64
        ),
        slowdown_ratio=torch.tensor(
            [s.slowdown.ratio if getattr(s, "slowdown", None) else 1.0 for s in rows], **f64
        ),
        capacity=torch.tensor(capacities, **long),
        slot_time=torch.tensor([b.slot_time for b in spec.buffers] + [0.0], **f64),
        put_time=torch.tensor([b.put_time for b in spec.buffers] + [0.0], **f64),
        put_scale=torch.tensor([b.put_std * b.put_time for b in spec.buffers] + [0.0], **f64),
        get_time=torch.tensor([b.get_time for b in spec.buffers] + [0.0], **f64),
        slot_first=torch.tensor(first_slots, **long),
        slot_last=torch.tensor(
            [f + c - 1 for f, c in zip(first_slots, capacities, strict=True)], **long
        ),
        slot_buffer=torch.tensor([b for b, c in enumerate(capacities) for _ in range(c)], **long),
        worker_station=workers[0].to(device),
        worker_skill=workers[1].to(device),
        worker_transition=workers[2].to(device),
        worker_pool_size=workers[3].to(device),
        actions=_compile_actions(spec, names),
    )


def _compile_types(
    spec: LineSpec, names: list[str], n_rows: int, device: torch.device | str
) -> dict[str, torch.Tensor]:
    """Carrier types: 0 is the empty carrier; every source's carrier types follow in order.

    A carrier holds the parts of one type (the engine supports part-dependent times only on
    lines without assemblies, see ``unsupported_reason``), so every per-part quantity the
    stations need is a table indexed by (type, row).
    """
    kinds: list[dict[str, dict[str, dict[str, float]]]] = [{}]  # type -> part -> station -> values
    type_base, n_types, run_min, run_span = [0] * n_rows, [1] * n_rows, [1] * n_rows, [1] * n_rows
    for r, s in enumerate(spec.stations):
        if isinstance(s, SourceSpec):
            type_base[r], n_types[r] = len(kinds), len(s.carrier_specs)
            run_min[r] = s.carrier_min_creation
            run_span[r] = s.max_creation - s.carrier_min_creation + 1
            kinds += [dict(parts) for parts in s.carrier_specs.values()]
    n_parts = max([1] + [len(parts) for parts in kinds])
    shape = (len(kinds), n_rows)
    condition = torch.full(shape, math.inf, dtype=torch.float64)
    type_extra = torch.zeros(shape, dtype=torch.float64)
    part_count = torch.zeros(shape, dtype=torch.long)
    part_extra = torch.zeros(*shape, n_parts, dtype=torch.float64)
    error_probability = torch.zeros(*shape, n_parts, dtype=torch.float64)
    error_time = torch.zeros(*shape, n_parts, dtype=torch.float64)
    for t, parts in enumerate(kinds):
        for part in parts.values():
            for target, values in part.items():
                r = names.index(target)
                if "assembly_condition" in values:
                    condition[t, r] = min(condition[t, r].item(), values["assembly_condition"])
                extra = float(values.get("extra_processing_time", 0.0))
                type_extra[t, r] += extra
                j = int(part_count[t, r])
                part_extra[t, r, j] = extra
                error_probability[t, r, j] = float(values.get("error_probability", 0.0))
                error_time[t, r, j] = float(values.get("error_time", 0.0))
                part_count[t, r] += 1
    long = {"dtype": torch.long, "device": device}
    return {
        "condition": condition.to(device),
        "type_extra": type_extra.to(device),
        "part_count": part_count.to(device),
        "part_extra": part_extra.to(device),
        "part_error_probability": error_probability.to(device),
        "part_error_time": error_time.to(device),
        "type_base": torch.tensor(type_base, **long),
        "n_types": torch.tensor(n_types, **long),
        "run_min": torch.tensor(run_min, **long),
        "run_span": torch.tensor(run_span, **long),
    }


def _compile_workers(spec: LineSpec, names: list[str], n_rows: int) -> tuple[torch.Tensor, ...]:
    stations, skills, transition = [], [], []
    pool_size = torch.zeros(n_rows, dtype=torch.float64)
    for pool in spec.pools:
        rows = [names.index(s) for s in spec.pool_stations(pool.name)]
        for r in rows:
            pool_size[r] = pool.n_workers
        for w in range(pool.n_workers):
            stations.append(rows)
            skill = [0.0] * n_rows
            for local, r in enumerate(rows):
                skill[r] = pool.skill(w, spec.pool_stations(pool.name)[local])
            skills.append(skill)
            transition.append(pool.transition_time)
    width = max([len(s) for s in stations] + [1])
    station = torch.tensor(
        [s + [s[-1]] * (width - len(s)) for s in stations] or [[0]], dtype=torch.long
    )
    if not stations:
        station = station[:0]
    skill = torch.tensor(skills, dtype=torch.float64).reshape(len(skills), n_rows)
    return station, skill, torch.tensor(transition, dtype=torch.float64), pool_size


def _compile_actions(spec: LineSpec, names: list[str]) -> tuple[tuple[str, int, int], ...]:
    from gymforge.envs.lineflow.features import action_slots

    offsets, w0 = {}, 0
    for pool in spec.pools:
        offsets[pool.name] = w0
        w0 += pool.n_workers
    out = []
    for slot in action_slots(spec):
        if slot.kind == "worker":
            out.append(("worker", -1, offsets[slot.owner] + slot.worker))
        else:
            out.append((slot.kind, names.index(slot.owner), -1))
    return tuple(out)
