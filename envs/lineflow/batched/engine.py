"""The batched torch LineFlow engine: B independent lines advanced event by event, exactly.

Each instance keeps its own clock. ``advance(state, until)`` repeats, until every instance has
reached ``until``: take each instance's next event time (the earliest station timer or slot
arrival), move its clock there, and apply everything that happens at that instant — timers that
expire, carriers that arrive in a slot, and the instantaneous consequences (a carrier moving on
into a freed slot, a waiting station taking an arrived carrier or claiming a freed slot) —
repeating these sweeps until nothing changes. Instances never interact, and every random draw
comes from the instance's own counter-based stream, so a batch equals separate runs.

Station programs follow the SimPy engine (``sim_stations.py``); phases:

| phase | meaning | ends |
|---|---|---|
| START | between cycles | at once |
| WAIT | a source's waiting time | timer |
| GET_WAIT | waiting for a carrier in the last slot of the input | condition |
| GETTING | taking it off (``get_time``) | timer |
| COMP_WAIT / COMP_GETTING | the same for an assembly's k-th component buffer | condition / timer |
| FAILING | an assembly scrapping an invalid component (``nok_part_error_time``) | timer |
| WORKING | processing (``T·factor + Exp(scale)``, ×2 on rework) | timer |
| PUT_WAIT | waiting for the output's first slot | condition |
| PUTTING | putting the carrier on (``put_time + Exp``) | timer |
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from gymforge.core.seeding import InstanceRNG
from gymforge.envs.lineflow.batched.compiled import (
    KIND_ASSEMBLY,
    KIND_SINK,
    KIND_SOURCE,
    CompiledLine,
)

START, WAIT, GET_WAIT, GETTING, COMP_WAIT, COMP_GETTING, FAILING, WORKING, PUT_WAIT, PUTTING = (
    range(10)
)
INF = float("inf")
MAX_SWEEPS = 64


@dataclass
class LineState:
    """State of B lines. Stations S, buffers NB, slots per buffer C."""

    now: torch.Tensor  # (B,) float64 clock
    phase: torch.Tensor  # (B, S) long
    wake: torch.Tensor  # (B, S) float64, end of the current timed phase (inf: none)
    started: torch.Tensor  # (B, S) float64, start of the current WORKING phase
    last_time: torch.Tensor  # (B, S) float64, last processing time
    waiting: torch.Tensor  # (B, S) float64, sources' waiting time
    carrier_created: torch.Tensor  # (B, S) float64, creation time of the part on the carrier held
    carrier_origin: torch.Tensor  # (B, S) long, station that created it
    comp_k: torch.Tensor  # (B, S) long, assembly: component buffer being served
    comp_created: torch.Tensor  # (B, S) float64, assembly: part on the component carrier held
    comp_origin: torch.Tensor  # (B, S) long
    n_scrap: torch.Tensor  # (B, S) long, per assembly
    scrap_seen: torch.Tensor  # (B, S) long, n_scrap at the last observation
    n_parts: torch.Tensor  # (B,) long
    held: torch.Tensor  # (B, NB, C) bool, slot claimed by a carrier
    arrived: torch.Tensor  # (B, NB, C) bool, the carrier has arrived in the slot
    ready: torch.Tensor  # (B, NB, C) float64, arrival time of a moving carrier
    slot_created: torch.Tensor  # (B, NB, C) float64, creation time of the part on the carrier
    slot_origin: torch.Tensor  # (B, NB, C) long
    count: torch.Tensor  # (B, NB) long, carriers put on and not taken off


def initial_state(line: CompiledLine, batch: int) -> LineState:
    device = line.kind.device
    s, nb, c = line.n_stations, line.n_buffers, line.cmax
    f64 = {"dtype": torch.float64, "device": device}
    zeros_s = torch.zeros(batch, s, **f64)
    return LineState(
        now=torch.zeros(batch, **f64),
        phase=torch.full((batch, s), START, dtype=torch.long, device=device),
        wake=torch.zeros(batch, s, **f64),  # every station starts its program at time 0
        started=zeros_s.clone(),
        last_time=line.processing_time.expand(batch, s).clone(),
        waiting=line.initial_waiting.expand(batch, s).clone(),
        carrier_created=zeros_s.clone(),
        carrier_origin=torch.zeros(batch, s, dtype=torch.long, device=device),
        comp_k=torch.zeros(batch, s, dtype=torch.long, device=device),
        comp_created=zeros_s.clone(),
        comp_origin=torch.zeros(batch, s, dtype=torch.long, device=device),
        n_scrap=torch.zeros(batch, s, dtype=torch.long, device=device),
        scrap_seen=torch.zeros(batch, s, dtype=torch.long, device=device),
        n_parts=torch.zeros(batch, dtype=torch.long, device=device),
        held=torch.zeros(batch, nb, c, dtype=torch.bool, device=device),
        arrived=torch.zeros(batch, nb, c, dtype=torch.bool, device=device),
        ready=torch.full((batch, nb, c), INF, **f64),
        slot_created=torch.zeros(batch, nb, c, **f64),
        slot_origin=torch.zeros(batch, nb, c, dtype=torch.long, device=device),
        count=torch.zeros(batch, nb, dtype=torch.long, device=device),
    )


def reset_where(line: CompiledLine, state: LineState, mask: torch.Tensor) -> None:
    """Start fresh lines in the instances selected by ``mask`` (B,), in place."""
    fresh = initial_state(line, state.now.shape[0])
    for name in LineState.__dataclass_fields__:
        current, new = getattr(state, name), getattr(fresh, name)
        selector = mask.reshape(-1, *([1] * (current.dim() - 1)))
        setattr(state, name, torch.where(selector, new, current))


class Engine:
    """Advances a ``LineState`` of a compiled line; holds the line's index tensors."""

    def __init__(self, line: CompiledLine) -> None:
        self.line = line
        c = line.cmax
        self._in_valid = line.buffer_in >= 0
        self._out_valid = line.buffer_out >= 0
        self._station = torch.arange(line.n_stations, device=line.kind.device)
        # Stations with an input / output, and the flat slot index (buffer·C + slot) of that
        # input's last slot / output's first slot: unique per station, as each buffer has one
        # upstream and one downstream station.
        self._getters = self._station[self._in_valid]
        self._putters = self._station[self._out_valid]
        self._in_buffer = line.buffer_in[self._getters]
        self._out_buffer = line.buffer_out[self._putters]
        self._in_last = self._in_buffer * c + line.last_slot[self._in_buffer]
        self._out_first = self._out_buffer * c
        self._get_time = torch.zeros(line.n_stations, dtype=torch.float64, device=line.kind.device)
        self._get_time[self._getters] = line.get_time[self._in_buffer]
        self._is_source = line.kind == KIND_SOURCE
        self._is_sink = line.kind == KIND_SINK
        self._is_assembly = line.kind == KIND_ASSEMBLY
        self._slot_next_valid = line.slot_valid[:, 1:]  # (NB, C-1): slot k+1 exists

    # --- the event loop ---------------------------------------------------------------------
    def next_event(self, state: LineState) -> torch.Tensor:
        """Earliest pending timer or slot arrival of each instance (B,)."""
        moving = torch.where(state.held & ~state.arrived, state.ready, INF)
        return torch.minimum(state.wake.min(dim=1).values, moving.flatten(1).min(dim=1).values)

    def advance(self, state: LineState, until: torch.Tensor, rng: InstanceRNG) -> None:
        """Process every event strictly before ``until`` (B,) and set the clocks to ``until``."""
        while True:
            t_next = self.next_event(state)
            active = t_next < until
            if not bool(active.any()):
                break
            state.now = torch.where(active, t_next, state.now)
            for _ in range(MAX_SWEEPS):
                if not bool(self._sweep(state, active, rng)):
                    break
            else:  # pragma: no cover - a line whose instantaneous moves never settle
                raise RuntimeError("line did not settle: zero-time cycle of moves")
        state.now = until.clone()

    def _sweep(self, state: LineState, active: torch.Tensor, rng: InstanceRNG) -> torch.Tensor:
        """One pass of everything that happens at ``state.now``; returns whether anything did.

        Branch-free (every rule is applied with masks), so it costs the same for any batch and
        can be compiled.
        """
        now = state.now[:, None]
        act = active[:, None]
        moved = self._slots(state, active)
        due = act & (state.wake <= now)
        old = state.phase
        phase = old

        # PUTTING ends: the carrier arrives in the output's first slot.
        done = due & (phase == PUTTING)
        self._finish_put(state, done)
        phase = torch.where(done, START, phase)
        # WORKING ends; a sink counts its part.
        done = due & (phase == WORKING)
        state.last_time = torch.where(done, now - state.started, state.last_time)
        finished_part = done & self._is_sink
        state.n_parts = state.n_parts + finished_part.sum(dim=1)
        phase = torch.where(
            done, torch.where(finished_part & ~self._out_valid, START, PUT_WAIT), phase
        )
        # FAILING ends: one more scrapped component; wait for the next one.
        done = due & (phase == FAILING)
        state.n_scrap = state.n_scrap + done.long()
        phase = torch.where(done, COMP_WAIT, phase)
        # COMP_GETTING ends: check the component's assembly condition.
        done = due & (phase == COMP_GETTING)
        limit = self.line.condition[state.comp_origin, self._station.expand_as(state.comp_origin)]
        valid = (now - state.comp_created) < limit
        ok = done & valid
        failed = done & ~valid
        next_k = state.comp_k + ok.long()
        all_done = ok & (next_k >= self.line.n_components)
        state.comp_k = torch.where(ok, next_k, state.comp_k)
        phase = torch.where(failed, FAILING, torch.where(ok & ~all_done, COMP_WAIT, phase))
        start_work = all_done
        # GETTING ends: assemblies turn to their components, the others start working.
        done = due & (phase == GETTING)
        to_components = done & self._is_assembly
        state.comp_k = torch.where(to_components, 0, state.comp_k)
        phase = torch.where(to_components, COMP_WAIT, phase)
        start_work = start_work | (done & ~self._is_assembly)
        # WAIT ends (sources).
        phase = torch.where(due & (phase == WAIT), GET_WAIT, phase)
        # Expired timers are consumed; a failure starts its own.
        state.wake = torch.where(
            due, torch.where(failed, now + self.line.nok_time, INF), state.wake
        )

        # START: a source with a waiting time waits; everything else goes for its input.
        starting = act & (phase == START)
        waits = starting & self._is_source & (state.waiting > 0)
        state.wake = torch.where(waits, now + state.waiting, state.wake)
        phase = torch.where(waits, WAIT, torch.where(starting, GET_WAIT, phase))
        # GET_WAIT: without an input (unlimited source) work at once; else take an arrived carrier.
        waiting = act & (phase == GET_WAIT)
        start_work = start_work | (waiting & ~self._in_valid)
        ready = torch.zeros_like(waiting)
        ready[:, self._getters] = (
            waiting[:, self._getters] & state.arrived.flatten(1)[:, self._in_last]
        )
        self._take(state, ready[:, self._getters])
        phase = torch.where(ready, GETTING, phase)
        state.wake = torch.where(ready, now + self._get_time, state.wake)
        # COMP_WAIT: take an arrived component carrier from the k-th component buffer.
        waiting = act & (phase == COMP_WAIT)
        k = state.comp_k.clamp(max=self.line.component.shape[1] - 1)
        buffer = self.line.component[self._station[None, :], k].clamp(min=0)
        flat = buffer * self.line.cmax + self.line.last_slot[buffer]
        ready_component = waiting & state.arrived.flatten(1).gather(1, flat)
        self._take_component(state, ready_component, buffer, flat)
        phase = torch.where(ready_component, COMP_GETTING, phase)
        state.wake = torch.where(ready_component, now + self.line.get_time[buffer], state.wake)
        # Start processing.
        self._start_work(state, start_work, rng)
        phase = torch.where(start_work, WORKING, phase)
        # PUT_WAIT: claim the output's first slot when it is free.
        waiting = act & (phase == PUT_WAIT)
        free = torch.zeros_like(waiting)
        free[:, self._putters] = (
            waiting[:, self._putters] & ~state.held.flatten(1)[:, self._out_first]
        )
        phase = torch.where(free, PUTTING, phase)
        state.phase = phase
        self._start_put(state, free, rng)
        return moved | (phase != old).any() | start_work.any() | free.any()

    # --- slots --------------------------------------------------------------------------------
    def _slots(self, state: LineState, active: torch.Tensor) -> torch.Tensor:
        """Arrivals due at ``now``, then carriers moving on into free slots (downstream first)."""
        act = active[:, None, None]
        arriving = act & state.held & ~state.arrived & (state.ready <= state.now[:, None, None])
        state.arrived = state.arrived | arriving
        state.ready = torch.where(arriving, INF, state.ready)
        changed = arriving.any()
        arrival_time = state.now[:, None] + self.line.slot_time[None, :]
        for k in range(self.line.cmax - 2, -1, -1):
            move = (
                active[:, None]
                & state.arrived[:, :, k]
                & ~state.held[:, :, k + 1]
                & self._slot_next_valid[None, :, k]
            )
            changed = changed | move.any()
            state.held[:, :, k + 1] |= move
            state.ready[:, :, k + 1] = torch.where(move, arrival_time, state.ready[:, :, k + 1])
            state.slot_created[:, :, k + 1] = torch.where(
                move, state.slot_created[:, :, k], state.slot_created[:, :, k + 1]
            )
            state.slot_origin[:, :, k + 1] = torch.where(
                move, state.slot_origin[:, :, k], state.slot_origin[:, :, k + 1]
            )
            state.held[:, :, k] &= ~move
            state.arrived[:, :, k] &= ~move
        return changed

    def _take(self, state: LineState, mask: torch.Tensor) -> None:
        """Getters in ``mask`` (B, G) take the carrier in their input's last slot."""
        flat = self._in_last
        held, arrived = state.held.flatten(1), state.arrived.flatten(1)
        held[:, flat] = held[:, flat] & ~mask
        arrived[:, flat] = arrived[:, flat] & ~mask
        state.count[:, self._in_buffer] -= mask.long()
        cols = self._getters
        created = state.slot_created.flatten(1)[:, flat]
        origin = state.slot_origin.flatten(1)[:, flat]
        state.carrier_created[:, cols] = torch.where(mask, created, state.carrier_created[:, cols])
        state.carrier_origin[:, cols] = torch.where(mask, origin, state.carrier_origin[:, cols])

    def _take_component(
        self, state: LineState, mask: torch.Tensor, buffer: torch.Tensor, flat: torch.Tensor
    ) -> None:
        """Assemblies in ``mask`` (B, S) take the carrier in the last slot of ``flat`` (B, S)."""
        created = state.slot_created.flatten(1).gather(1, flat)
        origin = state.slot_origin.flatten(1).gather(1, flat)
        state.comp_created = torch.where(mask, created, state.comp_created)
        state.comp_origin = torch.where(mask, origin, state.comp_origin)
        taken = (
            torch.zeros_like(state.held.flatten(1), dtype=torch.long).scatter_add_(
                1, flat, mask.long()
            )
            > 0
        )
        state.held = state.held & ~taken.view_as(state.held)
        state.arrived = state.arrived & ~taken.view_as(state.arrived)
        state.count = state.count.scatter_add(1, buffer, -mask.long())

    def _start_put(self, state: LineState, mask: torch.Tensor, rng: InstanceRNG) -> None:
        cols = self._putters
        m = mask[:, cols]
        held = state.held.flatten(1)
        held[:, self._out_first] = held[:, self._out_first] | m
        u = rng.uniform(len(cols), where=m.any(dim=1)).to(torch.float64)
        duration = (
            self.line.put_time[self._out_buffer]
            - torch.log1p(-u) * self.line.put_scale[self._out_buffer]
        )
        state.wake[:, cols] = torch.where(m, state.now[:, None] + duration, state.wake[:, cols])

    def _finish_put(self, state: LineState, mask: torch.Tensor) -> None:
        cols, flat = self._putters, self._out_first
        m = mask[:, cols]
        arrived = state.arrived.flatten(1)
        arrived[:, flat] = arrived[:, flat] | m
        created, origin = state.slot_created.flatten(1), state.slot_origin.flatten(1)
        created[:, flat] = torch.where(m, state.carrier_created[:, cols], created[:, flat])
        origin[:, flat] = torch.where(m, state.carrier_origin[:, cols], origin[:, flat])
        state.count[:, self._out_buffer] += m.long()

    def _start_work(self, state: LineState, mask: torch.Tensor, rng: InstanceRNG) -> None:
        now = state.now[:, None]
        u = rng.uniform(self.line.n_stations, 2, where=mask.any(dim=1)).to(torch.float64)
        duration = self.line.processing_time - torch.log1p(-u[..., 0]) * self.line.noise_scale
        rework = u[..., 1] < self.line.rework_probability
        duration = torch.where(rework, 2 * duration, duration)
        state.started = torch.where(mask, now, state.started)
        state.wake = torch.where(mask, now + duration, state.wake)
        new_part = mask & self._is_source
        state.carrier_created = torch.where(new_part, now, state.carrier_created)
        state.carrier_origin = torch.where(
            new_part, self._station.expand_as(mask), state.carrier_origin
        )
