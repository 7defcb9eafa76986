"""The batched torch LineFlow engine: B independent lines advanced event by event, exactly.

Each instance keeps its own clock. ``advance(state, until)`` repeats, until every instance has
reached ``until``: take each instance's next event time (the earliest station timer, slot
arrival or worker arrival), move its clock there, and apply everything that happens at that
instant (timers that expire, carriers arriving in a slot, and their instantaneous consequences)
in sweeps repeated until nothing changes. Instances never interact, and every random draw comes
from the instance's own counter-based stream, so a batch equals separate runs.

The engine is split by job: ``state`` (the tensors and their resets), ``tensor_ops`` (the CPU-fast
forms of the ops), ``compaction`` (sub-batches of the still-active instances), ``shortcuts``
(what a line lets the engine skip), ``event_loop`` (the event rounds), ``rounds`` (the settle
loop and the rounds that spare a sweep), ``plain`` (settling by full sweeps alone),
``transfers`` (carriers moving) and ``work`` (puts, work, workers). This module holds the
engine's constants and the full sweep. Station programs follow the SimPy engine; the phase
table, the layout and the story of each shortcut are in ``docs/design/lineflow_engine.md``.

``Engine(line, shortcuts=False)`` turns every line-specific shortcut off and runs the plain
rules (the same trajectories, bit for bit; see ``plain``). ``guards=False`` takes every guard
that would ask the device whether a rule has work (``Engine._has``): the rule runs masked,
which costs ops but no host sync. Both off is the GPU mode (``GPU_MODE``): the same
trajectories with a few host syncs per step, only those that end the event and sweep loops.
"""

from __future__ import annotations

from collections import OrderedDict

import torch

from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.lineflow.batched.compaction import (
    _ALWAYS_READ,
    _ALWAYS_WRITTEN,
    _READ_BY,
    _WRITTEN_BY,
)
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
from gymforge.envs.lineflow.batched.event_loop import _EventLoop
from gymforge.envs.lineflow.batched.phases import (
    COMP_GETTING,
    COMP_WAIT,
    FAILING,
    FETCH,
    GET_WAIT,
    GETTING,
    HANDLING,
    IN_POLL,
    MAG_POLL,
    N_PHASES,
    OUT_CHECK,
    OUT_POLL,
    PUT_WAIT,
    PUTTING,
    SEQ_ERROR,
    SEQ_NEXT,
    START,
    WAIT,
    WORKING,
)
from gymforge.envs.lineflow.batched.plain import _Plain
from gymforge.envs.lineflow.batched.rounds import _Rounds
from gymforge.envs.lineflow.batched.shortcuts import (
    _LOG1P_AT_ZERO,
    _assemblies_can_fail,
    _Due,
    _puts_take_time,
    _types_decide,
    _Undrawn,
    _works_take_time,
)
from gymforge.envs.lineflow.batched.state import (
    INF,
    LineColumns,
    LineState,
    initial_state,
    reset_where,
)
from gymforge.envs.lineflow.batched.tensor_ops import (
    _and_not,
    _any,
    _at,
    _choose,
    _lookup,
    _only,
    _or,
    _phase_counts,
    _scalar,
    _Wide,
)
from gymforge.envs.lineflow.batched.transfers import _Transfers
from gymforge.envs.lineflow.batched.work import _Work

# (the state functions the vector env uses, importable from here as before)
__all__ = ["Engine", "LineState", "initial_state", "reset_where"]


WIDE_CACHE = 16  # batch sizes whose expanded constants ``Engine._wide`` keeps

# the phase counts of a sweep under the plain rules: every rule runs, present phase or not
_EVERY_PHASE = [1] * N_PHASES


#: the engine's settings for a device where a host sync costs more than masked work (CUDA)
GPU_MODE = {"shortcuts": False, "guards": False}


