"""The batched LineFlow engine's state: per-row, per-slot and per-worker tensors with the batch
axis last, their initial values, resets and the seeded slowdowns of a jump.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import torch

from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.lineflow.batched.compiled import (
    CompiledLine,
)
from gymforge.envs.lineflow.batched.phases import (
    START,
)
from gymforge.envs.lineflow.batched.tensor_ops import (
    _uniform_pairs,
)

MAX_SWEEPS = 64


INF = math.inf


JUMP_OVERHEAD = 3.1


@dataclass
class LineState:
    """State of B lines: R station rows, NB buffers (+ null) of C slots, W workers.

    The batch axis is last (see the module docstring). Slots are rows of the ``(NS, B)`` slot
    tensors, numbered as in ``compiled`` (each buffer's slots consecutive, upstream first).

    On lines where no carrier type decides anything (``Engine._typed`` False: no extra times by
    type, no sequential process, assembly conditions alike for every type) the carriers' types
    ``carrier_type``, ``comp_type`` and ``slot_type`` are not tracked and keep their initial
    zeros; the sources' ``run_type`` (observed) always is.
    """

    now: torch.Tensor  # (B,) float64 clock
    phase: torch.Tensor  # (R, B) int8
    wake: torch.Tensor  # (R, B) float64, end of the current timed phase (inf: none)
    started: torch.Tensor  # (R, B) float64, start of the current WORKING phase
    factor: torch.Tensor  # (R, B) float64, worker speed-up of the current job
    last_time: torch.Tensor  # (R, B) float64, last processing time
    waiting: torch.Tensor  # (R, B) float64, sources' waiting time
    waiting_read: torch.Tensor  # (R, B) bool, a source started a cycle (read ``waiting``) this step
    cur_in: torch.Tensor  # (R, B) long, buffer the row takes from next
    cur_out: torch.Tensor  # (R, B) long, buffer the row puts on next
    index_in: torch.Tensor  # (R, B) long, switches' selected input
    index_out: torch.Tensor  # (R, B) long, switches' selected output
    stored: torch.Tensor  # (R, B) long, magazines' stored carriers
    target: torch.Tensor  # (R, B) long, actionable magazines' stored count
    carrier_created: torch.Tensor  # (R, B) float64, creation time of the part on the carrier held
    carrier_type: torch.Tensor  # (R, B) long, carrier type of the carrier held (0: no parts)
    comp_k: torch.Tensor  # (R, B) long, assembly: component buffer being served
    comp_created: torch.Tensor  # (R, B) float64
    comp_type: torch.Tensor  # (R, B) long
    seq_part: torch.Tensor  # (R, B) long, sequential process: part being processed
    seq_total: torch.Tensor  # (R, B) float64, sequential process: time spent on the parts
    run_left: torch.Tensor  # (R, B) long, source: carriers left in the current run of one type
    run_type: torch.Tensor  # (R, B) long, source: carrier type of the current run
    n_scrap: torch.Tensor  # (R, B) long
    scrap_seen: torch.Tensor  # (R, B) long, n_scrap at the last observation
    n_parts: torch.Tensor  # (B,) long
    jump_start: torch.Tensor  # (R, B) float64, slowdown window and factor
    jump_end: torch.Tensor  # (R, B) float64
    jump_factor: torch.Tensor  # (R, B) float64
    held: torch.Tensor  # (NS, B) bool, slot claimed by a carrier
    arrived: torch.Tensor  # (NS, B) bool, its carrier has arrived (so only where held)
    ready: torch.Tensor  # (NS, B) float64, arrival time of a moving carrier (inf: none moving)
    slot_created: torch.Tensor  # (NS, B) float64
    slot_type: torch.Tensor  # (NS, B) long
    count: torch.Tensor  # (NB+1, B) long, carriers put on and not taken off
    w_station: torch.Tensor  # (W, B) long, row the worker stands at
    w_target: torch.Tensor  # (W, B) long, row it should go to
    w_dest: torch.Tensor  # (W, B) long, row it walks to
    w_arrive: torch.Tensor  # (W, B) float64, end of its walk (inf: standing)
    w_holder: torch.Tensor  # (W, B) long, row holding it for a job (-1: free)

    # every field has the batch axis last (for code that moves instances between states)
    BATCH_DIM = -1


_FIELD_NAMES = tuple(field.name for field in fields(LineState))  # (``fields`` is slow)


def initial_state(line: CompiledLine, batch: int) -> LineState:
    device = line.kind.device
    r, nb, ns, w = line.rows, line.null_buffer + 1, line.n_slots, line.n_workers
    f64 = {"dtype": torch.float64, "device": device}
    i64 = {"dtype": torch.long, "device": device}

    def rows(value: torch.Tensor) -> torch.Tensor:
        return value[:, None].expand(value.shape[0], batch).clone()

    held = torch.zeros(ns, batch, dtype=torch.bool, device=device)
    held[line.slot_first[line.null_buffer]] = True  # the null buffer is never free
    first = line.worker_station[:, 0] if w else torch.zeros(0, **i64)
    # round-robin start: worker w of a pool stands at the pool's station (w mod n)
    start = _round_robin(line) if w else first
    return LineState(
        now=torch.zeros(batch, **f64),
        phase=torch.full((r, batch), START, dtype=torch.int8, device=device),
        wake=torch.zeros(r, batch, **f64),  # every row starts its program at time 0
        started=torch.zeros(r, batch, **f64),
        factor=torch.ones(r, batch, **f64),
        last_time=rows(line.processing_time),
        waiting=rows(line.initial_waiting),
        waiting_read=torch.zeros(r, batch, dtype=torch.bool, device=device),
        cur_in=rows(line.buffer_in),
        cur_out=rows(line.buffer_out),
        index_in=torch.zeros(r, batch, **i64),
        index_out=torch.zeros(r, batch, **i64),
        stored=rows(line.initial_stored),
        target=rows(line.initial_stored),
        carrier_created=torch.zeros(r, batch, **f64),
        carrier_type=torch.zeros(r, batch, **i64),
        comp_k=torch.zeros(r, batch, **i64),
        comp_created=torch.zeros(r, batch, **f64),
        comp_type=torch.zeros(r, batch, **i64),
        seq_part=torch.zeros(r, batch, **i64),
        seq_total=torch.zeros(r, batch, **f64),
        run_left=torch.zeros(r, batch, **i64),
        run_type=rows(line.type_base),
        n_scrap=torch.zeros(r, batch, **i64),
        scrap_seen=torch.zeros(r, batch, **i64),
        n_parts=torch.zeros(batch, **i64),
        jump_start=torch.zeros(r, batch, **f64),
        jump_end=torch.zeros(r, batch, **f64),
        jump_factor=torch.ones(r, batch, **f64),
        held=held,
        arrived=torch.zeros(ns, batch, dtype=torch.bool, device=device),
        ready=torch.full((ns, batch), INF, **f64),
        slot_created=torch.zeros(ns, batch, **f64),
        slot_type=torch.zeros(ns, batch, **i64),
        count=torch.zeros(nb, batch, **i64),
        w_station=rows(start),
        w_target=rows(start),
        w_dest=rows(start),
        w_arrive=torch.full((w, batch), INF, **f64),
        w_holder=torch.full((w, batch), -1, **i64),
    )


def _round_robin(line: CompiledLine) -> torch.Tensor:
    starts, local = [], {}
    for w in range(line.n_workers):
        pool_rows = tuple(line.worker_station[w].tolist())
        k = local.get(pool_rows, 0)
        local[pool_rows] = k + 1
        unique = list(dict.fromkeys(pool_rows))
        starts.append(unique[k % len(unique)])
    return torch.tensor(starts, dtype=torch.long, device=line.kind.device)


def reset_where(line: CompiledLine, state: LineState, mask: torch.Tensor, rng: InstanceRNG) -> None:
    """Start fresh lines in the instances selected by ``mask`` (B,), in place."""
    fresh = initial_state(line, state.now.shape[0])
    for field in fields(LineState):
        current, new = getattr(state, field.name), getattr(fresh, field.name)
        setattr(state, field.name, torch.where(mask, new, current))  # the batch axis is last
    if bool((line.slowdown_max > 0).any()):
        _draw_slowdowns(line, state, mask, rng)


def _draw_slowdowns(
    line: CompiledLine, state: LineState, mask: torch.Tensor, rng: InstanceRNG
) -> None:
    """The seeded slowdown windows of assemblies with a ``Slowdown`` (see ``spec.Slowdown``)."""
    u = _uniform_pairs(rng, line.rows, mask)
    col = LineColumns(line)
    t_max = col.slowdown_max
    t_jump = t_max * (0.8 + 0.2 * u[:, 0])
    time, noise = col.processing_time, col.noise_scale
    horizon = 2 * t_max
    factor = (
        t_jump * (time + noise + JUMP_OVERHEAD) / ((col.slowdown_ratio - 1) * horizon + t_jump)
        - noise
        - JUMP_OVERHEAD
    ) / time.clamp(min=1e-12)
    start = (0.25 + 0.5 * u[:, 1]) * t_max
    has = (t_max > 0) & mask
    state.jump_start = torch.where(has, start, state.jump_start)
    state.jump_end = torch.where(has, start + t_jump, state.jump_end)
    state.jump_factor = torch.where(has, factor, state.jump_factor)


class LineColumns:
    """The per-row constants of a ``CompiledLine`` (every (R,) tensor) as (R, 1) columns, which
    broadcast against (R, B) state along contiguous rows of ``B``."""

    def __init__(self, line: CompiledLine) -> None:
        for field in fields(line):
            value = getattr(line, field.name)
            if isinstance(value, torch.Tensor) and value.shape == (line.rows,):
                setattr(self, field.name, value[:, None])

    def __getattr__(self, name: str) -> Any:  # pragma: no cover - only for type checkers
        raise AttributeError(name)
