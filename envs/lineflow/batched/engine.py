"""The batched torch LineFlow engine: B independent lines advanced event by event, exactly.

Each instance keeps its own clock. ``advance(state, until)`` repeats, until every instance has
reached ``until``: take each instance's next event time (the earliest station timer, slot
arrival or worker arrival), move its clock there, and apply everything that happens at that
instant — timers that expire, carriers arriving in a slot, and the instantaneous consequences
(a carrier moving on into a freed slot, a waiting station taking an arrived carrier or claiming
a freed slot) — in sweeps repeated until nothing changes. Instances never interact, and every
random draw comes from the instance's own counter-based stream, so a batch equals separate runs.
A sweep ends by letting carriers move on past the takes and puts it made (``_move_on``), so no
carrier that can move on is left after any sweep: only an arrival makes a new one, and a sweep
moves carriers first only after arrivals (``_slots``). A claim of a freed slot that is all an
instance has left is made without a sweep (``_claim_only``), as is the end of a work that took
no time (``_work_ends_only``: the WaitingTime sink and main source, the ComplexLine switch), so
most instances settle in one sweep; rounds whose only events are workers arriving or failed
switch polls need none (``_arrive_walkers_only``, ``_poll_again_only``), and workers arriving at
the very start of ``advance`` need no round (``_arrive_walkers_now``). A sweep's claims draw
their put times, and the works it starts their noise, only in the ``_claim_only`` that follows
it, in one draw with that one's claims where no instance is in two (``_draw_undrawn``: a draw
costs the same torch calls for any number of instances and lanes), on lines where no put and
no work with noise can end at the instant it starts (``_puts_take_time``,
``_works_take_time``), so that nothing in between sees the difference.

Station programs follow the SimPy engine (``sim_stations.py``). Every row has a phase:

| phase | meaning | ends |
|---|---|---|
| START | between cycles (a switch checks its input, a magazine starts fetching) | at once |
| WAIT | a source's waiting time | timer |
| GET_WAIT / GETTING | wait for a carrier in the last slot of ``cur_in``, take it (``get_time``) | condition / timer |
| COMP_WAIT / COMP_GETTING | the same for an assembly's k-th component buffer | condition / timer |
| FAILING | an assembly scrapping an invalid component (``nok_part_error_time``) | timer |
| WORKING | processing: ``T·factor + Exp(scale)``, ×2 on rework | timer |
| OUT_CHECK | a switch checks its selected output is not full | at once |
| PUT_WAIT / PUTTING | wait for the first slot of ``cur_out``, put the carrier on | condition / timer |
| IN_POLL / OUT_POLL | a switch looks again after ``poll_interval`` | timer |
| FETCH / MAG_POLL | a magazine's getting time / its wait for a stored carrier | timer |
| HANDLING | a sequential process takes the carrier in (``handling_time``) | timer |
| SEQ_NEXT | a sequential process turns to its next part (or puts the carrier on) | at once |
| SEQ_ERROR | a sequential process handles a part's error (``error_time + Exp``) | timer |

Layout: every state tensor has the batch axis *last* -- ``(R, B)`` per row, ``(NS, B)`` per
slot, ``(W, B)`` per worker, ``(B,)`` per instance -- and the line's constants broadcast as
``(R, 1)`` columns. So a rule over all rows of all instances is one long contiguous loop, a slice
of rows or slots (``ready[1:]``) is contiguous too, and a reduction over rows (``amin(dim=0)``)
runs along rows of ``B``; in the transposed ``(B, R)`` layout the same operations run as ``B``
short loops of ``R`` elements, several times slower on the CPU.

Several ATen CPU kernels are unvectorized for the bool and int8 tensors the rules are made of, so
the engine picks equivalent, faster forms (same results): ``_any`` and ``_any_rows`` reduce bytes
instead of calling ``any``; ``_Wide`` holds the bool row constants and the phase codes as
contiguous ``(R, B)`` tensors (an op with a broadcast column or a scalar is ~10x slower);
``_choose`` selects int8 phases arithmetically; and on lines whose rows' buffers never change (no
switch), ``_at`` reads slots as whole rows (``index_select``) instead of gathering, as it does
for the component buffers of assemblies with one each (``_comp_last_slot``). At the small
batch sizes of compacted sub-runs the torch calls themselves are the cost, so the engine makes
fewer: a (B,) tensor becomes a (1, B) row as ``x[None]`` (``x[None, :]`` also slices), a row
range used twice is sliced once, and so on.

Carriers have a *type*: 0 for a carrier without parts, else one of a source's carrier types
(``compiled._compile_types``); the parts' assembly conditions and extra processing times are
looked up by (type, row). On lines where no type decides anything (no extra time by type, no
sequential process, the same assembly conditions for every type: WorkerAssignment,
PartDistribution) carriers' types are not tracked at all (``Engine._typed``), which spares their
copies in takes, puts, moves and compactions; likewise, where every assembly condition is
infinite (WorkerAssignment), no component can fail, and components' creation times and the
scrap counts are not kept (``Engine._can_fail``).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, fields
from typing import Any

import torch

from gymforge.core.seeding import InstanceRNG
from gymforge.envs.lineflow.batched.compiled import (
    EMPTY_TYPE,
    KIND_ASSEMBLY,
    KIND_COLLECTOR,
    KIND_MAGAZINE,
    KIND_PROCESS,
    KIND_SEQUENTIAL,
    KIND_SINK,
    KIND_SOURCE,
    KIND_SWITCH,
    CompiledLine,
)

(
    START, WAIT, GET_WAIT, GETTING, COMP_WAIT, COMP_GETTING, FAILING, WORKING,
    OUT_CHECK, PUT_WAIT, PUTTING, IN_POLL, OUT_POLL, FETCH, MAG_POLL,
    HANDLING, SEQ_NEXT, SEQ_ERROR,
) = range(18)  # fmt: skip
N_PHASES = 18
INF = math.inf
MAX_SWEEPS = 64
# gather the still-active instances into a smaller batch when fewer than 1/2 of the batch and
# at least COMPACT_MIN fewer instances are active (below that, per-op overhead dominates; with
# most instances settling in one sweep, a gather of 1/2 to 3/4 of the batch cost more than the
# sweeps over the inactive rest)
COMPACT_BELOW, COMPACT_ABOVE, COMPACT_MIN = 2, 1, 128
JUMP_OVERHEAD = 3.1
CHOOSE_ARITHMETIC = 8192  # elements from which ``_choose`` computes instead of ``where``
WIDE_CACHE = 16  # batch sizes whose expanded constants ``Engine._wide`` keeps


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


def _uniform_rows(rng: InstanceRNG, rows: int, where: torch.Tensor) -> torch.Tensor:
    """One uniform per row (R, B) float64: ``rng.uniform(rows)`` transposed (same numbers)."""
    return rng.uniform_lanes(rows, where=where, dtype=torch.float64)


def _uniform_firsts(rng: InstanceRNG, rows: int, where: torch.Tensor) -> torch.Tensor:
    """``_uniform_pairs(rng, rows, where)[:, 0]`` (R, B) alone: the same draw (the counters
    advance the same), without computing the second numbers."""
    return rng.uniform_lanes(2 * rows, where=where, dtype=torch.float64, step=2)


def _uniform_pairs(rng: InstanceRNG, rows: int, where: torch.Tensor) -> torch.Tensor:
    """Two uniforms per row (R, 2, B) float64: ``rng.uniform(rows, 2)`` with the batch axis last;
    ``u[:, j]`` is a (R, B) view of contiguous rows."""
    return rng.uniform_lanes(2 * rows, where=where, dtype=torch.float64).view(rows, 2, -1)


def _lookup(table: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``table[index]`` for a 1-D ``table``: an index_select, several times faster on the CPU than
    advanced indexing at these sizes."""
    return table.index_select(0, index.reshape(-1)).view(index.shape)


def _any(mask: torch.Tensor) -> bool:
    """``bool(mask.any())`` for a bool tensor: a max over its bytes, several times faster on the
    CPU than ``any`` (which is not vectorized for bool)."""
    return mask.numel() > 0 and bool(mask.view(torch.uint8).max())


def _any_rows(mask: torch.Tensor) -> torch.Tensor:
    """``mask.any(dim=0)`` for a bool (rows, B) tensor, as ``_any`` a max over bytes."""
    return mask.view(torch.uint8).amax(dim=0).view(torch.bool)