class Engine(_EventLoop, _Rounds, _Plain, _Transfers, _Work):
    """Advances a ``LineState`` of a compiled line."""

    def __init__(self, line: CompiledLine, shortcuts: bool = True, guards: bool = True) -> None:
        for name, value in (("shortcuts", shortcuts), ("guards", guards)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} must be True or False, got {value!r}")
        self.line = line
        # False: the plain rules, every line-specific shortcut off (see ``plain``)
        self.shortcuts = shortcuts
        # False: every rule runs masked instead of first asking whether it has work
        self.guards = guards
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
        # (R,) row indices, see ``_at``; the plain rules read the state's buffers everywhere
        self._fixed_buffers = shortcuts and not self._has_switch
        self._fixed_in_last = line.slot_last[line.buffer_in]
        self._fixed_out_first = line.slot_first[line.buffer_out]
        self._fixed_get_time = line.get_time[line.buffer_in][:, None]
        self._fixed_put_time = line.put_time[line.buffer_out][:, None]
        self._fixed_put_scale = line.put_scale[line.buffer_out][:, None]
        # else carriers' types are not tracked at all (see ``LineState``)
        self._typed = not shortcuts or _types_decide(line, self._has_extra, self._assembly[:, 0])
        # whether an assembly can ever scrap a component (else components are not timed)
        self._can_fail = not shortcuts or _assemblies_can_fail(line, self._assembly[:, 0])
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
        self._one_component = shortcuts and line.component.shape[1] == 1
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
        one_skill = shortcuts and at_station.numel() == 1
        self._station_skill = at_station.reshape(()) if one_skill else None
        self._worker_offset = (
            torch.arange(line.n_workers, device=device)[:, None] * line.rows
        )  # (W, 1)
        self._transition = line.worker_transition[:, None]  # (W, 1)
        self._instant_walks = not shortcuts or bool((line.worker_transition == 0).any())
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
        self._zero_work = shortcuts and bool((self._ends_simply & works & zero).any())
        # whether a row ever puts a carrier on the null buffer (see ``_finish_put``)
        self._puts_on_null = not shortcuts or self._has_switch or bool((no_out & ~self._sink).any())
        # whether the sweeps leave their claims' put times to ``_claim_only`` (see
        # ``_puts_take_time``)
        never_puts = ((self._after_work == START) | self._collector)[:, 0]
        self._defer_puts = shortcuts and _puts_take_time(line, never_puts, self._switch[:, 0])
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

    def _has(self, mask: torch.Tensor) -> bool:
        """Whether a rule guarded by ``mask`` has work: any True in ``mask`` (a host sync); with
        ``guards`` off, True whenever ``mask`` has elements (the rule runs, masked, without
        asking). Every guarded rule is a no-op on an all-False mask, so both give the same
        trajectories."""
        if not self.guards:
            return mask.numel() > 0
        return _any(mask)

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

    def apply_action(self, state: LineState, action: torch.Tensor) -> None:
        """Apply a batched ``MultiDiscrete`` action (B, A) in the layout of ``features.action_slots``."""
        line = self.line
        state.waiting_read.zero_()  # reads of this step's action
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
        due_in = _phase_counts(due, phase, w) if self.shortcuts else _EVERY_PHASE

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
                    if self._has(collected):
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
        now_in = _phase_counts(act, phase, w) if self.shortcuts else _EVERY_PHASE
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
        if ready is not None and self._has(ready):
            self._take(state, ready, self._cur_in(state), in_last, component=False)
            unblocked = True
            phase = _choose(ready, GETTING, phase)
            get_time = (
                self._fixed_get_time
                if self._fixed_buffers
                else _lookup(line.get_time, state.cur_in)
            )
            state.wake = torch.where(ready, now + get_time, state.wake)
        # COMP_WAIT: take an arrived component carrier from the k-th component buffer.
        if now_in[COMP_WAIT]:
            waiting = _only(act, phase == w.phase(COMP_WAIT))
            comp_last = self._comp_last_slot(state)
            ready = waiting & self._arrived_at(state, comp_last)
            if self._has(ready):
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
        if start_work is not None and self._has(start_work):
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
        if free is not None and self._has(free):
            if self._defer_puts:
                self._hold_first(state, free)
                undrawn = _Undrawn(claimed=free) if undrawn is None else undrawn
                undrawn.claimed = free
            else:
                self._start_put(state, free, rng)
        if unblocked and self.shortcuts:  # (the plain rules move them in the next sweep)
            self._move_on(state, act)
        return undrawn