def _and_not(mask: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """``mask & ~other`` for bool tensors in one op instead of two: ``other < mask`` is True
    exactly where ``mask`` is True and ``other`` False."""
    return other < mask


def _at(values: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``values`` (N, B) at rows ``index``: a gather for an (R, B) index, or whole rows for an
    (R,) index (the same row in every instance), a much cheaper copy of contiguous rows."""
    return values.index_select(0, index) if index.dim() == 1 else values.gather(0, index)


def _add_at(values: torch.Tensor, index: torch.Tensor, mask: torch.Tensor, sign: int) -> None:
    """Add ``sign`` (1 or -1) to ``values`` (N, B) integers at rows ``index`` (as ``_at``) of the
    rows in ``mask`` (R, B), in place (no copy of ``values``: nothing else holds the state's
    tensors, which compactions write back in place too)."""
    if index.dim() == 1:
        values.index_add_(0, index, mask.to(values.dtype), alpha=sign)
    else:
        values.scatter_add_(0, index, mask.to(values.dtype) if sign > 0 else -mask.to(values.dtype))


def _or(mask: torch.Tensor | None, other: torch.Tensor) -> torch.Tensor:
    """``mask | other``, or ``other`` when ``mask`` is None (nothing selected yet: the sweep
    starts its masks as None instead of making all-False tensors to or into)."""
    return other if mask is None else mask | other


def _only(mask: torch.Tensor | None, rows: torch.Tensor) -> torch.Tensor:
    """``mask & rows``, or ``rows`` when ``mask`` is None (every instance active)."""
    return rows if mask is None else mask & rows


def _select(state: LineState, index: torch.Tensor, names: tuple[str, ...]) -> LineState:
    """The instances ``index`` of ``state``; fields outside ``names`` are left ``None`` (so a rule
    that reads one fails loudly instead of broadcasting a full-batch tensor)."""
    expanded = _Expanded(index)
    chosen = {}
    for name in names:
        value = getattr(state, name)
        chosen[name] = value.gather(-1, expanded.like(value))
    return LineState(**{name: chosen.get(name) for name in _FIELD_NAMES})


class _Expanded:
    """``index`` (B',) expanded over the leading axis of each field shape it meets, made once
    per shape, for a gather or scatter along the last axis of the field (several times faster
    on the CPU than ``index_select`` or ``index_copy_`` along the last axis): the fields of a
    state have only a few shapes ((B,), (R, B), (NS, B), ...), so one compaction expands the
    index a few times instead of once per field (each expand is a torch call, and at the batch
    sizes that compaction produces the calls cost more than the copies)."""

    def __init__(self, index: torch.Tensor) -> None:
        self.index = index
        self._by_shape: dict[torch.Size, torch.Tensor] = {}

    def like(self, value: torch.Tensor) -> torch.Tensor:
        """The index for a gather or scatter along the last axis of ``value`` (1-D or 2-D)."""
        shape = value.shape
        found = self._by_shape.get(shape)
        if found is None:
            found = self.index if len(shape) == 1 else self.index.expand(shape[0], -1)
            self._by_shape[shape] = found
        return found


def _write_back(
    state: LineState, sub: LineState, index: torch.Tensor, names: tuple[str, ...]
) -> None:
    """Copy fields ``names`` of ``sub`` back into ``state`` at ``index``, in place (cost ~ len(index))."""
    expanded = _Expanded(index)
    for name in names:
        value = getattr(state, name)
        value.scatter_(-1, expanded.like(value), getattr(sub, name))


# LineState fields that a compacted sub-run of ``Engine.advance`` or ``Engine._settle`` can
# change, by the line parts that change them, and so writes back (the others -- waiting, target,
# jump_*, w_target, scrap_seen -- only actions, resets and observations change; ``now`` does
# not change while settling, and ``advance`` sets it to ``until`` after the write-back) ...
_ALWAYS_WRITTEN = (
    "phase", "wake", "started", "last_time", "carrier_created", "n_parts", "held", "arrived",
    "ready", "slot_created", "count",
)  # fmt: skip
_WRITTEN_BY = {
    "types": ("carrier_type", "slot_type"),
    "switch": ("cur_in", "cur_out", "index_in", "index_out"),
    "storage": ("stored",),  # magazines and collectors
    "assembly": ("comp_k",),
    "failing assembly": ("comp_created", "n_scrap"),
    "typed assembly": ("comp_type",),
    "sequential": ("seq_part", "seq_total"),
    "runs": ("run_left", "run_type"),
    "workers": ("factor", "w_station", "w_dest", "w_arrive", "w_holder"),
}
# ... and the fields it reads besides those (scrap_seen is for observations only; cur_in and
# cur_out never change without switches, nor run_type without runs: the engine then reads the
# line's constants instead, see ``_cur_in``)
_ALWAYS_READ = ("now", "waiting")
_READ_BY = {
    "storage": ("target",),
    "extra": ("seq_part",),  # part-dependent extra times look up the part being processed
    "slowdown": ("jump_start", "jump_end", "jump_factor"),
    "workers": ("w_target",),
}


def _worth_compacting(n_active: int, batch: int) -> bool:
    """Whether to gather ``n_active`` instances of ``batch`` into a smaller batch."""
    return n_active * COMPACT_BELOW < batch * COMPACT_ABOVE and batch - n_active >= COMPACT_MIN


def _select_rng(rng: InstanceRNG, index: torch.Tensor) -> InstanceRNG:
    return InstanceRNG(
        seed=rng.seed.index_select(0, index),
        counter=rng.counter.index_select(0, index),
        key=rng.key.index_select(0, index),
    )


def _phase_counts(mask: torch.Tensor | None, phase: torch.Tensor, wide: _Wide) -> list[int]:
    """Number of rows selected by ``mask`` (R, B or 1, B; None: all) in each phase (one host sync).

    The int8 phases are counted as bytes (``bincount`` takes uint8; a widening copy to int64 would
    cost more than the count); the others count as ``N_PHASES`` (``_choose`` with ``wide``'s
    filled tensor: arithmetic from ``CHOOSE_ARITHMETIC`` elements on)."""
    selected = phase if mask is None else _choose(mask, phase, wide.phase(N_PHASES))
    counts = torch.bincount(selected.flatten().view(torch.uint8), minlength=N_PHASES + 1)
    return counts.tolist()[:N_PHASES]  # (sliced in Python: one torch call less)


@dataclass
class _Due:
    """The comparisons with ``now`` that ``Engine._pending`` makes and the next sweep needs first:
    nothing changes ``wake``, ``ready``, ``w_arrive`` or ``now`` in between, so the sweep reuses
    them instead of comparing the float64 tensors again."""

    timers: torch.Tensor  # (R, B) wake <= now
    slots: torch.Tensor  # (NS, B) ready <= now
    workers: torch.Tensor | None  # (W, B) w_arrive <= now (None: no workers)


@dataclass
class _Undrawn:
    """The draws a sweep left to the ``_claim_only`` after it (see ``_puts_take_time``): its
    claims (``claimed``, (R, B) rows) and, on lines where ``Engine._defer_work``, the rows with
    noise that started working (``work``, (R, B)) with their processing time before the noise
    (``base``, broadcasting to (R, B)), and the instances that drew for the works they started
    (``work_where``, (B,), with or without noise). None: none."""

    claimed: torch.Tensor | None = None
    work: torch.Tensor | None = None
    base: torch.Tensor | None = None
    work_where: torch.Tensor | None = None


class _Wide:
    """An engine's constants for one batch size B as contiguous tensors: its bool ``(rows, 1)``
    columns as ``(rows, B)`` attributes (``wide.source``), and each phase as a filled ``(R, B)``
    int8 tensor (``wide.phase(START)``); the int8 ``after_work`` phase column is expanded the
    same way.

    On the CPU an op of a bool or int8 ``(rows, B)`` tensor with a broadcast column or a scalar
    runs an unvectorized loop, about ten times slower than the same op with a contiguous operand.

    ``parent``: a ``_Wide`` of a larger batch, whose tensors this one slices (``[:, :B]``, rows
    of ``B`` contiguous elements, as fast an operand; the compacted batches have new sizes all
    the time, and a slice costs less than making the tensor). The constants are stacked, one
    ``(K, rows, B)`` tensor per row count and dtype (the phases with the int8 columns), and each
    is a view of its stack: a smaller batch slices each stack once and unbinds it into all its
    views at once (two torch calls a stack, instead of a slice, a torch call, per constant it
    uses: about twenty in each compacted batch).
    """

    def __init__(
        self, columns: dict[str, torch.Tensor], rows: int, batch: int, parent: _Wide | None = None
    ) -> None:
        self._columns, self._rows, self._batch, self._parent = columns, rows, batch, parent
        if parent is None:
            device = columns["source"].device
            groups: dict[tuple[int, torch.dtype], list[tuple[str | int, torch.Tensor]]] = {}
            for name, column in columns.items():
                groups.setdefault((column.shape[0], column.dtype), []).append((name, column))
            for value in range(N_PHASES + 1):  # (N_PHASES: for ``_phase_counts``)
                filled = torch.full((rows, 1), value, dtype=torch.int8, device=device)
                groups.setdefault((rows, torch.int8), []).append((value, filled))
            self._stacks = [
                (
                    [key for key, _ in items],
                    torch.stack([c for _, c in items]).expand(-1, -1, batch).contiguous(),
                )
                for items in groups.values()
            ]
        else:
            self._stacks = [(keys, stack[:, :, :batch]) for keys, stack in parent._stacks]
        self._phases: dict[int, torch.Tensor] = {}
        for keys, stack in self._stacks:
            for key, value in zip(keys, stack.unbind(0), strict=True):
                if isinstance(key, int):
                    self._phases[key] = value
                else:
                    setattr(self, key, value)

    def __getattr__(self, name: str) -> torch.Tensor:  # (only for names that are no constant)
        raise AttributeError(name)

    def phase(self, value: int) -> torch.Tensor:
        return self._phases[value]


_SCALARS: dict[tuple[float, torch.dtype, torch.device], torch.Tensor] = {}


def _scalar(value: float, like: torch.Tensor) -> torch.Tensor:
    """``value`` as a 0-d tensor of ``like``'s dtype and device, made once: ``torch.where`` with
    a Python number makes a tensor of it at every call (and converts it to the other operand's
    dtype when they differ, as for the int8 phases), torch calls that cost more than the
    ``where`` itself at the batch sizes of compacted sub-runs. (Not for -0.0, which would share
    0.0's entry.)"""
    key = (value, like.dtype, like.device)
    found = _SCALARS.get(key)
    if found is None:
        found = _SCALARS[key] = torch.tensor(value, dtype=like.dtype, device=like.device)
    return found


def _choose(mask: torch.Tensor, value: torch.Tensor | int, phase: torch.Tensor) -> torch.Tensor:
    """``torch.where(mask, value, phase)`` for int8 phases (and an int8 or int ``value``).

    From ``CHOOSE_ARITHMETIC`` elements on, as exact integer arithmetic: three vectorized ops,
    cheaper on the CPU than one ``where``, which is not vectorized (below, ``where``'s one op is).
    """
    if phase.numel() < CHOOSE_ARITHMETIC:
        return torch.where(mask, _scalar(value, phase) if isinstance(value, int) else value, phase)
    return phase + mask.view(torch.int8) * (value - phase)


def _types_decide(line: CompiledLine, has_extra: bool, assembly: torch.Tensor) -> bool:
    """Whether a carrier's type ever decides anything on ``line``: processing times by type
    (``has_extra``: extra times, sequential processes' parts) or assembly conditions that differ
    by component type (``assembly``: (R,) the assembly rows)."""
    conditions = line.condition[:, assembly]
    return has_extra or bool((conditions != conditions[:1]).any())


def _assemblies_can_fail(line: CompiledLine, assembly: torch.Tensor) -> bool:
    """Whether an assembly of ``line`` (``assembly``: (R,) the assembly rows) can ever find a
    component invalid: some assembly condition (of some type) is finite."""
    return bool(line.condition[:, assembly].isfinite().any())


MIN_PUT_TIME = 2.0**-20  # below 2**32, a clock plus at least this is a later time
_LOG1P_AT_ZERO = torch.tensor(-0.0, dtype=torch.float64)  # log1p(-u) at u = 0


def _puts_take_time(line: CompiledLine, never_puts: torch.Tensor, switch: torch.Tensor) -> bool:
    """Whether every put on ``line`` takes at least ``MIN_PUT_TIME``: the put time of every
    buffer a row can put on (a switch's outputs, every other row's output; ``never_puts``:
    (R,) the sinks without output and the collectors, which store what they take) is at least
    that (a put lasts its put time plus an exponential draw).

    Then a put that starts at ``now`` never ends at ``now``, so drawing its put time later in
    the settle changes nothing that ``_pending`` sees in between, nor the next sweep that
    reuses its comparisons (``_Due``): no due timer either way, and no slot (the claim holds
    the slot at once). So ``_claim_only`` can draw the put times of the sweep's claims and its
    own in one draw (``Engine._draw_undrawn``).
    """
    targets: list[int] = []
    for r in range(line.rows):
        if bool(never_puts[r]):
            continue
        if bool(switch[r]):
            targets += line.outputs[r, : int(line.n_outputs[r])].tolist()
        else:
            targets.append(int(line.buffer_out[r]))
    if not targets:
        return False
    put_time = line.put_time[torch.tensor(targets, device=line.put_time.device)]
    return bool((put_time >= MIN_PUT_TIME).all())


def _works_take_time(line: CompiledLine, noisy: torch.Tensor) -> bool:
    """Whether every work with noise (``noisy``: (R,) rows with a noise scale) takes at least
    ``MIN_PUT_TIME`` before its noise: its processing time times the smallest speed-up factor
    its workers can give (``exp(-0.3 * total skill)``, see ``Engine._take_workers``) is at least
    that. (For lines without rework, runs, sequential processes, extra times or slowdowns,
    whose work times or draws depend on more; see ``Engine._defer_work``.)

    Then such a work, started at ``now``, never ends at ``now`` whatever its noise, and its
    end can be drawn later in the settle, as the put times are (``_puts_take_time``); works
    without noise end after their processing time, known without the numbers.
    """
    skill = line.worker_skill.clamp(min=0).amax(dim=1).sum() if line.n_workers else 0.0
    least = math.exp(-0.3 * float(skill))
    time = line.processing_time[noisy]
    return bool((time * least >= MIN_PUT_TIME).all())


class Engine:
    """Advances a ``LineState`` of a compiled line."""

    def __init__(self, line: CompiledLine) -> None:
        self.line = line
        self.col = col = LineColumns(line)
        device = line.kind.device
        kind = col.kind
        self._row = torch.arange(line.rows, device=device)[:, None]  # (R, 1)
        self._source = kind == KIND_SOURCE
        self._sink = kind == KIND_SINK
        self._assembly = kind == KIND_ASSEMBLY
        self._switch = kind == KIND_SWITCH
        self._magazine = kind == KIND_MAGAZINE
        self._collector = kind == KIND_COLLECTOR
        self._pooled = col.worker_pool_size > 0
        self._takes_at_get = (
            self._assembly & self._pooled
        )  # assemblies hold workers from the main get
        self._sequential = kind == KIND_SEQUENTIAL
        self._takes_at_work = ((kind == KIND_PROCESS) | self._sequential) & self._pooled
        self._has_sequential = bool(self._sequential.any())
        self._has_extra = bool((line.type_extra != 0).any()) or self._has_sequential
        self._has_runs = bool(((col.n_types > 1) & self._source).any())
        self._n_parts = line.part_extra.shape[2]
        self._no_input = self._source & (col.buffer_in == line.null_buffer)
        self._has_switch = bool(self._switch.any())
        self._has_magazine = bool(self._magazine.any())
        self._has_assembly = bool(self._assembly.any())
        self._has_collector = bool(self._collector.any())
        self._has_slowdown = bool((line.slowdown_max > 0).any())
        self._has_rework = bool((line.rework_probability > 0).any())
        # input and output buffers (and their timings) of lines without switches never change
        # (R,) row indices, see ``_at``
        self._fixed_in_last = line.slot_last[line.buffer_in]
        self._fixed_out_first = line.slot_first[line.buffer_out]
        self._fixed_get_time = line.get_time[line.buffer_in][:, None]
        self._fixed_put_time = line.put_time[line.buffer_out][:, None]
        self._fixed_put_scale = line.put_scale[line.buffer_out][:, None]
        # else carriers' types are not tracked at all (see ``LineState``)
        self._typed = _types_decide(line, self._has_extra, self._assembly[:, 0])
        # whether an assembly can ever scrap a component (else components are not timed)
        self._can_fail = _assemblies_can_fail(line, self._assembly[:, 0])
        self._condition_of_any = line.condition[0][:, None]  # (R, 1), for untyped lines
        present = {
            "types": self._typed,
            "switch": self._has_switch,
            "storage": self._has_magazine or self._has_collector,
            "assembly": self._has_assembly,
            "typed assembly": self._has_assembly and self._typed,
            "failing assembly": self._can_fail,
            "sequential": self._has_sequential,
            "runs": self._has_runs,
            "workers": line.n_workers > 0,
            "extra": self._has_extra,
            "slowdown": self._has_slowdown,
        }
        self._written = _ALWAYS_WRITTEN + tuple(
            name for part, names in _WRITTEN_BY.items() if present[part] for name in names
        )
        self._used = tuple(
            dict.fromkeys(
                self._written
                + _ALWAYS_READ
                + tuple(name for part, names in _READ_BY.items() if present[part] for name in names)
            )
        )
        # (R, width) tables indexed by (row, choice), flattened for _lookup
        self._component_flat = line.component.flatten()
        # the last slot of each (row, k) component buffer: one lookup instead of two in _pending
        self._component_last_flat = line.slot_last[self._component_flat]
        self._component_offset = self._row * line.component.shape[1]
        # with at most one component buffer per row (k is always 0 then), each row's component
        # buffer, its last slot and its getting time are fixed: (R,) indices, see ``_at``
        self._one_component = line.component.shape[1] == 1
        self._fixed_comp_buffer = line.component[:, 0]
        self._fixed_comp_last = line.slot_last[self._fixed_comp_buffer]
        self._fixed_comp_get_time = line.get_time[self._fixed_comp_buffer][:, None]
        self._inputs_flat = line.inputs.flatten()
        self._inputs_offset = self._row * line.inputs.shape[1]
        self._outputs_flat = line.outputs.flatten()
        self._outputs_offset = self._row * line.outputs.shape[1]
        self._condition_flat = line.condition.flatten()
        # flat slot space: slot i can pass its carrier on to slot i + 1 of the same buffer
        owner = line.slot_buffer
        self._passable = (owner[:-1] == owner[1:])[:, None]  # (NS - 1, 1)
        self._slot_time_next = line.slot_time[owner[1:]][:, None]  # (NS - 1, 1), into slot i + 1
        self._null_slot = int(line.slot_first[line.null_buffer])
        self._cmax = line.cmax  # (a property that reads a tensor: kept as an int)
        self._skill_flat = line.worker_skill.flatten()  # (W * R,) skill of worker w at row r
        # the skill of every worker at every station of its pool, when it is one number
        # (a float64 0-d tensor, so that ``where`` keeps float64), else None
        at_station = line.worker_skill.gather(1, line.worker_station).unique()
        self._station_skill = at_station.reshape(()) if at_station.numel() == 1 else None
        self._worker_offset = (
            torch.arange(line.n_workers, device=device)[:, None] * line.rows
        )  # (W, 1)
        self._transition = line.worker_transition[:, None]  # (W, 1)
        self._instant_walks = bool((line.worker_transition == 0).any())
        # the phase after WORKING ends, by row: a switch checks its output, a sequential process
        # turns to its next part, a sink without output starts again, the others put their
        # carrier on (a sink's output, like every non-switch row's, never changes)
        no_out = col.buffer_out == line.null_buffer
        after = torch.where(self._sink & no_out, START, PUT_WAIT)
        after = torch.where(self._sequential, SEQ_NEXT, after)
        self._after_work = torch.where(self._switch, OUT_CHECK, after).to(torch.int8)
        # rows whose work end a sweep would follow only with checks (``_work_ends_only``): all
        # but sequential processes; a sink starting again goes on to GET_WAIT, a switch checks
        # its output
        self._ends_simply = ~self._sequential
        restarts = self._after_work == START
        self._after_end = torch.where(restarts, GET_WAIT, self._after_work).to(torch.int8)
        # whether some such row can work for no time at all, so that its work ends at the
        # instant it starts, in the sweep after (else no work end is left after a sweep;
        # magazines and collectors never work)
        works = ~(self._magazine | self._collector)
        zero = (col.processing_time == 0) & (col.noise_scale == 0)
        self._zero_work = bool((self._ends_simply & works & zero).any())
        # whether a row ever puts a carrier on the null buffer (see ``_finish_put``)
        self._puts_on_null = self._has_switch or bool((no_out & ~self._sink).any())
        # whether the sweeps leave their claims' put times to ``_claim_only`` (see
        # ``_puts_take_time``)
        never_puts = ((self._after_work == START) | self._collector)[:, 0]
        self._defer_puts = _puts_take_time(line, never_puts, self._switch[:, 0])
        # whether they leave the numbers of the works they start to it too (see
        # ``_works_take_time``), on lines where nothing else decides a work time or draws
        simple_work = not (
            self._has_rework
            or self._has_runs
            or self._has_sequential
            or self._has_extra
            or self._has_slowdown
        )
        self._defer_work = (
            self._defer_puts and simple_work and _works_take_time(line, line.noise_scale > 0)
        )
        # where they do, on lines without workers (whose speed-ups make the factor) the work
        # times before the noise and until the draw (``_start_work``'s ``base`` and
        # ``duration``) are the same (R, 1) columns every time: made once, by the same ops
        self._fixed_work: tuple[torch.Tensor, torch.Tensor] | None = None
        if self._defer_work and not line.n_workers:
            base = col.processing_time * 1.0
            self._fixed_work = (base, base - _LOG1P_AT_ZERO * col.noise_scale)
        # bool columns used as masks (and ``after_work``, int8), expanded per batch size (see
        # ``_Wide``)
        self._bool_columns = {
            "source": self._source,
            "sink": self._sink,
            "switch": self._switch,
            "assembly": self._assembly,
            "collector": self._collector,
            "magazine": self._magazine,
            "pooled": self._pooled,
            "sequential": self._sequential,
            "no_input": self._no_input,
            "takes_at_get": self._takes_at_get,
            "takes_at_work": self._takes_at_work,
            "passable": self._passable,
            "alternate": col.alternate,
            "unlimited": col.unlimited,
            "actionable_magazine": col.actionable_magazine,
            "plain_get": ~(self._assembly | self._collector),  # GETTING ends in WORKING
            "after_work": self._after_work,  # (int8: phase codes)
            "ends_simply": self._ends_simply,
            "noisy": col.noise_scale > 0,
            "restarts": restarts,
            "after_end": self._after_end,  # (int8: phase codes)
        }
        self._wides: OrderedDict[int, _Wide] = OrderedDict()
        self._widest: _Wide | None = None  # the largest batch's (see ``_Wide``)
        self._last_wide: _Wide | None = None  # the last one asked for

    def _wide(self, batch: int) -> _Wide:
        """The ``_Wide`` constants for batch size ``batch`` (the largest batch's and the last few
        sizes' are kept; those smaller than the largest batch so far slice its constants).

        The largest is looked up apart from the last few sizes (the compacted batches bring new
        ones all the time, which would soon evict it and make it again, stacks and all)."""
        wide = self._last_wide
        if wide is not None and wide._batch == batch:
            return wide
        widest = self._widest
        wide = widest if widest is not None and widest._batch == batch else self._wides.get(batch)
        if wide is None:
            parent = widest if widest is not None and widest._batch > batch else None
            wide = self._wides[batch] = _Wide(self._bool_columns, self.line.rows, batch, parent)
            if parent is None:
                self._widest = wide
            if len(self._wides) > WIDE_CACHE:
                self._wides.popitem(last=False)
        elif wide is not widest:
            self._wides.move_to_end(batch)
        self._last_wide = wide
        return wide

    # --- the event loop ---------------------------------------------------------------------
    def next_event(self, state: LineState) -> torch.Tensor:
        """Earliest pending timer, slot arrival or worker arrival of each instance (B,).

        ``ready`` is finite exactly at the slots of moving carriers (held, not yet arrived), so
        its minimum over the slots is the earliest slot arrival.
        """
        return self._next_events(state)[1]

    def _next_events(self, state: LineState) -> tuple[torch.Tensor, torch.Tensor]:
        """Each instance's earliest timer or slot arrival, and its earliest event (``next_event``:
        the same, or a worker arrival), both (B,)."""
        timed = torch.minimum(state.wake.amin(dim=0), state.ready.amin(dim=0))
        if self.line.n_workers:
            return timed, torch.minimum(timed, state.w_arrive.amin(dim=0))
        return timed, timed

    def advance(self, state: LineState, until: torch.Tensor, rng: InstanceRNG) -> None:
        """Process every event strictly before ``until`` (B,) and set the clocks to ``until``.

        Each event round moves the instances with an event before ``until`` to their next
        event time and settles them there (see ``_settle``). An instance without an event
        before ``until`` in one round has none in any later round (only its own events change
        it), so when few enough are left, they are gathered into a smaller batch once, which
        runs all the remaining rounds (shrinking again as it goes) and is written back once.
        """
        if self.line.n_workers:
            self._arrive_walkers_now(state, until)
        self._advance(state, until, rng)

    def _arrive_walkers_now(self, state: LineState, until: torch.Tensor) -> None:
        """Workers whose walk ends at the very start of ``advance`` (``w_arrive == now``, before
        ``until``) arrive, before the event rounds.

        The first round would let them arrive at ``now`` first thing: in a sweep, workers
        arrive after ``_slots`` (which no worker affects) and before every other rule, and in
        an instance whose only event they are, ``_arrive_walkers_only`` does just this. An
        action is taken at a whole step and a walk lasts a whole number of steps in most lines,
        so most instances have such walkers at the start of a step: arriving here spares a
        round over the whole batch (its ``next_event`` and ``_arrive_walkers_only``).
        """
        now = state.now[None]
        arriving = (state.w_arrive <= now) & (state.now < until)[None]
        self._workers_arrive(state, None, arriving)

    def _advance(self, state: LineState, until: torch.Tensor, rng: InstanceRNG) -> None:
        """``advance`` after its start: the event rounds (see ``advance``)."""
        batch = until.shape[0]
        while True:
            t_timed, t_next = self._next_events(state)
            active = t_next < until
            n_active = int(active.sum())
            if n_active == 0:
                break
            if _worth_compacting(n_active, batch):
                index = torch.nonzero(active).squeeze(1)
                sub_state, sub_rng = _select(state, index, self._used), _select_rng(rng, index)
                self._advance(sub_state, until.index_select(0, index), sub_rng)
                _write_back(state, sub_state, index, self._written)
                rng.counter.index_copy_(0, index, sub_rng.counter)
                break
            state.now = torch.where(active, t_next, state.now)
            if self.line.n_workers or self._has_switch:
                if self.line.n_workers:
                    active = self._arrive_walkers_only(state, active, t_timed <= t_next)
                if self._has_switch:
                    active = self._poll_again_only(state, active)
                n_active = int(active.sum())
                if n_active == 0:
                    continue
            self._settle(state, active, n_active, rng)
        state.now = until.clone()

    def _arrive_walkers_only(
        self, state: LineState, active: torch.Tensor, timed: torch.Tensor
    ) -> torch.Tensor:
        """Settle the ``active`` instances whose only event now is workers ending their walk, and
        return the other active instances (B,), which need a full ``_settle``. ``timed`` (B,):
        whether a timer or a slot arrival is due now (in the active instances, whose clock is at
        their next event: whether its earliest timer or slot arrival is that event).

        At the start of a round every instance is settled (nothing was pending when its last
        settle ended, and only time has passed since; an action only sends workers walking), so
        in such an instance a sweep would only let the workers arrive (and maybe walk on), after
        which nothing is pending: no timer is due, no carrier arrives, and a worker's arrival
        enables no rule. Doing just that, without a sweep over the whole batch, is the same.
        Actions send the workers of most instances walking, and their arrivals would otherwise
        make full-batch sweeps in which almost nothing happens.
        """
        walkers_only = _and_not(active, timed)
        if not _any(walkers_only):
            return active
        self._workers_arrive(state, walkers_only, state.w_arrive <= state.now[None])
        return active & timed

    def _poll_again_only(self, state: LineState, active: torch.Tensor) -> torch.Tensor:
        """Settle the ``active`` instances whose only events now are switches' input polls that
        find the selected input empty, and return the other active instances (B,).

        In a sweep such a switch would go IN_POLL -> START -> IN_POLL with ``wake = now +
        poll`` (``_start``), and, the instance being settled otherwise (see
        ``_arrive_walkers_only``), nothing else would happen. Switches poll on a fixed interval
        in most instances, so this spares the full-batch sweeps those polls would make.
        """
        w = self._wide(state.now.shape[0])
        now = state.now[None]
        due = state.wake <= now
        selected = _lookup(self._inputs_flat, self._inputs_offset + state.index_in)
        empty = state.count.gather(0, selected) == 0
        poll_fails = due & (state.phase == w.phase(IN_POLL)) & empty
        others = [_and_not(due, poll_fails), state.ready <= now]
        if self.line.n_workers:
            others.append(state.w_arrive <= now)
        other = _any_rows(torch.cat(others))
        polls_only = _and_not(active, other)
        if not _any(polls_only):
            return active
        again = poll_fails & polls_only[None]
        state.wake = torch.where(again, now + self.col.poll, state.wake)
        return active & other

    def _settle(
        self, state: LineState, active: torch.Tensor, n_active: int, rng: InstanceRNG
    ) -> None:
        """Sweep the ``active`` instances until nothing more can happen at their current instant.

        After each sweep only the instances with something still pending (``_pending``) sweep
        again, so no sweep is spent confirming that nothing changes; those with only claims and
        the ends of works that took no time pending make them without a sweep
        (``_work_ends_only``, ``_claim_only``). When fewer than half of
        the batch still sweep, they are gathered into a smaller batch, settled there (again
        shrinking as they finish) and written back in place: the work is elementwise per
        instance, so the result is the same.
        """
        batch = active.shape[0]
        due = None
        for _ in range(MAX_SWEEPS):
            if _worth_compacting(n_active, batch):
                index = torch.nonzero(active).squeeze(1)
                sub_state = _select(state, index, self._used)
                sub_rng = _select_rng(rng, index)
                self._settle(sub_state, torch.ones_like(index, dtype=torch.bool), n_active, sub_rng)
                _write_back(state, sub_state, index, self._written)
                rng.counter.index_copy_(0, index, sub_rng.counter)
                return
            undrawn = self._sweep(state, active, rng, everyone=n_active == batch, due=due)
            pending, claims, due, ends, first_held = self._pending(state)
            if ends is not None:
                pending, claims = self._work_ends_only(
                    state, active, pending, ends, claims, first_held
                )
            active = self._claim_only(state, active, pending, claims, rng, undrawn)
            n_active = int(active.sum())
            if n_active == 0:
                return
        raise RuntimeError("line did not settle: a zero-time cycle of moves")  # pragma: no cover

    def _pending(
        self, state: LineState
    ) -> tuple[torch.Tensor, torch.Tensor, _Due, torch.Tensor | None, torch.Tensor]:
        """Instances (B,) where a sweep at ``state.now`` would still do something other than a
        claim or a simple work end, the claims (R, B), the due timers and arrivals it found
        (for the next sweep, see ``_Due``), the simple work ends (R, B; None on lines
        without zero-time work, where they are left in the due timers), and whether each row's
        output's first slot is held (R, B; for ``_work_ends_only``, which changes no slot).

        Exactly the preconditions of the sweep's rules: a due timer, slot arrival or worker
        arrival; a row in START or OUT_CHECK (they always move on); a row waiting for a carrier
        that has arrived; and, returned apart (see ``_claim_only``), a row waiting for a slot
        that is free (a claim), and (see ``_work_ends_only``) a due WORKING timer of a row that is not a sequential process,
        unless it is a sink that would start again and take a carrier that has arrived. (No
        carrier can move on after a sweep, see ``_slots``.)
        """
        w = self._wide(state.now.shape[0])
        line = self.line
        now = state.now[None]
        phase = state.phase
        due = _Due(
            timers=state.wake <= now,
            slots=state.ready <= now,
            workers=state.w_arrive <= now if line.n_workers else None,
        )
        arrived_in = self._arrived_at(state, self._in_last_slot(state))
        if self._zero_work:
            ends = due.timers & (phase == w.phase(WORKING))
            if self._has_sequential:  # (the only rows that do not end simply)
                ends &= w.ends_simply
            ends = _and_not(ends, w.restarts & arrived_in)
            timers = _and_not(due.timers, ends)
        else:
            ends, timers = None, due.timers
        pending = timers | (phase == w.phase(START))
        if self._has_switch:  # (only switches check their output)
            pending |= phase == w.phase(OUT_CHECK)
        if self._has_sequential:
            pending |= phase == w.phase(SEQ_NEXT)
        waiting = phase == w.phase(GET_WAIT)
        pending |= waiting & (w.no_input | arrived_in)
        if self._has_assembly:
            comp_last = self._comp_last_slot(state)
            pending |= (phase == w.phase(COMP_WAIT)) & self._arrived_at(state, comp_last)
        first = self._out_first_slot(state)
        first_held = _at(state.held, first)
        claims = _and_not(phase == w.phase(PUT_WAIT), first_held)
        # one reduction over the rows of all the (rows, B) conditions stacked, instead of one
        # reduction per condition and an or of the results (fewer torch calls)
        conditions = [pending, due.slots]
        if due.workers is not None:
            conditions.append(due.workers)
        return _any_rows(torch.cat(conditions)), claims, due, ends, first_held

    def _work_ends_only(
        self,
        state: LineState,
        active: torch.Tensor,
        pending: torch.Tensor,
        ends: torch.Tensor,
        claims: torch.Tensor,
        first_held: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """End the simple work ends (``ends``, (R, B), see ``_pending``) of the ``active``
        instances whose only pending rules are such ends and claims, and return ``pending``
        and the claims (R, B) with those of the rows that now wait to put their carrier on
        (``first_held``: whether each row's output's first slot is held, from ``_pending``).

        A sweep of such an instance would end the work (release its workers, count a sink's
        part, set ``last_time``; a sink without output starts again and waits for a carrier,
        which has not arrived; a switch checks its selected output: room, it waits to put on,
        else it polls again; the others wait to put their carrier on) and claim the free
        first slots, drawing the put times once for all its claims, as ``_claim_only`` then
        does; nothing else: no other rule's precondition holds, and a work end changes no
        slot. Rows that work for no time (the WaitingTime sink and main source, the
        ComplexLine switch) end their work at the instant they start it, which made a second
        sweep in most settles of such lines.
        """
        ending = ends & _and_not(active, pending)[None]  # (one check: most settles have ends)
        if not _any(ending):
            return pending, claims
        w = self._wide(state.now.shape[0])
        if self.line.n_workers:
            self._release(state, ending)
        finished = ending & w.sink
        state.n_parts = state.n_parts + finished.sum(dim=0)
        state.last_time = torch.where(ending, state.now[None] - state.started, state.last_time)
        if self._typed:
            state.carrier_type = torch.where(
                finished, _scalar(EMPTY_TYPE, state.carrier_type), state.carrier_type
            )
        state.wake = torch.where(ending, _scalar(INF, state.wake), state.wake)
        phase = _choose(ending, w.after_end, state.phase)
        if self._has_switch:  # OUT_CHECK, as in ``_sweep`` (it may change ``cur_out``)
            phase = self._check_output(state, ending & w.switch, phase)
            first_held = _at(state.held, self._out_first_slot(state))
        state.phase = phase
        # the rows waiting to put on are those that were (their claims, with the same first
        # slots) and the ending rows that now do (they were WORKING): no or of the two needed
        return pending, _and_not(phase == w.phase(PUT_WAIT), first_held)

    def _check_output(
        self, state: LineState, checking: torch.Tensor, phase: torch.Tensor
    ) -> torch.Tensor:
        """OUT_CHECK of the switch rows ``checking`` (R, B): with room on the selected output,
        it becomes ``cur_out`` and the row waits to put on (PUT_WAIT); else the row polls again
        after ``poll_interval`` (OUT_POLL). Returns ``phase`` with the new phases."""
        w = self._wide(state.now.shape[0])
        selected = _lookup(self._outputs_flat, self._outputs_offset + state.index_out)
        room = state.count.gather(0, selected) < _lookup(self.line.capacity, selected)
        state.cur_out = torch.where(checking & room, selected, state.cur_out)
        state.wake = torch.where(
            _and_not(checking, room), state.now[None] + self.col.poll, state.wake
        )
        return _choose(checking, _choose(room, PUT_WAIT, w.phase(OUT_POLL)), phase)

    def _claim_only(
        self,
        state: LineState,
        active: torch.Tensor,
        pending: torch.Tensor,
        claims: torch.Tensor,
        rng: InstanceRNG,
        undrawn: _Undrawn | None = None,
    ) -> torch.Tensor:
        """Let the ``active`` instances (B,) whose only pending rule is a claim (``claims``,
        (R, B): PUT_WAIT rows whose output's first slot is free; ``pending``: the instances
        with anything else pending, see ``_pending``) claim their slots, and return the active
        instances that need another sweep (``active & pending``).

        A sweep of such an instance would only claim (no timer is due, no carrier arrives or
        can move on, no row waits for an arrived carrier, none is in START, OUT_CHECK or
        SEQ_NEXT), drawing the put times (``_start_put``) as here, after which nothing is
        pending: a claim fills a first slot, which lets no carrier move. Most of the second
        sweeps of a settle were such claims: a take lets the carriers behind it move on
        (``_sweep``'s last ``_move``), which frees the first slot a row is waiting for.

        ``undrawn``: the draws the sweep just left (see ``_puts_take_time``), made here first,
        with these in one draw where they can share it (``_draw_undrawn``).
        """
        # (one check, not one of ``claims`` first: most settles have some)
        free = claims & _and_not(active, pending)[None]
        claiming = _any(free)
        if claiming:
            state.phase = _choose(free, PUTTING, state.phase)
            self._hold_first(state, free)
        if undrawn is not None or claiming:
            self._draw_undrawn(state, undrawn, free if claiming else None, rng)
        return active & pending

    def apply_action(self, state: LineState, action: torch.Tensor) -> None:
        """Apply a batched ``MultiDiscrete`` action (B, A) in the layout of ``features.action_slots``."""
        line = self.line
        for j, (kind, row, worker) in enumerate(line.actions):
            value = action[:, j]
            if kind == "waiting_time":
                state.waiting[row] = value.to(torch.float64) * line.waiting_step[row]
            elif kind == "index_in":
                state.index_in[row] = value
            elif kind == "index_out":
                state.index_out[row] = value
            elif kind == "magazine":
                state.target[row] = value
            else:
                # (an index_select, faster than indexing; it takes int32 and int64 indices)
                index = value if value.dtype in (torch.int32, torch.int64) else value.long()
                state.w_target[worker] = line.worker_station[worker].index_select(0, index)
        if line.n_workers:
            self._workers_leave(state, torch.ones_like(state.now, dtype=torch.bool))

    # --- one sweep ----------------------------------------------------------------------------
    def _sweep(
        self,
        state: LineState,
        active: torch.Tensor,
        rng: InstanceRNG,
        everyone: bool = False,
        due: _Due | None = None,
    ) -> _Undrawn | None:
        """One pass of everything that happens at ``state.now`` in the ``active`` instances.

        Every rule is applied with masks over the whole batch; a rule that concerns no row at
        all is skipped (a cheap check on the CPU that saves most of the work). ``due``: the
        comparisons with ``now`` that ``_pending`` made on this very state, if it did.

        Returns the draws it left to the ``_claim_only`` after it (the put times of its claims,
        on lines where ``_defer_puts``, and the noise of the works it started, where
        ``_defer_work``), or None.
        """
        w = self._wide(state.now.shape[0])
        line, col = self.line, self.col
        now = state.now[None]
        act = None if everyone else active[None]  # None: every instance (no masking)
        self._slots(state, None if everyone else active, None if due is None else due.slots)
        if line.n_workers:
            arriving = state.w_arrive <= now if due is None else due.workers
            self._workers_arrive(state, None if everyone else active, arriving)
        due = _only(act, state.wake <= now if due is None else due.timers)
        phase = state.phase
        # rows that start working, and assemblies that fail a component (None: none so far)
        start_work: torch.Tensor | None = None
        failed: torch.Tensor | None = None
        handling = None
        unblocked = False  # whether a take or a put may have let carriers move on
        # how many due rows are in each phase: a due rule whose phase is absent is skipped (no
        # rule of the due block leads to a phase that a later due rule reads)
        due_in = _phase_counts(due, phase, w)

        if sum(due_in):
            # PUTTING ends: the carrier arrives in the first slot; switches may alternate.
            if due_in[PUTTING]:
                done = due & (phase == w.phase(PUTTING))
                self._finish_put(state, done)
                unblocked = True
                if self._has_switch:
                    step = done & w.switch & w.alternate
                    state.index_in = torch.where(
                        step, (state.index_in + 1) % col.n_inputs, state.index_in
                    )
                    state.index_out = torch.where(
                        step, (state.index_out + 1) % col.n_outputs, state.index_out
                    )
                phase = _choose(done, START, phase)
            # WORKING ends: release workers; a sink counts its part; a switch checks its output.
            if due_in[WORKING]:
                done = due & (phase == w.phase(WORKING))
                if line.n_workers:
                    self._release(state, done)
                finished = done & w.sink
                state.n_parts = state.n_parts + finished.sum(dim=0)
                if self._has_sequential:
                    # a sequential process adds the part's time and turns to the next part
                    part_done = done & w.sequential
                    state.seq_total = torch.where(
                        part_done, state.seq_total + (now - state.started), state.seq_total
                    )
                    state.seq_part = state.seq_part + part_done.long()
                    done_other = _and_not(done, w.sequential)
                else:
                    done_other = done
                state.last_time = torch.where(done_other, now - state.started, state.last_time)
                if self._typed:
                    state.carrier_type = torch.where(
                        finished, _scalar(EMPTY_TYPE, state.carrier_type), state.carrier_type
                    )
                phase = _choose(done, w.after_work, phase)
            if due_in[HANDLING] or due_in[SEQ_ERROR]:
                # HANDLING ends: start with the first part; SEQ_ERROR ends: process the part.
                handled = due & (phase == w.phase(HANDLING))
                state.seq_part = torch.where(handled, _scalar(0, state.seq_part), state.seq_part)
                state.seq_total = torch.where(
                    handled, _scalar(0.0, state.seq_total), state.seq_total
                )
                phase = _choose(handled, SEQ_NEXT, phase)
                recovered = due & (phase == w.phase(SEQ_ERROR))
                state.seq_total = torch.where(
                    recovered, state.seq_total + (now - state.started), state.seq_total
                )
                start_work = _or(start_work, recovered)
            # FAILING ends: one more scrapped component; wait for the next one.
            if due_in[FAILING]:
                done = due & (phase == w.phase(FAILING))
                state.n_scrap = state.n_scrap + done.long()
                phase = _choose(done, COMP_WAIT, phase)
            # COMP_GETTING ends: check the component's assembly condition.
            if due_in[COMP_GETTING]:
                done = due & (phase == w.phase(COMP_GETTING))
                if self._can_fail:
                    if self._typed:
                        flat = state.comp_type * line.rows + self._row
                        limit = _lookup(self._condition_flat, flat)
                    else:  # (the same for every type)
                        limit = self._condition_of_any
                    valid = (now - state.comp_created) < limit
                    ok, failed = done & valid, _and_not(done, valid)
                else:  # (every condition is infinite: every component is valid)
                    ok = done
                next_k = state.comp_k + ok.long()
                all_done = ok & (next_k >= col.n_components)
                state.comp_k = torch.where(ok, next_k, state.comp_k)
                phase = _choose(_and_not(ok, all_done), COMP_WAIT, phase)
                if failed is not None:
                    phase = _choose(failed, FAILING, phase)
                start_work = _or(start_work, all_done)
            # GETTING ends: collectors store the carrier; assemblies turn to their components
            # (holding their workers from now on); everything else starts working.
            if due_in[GETTING]:
                done = due & (phase == w.phase(GETTING))
                if self._has_collector:  # (lines without collectors skip their masks)
                    collected = done & w.collector
                    if _any(collected):
                        state.stored = state.stored.scatter_add(
                            0, col.parent.expand_as(collected), collected.long()
                        )
                    phase = _choose(collected, START, phase)
                if line.n_workers:
                    self._take_workers(state, done & w.takes_at_get)
                if self._has_assembly:  # (lines without assemblies skip their mask)
                    to_components = done & w.assembly
                    state.comp_k = torch.where(
                        to_components, _scalar(0, state.comp_k), state.comp_k
                    )
                    phase = _choose(to_components, COMP_WAIT, phase)
                if self._has_sequential:  # sequential processes first take the carrier in
                    handling = done & w.sequential
                    phase = _choose(handling, HANDLING, phase)
                    done = _and_not(done, handling)
                start_work = _or(start_work, done & w.plain_get)
            # Timers that only lead back to a check.
            if due_in[WAIT]:
                phase = _choose(due & (phase == w.phase(WAIT)), GET_WAIT, phase)
            if due_in[IN_POLL]:
                phase = _choose(due & (phase == w.phase(IN_POLL)), START, phase)
            if due_in[OUT_POLL]:
                phase = _choose(due & (phase == w.phase(OUT_POLL)), OUT_CHECK, phase)
            inf = _scalar(INF, state.wake)
            after = inf if failed is None else torch.where(failed, now + col.nok_time, inf)
            state.wake = torch.where(due, after, state.wake)
            if handling is not None:
                state.wake = torch.where(handling, now + col.handling_time, state.wake)
            # Magazines: after the getting time (or a poll) take a stored carrier, or poll again.
            if due_in[FETCH] or due_in[MAG_POLL]:
                fetched = due & ((phase == w.phase(FETCH)) | (phase == w.phase(MAG_POLL)))
                phase = self._magazine_take(state, fetched, phase)
        # The rules below read the phases as earlier rules leave them; ``now_in`` counts the
        # active rows per phase here, and a rule runs when its phase or one leading to it
        # within the sweep is present (START -> GET_WAIT; OUT_CHECK, SEQ_NEXT -> PUT_WAIT).
        now_in = _phase_counts(act, phase, w)
        # START.
        if now_in[START]:
            starting = _only(act, phase == w.phase(START))
            phase = self._start(state, starting, phase)
        # GET_WAIT: unlimited sources work at once; others take an arrived carrier.
        if now_in[GET_WAIT] or now_in[START]:
            waiting = _only(act, phase == w.phase(GET_WAIT))
            start_work = _or(start_work, waiting & w.no_input)
            in_last = self._in_last_slot(state)
            ready = _and_not(waiting, w.no_input) & self._arrived_at(state, in_last)
        else:
            ready = None
        if ready is not None and _any(ready):
            self._take(state, ready, self._cur_in(state), in_last, component=False)
            unblocked = True
            phase = _choose(ready, GETTING, phase)
            get_time = (
                _lookup(line.get_time, state.cur_in) if self._has_switch else self._fixed_get_time
            )
            state.wake = torch.where(ready, now + get_time, state.wake)
        # COMP_WAIT: take an arrived component carrier from the k-th component buffer.
        if now_in[COMP_WAIT]:
            waiting = _only(act, phase == w.phase(COMP_WAIT))
            comp_last = self._comp_last_slot(state)
            ready = waiting & self._arrived_at(state, comp_last)
            if _any(ready):
                if self._one_component:
                    buffer, get_time = self._fixed_comp_buffer, self._fixed_comp_get_time
                else:
                    buffer = _lookup(self._component_flat, self._comp_flat(state))
                    get_time = _lookup(line.get_time, buffer)
                self._take(state, ready, buffer, comp_last, component=True)
                unblocked = True
                phase = _choose(ready, COMP_GETTING, phase)
                state.wake = torch.where(ready, now + get_time, state.wake)
        # SEQ_NEXT: process the next part (after an error, with its probability), or put the
        # carrier on when every part is done.
        if now_in[SEQ_NEXT]:
            next_part = _only(act, phase == w.phase(SEQ_NEXT))
            start_work, phase = self._next_part(state, next_part, start_work, phase, rng)
        # Start processing.
        undrawn = None
        if start_work is not None and _any(start_work):
            undrawn = self._start_work(state, start_work, rng)
            phase = _choose(start_work, WORKING, phase)
        # OUT_CHECK (switches): the selected output must not be full.
        if now_in[OUT_CHECK]:
            checking = _only(act, phase == w.phase(OUT_CHECK))
            phase = self._check_output(state, checking, phase)
        # PUT_WAIT: claim the first slot of the output when it is free.
        free = None
        if now_in[PUT_WAIT] or now_in[OUT_CHECK] or now_in[SEQ_NEXT]:
            waiting = _only(act, phase == w.phase(PUT_WAIT))
            first = self._out_first_slot(state)
            free = _and_not(waiting, _at(state.held, first))
            phase = _choose(free, PUTTING, phase)
        state.phase = phase
        if free is not None and _any(free):
            if self._defer_puts:
                self._hold_first(state, free)
                undrawn = _Undrawn(claimed=free) if undrawn is None else undrawn
                undrawn.claimed = free
            else:
                self._start_put(state, free, rng)
        if unblocked:
            self._move_on(state, act)
        return undrawn

    def _move_on(self, state: LineState, act: torch.Tensor | None) -> None:
        """The end of a sweep in which a row took a carrier off or a put ended: the carriers
        that can move on now (into the slot a take freed, or from the first slot a put filled)
        move (``_move``) here instead of in the next sweep's ``_slots``, which does them before
        anything else (here they come after this sweep's claims, which draw numbers: the same
        order). The instance is then often settled, or has only a claim pending (see
        ``_claim_only``), and needs no second sweep."""
        self._move(state, act)

    def _part_index(self, state: LineState) -> torch.Tensor:
        """Flat index (R, B) of (carrier type, row, part being processed) into part tables."""
        line = self.line
        part = state.seq_part.clamp(max=self._n_parts - 1)
        return (state.carrier_type * line.rows + self._row) * self._n_parts + part

    def _next_part(
        self,
        state: LineState,
        mask: torch.Tensor,
        start_work: torch.Tensor | None,
        phase: torch.Tensor,
        rng: InstanceRNG,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        line = self.line
        now = state.now[None]
        count = _lookup(line.part_count.flatten(), state.carrier_type * line.rows + self._row)
        finished = mask & (state.seq_part >= count)
        state.last_time = torch.where(finished, state.seq_total, state.last_time)
        todo = _and_not(mask, finished)
        flat = self._part_index(state)
        probability = _lookup(line.part_error_probability.flatten(), flat)
        u = _uniform_pairs(rng, line.rows, _any_rows(todo))
        error = todo & (u[:, 0] < probability)
        duration = (
            _lookup(line.part_error_time.flatten(), flat)
            - torch.log1p(-u[:, 1]) * self.col.error_scale
        )
        state.started = torch.where(error, now, state.started)
        state.wake = torch.where(error, now + duration, state.wake)
        phase = _choose(finished, PUT_WAIT, _choose(error, SEQ_ERROR, phase))
        return _or(start_work, _and_not(todo, error)), phase

    def _start(self, state: LineState, starting: torch.Tensor, phase: torch.Tensor) -> torch.Tensor:
        """START: sources wait, switches check their input, magazines fetch, others get."""
        w = self._wide(state.now.shape[0])
        col = self.col
        now = state.now[None]
        waits = starting & w.source & (state.waiting > 0)
        state.wake = torch.where(waits, now + state.waiting, state.wake)
        new_phase = _choose(waits, WAIT, w.phase(GET_WAIT))
        if self._has_switch:
            selected = _lookup(self._inputs_flat, self._inputs_offset + state.index_in)
            has_carrier = state.count.gather(0, selected) > 0
            switch = starting & w.switch
            state.cur_in = torch.where(switch & has_carrier, selected, state.cur_in)
            state.wake = torch.where(_and_not(switch, has_carrier), now + col.poll, state.wake)
            new_phase = _choose(switch, _choose(has_carrier, GET_WAIT, w.phase(IN_POLL)), new_phase)
        if self._has_magazine:
            magazine = starting & w.magazine
            self._match_target(state, magazine)
            state.wake = torch.where(magazine, now + col.getting_time, state.wake)
            new_phase = _choose(magazine, FETCH, new_phase)
        return _choose(starting, new_phase, phase)

    def _magazine_take(
        self, state: LineState, mask: torch.Tensor, phase: torch.Tensor
    ) -> torch.Tensor:
        w = self._wide(state.now.shape[0])
        unlimited = w.unlimited
        self._match_target(state, mask)
        take = mask & (unlimited | (state.stored > 0))
        state.stored = state.stored - _and_not(take, unlimited).long()
        state.carrier_created = torch.where(
            take, _scalar(0.0, state.carrier_created), state.carrier_created
        )
        if self._typed:
            state.carrier_type = torch.where(
                take, _scalar(EMPTY_TYPE, state.carrier_type), state.carrier_type
            )
        wait = _and_not(mask, take)
        state.wake = torch.where(wait, state.now[None] + 1.0, state.wake)
        return _choose(take, PUT_WAIT, _choose(wait, MAG_POLL, phase))

    def _match_target(self, state: LineState, mask: torch.Tensor) -> None:
        w = self._wide(state.now.shape[0])
        matched = mask & w.actionable_magazine
        state.stored = torch.where(matched, state.target, state.stored)

    # --- slots --------------------------------------------------------------------------------
    def _slots(
        self, state: LineState, active: torch.Tensor | None, arrivals: torch.Tensor | None
    ) -> None:
        """Arrivals due at ``now``, then carriers moving on into free slots, as if downstream first.

        A moving carrier's ``ready`` is its arrival time and every other slot's is ``inf``, so
        ``ready <= now`` alone marks the arrivals. Processing the slots downstream first, an
        arrived carrier at slot ``k`` moves into ``k + 1`` when that slot is free or its own
        arrived carrier moves on: so a run of arrived carriers ending at a free slot all move
        one slot on. The moves of all slots are found first (a recurrence over the slots from
        the last one) and then applied at once. ``arrivals``: ``state.ready <= now`` if known.

        Without arrivals no carrier can move on: none could after the last sweep (its own moves
        or ``_move_on``'s came last), and nothing since frees a slot (``_claim_only`` and
        ``_work_ends_only`` only fill first slots or touch none), so the moves are skipped.
        """
        act = None if active is None else active[None]
        now = state.now[None]
        arriving = _only(act, state.ready <= now if arrivals is None else arrivals)
        if _any(arriving):
            state.arrived.logical_or_(arriving)
            ready = state.ready  # (a where in place: faster than masked_fill_)
            torch.where(arriving, _scalar(INF, ready), ready, out=ready)
            self._move(state, act)

    def _move(self, state: LineState, act: torch.Tensor | None) -> None:
        """Arrived carriers of the instances ``act`` (1, B; None: all) move on into free slots
        (the second half of ``_slots``).

        After it, no arrived carrier of those instances can move on (a moved carrier is not
        arrived, and every slot it leaves was checked), so a second call changes nothing until
        a carrier arrives, a row takes a carrier off or a put ends.
        """
        w = self._wide(state.now.shape[0])
        # in the flat (NS, B) slot space, slot i + 1 is the next slot of slot i (``_passable`` is
        # False at every buffer's last slot, so no move crosses buffers); ``x[1:]`` and ``x[:-1]``
        # are contiguous row ranges, and the in-place updates below write the state itself
        arrived, held = state.arrived, state.held
        # the row ranges, sliced once: each slice is a torch call, which at the compacted batch
        # sizes costs more than the update it feeds
        arrived_from, held_from, held_to = arrived[:-1], held[:-1], held[1:]
        passes = arrived_from & w.passable  # the carrier at i could move on to i + 1
        if act is not None:
            passes &= act
        move = _and_not(passes, held_to)  # (NS - 1, B): the carrier at i moves to i + 1 ...
        if not _any(move):
            return
        # ... or into slot i + 1 when that slot's carrier moves on (a chain of passing carriers,
        # at most C - 1 long). Only where a carrier could follow one that moves into a free
        # slot: without that, going down from the last slot, every move is into a free slot.
        if _any(passes[:-1] & move[1:]):
            # slot i + 1 is or will be free in this pass: free now, or passing its carrier on
            # into a slot that is (in-place methods on the row-range views: ``x[:-1] &= y``
            # would also call __setitem__, a slice and a self-copy more per update)
            free_now = ~held_to
            frees = free_now
            for _ in range(self._cmax - 2):
                chained = free_now.clone()
                chained[:-1].bitwise_or_(passes[1:] & frees[1:])
                frees = chained
            move = passes & frees
        now = state.now[None]
        # ``x & ~move`` in place as ``move < x`` (``_and_not``) written into ``x``: no ``~move``
        torch.lt(move, arrived_from, out=arrived_from)
        torch.lt(move, held_from, out=held_from)
        held_to.bitwise_or_(move)
        ready = state.ready[1:]
        torch.where(move, now + self._slot_time_next, ready, out=ready)
        # (slot i + 1 takes slot i's value: the rows overlap, so ``where`` cannot write in place)
        created = state.slot_created
        created_to = created[1:]
        created_to.copy_(torch.where(move, created[:-1], created_to))
        if self._typed:
            kind = state.slot_type
            kind_to = kind[1:]
            kind_to.copy_(torch.where(move, kind[:-1], kind_to))

    def _comp_flat(self, state: LineState) -> torch.Tensor:
        """Flat (row, k) index (R, B) of each row's current component buffer, for the tables."""
        k = state.comp_k.clamp(max=self.line.component.shape[1] - 1)
        return self._component_offset + k

    def _comp_last_slot(self, state: LineState) -> torch.Tensor:
        """Flat slot index of the last slot of each row's current component buffer: (R, B), or
        (R,) on lines where no assembly has more than one (an index for ``_at``)."""
        if self._one_component:  # (k is always 0)
            return self._fixed_comp_last
        return self._lookup_comp_last(state)

    def _lookup_comp_last(self, state: LineState) -> torch.Tensor:
        """``_comp_last_slot`` looked up by (row, k): (R, B)."""
        return _lookup(self._component_last_flat, self._comp_flat(state))

    def _last_slot(self, buffer: torch.Tensor) -> torch.Tensor:
        """Flat slot index (like ``buffer``) of the last slot of ``buffer``."""
        return _lookup(self.line.slot_last, buffer)

    def _in_last_slot(self, state: LineState) -> torch.Tensor:
        """Flat slot index of the last slot of each row's ``cur_in``: (R, B), or (R,) when no
        switch changes it (an index for ``_at``)."""
        if self._has_switch:  # only switches change their input buffer
            return self._last_slot(state.cur_in)
        return self._fixed_in_last

    def _out_first_slot(self, state: LineState) -> torch.Tensor:
        """Flat slot index of the first slot of each row's ``cur_out``, as ``_in_last_slot``."""
        if self._has_switch:  # only switches change their output buffer
            return _lookup(self.line.slot_first, state.cur_out)
        return self._fixed_out_first

    def _cur_in(self, state: LineState) -> torch.Tensor:
        """Each row's input buffer: the state's (R, B) when switches change it, else the line's
        (R,) (an index for ``_at``)."""
        if self._has_switch:
            return state.cur_in
        return self.line.buffer_in

    def _cur_out(self, state: LineState) -> torch.Tensor:
        """Each row's output buffer, as ``_cur_in``."""
        if self._has_switch:
            return state.cur_out
        return self.line.buffer_out

    def _arrived_at(self, state: LineState, flat: torch.Tensor) -> torch.Tensor:
        return _at(state.arrived, flat)

    @staticmethod
    def _set_at(
        slots: torch.Tensor, flat: torch.Tensor, mask: torch.Tensor, value: torch.Tensor | bool
    ) -> None:
        """Set ``slots`` (NS, B) at the slots ``flat`` (an index for ``_at``) of the rows in
        ``mask`` to ``value`` (scalar or (R, B)), in place; costs ~ R * B, not NS * B.

        The other rows write back what is there. Only a real buffer's one downstream row takes
        from it and only its one upstream row puts on it, so rows sharing a slot (the null
        buffer's) are never in ``mask`` and write the same value.
        """
        current = _at(slots, flat)
        if value is True:
            new = current | mask
        elif value is False:
            new = _and_not(current, mask)
        else:
            new = torch.where(mask, value, current)
        if flat.dim() == 1:
            slots.index_copy_(0, flat, new)
        else:
            slots.scatter_(0, flat, new)

    def _take(
        self,
        state: LineState,
        mask: torch.Tensor,
        buffer: torch.Tensor,
        flat: torch.Tensor,
        component: bool,
    ) -> None:
        """Rows in ``mask`` (R, B) take the carrier in the last slot ``flat`` of ``buffer``."""
        created = _at(state.slot_created, flat)
        origin = _at(state.slot_type, flat) if self._typed else None
        if component:
            if self._can_fail:  # (else only the condition check would read it)
                state.comp_created = torch.where(mask, created, state.comp_created)
            if origin is not None:
                state.comp_type = torch.where(mask, origin, state.comp_type)
        else:
            state.carrier_created = torch.where(mask, created, state.carrier_created)
            if origin is not None:
                state.carrier_type = torch.where(mask, origin, state.carrier_type)
        self._set_at(state.held, flat, mask, False)
        # a slot's carrier has arrived only where the slot is held: so the taken carriers' slots,
        # which are no longer held, are no longer arrived (one op over the slots instead of a
        # ``_set_at``'s three)
        state.arrived.logical_and_(state.held)
        _add_at(state.count, buffer, mask, -1)

    def _start_put(self, state: LineState, mask: torch.Tensor, rng: InstanceRNG) -> None:
        """Rows in ``mask`` (R, B) claim the first slot of their output and draw the put time."""
        self._hold_first(state, mask)
        self._draw_put_times(state, mask, _any_rows(mask), rng)

    def _hold_first(self, state: LineState, mask: torch.Tensor) -> None:
        """Rows in ``mask`` (R, B) claim (hold) the first slot of their output."""
        self._set_at(state.held, self._out_first_slot(state), mask, True)

    def _draw_undrawn(
        self,
        state: LineState,
        undrawn: _Undrawn | None,
        free: torch.Tensor | None,
        rng: InstanceRNG,
    ) -> None:
        """Make the draws a sweep left (``undrawn``: its works' noise, then its claims' put
        times) and then that of the claims ``_claim_only`` made after it (``free``, (R, B) or
        None), each run of them in which no instance is twice in one draw.

        A draw gives each instance the numbers of its counter and advances the counters of
        the instances it is for, and a number depends only on the counter and its lane (a
        draw of ``2R`` lanes holds those of ``R``): an instance in only one draw of a run gets
        the same numbers from one draw of ``2R`` lanes for the run (nothing draws in between),
        and every counter ends the same. The runs draw in order, as the draws would.
        """
        parts: list[tuple[bool, torch.Tensor, torch.Tensor]] = []  # (work?, rows, instances)
        if undrawn is not None:
            if undrawn.work is not None:
                parts.append((True, undrawn.work, undrawn.work_where))  # type: ignore[arg-type]
            if undrawn.claimed is not None:
                parts.append((False, undrawn.claimed, _any_rows(undrawn.claimed)))
        if free is not None:
            parts.append((False, free, _any_rows(free)))
        run = [parts[0]]
        where = parts[0][2]
        for part in parts[1:]:
            if _any(where & part[2]):  # an instance draws again: the run so far draws first
                self._draw_run(state, run, where, undrawn, rng)
                run, where = [part], part[2]
            else:
                run.append(part)
                where = where | part[2]
        self._draw_run(state, run, where, undrawn, rng)

    def _draw_run(
        self,
        state: LineState,
        run: list[tuple[bool, torch.Tensor, torch.Tensor]],
        where: torch.Tensor,
        undrawn: _Undrawn | None,
        rng: InstanceRNG,
    ) -> None:
        """One draw for the ``run`` of ``_draw_undrawn`` (instances ``where``, (B,))."""
        rows = self.line.rows
        puts = None
        for work, mask, _ in run:
            if not work:
                puts = mask if puts is None else puts | mask
        if not run[0][0]:  # (only puts)
            self._draw_put_times(state, puts, where, rng)  # type: ignore[arg-type]
            return
        if puts is None:  # (only the works: the first numbers of pairs, as ``_start_work``)
            self._end_work(state, undrawn, _uniform_firsts(rng, rows, where))  # type: ignore[arg-type]
            return
        # ``log1p(-u)`` of both halves' numbers at once (one call each for the two)
        log = torch.log1p(-_uniform_pairs(rng, rows, where))
        self._end_work(state, undrawn, log[:, 0], logged=True)  # type: ignore[arg-type]
        self._put_times(state, puts, log.view(2 * rows, -1)[:rows], logged=True)

    def _end_work(
        self, state: LineState, undrawn: _Undrawn, u: torch.Tensor, logged: bool = False
    ) -> None:
        """The ends of the works with noise ``undrawn.work`` (R, B), with their numbers ``u``
        (R, B; ``logged``: already as ``log1p(-u)``). (Those without noise have their end: it
        may even have come, at once.)"""
        log = u if logged else torch.log1p(-u)
        duration = undrawn.base - log * self.col.noise_scale
        state.wake = torch.where(undrawn.work, state.now[None] + duration, state.wake)

    def _draw_put_times(
        self, state: LineState, mask: torch.Tensor, where: torch.Tensor, rng: InstanceRNG
    ) -> None:
        """Rows in ``mask`` (R, B) start putting on: ``wake`` after the put time, drawn for the
        instances ``where`` (B,) (those with a row in ``mask``)."""
        line = self.line
        self._put_times(state, mask, _uniform_rows(rng, line.rows, where))

    def _put_times(
        self, state: LineState, mask: torch.Tensor, u: torch.Tensor, logged: bool = False
    ) -> None:
        """Rows in ``mask`` (R, B) start putting on, with their numbers ``u`` (R, B;
        ``logged``: already as ``log1p(-u)``)."""
        line = self.line
        if self._has_switch:
            put_time = _lookup(line.put_time, state.cur_out)
            put_scale = _lookup(line.put_scale, state.cur_out)
        else:
            put_time, put_scale = self._fixed_put_time, self._fixed_put_scale
        duration = put_time - (u if logged else torch.log1p(-u)) * put_scale
        state.wake = torch.where(mask, state.now[None] + duration, state.wake)

    def _finish_put(self, state: LineState, mask: torch.Tensor) -> None:
        first = self._out_first_slot(state)
        self._set_at(state.slot_created, first, mask, state.carrier_created)
        if self._typed:
            self._set_at(state.slot_type, first, mask, state.carrier_type)
        self._set_at(state.arrived, first, mask, True)
        _add_at(state.count, self._cur_out(state), mask, 1)
        if self._puts_on_null:  # (else no row ever puts on it)
            state.arrived[self._null_slot] = False

    def _start_work(
        self, state: LineState, mask: torch.Tensor, rng: InstanceRNG
    ) -> _Undrawn | None:
        """Rows in ``mask`` (R, B) start working. On lines where ``_defer_work`` their numbers
        are left to the ``_claim_only`` after the sweep (returned, see ``_draw_undrawn``):
        until then their works end after the processing time, ``log1p(-u)`` taken as its value
        at ``u = 0`` (-0.0, like ``log1p(-u) * 0`` for every ``u``: the very end of a work
        without noise)."""
        w = self._wide(state.now.shape[0])
        line, col = self.line, self.col
        now = state.now[None]
        if line.n_workers:
            self._take_workers(state, mask & w.takes_at_work)
        # the second number of a row's pair decides rework: without rework anywhere it is
        # never used, so only the first ones are computed (the same draw)
        drawn = _uniform_pairs if self._has_rework else _uniform_firsts
        deferred = self._defer_work
        u = _LOG1P_AT_ZERO if deferred else drawn(rng, line.rows, _any_rows(mask))
        factor = (
            torch.where(w.pooled, state.factor, _scalar(1.0, state.factor))
            if line.n_workers
            else 1.0
        )
        if self._has_slowdown:
            jump = w.assembly & (state.jump_start <= now) & (now < state.jump_end)
            factor = factor * torch.where(jump, state.jump_factor, _scalar(1.0, state.jump_factor))
        time = col.processing_time
        new_part = mask & w.source
        if self._has_runs and _any(new_part):
            self._next_type(state, new_part, rng)
        if self._has_extra:
            # a source's own parts are new (type from its run); sequential processes look up
            # the part being processed, everything else the carrier's parts
            carrier = _lookup(line.type_extra.flatten(), state.carrier_type * line.rows + self._row)
            part = _lookup(line.part_extra.flatten(), self._part_index(state))
            extra = torch.where(w.sequential, part, carrier)
            time = time + torch.where(w.source, _scalar(0.0, extra), extra)
        if self._has_rework:
            duration = time * factor - torch.log1p(-u[:, 0]) * col.noise_scale
            duration = torch.where(u[:, 1] < col.rework_probability, 2 * duration, duration)
        elif deferred:
            if self._fixed_work is not None:  # (the same columns every time)
                base, duration = self._fixed_work
            else:
                base = time * factor
                duration = base - u * col.noise_scale  # (u: log1p(-0.0))
        else:  # (u[:, 1] < 0 never holds)
            duration = time * factor - torch.log1p(-u) * col.noise_scale
        state.started = torch.where(mask, now, state.started)
        state.wake = torch.where(mask, now + duration, state.wake)
        state.carrier_created = torch.where(new_part, now, state.carrier_created)
        if self._typed:
            run_type = state.run_type if self._has_runs else self.col.type_base  # (fixed w/o runs)
            state.carrier_type = torch.where(new_part, run_type, state.carrier_type)
        if not deferred:
            return None
        return _Undrawn(work=mask & w.noisy, base=base, work_where=_any_rows(mask))

    def _next_type(self, state: LineState, sources: torch.Tensor, rng: InstanceRNG) -> None:
        """Sources emit runs of ``run_min … run_min + run_span - 1`` carriers of one random type."""
        col = self.col
        u = _uniform_pairs(rng, self.line.rows, _any_rows(sources))
        new_run = sources & (state.run_left == 0)
        kind = (u[:, 0] * col.n_types).long().clamp(max=col.n_types - 1)
        length = col.run_min + (u[:, 1] * col.run_span).long().clamp(max=col.run_span - 1)
        state.run_type = torch.where(new_run, col.type_base + kind, state.run_type)
        state.run_left = torch.where(new_run, length, state.run_left) - sources.long()

    # --- workers ------------------------------------------------------------------------------
    def _take_workers(self, state: LineState, mask: torch.Tensor) -> None:
        """Rows in ``mask`` hold the free workers standing at them; their speed-up is stored.

        Work is per worker (W, B): each worker looks up its own station in ``mask``.
        """
        if not _any(mask):
            return
        standing = (state.w_arrive == INF) & (state.w_holder < 0)  # (W, B)
        taken = mask.gather(0, state.w_station) & standing
        if self._station_skill is None:
            skill = _lookup(self._skill_flat, self._worker_offset + state.w_station)
        else:  # every worker has this skill at every station it can stand at
            skill = self._station_skill
        # the skills of a row's workers are summed in worker order (as a scatter over (B, W)
        # rows did), so the float sums are the same bits
        total = torch.zeros_like(state.factor).scatter_add_(
            0, state.w_station, torch.where(taken, skill, _scalar(0.0, state.factor))
        )
        state.factor = torch.where(mask, torch.exp(-0.3 * total), state.factor)
        state.w_holder = torch.where(taken, state.w_station, state.w_holder)

    def _release(self, state: LineState, mask: torch.Tensor) -> None:
        w = self._wide(state.now.shape[0])
        if not _any(mask & w.pooled):
            return
        released = mask.gather(0, state.w_holder.clamp(min=0)) & (state.w_holder >= 0)
        state.w_holder = torch.where(released, _scalar(-1, state.w_holder), state.w_holder)
        self._workers_leave(state, _any_rows(released))

    def _workers_leave(self, state: LineState, rows: torch.Tensor) -> None:
        """Free standing workers whose target differs from their station start walking."""
        leave = (
            rows[None]
            & (state.w_holder < 0)
            & (state.w_arrive == INF)
            & (state.w_target != state.w_station)
        )
        if self._instant_walks:
            instant = leave & (self._transition == 0)
            state.w_station = torch.where(instant, state.w_target, state.w_station)
            walk = _and_not(leave, instant)
        else:  # (no walk takes no time)
            walk = leave
        state.w_dest = torch.where(walk, state.w_target, state.w_dest)
        state.w_arrive = torch.where(walk, state.now[None] + self._transition, state.w_arrive)

    def _workers_arrive(
        self, state: LineState, active: torch.Tensor | None, arrived: torch.Tensor
    ) -> None:
        """Workers whose walk ends (``arrived``: ``w_arrive <= now``, (W, B)) reach their station."""
        arriving = _only(None if active is None else active[None], arrived)
        if not _any(arriving):
            return
        state.w_station = torch.where(arriving, state.w_dest, state.w_station)
        state.w_arrive = torch.where(arriving, _scalar(INF, state.w_arrive), state.w_arrive)
        self._workers_leave(state, _any_rows(arriving))
